"""The exporter's process_* families, read from /proc, against prometheus_client's ProcessCollector."""

from __future__ import annotations

import os
import time

import pytest

from mysql_snmp.agents.exporter.own_metrics import _boot_time, process_families


def by_name(families) -> dict[str, tuple[str, float]]:
    return {family.name: (family.type, family.samples[0].value) for family in families}


def test_this_process_reads_as_prometheus_client_reads_it():
    from prometheus_client import ProcessCollector

    theirs = by_name(ProcessCollector(registry=None).collect())
    ours = by_name(process_families())
    # Go's process collector serves one more, process_virtual_memory_max_bytes (compared below).
    assert list(ours) == [*theirs, "process_virtual_memory_max_bytes"]
    assert list(theirs) == ["process_virtual_memory_bytes", "process_resident_memory_bytes",
                            "process_start_time_seconds", "process_cpu_seconds", "process_open_fds",
                            "process_max_fds"]
    assert {name: kind for name, (kind, _) in ours.items() if name in theirs} == {
        name: kind for name, (kind, _) in theirs.items()}
    assert ours["process_start_time_seconds"] == theirs["process_start_time_seconds"]
    assert ours["process_max_fds"] == theirs["process_max_fds"]
    assert abs(ours["process_open_fds"][1] - theirs["process_open_fds"][1]) <= 1
    assert abs(ours["process_resident_memory_bytes"][1] - theirs["process_resident_memory_bytes"][1]) < 4e6
    assert abs(ours["process_virtual_memory_bytes"][1] - theirs["process_virtual_memory_bytes"][1]) < 16e6
    assert 0 < ours["process_cpu_seconds"][1] and abs(ours["process_cpu_seconds"][1] - theirs["process_cpu_seconds"][1]) < 0.5


def fake_process(tmp_path, command: str, max_files: str, address_space: str = "unlimited"):
    process = tmp_path / "proc"
    (process / "fd").mkdir(parents=True)
    for fd in range(3):
        (process / "fd" / str(fd)).touch()
    # pid (comm) state ppid ... utime=14 stime=15 ... starttime=22 vsize=23 rss=24 (proc(5))
    fields = ["S", *["0"] * 10, "250", "150", *["0"] * 6, "1000", "8192000", "300", "0"]
    (process / "stat").write_bytes(f"4242 ({command}) ".encode() + " ".join(fields).encode() + b"\n")
    (process / "limits").write_text("Limit                     Soft Limit           Hard Limit           Units\n"
                                    f"Max open files            {max_files}                 4096                 files\n"
                                    f"Max address space         {address_space}            unlimited            bytes\n")
    return process


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(tmp_path):
    ticks = os.sysconf("SC_CLK_TCK")
    families = by_name(process_families(str(fake_process(tmp_path, "a) (b c", "1024"))))
    assert families == {
        "process_virtual_memory_bytes": ("gauge", 8192000.0),
        "process_resident_memory_bytes": ("gauge", 300.0 * os.sysconf("SC_PAGE_SIZE")),
        "process_start_time_seconds": ("gauge", _boot_time() + 1000 / ticks),
        "process_cpu_seconds": ("counter", 400 / ticks),
        "process_open_fds": ("gauge", 3.0),
        "process_max_fds": ("gauge", 1024.0),
        "process_virtual_memory_max_bytes": ("gauge", 2.0**64 - 1),
    }


def test_an_unlimited_or_unreadable_value_is_left_out_not_invented(tmp_path):
    families = by_name(process_families(str(fake_process(tmp_path, "exporter", "unlimited"))))
    assert "process_max_fds" not in families and families["process_open_fds"] == ("gauge", 3.0)
    limited = by_name(process_families(str(fake_process(tmp_path / "limited", "exporter", "1024", "4294967296"))))
    assert limited["process_virtual_memory_max_bytes"] == ("gauge", 4294967296.0)
    (tmp_path / "proc" / "stat").write_text("4242 (exporter) S 1\n")  # truncated
    families = by_name(process_families(str(tmp_path / "proc")))
    assert set(families) == {"process_open_fds", "process_virtual_memory_max_bytes"}
    assert process_families(str(tmp_path / "no-such-process")) == []


def test_virtual_memory_max_is_served_as_gos_process_collector_serves_it(tmp_path):
    """Both read this shell's RLIMIT_AS (inherited): the Go exporter's line and ours agree."""
    import re
    import subprocess
    import urllib.request

    from mysql_snmp.agents.demo.throwaway import free_loopback_port
    from tests.exporter.go_exporter import GO_EXPORTER

    if not os.path.exists(GO_EXPORTER):
        pytest.skip("Go's mysqld_exporter not installed")
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nuser = x\npassword = y\nhost = 127.0.0.1\nport = 1\n")
    port = free_loopback_port()
    go = subprocess.Popen([GO_EXPORTER, f"--config.my-cnf={my_cnf}", f"--web.listen-address=127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                    text = response.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline, "Go exporter did not listen"
                time.sleep(0.1)
    finally:
        go.terminate()
        go.wait(timeout=10)
    go_value = float(re.search(r"^process_virtual_memory_max_bytes (\S+)$", text, re.MULTILINE).group(1))
    assert by_name(process_families())["process_virtual_memory_max_bytes"] == ("gauge", go_value)
