"""What the installed mysqld_exporter (the Go one, 0.14) says about itself: its flags and its defaults."""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from mysql_snmp.agents.demo.throwaway import free_loopback_port

GO_EXPORTER = "/usr/bin/prometheus-mysqld-exporter"
# kingpin's own flags, not the exporter's.
_KINGPIN_FLAGS = {"help", "help-long", "help-man", "version"}
# "  -h, --help ...", "      --collect.binlog_size  Collect ...", '      --collect.heartbeat.table="heartbeat"'
_FLAG_LINE = re.compile(r"^\s+(?:-\w, )?--(?:\[no-\])?([a-z][\w.-]*)(=\S*)?", re.MULTILINE)


def _go_help_text() -> str:
    answer = subprocess.run([GO_EXPORTER, "--help"], capture_output=True, text=True, timeout=30)
    return answer.stdout + answer.stderr  # kingpin prints its help on stderr


def go_flags() -> dict[str, str | None]:
    """Every flag of the installed Go exporter's --help: name -> its default as printed (quotes
    removed), None for a boolean (kingpin prints no default for those; it accepts --name, --no-name
    and --name=true|false)."""
    return {name: value[1:].strip('"') if value else None
            for name, value in _FLAG_LINE.findall(_go_help_text()) if name not in _KINGPIN_FLAGS}


def go_flag_help() -> dict[str, str]:
    """Each flag's description in the Go exporter's --help, its wrapped lines joined by one space."""
    descriptions: dict[str, list[str]] = {}
    current: list[str] = []
    for line in _go_help_text().splitlines():
        flag = _FLAG_LINE.match(line)
        if flag:
            current = descriptions.setdefault(flag.group(1), [])
            line = line[flag.end():]
        current.append(line.strip())
    return {name: " ".join(" ".join(words).split()) for name, words in descriptions.items()
            if name not in _KINGPIN_FLAGS}


def go_default_scrapers(my_cnf: Path, timeout: float = 10.0) -> set[str]:
    """The collectors the Go exporter enables without flags, as it logs them at start ("Scraper enabled");
    it is stopped once it listens, before any scrape reaches MySQL."""
    port = free_loopback_port()
    process = subprocess.Popen([GO_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(timeout, process.kill)  # a silent hang ends the read below
    watchdog.start()
    enabled = set()
    try:
        for line in process.stderr:
            if 'msg="Scraper enabled"' in line:
                enabled.add(re.search(r"scraper=(\S+)", line).group(1))
            if 'msg="Listening on"' in line:
                break
        else:
            raise RuntimeError(f"{GO_EXPORTER} stopped before listening (code {process.wait()})")
    finally:
        watchdog.cancel()
        process.terminate()
        process.wait()
        process.stderr.close()
    return enabled


@contextmanager
def running_go_exporter(my_cnf: Path, *flags: str, timeout: float = 10.0) -> Iterator[int]:
    """The Go exporter on a free loopback port (yielded) once it accepts connections, for
    side-by-side comparisons on the wire; stopped on exit."""
    port = free_loopback_port()
    process = subprocess.Popen([GO_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}",
                                *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{GO_EXPORTER} not listening (exit code {process.poll()})") from None
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait()
