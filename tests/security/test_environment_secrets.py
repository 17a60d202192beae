"""A password read from the environment leaves /proc/PID/environ too, not only os.environ."""

import os
import subprocess
import sys

from mysql_snmp.agents.config.settings import PASSWORD_ENV

SECRET = "s3cret-from-the-environment"
MARK = "--- after forgetting ---"

READ_FORGET_READ = f"""
import sys
from mysql_snmp.agents.config.environment_secrets import forget_environment_variable

def shown():
    with open('/proc/self/environ', 'rb') as proc:
        return proc.read()

before = shown()
forget_environment_variable({PASSWORD_ENV!r})
sys.stdout.buffer.write(before + {MARK.encode()!r} + shown())
"""


def test_the_start_up_copy_is_blanked_and_the_rest_kept():
    env = {**os.environ, PASSWORD_ENV: SECRET, "MYSQL_SNMP_NEIGHBOUR": "kept"}
    out = subprocess.run([sys.executable, "-c", READ_FORGET_READ], env=env, capture_output=True, check=True).stdout
    before, after = out.split(MARK.encode())
    assert SECRET.encode() in before  # the control: /proc shows what exec was given
    assert SECRET.encode() not in after
    assert b"MYSQL_SNMP_NEIGHBOUR=kept" in after


def test_a_missing_variable_is_no_error(monkeypatch):
    from mysql_snmp.agents.config.environment_secrets import forget_environment_variable

    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    forget_environment_variable(PASSWORD_ENV)
    assert PASSWORD_ENV not in os.environ
