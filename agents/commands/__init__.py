"""The ``mysql-snmp`` subcommands, one module each (listed in agents/cli.py COMMAND_MODULES)."""
