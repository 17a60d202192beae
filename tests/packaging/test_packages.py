"""The .deb and .rpm: build both with ./scripts/package, lint them, compare their file lists,
install the .rpm into a scratch root, and on this host install, upgrade, run, remove and purge
the .deb.

It installs a package system-wide (and leaves the mysql-snmp system user and group, as Debian
policy does), so it runs only when asked: MYSQL_SNMP_PACKAGE_TEST=1, which .ci/run sets.  The
system services docs/packaging.md starts are replaced by private processes: snmpd runs from a
private config that includes the shipped (or postinst-written) drop-in, as Debian's snmpd.service
runs it (root, then -u Debian-snmp); each agent runs the ExecStart= line of its installed unit
as the unit would: its User=, its SupplementaryGroups=, its EnvironmentFile=s, and the copies of
its LoadCredential= files in a directory only that user can read (%d, $CREDENTIALS_DIRECTORY).
"""

from __future__ import annotations

import fcntl
import grp
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import tomllib
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.demo.netsnmp_sandbox import missing_net_snmp_tools, net_snmp_tool, parse_output, stop_process
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.support import create_monitoring_user

REPO = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
PACKAGE_VERSION = VERSION.replace(".dev", "~dev")
# The previous version, 2.0.0~dev0 (a private virtualenv, the service user in snmpd's group), as
# this commit builds it: the upgrade starts from there.
PREVIOUS_COMMIT = "12f7b9ab54d202be3ecacca49581bd011658b76c"
UNITS = ("mysql-snmp-agentx.service", "mysql-snmp-exporter.service", "mysql-snmp-exporter@.service",
         "mysql-snmp.service")
SERVICE_USER = "mysql-snmp"
SOCKET_GROUP = "mysql-snmp-agentx"
SNMPD_USER = "Debian-snmp"
# Where the package's files go; after a purge nothing of ours may remain under them.
INSTALLED_PATHS = ("/usr/bin/mysql-snmp", "/usr/sbin/mysql-snmp", "/usr/lib/mysql-snmp", "/etc/mysql-snmp",
                   "/usr/lib/python3/dist-packages/mysql_snmp", "/usr/share/mysql-snmp", "/usr/share/doc/mysql-snmp",
                   "/usr/lib/sysusers.d/mysql-snmp.conf", "/usr/share/man/man1/mysql-snmp.1.gz",
                   "/etc/snmp/snmpd.conf.d/mysql-snmp-agentx-socket.conf")
# What snmp-mibs-downloader (Debian non-free) puts in /usr/share/snmp/mibs/ietf: the IETF modules
# MYSQL-SERVER-MIB imports, from the shared read-only fixtures.
IETF_MIBS = REPO.parent / "shared" / "mibs" / "ietf"
APT = ("apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=600")

pytestmark = pytest.mark.skipif(os.environ.get("MYSQL_SNMP_PACKAGE_TEST") != "1",
                                reason="installs a package on this host: set MYSQL_SNMP_PACKAGE_TEST=1 "
                                "(.ci/run does)")


def run(*command: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, **kwargs)
    assert result.returncode == 0, f"{shlex.join(command)}: {result.stdout[-2000:]}{result.stderr[-3000:]}"
    return result


def apt(*arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run(*APT, *arguments, cwd=cwd, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> dict[str, Path]:
    outdir = tmp_path_factory.mktemp("packages") / "dist"  # docs/packaging.md: ./scripts/package dist
    run(str(REPO / "scripts" / "package"), str(outdir))
    built = {"deb": outdir / f"mysql-snmp_{PACKAGE_VERSION}_all.deb",
             "rpm": outdir / f"mysql-snmp-{PACKAGE_VERSION}-1.noarch.rpm",
             "srpm": outdir / f"mysql-snmp-{PACKAGE_VERSION}-1.src.rpm"}
    assert all(path.is_file() for path in built.values()), sorted(outdir.iterdir())
    return built


@pytest.fixture(scope="module")
def previous_deb(tmp_path_factory) -> Path:
    """2.0.0~dev0's .deb, built by that commit's own scripts/package."""
    if subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{PREVIOUS_COMMIT}^{{commit}}"]).returncode:
        pytest.skip(f"the previous version's commit {PREVIOUS_COMMIT[:12]} is not in this clone")
    base = tmp_path_factory.mktemp("previous")
    checkout = base / "checkout"
    run("git", "-C", str(REPO), "worktree", "add", "--detach", str(checkout), PREVIOUS_COMMIT)
    try:
        run(str(checkout / "scripts" / "package"), str(base / "dist"), "deb")
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(checkout)], capture_output=True)
    (deb,) = (base / "dist").glob("mysql-snmp_2.0.0~dev0_all.deb")
    return deb


PERL_INIT_SCRIPT = """#!/bin/sh
### BEGIN INIT INFO
# Provides:          mysql-snmp
# Required-Start:    $syslog
# Required-Stop:     $syslog
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: Start and stop the mysql database server snmp agent
### END INIT INFO
exit 0
"""


@pytest.fixture(scope="module")
def perl_deb(tmp_path_factory) -> Path:
    """A stand-in for the Perl mysql-snmp 1.2 package, with its paths and maintainer scripts:
    /usr/sbin/mysql-snmp, the init script enabled by update-rc.d, /etc/default/mysql-snmp
    (conffiles, as its debhelper made them)."""
    stage = tmp_path_factory.mktemp("perl") / "mysql-snmp"
    (stage / "DEBIAN").mkdir(parents=True)
    (stage / "DEBIAN/control").write_text(
        "Package: mysql-snmp\nVersion: 1.2\nArchitecture: all\nMaintainer: test <test@example.org>\n"
        "Description: SNMP agent for mysql-server (stand-in of the Perl package for the upgrade test)\n")
    (stage / "DEBIAN/conffiles").write_text("/etc/default/mysql-snmp\n/etc/init.d/mysql-snmp\n")
    scripts = {"postinst": 'if [ "$1" = configure ]; then update-rc.d mysql-snmp defaults >/dev/null; fi\n',
               "postrm": 'if [ "$1" = purge ]; then update-rc.d mysql-snmp remove >/dev/null; fi\n'}
    for name, body in scripts.items():
        (stage / "DEBIAN" / name).write_text(f"#!/bin/sh\nset -e\n{body}")
        (stage / "DEBIAN" / name).chmod(0o755)
    files = {"usr/sbin/mysql-snmp": ("#!/usr/bin/perl\nexit 0;\n", 0o755),
             "etc/init.d/mysql-snmp": (PERL_INIT_SCRIPT, 0o755),
             # What a site that followed the original README has: its my.cnf named here.
             "etc/default/mysql-snmp": ('# Defaults for mysql-snmp initscript\nDAEMON_OPTS="--config=/etc/snmp/my.cnf '
                                        '--nomaster"\n', 0o644)}
    for name, (text, mode) in files.items():
        path = stage / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)
    deb = stage.parent / "mysql-snmp_1.2_all.deb"
    run("dpkg-deb", "--root-owner-group", "--build", str(stage), str(deb))
    return deb


# ------------------------------------------------------------------ the built files


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
    /lib vs /usr/lib, Python's site directory, compressed docs and man pages, copyright, the
    RPM's %ghost files (the Perl mysql-snmp's, owned and never installed)."""
    names = set()
    for name, kind in entries.items():
        if kind == "d" or name.endswith("/INSTALLER"):
            continue  # dpkg lists every parent directory, rpm only the ones a package owns
        name = re.sub(r"^/usr/lib/python3[.0-9]*/(dist|site)-packages/", "SITE/", name)
        name = name.replace("/lib/systemd/system/", "/usr/lib/systemd/system/", 1).replace("/usr/usr/", "/usr/", 1)
        if name.startswith(("/usr/share/doc/", "/usr/share/man/")):
            name = name.removesuffix(".gz")
        if name in ("/usr/share/doc/mysql-snmp/changelog", "/etc/snmp/my.cnf", "/etc/sysconfig/mysql-snmp"):
            continue
        name = re.sub(r"^/usr/share/(doc/mysql-snmp|licenses/mysql-snmp-[^/]+)/copyright$", "COPYRIGHT", name)
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
    assert {"/usr/bin/mysql-snmp", "/usr/sbin/mysql-snmp", "SITE/mysql_snmp/agents/cli.py", "/etc/mysql-snmp/my.cnf",
            "/usr/share/man/man1/mysql-snmp-agentx.1", "/usr/share/man/man1/mysql-snmp-exporter.1",
            *(f"/usr/lib/systemd/system/{unit}" for unit in UNITS)} <= deb
    assert not [name for name in deb if "__pycache__" in name or name.endswith(".pyc")]


def test_lintian_and_rpmlint_report_no_errors(packages):
    for tool in ("lintian", "rpmlint"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed (scripts/test installs it)")
    lintian = subprocess.run(["lintian", str(packages["deb"])], capture_output=True, text=True, timeout=600)
    assert [line for line in lintian.stdout.splitlines() if line.startswith("E:")] == [], lintian.stdout
    rpmlint = subprocess.run(["rpmlint", "-r", str(REPO / "packaging/rpm/mysql-snmp.rpmlintrc"), str(packages["rpm"]),
                              str(packages["srpm"]), str(REPO / "packaging/rpm/mysql-snmp.spec")],
                             capture_output=True, text=True, timeout=600)
    assert re.search(r"\b0 errors\b", rpmlint.stdout), rpmlint.stdout


def test_rpm_requires_the_distributions_libraries_and_installs_into_a_scratch_root(packages, tmp_path):
    requires = run("rpm", "-qpR", str(packages["rpm"])).stdout.splitlines()
    assert {"python3-PyMySQL >= 1.0.2", "python3-psutil >= 5.9", "python3-pyyaml >= 6.0"} <= set(requires)
    assert not [line for line in requires if re.match(r"python3 [<=]", line)], "no pinned interpreter"
    if os.geteuid() != 0:
        pytest.skip("installing into a scratch root gives files to root: needs root")
    root = tmp_path / "root"
    run("rpm", "--root", str(root), "--initdb")
    # --nodeps: the scratch root has no python3 packages; --noscripts: nor a shell for them.
    run("rpm", "--root", str(root), "-i", "--nodeps", "--noscripts", str(packages["rpm"]))
    my_cnf = root / "etc/mysql-snmp/my.cnf"
    assert (my_cnf.stat().st_mode & 0o777, my_cnf.stat().st_uid) == (0o600, 0)
    assert not (root / "etc/snmp/my.cnf").exists(), "the Perl site's my.cnf is %ghost: owned, not installed"
    (site,) = root.glob("usr/lib/python3*/site-packages")
    installed = run("python3", str(root / "usr/bin/mysql-snmp"), "--version",
                    env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert installed.stdout.split() == ["mysql-snmp", VERSION]
    assert (root / "usr/sbin/mysql-snmp").readlink() == Path("../bin/mysql-snmp")


# ------------------------------------------------------------------ on this host


@pytest.fixture
def host_install(packages):
    """One install/purge at a time on this host (several checkouts may run the suite)."""
    if os.geteuid() != 0:
        pytest.skip("installing the .deb needs root")
    if missing_net_snmp_tools():
        pytest.skip(f"Net-SNMP missing: {missing_net_snmp_tools()}")
    with open("/run/lock/mysql-snmp-package-test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if subprocess.run(["dpkg", "-s", "mysql-snmp"], capture_output=True).returncode == 0:
            pytest.skip("a mysql-snmp package is already installed on this host: not replacing or purging it")
        yield
        subprocess.run([*APT, "purge", "mysql-snmp"], capture_output=True, timeout=600,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


@pytest.fixture
def private_dir():
    # Traversable by the service user and snmpd's, unlike pytest's 0700 tmp_path.
    directory = Path(tempfile.mkdtemp(prefix="mysql-snmp-package-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@dataclass
class UnitRun:
    """How systemd would start one installed unit (the subset of its settings ours use)."""

    unit: str
    instance: str = ""
    environment: dict[str, str] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)  # the test's own flags (private socket, port)

    def settings(self) -> list[tuple[str, str]]:
        text = Path("/usr/lib/systemd/system", self.unit)
        text = text if text.exists() else Path("/lib/systemd/system", self.unit)
        lines = [line.split("=", 1) for line in text.read_text().splitlines() if "=" in line and line[0] != "#"]
        return [(key, value.replace("%i", self.instance)) for key, value in lines]

    def credentials(self, directory: Path) -> Path:
        """LoadCredential= files copied, as systemd does, for the service user alone; SetCredential=
        stands in for a missing one."""
        user = pwd.getpwnam(SERVICE_USER)
        directory.mkdir(mode=0o500)
        fallback = dict(value.split(":", 1) for key, value in self.settings() if key == "SetCredential")
        for key, value in self.settings():
            if key == "LoadCredential":
                name, source = value.split(":", 1)
                target = directory / name
                if Path(source).exists():
                    shutil.copyfile(source, target)
                else:
                    target.write_text(fallback[name])
                target.chmod(0o400)
                os.chown(target, user.pw_uid, user.pw_gid)
        os.chown(directory, user.pw_uid, user.pw_gid)
        return directory

    def command(self, credentials: Path | None) -> tuple[list[str], dict[str, str], list[str]]:
        environment: dict[str, str] = {}
        for key, value in self.settings():
            if key == "Environment":
                environment.update(word.split("=", 1) for word in shlex.split(value))
            elif key == "EnvironmentFile" and Path(value.lstrip("-")).exists():
                environment.update((name, shlex.split(raw)[0] if raw else "") for name, raw in re.findall(
                    r"^(\w+)=(.*)$", Path(value.lstrip("-")).read_text(), re.MULTILINE))
        environment.update(self.environment)
        exec_start = next(value for key, value in self.settings() if key == "ExecStart")
        exec_start = exec_start.replace("%S", "/var/lib").replace("%d", str(credentials))
        words = []
        for word in shlex.split(exec_start):
            words.extend(environment.get(word[1:], "").split() if word.startswith("$") else [word])
        groups = [value for key, value in self.settings() if key == "SupplementaryGroups"]
        if credentials is not None:
            environment["CREDENTIALS_DIRECTORY"] = str(credentials)
        return [*words, *self.extra], environment, groups

    def start(self, log: Path, credentials: Path | None) -> subprocess.Popen:
        """The process the unit runs: User=/Group=, SupplementaryGroups=, NoNewPrivileges=."""
        words, environment, groups = self.command(credentials)
        membership = ["--groups", ",".join(groups)] if groups else ["--clear-groups"]
        with open(log, "ab") as out:
            return subprocess.Popen(
                ["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}", *membership, "--no-new-privs",
                 "--", *words], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd="/",
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **environment})


def as_exporter_user(program: str) -> subprocess.CompletedProcess:
    """A Python one-liner with the exporter unit's identity: the service user, no extra group."""
    return subprocess.run(["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}", "--clear-groups",
                           "/usr/bin/python3", "-c", program], capture_output=True, text=True, timeout=60, cwd="/")


def wait_for(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


class PrivateSnmpd:
    """snmpd on a loopback port with its own AgentX socket, started as Debian's snmpd.service
    starts it (root, then -u Debian-snmp -g Debian-snmp), including a drop-in of the package."""

    def __init__(self, directory: Path, drop_in: str):
        self.community = f"c{os.urandom(6).hex()}"
        self.socket = directory / "agentx.sock"
        self.port = free_loopback_port()
        config = directory / "snmpd.conf"
        config.write_text(f"master agentx\nincludeFile {drop_in}\nagentXSocket {self.socket}\n"
                          f"view mysqlsnmp included .1.3.6.1.4.1.20267.200\n"
                          f"rocommunity {self.community} 127.0.0.1 -V mysqlsnmp\n")
        persistent = directory / "persistent"
        persistent.mkdir()
        shutil.chown(persistent, SNMPD_USER)
        self.env = {**os.environ, "MIBS": ":", "SNMP_PERSISTENT_DIR": str(persistent)}
        with open(directory / "snmpd.log", "ab") as log:
            self.process = subprocess.Popen(
                [net_snmp_tool("snmpd"), "-f", "-Lo", "-C", "-m", ":", "-I", "-smux", "-u", SNMPD_USER, "-g", SNMPD_USER,
                 "-c", str(config), f"udp:127.0.0.1:{self.port}"], stdout=log, stderr=subprocess.STDOUT, env=self.env)
        wait_for(self.socket.exists, "snmpd's AgentX socket")

    def walk(self, oid: str) -> dict:
        result = subprocess.run([net_snmp_tool("snmpbulkwalk"), "-v2c", "-c", self.community, "-On", "-t", "2",
                                 f"127.0.0.1:{self.port}", oid], capture_output=True, text=True, env=self.env, timeout=60)
        return {var.oid: var for var in parse_output(result.stdout)}

    def serves_key_buffer_size(self, expected: int, log: Path):
        """Waits for the subagent's tree, and checks a value read from the server."""
        catalog = load_catalog()
        up_oid = format_oid(catalog.by_name("agent_mysql_up").snmp.oid) + ".0"
        legacy = next(m for m in catalog.legacy() if m.snmp.legacy.name == "myKeyBufferSize")
        key_buffer_oid = format_oid(legacy.snmp.legacy.oid) + ".0"

        def served():
            # A collection that outlived its timeout on a loaded machine serves what it got;
            # the next one is waited for, not a value made up.
            values = self.walk("1.3.6.1.4.1.20267.200")
            return values if up_oid in values and values[up_oid].number == 1 and key_buffer_oid in values else None

        values = wait_for(served, f"agent serving; log: {log}", timeout=90)
        assert values[key_buffer_oid].number == expected
        return values


def socket_reachable_program(path: Path) -> str:
    return (f"import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({str(path)!r}); print('connected')\n"
            f"except OSError as exc:\n    print(exc.strerror)\n")


def translate_installed_mib(home: Path, *mib_dirs: Path) -> subprocess.CompletedProcess:
    """snmptranslate with Net-SNMP's default MIB directories (the package's MIB is in one), plus ``mib_dirs``."""
    search = ["-M", "+" + ":".join(map(str, mib_dirs))] if mib_dirs else []
    return subprocess.run(["snmptranslate", *search, "-m", "MYSQL-SERVER-MIB", "-IR", "-On", "myKeyBufferSize.0"],
                          capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin", "HOME": str(home)})


def scrape(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            return response.read().decode()
    except OSError:
        return None


def test_upgrade_from_the_previous_version_serves_then_remove_keeps_history_and_purge_only_ours(
        packages, previous_deb, host_install, mariadb, private_dir):
    processes: list[subprocess.Popen] = []
    # An agent an admin ran by hand keeps its history in the same directory: never the package's.
    by_hand = Path("/var/lib/mysql-snmp/leak-state.agentx.127.0.0.1_3306.json")
    try:
        apt("install", str(previous_deb))
        # The control: 2.0.0~dev0 put the service user in snmpd's group, so the network-facing
        # exporter could read snmpd.conf and its communities.
        assert SERVICE_USER in grp.getgrnam(SNMPD_USER).gr_mem
        by_hand.parent.mkdir(exist_ok=True)
        by_hand.write_text('{"kept": "by hand"}\n')

        # docs/packaging.md: sudo apt-get install ./dist/mysql-snmp_<version>_all.deb
        apt("install", f"./dist/{packages['deb'].name}", cwd=packages["deb"].parent.parent)
        assert run("/usr/bin/mysql-snmp", "--version").stdout.split() == ["mysql-snmp", VERSION]
        assert not Path("/usr/lib/mysql-snmp").exists(), "the previous version's virtualenv is gone"
        assert SERVICE_USER not in grp.getgrnam(SNMPD_USER).gr_mem
        assert grp.getgrnam(SOCKET_GROUP).gr_mem == []
        assert run("man", "-w", "mysql-snmp-agentx").stdout.strip().endswith("mysql-snmp-agentx.1.gz")
        assert not list(Path("/etc/systemd/system").rglob("mysql-snmp*")), "a unit was enabled at install"
        # docs/packaging.md, MIB names: stock Debian lacks the IETF modules the MIB imports ...
        stock = translate_installed_mib(private_dir)
        assert "Cannot find module (SNMPv2-SMI)" in stock.stderr
        if IETF_MIBS.is_dir():  # ... and with them (snmp-mibs-downloader) the names resolve.
            legacy = next(m for m in load_catalog().legacy() if m.snmp.legacy.name == "myKeyBufferSize")
            resolved = translate_installed_mib(private_dir, IETF_MIBS)
            assert (resolved.stdout.strip(), resolved.stderr) == ("." + format_oid(legacy.snmp.legacy.oid) + ".0", "")
        instance = private_dir / "mysql-snmp-exporter@db1.service"  # verify wants an instance of the template
        unit_dir = Path("/lib/systemd/system")
        shutil.copy(unit_dir / "mysql-snmp-exporter@.service", instance)
        run("systemd-analyze", "verify", *(str(unit_dir / unit) for unit in UNITS if "@" not in unit), str(instance))

        # docs/packaging.md: credentials in /etc/mysql-snmp/my.cnf, which stays root 0600.
        my_cnf = Path("/etc/mysql-snmp/my.cnf")
        my_cnf.write_text(create_monitoring_user(mariadb, private_dir).my_cnf.read_text())
        os.chown(my_cnf, 0, 0)
        my_cnf.chmod(0o600)
        assert as_exporter_user(f"open({str(my_cnf)!r})").returncode != 0, "the service user reads systemd's copy only"

        snmpd = PrivateSnmpd(private_dir, "/usr/share/mysql-snmp/snmpd/mysql-snmp.conf")
        processes.append(snmpd.process)
        socket_stat = snmpd.socket.stat()
        assert (socket_stat.st_mode & 0o777, grp.getgrgid(socket_stat.st_gid).gr_name) == (0o660, SOCKET_GROUP)
        # The exporter's identity reaches neither the AgentX socket nor snmpd.conf.
        assert as_exporter_user(socket_reachable_program(snmpd.socket)).stdout.strip() == "Permission denied"
        assert "Permission denied" in as_exporter_user("open('/etc/snmp/snmpd.conf')").stderr

        # docs/packaging.md: systemctl enable --now mysql-snmp-agentx mysql-snmp-exporter.
        for agent in ("agentx", "exporter"):
            state = Path(f"/var/lib/mysql-snmp/{agent}")  # what StateDirectory= creates
            state.mkdir(parents=True, mode=0o750, exist_ok=True)
            shutil.chown(state, SERVICE_USER, SERVICE_USER)
        http_port = free_loopback_port()
        agentx = UnitRun("mysql-snmp-agentx.service", extra=["--agentx-socket", str(snmpd.socket), "--refresh", "5"])
        exporter = UnitRun("mysql-snmp-exporter.service", extra=["--web.listen-address", f"127.0.0.1:{http_port}"])
        agentx_log, exporter_log = private_dir / "agentx.log", private_dir / "exporter.log"
        processes.append(agentx_process := agentx.start(agentx_log, agentx.credentials(private_dir / "agentx-cred")))
        processes.append(exporter_process := exporter.start(exporter_log,
                                                            exporter.credentials(private_dir / "exporter-cred")))

        key_buffer_size = int(mariadb.execute("SELECT @@key_buffer_size")[0][0])
        values = snmpd.serves_key_buffer_size(key_buffer_size, agentx_log)
        assert len([oid for oid in values if oid.startswith("1.3.6.1.4.1.20267.200.1.")]) >= 100
        metrics = wait_for(lambda: scrape(http_port), f"exporter serving; log: {exporter_log}")
        assert re.search(r"^mysql_up 1(\.0)?$", metrics, re.MULTILINE), metrics[:2000]
        served = re.search(r"^mysql_global_variables_key_buffer_size (\S+)$", metrics, re.MULTILINE)
        assert served and float(served.group(1)) == key_buffer_size

        # SIGTERM (systemctl stop): a clean exit, the leak history saved in each StateDirectory.
        assert stop_process(agentx_process, grace=20) == 0, agentx_log.read_text()[-3000:]
        assert stop_process(exporter_process, grace=20) == 0, exporter_log.read_text()[-3000:]
        histories = [Path(f"/var/lib/mysql-snmp/{agent}/leak-state.json") for agent in ("agentx", "exporter")]
        assert all(history.stat().st_size > 0 for history in histories)

        # docs/packaging.md: apt-get remove keeps the history and the configuration.
        apt("remove", "mysql-snmp")
        assert all(history.stat().st_size > 0 for history in histories) and my_cnf.exists()
        apt("purge", "mysql-snmp")
        left = [path for path in (*INSTALLED_PATHS, *map(str, histories)) if os.path.lexists(path)]
        left += [str(path) for path in Path("/usr/share/snmp/mibs").glob("MYSQL-SERVER-MIB*")]
        left += [str(path) for path in Path("/etc/systemd/system").rglob("mysql-snmp*")]
        left += [str(path) for path in Path("/var/lib/systemd").glob("deb-systemd-helper-*/**/mysql-snmp*")]
        assert left == [], f"left after purge: {left}"
        # What purge does not own stays: the history of the agent run by hand, the system user.
        assert by_hand.read_text() == '{"kept": "by hand"}\n'
        assert pwd.getpwnam(SERVICE_USER).pw_dir == "/var/lib/mysql-snmp"
    finally:
        for process in processes:
            stop_process(process, grace=20)
        by_hand.unlink(missing_ok=True)
        if by_hand.parent.exists() and not any(by_hand.parent.iterdir()):
            by_hand.parent.rmdir()


def test_upgrade_from_the_perl_mysql_snmp_keeps_polling_with_no_edit(
        packages, perl_deb, host_install, mariadb, private_dir):
    """A Perl mysql-snmp site: its init script enabled, DAEMON_OPTS="--config=/etc/snmp/my.cnf
    --nomaster" in /etc/default/mysql-snmp, /etc/snmp/my.cnf root 0600, snmpd's default socket."""
    site_config = Path("/etc/snmp/my.cnf")
    written_drop_in = Path("/etc/snmp/snmpd.conf.d/mysql-snmp-agentx-socket.conf")
    for path in (site_config, Path("/etc/default/mysql-snmp"), Path("/etc/init.d/mysql-snmp"), written_drop_in):
        if path.exists():
            pytest.skip(f"{path} exists on this host: not a stand-in's to replace")
    snmpd_configs = [Path("/etc/snmp/snmpd.conf"), *Path("/etc/snmp/snmpd.conf.d").glob("*")]
    if any(re.match(r"\s*agentXPerms", line, re.IGNORECASE) for conf in snmpd_configs
           if conf.is_file() for line in conf.read_text().splitlines()):
        pytest.skip("this host's snmpd sets agentXPerms: the upgrade rightly leaves it alone")
    processes: list[subprocess.Popen] = []
    try:
        run("dpkg", "-i", str(perl_deb))
        assert list(Path("/etc").glob("rc2.d/S[0-9][0-9]mysql-snmp")), "update-rc.d enabled the Perl agent"
        site_config.write_text(create_monitoring_user(mariadb, private_dir).my_cnf.read_text())
        site_config.chmod(0o600)

        apt("install", f"./dist/{packages['deb'].name}", cwd=packages["deb"].parent.parent)
        assert Path("/usr/sbin/mysql-snmp").resolve() == Path("/usr/bin/mysql-snmp").resolve()
        assert not Path("/etc/init.d/mysql-snmp").exists() and not list(Path("/etc").glob("rc?.d/*mysql-snmp"))
        assert Path("/etc/systemd/system/multi-user.target.wants/mysql-snmp.service").is_symlink(), \
            "the Perl agent was enabled: so is its unit"
        assert Path("/etc/default/mysql-snmp").exists(), "the site's options stay"
        assert written_drop_in.read_text().splitlines()[-1].split() == ["agentXPerms", "0660", "0755", SNMPD_USER,
                                                                        SOCKET_GROUP]
        assert (site_config.stat().st_mode & 0o777, site_config.stat().st_uid) == (0o600, 0), "not loosened"

        snmpd = PrivateSnmpd(private_dir, str(written_drop_in))
        processes.append(snmpd.process)
        state = Path("/var/lib/mysql-snmp/agentx")
        state.mkdir(parents=True, mode=0o750, exist_ok=True)
        shutil.chown(state, SERVICE_USER, SERVICE_USER)
        perl_unit = UnitRun("mysql-snmp.service", extra=["--agentx-socket", str(snmpd.socket)])
        words, _, _ = perl_unit.command(None)
        assert words[0] == "/usr/sbin/mysql-snmp" and "--config=/etc/snmp/my.cnf" in words and "--nomaster" in words

        # The control: without the credential the unit hands over, the old file is out of reach
        # and the agent says so in one line, exit status 2 (RestartPreventExitStatus=2).
        denied_log = private_dir / "denied.log"
        denied = perl_unit.start(denied_log, None)
        assert denied.wait(timeout=60) == 2, denied_log.read_text()
        assert "cannot read /etc/snmp/my.cnf as this user" in denied_log.read_text()

        log = private_dir / "perl-unit.log"
        processes.append(agent := perl_unit.start(log, perl_unit.credentials(private_dir / "cred")))
        key_buffer_size = int(mariadb.execute("SELECT @@key_buffer_size")[0][0])
        snmpd.serves_key_buffer_size(key_buffer_size, log)
        assert "reading /etc/snmp/my.cnf through the systemd credential" in log.read_text()
        assert "binlog" in log.read_text(), "--nomaster left out the binlog source"
        assert stop_process(agent, grace=20) == 0, log.read_text()[-3000:]

        apt("purge", "mysql-snmp")
        left = [path for path in (*INSTALLED_PATHS, "/etc/default/mysql-snmp", "/var/lib/mysql-snmp/agentx")
                if os.path.lexists(path)]
        left += [str(path) for path in Path("/etc/systemd/system").rglob("mysql-snmp*")]
        assert left == [], f"left after purge: {left}"
        assert site_config.exists(), "the site's own my.cnf was never the package's"
    finally:
        for process in processes:
            stop_process(process, grace=20)
        site_config.unlink(missing_ok=True)
