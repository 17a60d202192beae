"""The .deb and .rpm: build both with ./scripts/package, compare their file lists, install the .deb
on this host, run what it installed against a throwaway MariaDB and a private snmpd, purge it.

It installs a package system-wide (and leaves the mysql-snmp system user, as Debian policy does),
so it runs only when asked: MYSQL_SNMP_PACKAGE_TEST=1, which .ci/run sets.  Each step is the
README's "Installing the packages" section, with the two system services it starts there
replaced by private processes: snmpd runs from a private config that includes the shipped
drop-in, and each agent runs the ExecStart= line of its installed unit, as its unit's user.
"""

from __future__ import annotations

import fcntl
import grp
import os
import pwd
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.netsnmp_sandbox import missing_net_snmp_tools, net_snmp_tool, parse_output, stop_process
from mysql_snmp.agents.throwaway import free_loopback_port
from tests.support import create_monitoring_user

REPO = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
PACKAGE_VERSION = VERSION.replace(".dev", "~dev")
UNIT_DIR = Path("/lib/systemd/system")
UNITS = ("mysql-snmp-agentx.service", "mysql-snmp-exporter.service", "mysql-snmp-exporter@.service")
SERVICE_USER = "mysql-snmp"
SNMPD_GROUP = "Debian-snmp"
# Where the package's files go; after a purge nothing of ours may remain under them.
INSTALLED_PATHS = ("/usr/bin/mysql-snmp", "/usr/lib/mysql-snmp", "/etc/mysql-snmp", "/var/lib/mysql-snmp",
                   "/usr/share/mysql-snmp", "/usr/share/doc/mysql-snmp", "/usr/lib/sysusers.d/mysql-snmp.conf",
                   *(str(UNIT_DIR / unit) for unit in UNITS))

pytestmark = pytest.mark.skipif(os.environ.get("MYSQL_SNMP_PACKAGE_TEST") != "1",
                                reason="installs a package on this host: set MYSQL_SNMP_PACKAGE_TEST=1 "
                                "(.ci/run does)")


def run(*command: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, **kwargs)
    assert result.returncode == 0, f"{shlex.join(command)}: {result.stdout[-2000:]}{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> dict[str, Path]:
    missing = [tool for tool in ("dpkg-buildpackage", "rpmbuild", "dh") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (apt-get install debhelper rpm)")
    outdir = tmp_path_factory.mktemp("packages") / "dist"  # README: ./scripts/package dist
    run(str(REPO / "scripts" / "package"), str(outdir))
    built = {"deb": outdir / f"mysql-snmp_{PACKAGE_VERSION}_all.deb",
             "rpm": outdir / f"mysql-snmp-{PACKAGE_VERSION}-1.noarch.rpm"}
    assert all(path.is_file() for path in built.values()), sorted(outdir.iterdir())
    return built


def deb_files(deb: Path) -> dict[str, str]:
    """Path -> 'd', 'f' or 'l' for every entry of the .deb's data archive."""
    entries = {}
    for line in run("dpkg-deb", "--contents", str(deb)).stdout.splitlines():
        kind = {"d": "d", "-": "f", "l": "l"}[line[0]]
        name = line.split(None, 5)[5].split(" -> ")[0]
        entries["/" + name.removeprefix("./").rstrip("/")] = kind
    entries.pop("/", None)
    return entries


def rpm_files(rpm: Path) -> dict[str, str]:
    entries = {}
    for line in run("rpm", "-qlvp", str(rpm)).stdout.splitlines():
        kind = {"d": "d", "-": "f", "l": "l"}[line[0]]
        name = re.split(r"\s+", line, maxsplit=8)[8].split(" -> ")[0]
        entries[name] = kind
    return entries


def comparable(entries: dict[str, str], distribution: str) -> set[str]:
    """Files and links, with each distribution's conventions mapped to one spelling: units in
    /lib vs /usr/lib, Debian's gzipped docs, changelog and copyright."""
    names = set()
    for name, kind in entries.items():
        if kind == "d":
            continue  # dpkg lists every parent directory, rpm only the ones a package owns
        if distribution == "deb":
            if name in ("/usr/share/doc/mysql-snmp/changelog.gz", "/usr/share/doc/mysql-snmp/copyright"):
                continue
            name = name.replace("/lib/systemd/system/", "/usr/lib/systemd/system/", 1)
            name = name.removesuffix(".gz") if name.startswith("/usr/share/doc/") else name
        names.add(name)
    return names


def test_rpm_and_deb_ship_the_same_files(packages):
    deb = comparable(deb_files(packages["deb"]), "deb")
    rpm = comparable(rpm_files(packages["rpm"]), "rpm")
    assert deb == rpm, f"only in the .deb: {sorted(deb - rpm)}; only in the .rpm: {sorted(rpm - deb)}"
    # Generated files are shipped by directory: whatever the repository holds is in both.
    for tree, target in (("mibs", "/usr/share/snmp/mibs"), ("opennms", "/usr/share/mysql-snmp/opennms"),
                         ("grafana", "/usr/share/mysql-snmp/grafana")):
        shipped = {f"{target}/{path.relative_to(REPO / tree)}" for path in (REPO / tree).rglob("*") if path.is_file()}
        assert shipped and shipped <= deb, sorted(shipped - deb)
    assert {"/usr/bin/mysql-snmp", "/usr/lib/mysql-snmp/bin/mysql-snmp", "/etc/mysql-snmp/my.cnf",
            "/usr/lib/systemd/system/mysql-snmp-exporter@.service"} <= deb
    assert not [name for name in deb if "__pycache__" in name or name.endswith(".pyc")]


# ------------------------------------------------------------------ the installed .deb


def unit_command(unit: str, env_file: Path) -> list[str]:
    """The unit's ExecStart= as systemd runs it: %S is /var/lib, $VARS come from its EnvironmentFile."""
    text = (UNIT_DIR / unit).read_text()
    exec_start = re.search(r"^ExecStart=(.*)$", text, re.MULTILINE).group(1).replace("%S", "/var/lib")
    environment = dict(re.findall(r'^(\w+)="?(.*?)"?$', env_file.read_text(), re.MULTILINE))
    words = []
    for word in shlex.split(exec_start):
        words.extend(environment[word[1:]].split() if word.startswith("$") else [word])
    return words


def as_service_user(command: list[str], log: Path) -> subprocess.Popen:
    """What User=/Group= and NoNewPrivileges= give: the user, its groups (snmpd's included)."""
    with open(log, "ab") as out:
        return subprocess.Popen(["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}", "--init-groups",
                                 "--no-new-privs", "--", *command], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd="/", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})


def wait_for(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


@pytest.fixture
def package_lock():
    """One install/purge at a time on this host (several checkouts may run the suite)."""
    with open("/run/lock/mysql-snmp-package-test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def private_dir():
    # Traversable by the service user, unlike pytest's 0700 tmp_path.
    directory = Path(tempfile.mkdtemp(prefix="mysql-snmp-package-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_installed_deb_serves_snmp_and_prometheus_then_purges_clean(packages, package_lock, mariadb, private_dir):
    if os.geteuid() != 0:
        pytest.skip("installing the .deb needs root")
    if subprocess.run(["dpkg", "-s", "mysql-snmp"], capture_output=True).returncode == 0:
        pytest.skip("a mysql-snmp package is already installed on this host: not replacing or purging it")
    if missing_net_snmp_tools():
        pytest.skip(f"Net-SNMP missing: {missing_net_snmp_tools()}")
    apt = ("apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=600")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    processes: list[subprocess.Popen] = []
    try:
        # README: sudo apt-get install ./dist/mysql-snmp_<version>_all.deb
        run(*apt, "install", f"./dist/{packages['deb'].name}", cwd=packages["deb"].parent.parent, env=env)
        assert run("/usr/bin/mysql-snmp", "--version").stdout.split() == ["mysql-snmp", VERSION]
        my_cnf = Path("/etc/mysql-snmp/my.cnf")
        assert (my_cnf.stat().st_mode & 0o777, pwd.getpwuid(my_cnf.stat().st_uid).pw_name) == (0o600, SERVICE_USER)
        assert SERVICE_USER in grp.getgrnam(SNMPD_GROUP).gr_mem
        assert not list(Path("/etc/systemd/system").rglob("mysql-snmp*")), "a unit was enabled at install"
        instance = private_dir / "mysql-snmp-exporter@db1.service"  # verify wants an instance of the template
        shutil.copy(UNIT_DIR / "mysql-snmp-exporter@.service", instance)
        run("systemd-analyze", "verify", *(str(UNIT_DIR / unit) for unit in UNITS[:2]), str(instance))

        # README: put the monitoring user's credentials in /etc/mysql-snmp/my.cnf
        user = create_monitoring_user(mariadb, private_dir)
        my_cnf.write_text(user.my_cnf.read_text())

        # README: the drop-in into snmpd's configuration, the mysqlsnmp view given to a community.
        # Here a private snmpd includes it, with its own socket and port instead of the system's.
        community = f"c{os.urandom(6).hex()}"
        socket_path = private_dir / "agentx.sock"
        snmpd_conf = private_dir / "snmpd.conf"
        snmpd_conf.write_text(f"includeFile /usr/share/mysql-snmp/snmpd/mysql-snmp.conf\n"
                              f"agentXSocket {socket_path}\nrocommunity {community} 127.0.0.1 -V mysqlsnmp\n")
        port = free_loopback_port()
        snmp_env = {**os.environ, "MIBS": ":", "SNMP_PERSISTENT_DIR": str(private_dir / "persistent")}
        with open(private_dir / "snmpd.log", "ab") as log:
            processes.append(subprocess.Popen(
                [net_snmp_tool("snmpd"), "-f", "-Lo", "-C", "-m", ":", "-I", "-smux", "-c", str(snmpd_conf),
                 f"udp:127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT, env=snmp_env))
        wait_for(socket_path.exists, "snmpd's AgentX socket")
        socket_stat = socket_path.stat()
        assert (socket_stat.st_mode & 0o777, grp.getgrgid(socket_stat.st_gid).gr_name) == (0o660, SNMPD_GROUP)

        # README: systemctl enable --now mysql-snmp-agentx mysql-snmp-exporter.  StateDirectory=
        # is what systemd would create; the options are the admin's lines in the .env files.
        for agent in ("agentx", "exporter"):
            state = Path(f"/var/lib/mysql-snmp/{agent}")
            state.mkdir(parents=True, mode=0o750)
            shutil.chown(state, SERVICE_USER, SERVICE_USER)
        Path("/etc/mysql-snmp/agentx.env").write_text(f'AGENTX_OPTIONS="--agentx-socket {socket_path} --refresh 5"\n')
        http_port = free_loopback_port()
        Path("/etc/mysql-snmp/exporter.env").write_text(
            f'EXPORTER_OPTIONS="--web.listen-address 127.0.0.1:{http_port}"\n')
        agentx_log, exporter_log = private_dir / "agentx.log", private_dir / "exporter.log"
        agentx = as_service_user(unit_command(UNITS[0], Path("/etc/mysql-snmp/agentx.env")), agentx_log)
        exporter = as_service_user(unit_command(UNITS[1], Path("/etc/mysql-snmp/exporter.env")), exporter_log)
        processes += [agentx, exporter]

        catalog = load_catalog()
        key_buffer_size = int(mariadb.execute("SELECT @@key_buffer_size")[0][0])
        legacy = next(m for m in catalog.legacy() if m.snmp.legacy.name == "myKeyBufferSize")
        up_oid = format_oid(catalog.by_name("agent_mysql_up").snmp.oid) + ".0"

        def walk(oid: str):
            result = subprocess.run([net_snmp_tool("snmpbulkwalk"), "-v2c", "-c", community, "-On", "-t", "2",
                                     f"127.0.0.1:{port}", oid], capture_output=True, text=True, env=snmp_env,
                                    timeout=60)
            return {var.oid: var for var in parse_output(result.stdout)}

        # README: snmpbulkwalk -v2c -c SECRET 127.0.0.1 1.3.6.1.4.1.20267.200
        key_buffer_oid = format_oid(legacy.snmp.legacy.oid) + ".0"

        def served():
            # A collection that outlived --timeout (default: --refresh) on a loaded machine serves
            # what it got; the next one is waited for, not a value made up.
            values = walk("1.3.6.1.4.1.20267.200")
            return values if up_oid in values and values[up_oid].number == 1 and key_buffer_oid in values else None

        values = wait_for(served, f"agent serving; log: {agentx_log}", timeout=60)
        assert values[key_buffer_oid].number == key_buffer_size
        assert len([oid for oid in values if oid.startswith("1.3.6.1.4.1.20267.200.1.")]) >= 100
        outside = [var for var in walk("1.3.6.1.2.1.1").values() if var.type != "noSuchObject"]
        assert outside == [], "the community given the mysqlsnmp view reads only the mysql-snmp tree"

        # README: curl -s http://127.0.0.1:9104/metrics
        def scrape():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as response:
                    return response.read().decode()
            except OSError:
                return None

        metrics = wait_for(scrape, f"exporter serving; log: {exporter_log}")
        assert re.search(r"^mysql_up 1(\.0)?$", metrics, re.MULTILINE), metrics[:2000]
        served = re.search(r"^mysql_global_variables_key_buffer_size (\S+)$", metrics, re.MULTILINE)
        assert served and float(served.group(1)) == key_buffer_size

        # SIGTERM (systemctl stop): a clean exit, the leak history saved in each StateDirectory.
        assert stop_process(agentx, grace=20) == 0, agentx_log.read_text()[-3000:]
        assert stop_process(exporter, grace=20) == 0, exporter_log.read_text()[-3000:]
        for agent in ("agentx", "exporter"):
            assert Path(f"/var/lib/mysql-snmp/{agent}/leak-state.json").stat().st_size > 0
    finally:
        for process in processes:
            stop_process(process, grace=20)
        # README: sudo apt-get purge mysql-snmp
        purge = subprocess.run([*apt, "purge", "mysql-snmp"], capture_output=True, text=True, env=env, timeout=600)
    assert purge.returncode == 0, purge.stderr
    left = [path for path in INSTALLED_PATHS if os.path.lexists(path)]
    left += [str(path) for path in Path("/usr/share/snmp/mibs").glob("MYSQL-SERVER-MIB*")]
    left += [str(path) for path in Path("/etc/systemd/system").rglob("mysql-snmp*")]
    left += [str(path) for path in Path("/var/lib/systemd").glob("deb-systemd-helper-*/**/mysql-snmp*")]
    assert left == [], f"left after purge: {left}"
    # What Debian policy keeps: the system user (files elsewhere may still belong to it).
    assert pwd.getpwnam(SERVICE_USER).pw_dir == "/var/lib/mysql-snmp"
