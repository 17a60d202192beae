"""Install the repository's agents/ and parsers/ as mysql_snmp.agents and mysql_snmp.parsers.

The layout keeps both at the top of the repository; mapping them here (instead of in
pyproject.toml) lets find_packages list their subpackages, so a new one needs no edit."""

from setuptools import find_packages, setup

ROOTS = ("agents", "parsers")

setup(
    package_dir={f"mysql_snmp.{root}": root for root in ROOTS},
    packages=[f"mysql_snmp.{name}" for name in find_packages(include=[f"{root}" for root in ROOTS]
                                                             + [f"{root}.*" for root in ROOTS])],
)
