"""INNODB_METRICS rows as named values (the catalog's prometheus_families.named groups them)."""

from mysql_snmp.parsers.innodb_metrics import innodb_metric_rows


def row(name, subsystem, count, kind="counter", **extra):
    return {"NAME": name, "SUBSYSTEM": subsystem, "COUNT": count, "TYPE": kind, "COMMENT": f"{name} help", **extra}


def test_enabled_rows_keyed_by_subsystem_and_name():
    named = innodb_metric_rows([
        row("buffer_page_read_index_leaf", "buffer_page_io", "7", STATUS="enabled"),
        row("buffer_pool_pages_data", "buffer", "100", "value", STATUS="enabled"),
        row("buffer_LRU_batch_flush_total_pages", "buffer", "12", "status_counter", STATUS="enabled"),
        row("lock_deadlocks", "lock", "2", STATUS="enabled"),
        row("trx_rseg_history_len", "transaction", "-3", STATUS="enabled"),  # negative counter: server bug
        row("dml_reads", "dml", "9", STATUS="disabled"),
        row("log_writes", "recovery", "5", ENABLED="0"),  # MariaDB's column
        row("os_data_reads", "os", "11", ENABLED="1"),
        row("os_log_bytes", "os", None, ENABLED="1"),  # NULL: no value
    ])
    got = {r.key: (r.value, r.counter, r.help) for r in named}
    assert got == {
        "buffer_page_io/buffer_page_read_index_leaf": (7.0, True, "buffer_page_read_index_leaf help"),
        "buffer/buffer_pool_pages_data": (100.0, False, "buffer_pool_pages_data help"),
        "buffer/buffer_LRU_batch_flush_total_pages": (12.0, True, "buffer_LRU_batch_flush_total_pages help"),
        "lock/lock_deadlocks": (2.0, True, "lock_deadlocks help"),
        "transaction/trx_rseg_history_len": (-3.0, False, "trx_rseg_history_len help"),
        "os/os_data_reads": (11.0, True, "os_data_reads help"),
    }
    assert all(r.labels == () for r in named)
