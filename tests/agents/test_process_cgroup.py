"""Reading mysqld's cgroup memory limit from a /proc and /sys/fs/cgroup laid out in a temp dir."""

from pathlib import Path

from mysql_snmp.agents.sources.process import cgroup_memory_limit

PID = 4242


def layout(tmp_path: Path, proc_cgroup: str, limits: dict[str, str]) -> dict[int, Path]:
    (tmp_path / "proc" / str(PID)).mkdir(parents=True)
    (tmp_path / "proc" / str(PID) / "cgroup").write_text(proc_cgroup)
    mounts = {1: tmp_path / "cgroup" / "memory", 2: tmp_path / "cgroup"}
    for relative, text in limits.items():
        path = tmp_path / "cgroup" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return mounts


def test_v2_limit_set_on_the_slice_binds_the_service(tmp_path):
    mounts = layout(tmp_path, "0::/db.slice/mariadb.service\n", {
        "db.slice/memory.max": "2147483648\n",
        "db.slice/mariadb.service/memory.max": "max\n",
    })
    assert cgroup_memory_limit(PID, tmp_path / "proc", mounts) == 2 * 2**30


def test_v1_unlimited_is_absent(tmp_path):
    mounts = layout(tmp_path, "4:memory:/docker/abc\n0::/\n", {
        "memory/docker/abc/memory.limit_in_bytes": "9223372036854771712\n",
        "memory/memory.limit_in_bytes": "9223372036854771712\n",
    })
    assert cgroup_memory_limit(PID, tmp_path / "proc", mounts) is None


def test_a_cgroup_path_from_another_namespace_is_not_guessed_at(tmp_path):
    # The parent limit must not be reported for a cgroup this host cannot see.
    mounts = layout(tmp_path, "0::/elsewhere/mysqld\n", {"memory.max": "1073741824\n"})
    assert cgroup_memory_limit(PID, tmp_path / "proc", mounts) is None
