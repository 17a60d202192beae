import os
from collections import namedtuple

import psutil
import pytest

from mysql_snmp.agents.snapshot import labels_of
from mysql_snmp.parsers.host import (
    MemoryCgroup,
    PageFaults,
    cgroup_memory_limit_bytes,
    cgroup_memory_limit_from_text,
    memory_cgroup_from_proc_cgroup,
    host_values,
    page_faults_from_proc_stat,
    pick_mysqld_process,
    pid_from_pid_file_text,
    process_values,
)

# Shapes of psutil's Linux results, built by hand (test data).
scputimes = namedtuple("scputimes", "user nice system idle iowait irq softirq steal guest guest_nice")
svmem = namedtuple("svmem", "total available percent used free active inactive buffers cached shared slab")
svmem_macos = namedtuple("svmem", "total available percent used free active inactive wired")
sswap = namedtuple("sswap", "total used free percent sin sout")
pmem = namedtuple("pmem", "rss vms shared text lib data dirty")
pcputimes = namedtuple("pcputimes", "user system children_user children_system iowait")
pio = namedtuple("pio", "read_count write_count read_bytes write_bytes read_chars write_chars")


def test_host_values_from_linux_shapes():
    reading = host_values(
        loadavg=(0.84, 0.34, 0.16),
        cpu_times=scputimes(122.03, 0.0, 39.26, 1258.81, 4.52, 0.0, 0.75, 0.85, 3.0, 0.0),
        virtual_memory=svmem(25276502016, 24610525184, 2.6, 665976832, 24447369216, 1, 2, 4452352, 420339712, 3, 4),
        swap_memory=sswap(2147483648, 1048576, 2146435072, 0.05, 4096, 8192),
        boot_time=1795943127.0,
        cpu_count=2,
    )
    assert reading.values == {
        "host_load1": 0.84,
        "host_load5": 0.34,
        "host_load15": 0.16,
        "host_memory_total_bytes": 25276502016,
        "host_memory_available_bytes": 24610525184,
        "host_memory_used_bytes": 665976832,
        "host_memory_free_bytes": 24447369216,
        "host_memory_buffers_bytes": 4452352,
        "host_memory_cached_bytes": 420339712,
        "host_swap_total_bytes": 2147483648,
        "host_swap_used_bytes": 1048576,
        "host_swap_free_bytes": 2146435072,
        "host_swap_in_bytes": 4096,
        "host_swap_out_bytes": 8192,
        "host_boot_time_seconds": 1795943127.0,
        "host_cpus": 2,
    }
    cpu = reading.series["host_cpu_seconds"]
    assert cpu[labels_of(mode="user")] == 122.03
    assert cpu[labels_of(mode="steal")] == 0.85
    assert labels_of(mode="guest") not in cpu  # already inside user
    assert len(cpu) == 8


def test_missing_platform_fields_are_absent_not_zero():
    reading = host_values(virtual_memory=svmem_macos(100, 60, 40.0, 30, 10, 5, 5, 2))
    assert "host_memory_buffers_bytes" not in reading.values
    assert "host_memory_cached_bytes" not in reading.values
    assert reading.values["host_memory_total_bytes"] == 100


def test_nothing_given_nothing_returned():
    assert host_values().values == {} and host_values().series == {}
    assert process_values().values == {}


def test_process_values_from_shapes():
    reading = process_values(
        memory_info=pmem(13852672, 16879616, 0, 0, 0, 0, 0),
        cpu_times=pcputimes(0.03, 0.01, 0.0, 0.0, 0.0),
        num_threads=37,
        num_fds=61,
        io_counters=pio(150, 12, 540672, 8192, 1452657, 456),
        page_faults=PageFaults(minor=1909, major=1),
        create_time=1795943842.84,
    )
    assert reading.values == {
        "process_resident_memory_bytes": 13852672,
        "process_virtual_memory_bytes": 16879616,
        "process_cpu_user_seconds": 0.03,
        "process_cpu_system_seconds": 0.01,
        "process_threads": 37,
        "process_open_files": 61,
        "process_io_read_bytes": 540672,
        "process_io_write_bytes": 8192,
        "process_minor_page_faults": 1909,
        "process_major_page_faults": 1,
        "process_start_time_seconds": 1795943842.84,
    }


def test_real_psutil_results_of_this_process():
    me = psutil.Process()
    memory = me.memory_info()
    reading = process_values(memory_info=memory, cpu_times=me.cpu_times(), num_threads=me.num_threads(),
                             create_time=me.create_time())
    assert reading.values["process_resident_memory_bytes"] == memory.rss > 0
    assert reading.values["process_virtual_memory_bytes"] == memory.vms >= memory.rss
    assert reading.values["process_threads"] >= 1
    assert reading.values["process_start_time_seconds"] == me.create_time()
    host = host_values(loadavg=psutil.getloadavg(), cpu_times=psutil.cpu_times(),
                       virtual_memory=psutil.virtual_memory(), cpu_count=psutil.cpu_count())
    assert host.values["host_memory_total_bytes"] == psutil.virtual_memory().total
    assert host.values["host_cpus"] == psutil.cpu_count()
    assert host.series["host_cpu_seconds"][labels_of(mode="idle")] > 0


def test_page_faults_from_proc_stat():
    stat = ("12702 (python) R 12647 12647 3916 0 -1 4194304 1909 0 1 0 3 0 0 0 20 0 1 0 71584 16879616 3356 "
            "18446744073709551615 0 0 0 0 0 0 0 16781312 2 0 0 0 17 0 0 0 0 0 0")
    assert page_faults_from_proc_stat(stat) == PageFaults(minor=1909, major=1)
    # A command name holding spaces and parentheses.
    tricky = stat.replace("(python)", "(my (odd) d)")
    assert page_faults_from_proc_stat(tricky) == PageFaults(minor=1909, major=1)
    assert page_faults_from_proc_stat("garbage") is None


def test_page_faults_of_this_process_from_proc():
    path = f"/proc/{os.getpid()}/stat"
    if not os.path.exists(path):
        pytest.skip("no /proc on this platform")
    faults = page_faults_from_proc_stat(open(path).read())
    assert faults is not None and faults.minor > 0


def test_pid_file_text():
    assert pid_from_pid_file_text("4242\n") == 4242
    assert pid_from_pid_file_text(b"  17 \n") == 17
    assert pid_from_pid_file_text("") is None
    assert pid_from_pid_file_text("0\n") is None
    assert pid_from_pid_file_text("12abc") is None
    assert pid_from_pid_file_text("١٢") is None


def test_pick_mysqld_process():
    candidates = [
        (10, "mysqld_safe", ["/bin/sh", "/usr/bin/mysqld_safe"]),
        (11, "mariadbd", ["/usr/sbin/mariadbd", "--datadir=/var/lib/mysql", "--port=3306"]),
        (12, "mariadbd", ["/usr/sbin/mariadbd", "--datadir", "/tmp/t1/", "--port", "3307"]),
        (13, "python3", ["python3", "mysqld"]),
    ]
    assert pick_mysqld_process(candidates, datadir="/tmp/t1") == 12
    assert pick_mysqld_process(candidates, port=3306) == 11
    assert pick_mysqld_process(candidates, datadir="/var/lib/mysql", port=3307) is None  # contradictory
    assert pick_mysqld_process(candidates) is None  # two servers, no hint: do not guess
    assert pick_mysqld_process(candidates[:2]) == 11


def test_pick_prefers_explicit_match_over_silent_candidate():
    candidates = [
        (20, "mysqld", ["/usr/sbin/mysqld"]),  # reads datadir/port from my.cnf
        (21, "mysqld", ["/usr/sbin/mysqld", "-h/data/b", "-P3310"]),
        (22, "mysqld", ["/usr/sbin/mysqld", "--datadir=/x", "--port=3311"]),
    ]
    assert pick_mysqld_process(candidates, datadir="/data/b", port=3310) == 21
    assert pick_mysqld_process(candidates, port=3306) == 20
    assert pick_mysqld_process(candidates, datadir="/x/") == 22
    assert pick_mysqld_process([(23, "mysqld", ["/usr/sbin/mysqld", "--port_open_timeout=5", "--port=3312"])], port=3312) == 23
    assert pick_mysqld_process([(30, "mysqld", None)], port=3306) == 30


# --- cgroup memory limit (texts as the kernel prints them) ------------------------------------

PROC_CGROUP_V2 = "0::/system.slice/mariadb.service\n"
PROC_CGROUP_HYBRID = """\
12:pids:/system.slice/mysql.service
5:cpu,cpuacct:/system.slice/mysql.service
4:memory:/system.slice/mysql.service
1:name=systemd:/system.slice/mysql.service
0::/system.slice/mysql.service
"""


def test_memory_cgroup_v2_and_v1():
    v2 = memory_cgroup_from_proc_cgroup(PROC_CGROUP_V2)
    assert v2 == MemoryCgroup(2, "/system.slice/mariadb.service") and v2.limit_file == "memory.max"
    # On a hybrid host the v1 memory controller holds the limit, not the unified line.
    v1 = memory_cgroup_from_proc_cgroup(PROC_CGROUP_HYBRID)
    assert v1 == MemoryCgroup(1, "/system.slice/mysql.service") and v1.limit_file == "memory.limit_in_bytes"
    assert memory_cgroup_from_proc_cgroup("1:name=systemd:/\n3:cpu:/x\n") is None
    assert memory_cgroup_from_proc_cgroup("") is None


def test_cgroup_memory_limit_texts():
    assert cgroup_memory_limit_from_text("2147483648\n") == 2 * 2**30
    assert cgroup_memory_limit_from_text("max\n") is None
    assert cgroup_memory_limit_from_text("9223372036854771712\n") is None  # v1 "unlimited", 4 KiB pages
    assert cgroup_memory_limit_from_text("9223372036854710272\n") is None  # v1 "unlimited", 64 KiB pages
    assert cgroup_memory_limit_from_text("") is None
    assert cgroup_memory_limit_from_text("garbage") is None


def test_cgroup_memory_limit_is_the_smallest_along_the_path():
    assert cgroup_memory_limit_bytes(["max\n", "4294967296\n", "8589934592\n"]) == 4 * 2**30
    assert cgroup_memory_limit_bytes(["max\n", "max\n"]) is None
    assert cgroup_memory_limit_bytes([]) is None


def test_process_values_carry_the_cgroup_limit_only_when_there_is_one():
    assert process_values(cgroup_memory_limit=1073741824).values == {
        "process_cgroup_memory_limit_bytes": 1073741824}
    assert "process_cgroup_memory_limit_bytes" not in process_values(cgroup_memory_limit=None).values
