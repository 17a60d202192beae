"""The Perl mysql-snmp's command line, accepted by ``mysql-snmp agentx``.

Init scripts and /etc/default files written for the original pass ``-c /etc/snmp/my.cnf``,
``-h HOST``, ``-r 300``, ``-n``...  Each such option means what it meant there, mapped onto
this agent's flags; where the meaning no longer exists (daemonising) it is accepted and said so.
A password on the command line is refused: every local user reads it in ``ps``.

The original's sources were switches (``--master`` on, ``--innodb`` on, ``--slave`` and
``--procs`` off by default).  Here every one of them runs by default, and a server that is not a
replica simply has no replica values, so the switches only matter when turned off.

The original was started as ``/usr/sbin/mysql-snmp OPTIONS`` without a command word; such a
line runs ``agentx`` (``perl_command_line``), spelled as Getopt::Long allowed (``-config``,
``--nomaster``).  Its option file was root's (0600) and the agent ran as root; the packaged
unit runs as an unprivileged user and systemd hands it that file as a credential
(``LoadCredential=perl-config:/etc/snmp/my.cnf``, see ``config_from_credential``).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from ..config.version import installed_version

log = logging.getLogger(__name__)

# The original's switch -> the source that now collects what it switched on.
SWITCHED_SOURCES = {
    "master": "binlog",
    "slave": "replication",
    "innodb": "innodb_status",
    "procs": "processlist",
}

PASSWORD_REFUSED = (
    "-p/--password is not accepted: a password on the command line is visible to every local user "
    "in ps. Put it in the [client] section of the -c/--my-cnf file (mode 0600, e.g. "
    "/etc/mysql-snmp/my.cnf) or in the MYSQLD_EXPORTER_PASSWORD environment variable"
)

# Getopt::Long took a long option after one dash as well (``-config FILE``, ``-nomaster``);
# argparse would read ``-config`` as ``-c onfig``.
PERL_LONG_OPTIONS = frozenset({
    "host", "port", "user", "password", "config", "oid", "refresh", "heartbeat", "daemon-pid", "daemon_pid",
    "no-daemon", "verbose", "version", "man", "usage", "help", "process-list",
    *(f"{prefix}{switch}" for switch in ("master", "slave", "innodb", "procs", "process-list")
      for prefix in ("", "no", "no-")),
})

# The systemd credential mysql-snmp.service loads the Perl agent's option file into, and the
# variable naming that file (LoadCredential= does not tell the service its source).
PERL_CONFIG_CREDENTIAL = "perl-config"
PERL_CONFIG_ENV = "MYSQL_SNMP_PERL_CONFIG"


def perl_command_line(argv: list[str], commands) -> list[str] | None:
    """The ``agentx`` command line a Perl mysql-snmp command line (options, no command) stands
    for; None when ``argv`` names a command or asks the top-level parser for help or version."""
    if not argv or not argv[0].startswith("-") or argv in (["-h"], ["--help"], ["--version"]):
        return None
    if any(word in commands for word in argv):
        return None
    return ["agentx", *argv]


def with_perl_spellings(argv: list[str]) -> list[str]:
    """``-config FILE`` -> ``--config FILE``: the one-dash long options Getopt::Long accepted."""
    return [f"-{word}" if word.startswith("-") and not word.startswith("--")
            and word[1:].split("=", 1)[0] in PERL_LONG_OPTIONS else word for word in argv]


def add_perl_agent_options(parser: argparse.ArgumentParser) -> None:
    """The original's options; the parser must be built with add_help=False (-h is the host there)."""
    group = parser.add_argument_group(
        "options of the Perl mysql-snmp",
        "Accepted with their old meaning (-h is the MySQL host, as there; help is -?/--help).")
    group.add_argument("-?", "--help", "--usage", "--man", action="help", help="show this help and exit")
    group.add_argument("-c", "--config", dest="my_cnf", metavar="FILE", help="same as --my-cnf")
    group.add_argument("-h", dest="host", metavar="HOST", help="same as --host")
    group.add_argument("-P", dest="port", metavar="PORT", help="same as --port")
    group.add_argument("-u", dest="user", metavar="USER", help="same as --user")
    group.add_argument("-p", "--password", dest="perl_password", metavar="PASS", help="refused: it would show in ps; put it in the -c file or MYSQLD_EXPORTER_PASSWORD")
    group.add_argument("-o", dest="oid", metavar="OID", help="same as --oid")
    group.add_argument("-r", dest="refresh", type=float, metavar="SECONDS",
                       help="same as --refresh (the original's default was 300, this agent's is 30)")
    group.add_argument("-b", dest="heartbeat", metavar="DB.TABLE", help="same as --heartbeat")
    for switch, letters in (("master", ["-m"]), ("slave", ["-s"]), ("innodb", ["-i"]),
                            ("procs", ["-l", "--process-list"])):
        longs = [f"--{switch}", *(letter for letter in letters if letter.startswith("--"))]
        group.add_argument(*letters, f"--{switch}", dest=f"perl_{switch}", action="store_true", default=None,
                           help=f"runs the {SWITCHED_SOURCES[switch]} source (on by default)")
        # Getopt::Long's negations: --noSWITCH and --no-SWITCH.
        group.add_argument(*(f"--no{name[2:]}" for name in longs), *(f"--no-{name[2:]}" for name in longs),
                           dest=f"perl_{switch}", action="store_false",
                           help=f"leave out the {SWITCHED_SOURCES[switch]} source")
    group.add_argument("-n", "--no-daemon", dest="perl_no_daemon", action="store_true",
                       help="accepted; this agent always runs in the foreground (systemd supervises it)")
    group.add_argument("--daemon-pid", "--daemon_pid", dest="perl_pid_file", metavar="FILE",
                       help="write the agent's PID to FILE (removed on exit); systemd does not need it")
    group.add_argument("-v", "--verbose", dest="perl_verbose", action="count", default=0,
                       help="same as --log-level debug")
    group.add_argument("-V", action="version", version=f"%(prog)s {installed_version()}", help="same as --version")


def config_from_credential(path: str, environ=os.environ) -> str:
    """The file to read for ``-c PATH``: PATH itself, or the systemd credential holding it when this
    user may not read PATH and the unit loaded PATH as that credential.

    The Perl agent ran as root and read a root 0600 /etc/snmp/my.cnf; making that file readable
    to the service user would widen who can read the password, while LoadCredential= gives the
    service alone a copy (in a directory only it can read, gone when it stops)."""
    if os.access(path, os.R_OK) or not os.path.exists(path):
        return path
    credentials = environ.get("CREDENTIALS_DIRECTORY")
    named = environ.get(PERL_CONFIG_ENV)
    if credentials and named and os.path.realpath(named) == os.path.realpath(path):
        credential = os.path.join(credentials, PERL_CONFIG_CREDENTIAL)
        if os.access(credential, os.R_OK):
            log.info("reading %s through the systemd credential %s (LoadCredential=)", path, PERL_CONFIG_CREDENTIAL)
            return credential
    raise ValueError(
        f"cannot read {path} as this user (the Perl mysql-snmp ran as root). Do not loosen its mode: in "
        f"mysql-snmp.service, 'LoadCredential={PERL_CONFIG_CREDENTIAL}:{path}' and "
        f"'Environment={PERL_CONFIG_ENV}={path}' hand it over (systemctl edit mysql-snmp)")


def apply_perl_agent_options(args: argparse.Namespace, default_sources: tuple[str, ...]) -> None:
    """Fold the original's options into this agent's; raises ValueError for a refused one."""
    if args.perl_password is not None:
        raise ValueError(PASSWORD_REFUSED)
    if args.my_cnf is not None:
        args.my_cnf = config_from_credential(args.my_cnf)
    if args.perl_verbose:
        logging.getLogger().setLevel(logging.DEBUG)
    turned_off = {source for switch, source in SWITCHED_SOURCES.items() if getattr(args, f"perl_{switch}") is False}
    if turned_off:
        chosen = [s.strip() for s in args.sources.split(",")] if args.sources else list(default_sources)
        args.sources = ",".join(s for s in chosen if s and s not in turned_off)
        log.info("left out by the original's --no-* switches: %s", ", ".join(sorted(turned_off)))


class PidFile:
    """--daemon-pid: the PID written at start and removed at exit, as the original's init scripts expect."""

    def __init__(self, path: str | None):
        self.path = Path(path) if path else None

    def __enter__(self) -> PidFile:
        if self.path is not None:
            try:
                self.path.write_text(f"{os.getpid()}\n")
            except OSError as exc:
                # The old init scripts pass /var/run/mysql-snmp.pid; a unit running as its own
                # user may not write there, and systemd knows the PID anyway.
                log.warning("--daemon-pid: cannot write %s (%s); running without a PID file",
                            self.path, exc.strerror)
                self.path = None
        return self

    def __exit__(self, *exc_info) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
