"""INNODB_METRICS rows grouped as mysqld_exporter groups them."""

from mysql_snmp.parsers.innodb_metrics import group_innodb_metrics


def row(name, subsystem, count, kind="counter", **extra):
    return {"NAME": name, "SUBSYSTEM": subsystem, "COUNT": count, "TYPE": kind, "COMMENT": f"{name} help", **extra}


def test_groups_and_filters():
    groups = group_innodb_metrics([
        row("buffer_page_read_index_leaf", "buffer_page_io", "7", STATUS="enabled"),
        row("buffer_page_written_undo_log", "buffer_page_io", "3", STATUS="enabled"),
        row("buffer_pool_pages_data", "buffer", "100", "value", STATUS="enabled"),
        row("buffer_pool_pages_dirty", "buffer", "4", "value", STATUS="enabled"),
        row("buffer_pool_pages_total", "buffer", "104", "value", STATUS="enabled"),
        row("lock_deadlocks", "lock", "2", STATUS="enabled"),
        row("trx_rseg_history_len", "transaction", "-3", STATUS="enabled"),  # negative counter: server bug
        row("dml_reads", "dml", "9", STATUS="disabled"),
        row("log_writes", "recovery", "5", ENABLED="0"),  # MariaDB's column
        row("os_data_reads", "os", "11", ENABLED="1"),
    ])
    assert groups.page_read == {"index_leaf": 7.0} and groups.page_written == {"undo_log": 3.0}
    assert groups.pool_pages == {"data": 100.0} and groups.pool_dirty == 4.0
    others = {(m.subsystem, m.name): (m.counter, m.value) for m in groups.others}
    assert others == {("lock", "lock_deadlocks"): (True, 2.0), ("transaction", "trx_rseg_history_len"): (False, -3.0),
                      ("os", "os_data_reads"): (True, 11.0)}
