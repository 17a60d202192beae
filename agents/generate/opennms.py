"""OpenNMS thresholds and the events for the MIB's notifications.

- ``opennms/thresholds-mysql.xml``: thresholding groups (valid against OpenNMS's
  thresholding.xsd) for the leak table (state leaking, suspect for half an hour; fast growth and
  a forecast of less than a week until the memory limit, both only while the series is suspect
  or leaking, so a warm-up after a restart does not cross them), the replication channels (IO or
  SQL thread stopped, lag) and connection saturation; ``opennms/threshd-configuration.mysql-snmp.xml``
  the package that applies them to the SNMP service.
- ``opennms/events/MYSQL-SERVER-MIB.events.xml``: one event per catalog notification,
  masked on the trap OID as OpenNMS sees an SNMPv2 trap (RFC 3584 section 3.2: the
  enterprise is the OID without its last sub-identifier, and without the ``.0`` before
  it; the specific type is the last sub-identifier).  A notification with ``clears: X`` in
  the catalog clears the alarm of X, keyed by its first varbind (series, channel).

Data source names are the aliases of the generated datacollection group
(agents/generate/opennms_collection.py), looked up by MIB object.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from ..catalog import Catalog, format_oid, parse_oid
from .opennms_collection import Collected, by_snmp_name

THRESHOLDS_PATH = "opennms/thresholds-mysql.xml"
THRESHD_PATH = "opennms/threshd-configuration.mysql-snmp.xml"
EVENTS_PATH = "opennms/events/MYSQL-SERVER-MIB.events.xml"
UEI_PREFIX = "uei.opennms.org/mysql-snmp"
NODE_RESOURCE = "node"
THRESHOLD_NAMESPACE = "http://xmlns.opennms.org/xsd/config/thresholding"

SEVERITIES = {"critical": "Critical", "major": "Major", "minor": "Minor", "warning": "Warning",
              "normal": "Normal", "cleared": "Cleared", "indeterminate": "Indeterminate"}

MIB_NAME = "MYSQL-SERVER-MIB"
MIB = 1024 * 1024


def _number(value: float) -> str:
    return f"{value:.17g}"


def _element(tag: str, description: str, kind: str, column: Collected, target: tuple[str, str], value: float,
             rearm: float, trigger: int) -> str:
    # OpenNMS's standard threshold UEIs (high/lowThresholdExceeded, ...Rearmed) are used, so
    # no extra event definitions are needed for these.
    attributes = [
        ("description", description), ("type", kind), ("ds-type", column.resource_type or NODE_RESOURCE), target,
        ("value", _number(value)), ("rearm", _number(rearm)), ("trigger", str(trigger)),
    ]
    return f"    <{tag} " + " ".join(f"{k}={quoteattr(v)}" for k, v in attributes) + "/>\n"


def _threshold(description: str, kind: str, column: Collected, value: float, rearm: float, trigger: int) -> str:
    return _element("threshold", description, kind, column, ("ds-name", column.alias), value, rearm, trigger)


def _expression(description: str, kind: str, columns: list[Collected], template: str, value: float, rearm: float,
                trigger: int) -> str:
    expression = template.format(*(c.alias for c in columns))
    return _element("expression", description, kind, columns[0], ("expression", expression), value, rearm, trigger)


# Every MIB object a threshold reads (the default data collection collects them).
THRESHOLDED_OBJECTS = ("myLeakState", "myLeakGrowthBytesPerHour", "myLeakTimeToLimitSeconds", "myReplicaIoRunning",
                       "myReplicaSqlRunning", "myReplicaSecondsBehindSource", "myThreadsConnected", "myMaxConnections")
# What a rate or forecast expression reads while the series is ok (0): a server warming up
# after a restart grows fast without leaking, and the detector keeps its state at ok through
# the warm-up it recognises, so only a suspect or leaking series can cross these thresholds.
WHILE_OK_RATE = 0
WHILE_OK_DAYS = 10**6


def threshold_groups(catalog: Catalog) -> dict[str, str]:
    """group name -> its threshold elements."""
    collected = by_snmp_name(catalog)
    c = {name: collected[name] for name in THRESHOLDED_OBJECTS}
    state, rate, ttl = c["myLeakState"], c["myLeakGrowthBytesPerHour"], c["myLeakTimeToLimitSeconds"]
    io, sql, lag = c["myReplicaIoRunning"], c["myReplicaSqlRunning"], c["myReplicaSecondsBehindSource"]
    connected, limit = c["myThreadsConnected"], c["myMaxConnections"]
    return {
        "mysql-leak": (
            _threshold("leak detector state leaking (2)", "high", state, 1.5, 0.5, 1)
            + _threshold("leak detector state suspect (1) or worse for 6 polls", "high", state, 0.5, 0.25, 6)
            + _expression("suspect or leaking series grows faster than 64 MiB/h", "high", [rate, state],
                          f"{{1}} >= 1 ? {{0}} : {WHILE_OK_RATE}", 64 * MIB, 16 * MIB, 2)
            + _expression("suspect or leaking series reaches its memory limit within a week (days)", "low",
                          [ttl, state], f"{{1}} >= 1 ? {{0}} / 86400 : {WHILE_OK_DAYS}", 7, 14, 2)
        ),
        "mysql-replication": (
            _threshold("replication IO thread stopped", "low", io, 0, 1, 1)
            + _threshold("replication SQL thread stopped", "low", sql, 0, 1, 1)
            + _threshold("replica more than 5 minutes behind its source", "high", lag, 300, 60, 2)
        ),
        "mysql-connections": (
            _expression("connections above 85% of max_connections", "high", [connected, limit],
                        "{0} / {1} * 100", 85, 75, 2)
        ),
    }


HEADER = "Generated by `mysql-snmp generate` from agents/catalog.yaml (agents/generate/opennms.py); do not edit."


def thresholds_xml(catalog: Catalog) -> str:
    groups = "".join(
        f'  <group name="{name}" rrdRepository="/var/lib/opennms/rrd/snmp/">\n{body}  </group>\n'
        for name, body in threshold_groups(catalog).items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<!-- {HEADER}\n"
        "     Merge the groups into etc/thresholds.xml, and the package of threshd-configuration.mysql-snmp.xml\n"
        "     into etc/threshd-configuration.xml.  Data sources: opennms/datacollection/mysql-snmp.xml. -->\n"
        f'<thresholding-config xmlns="{THRESHOLD_NAMESPACE}">\n'
        f"{groups}"
        "</thresholding-config>\n"
    )


def threshd_xml(catalog: Catalog) -> str:
    parameters = "".join(
        f'      <parameter key="thresholding-group" value="{name}"/>\n' for name in threshold_groups(catalog)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<!-- {HEADER}\n"
        "     Merge the package into etc/threshd-configuration.xml (narrow its filter to your MySQL hosts). -->\n"
        f'<threshd-configuration xmlns="{THRESHOLD_NAMESPACE}" threads="5">\n'
        '  <package name="mysql-snmp">\n'
        "    <filter>IPADDR != '0.0.0.0'</filter>\n"
        '    <include-range begin="1.1.1.1" end="254.254.254.254"/>\n'
        '    <include-range begin="::1" end="ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"/>\n'
        '    <service name="SNMP" interval="300000" user-defined="false" status="on">\n'
        f"{parameters}"
        "    </service>\n"
        "  </package>\n"
        "</threshd-configuration>\n"
    )


def trap_mask(oid: tuple[int, ...]) -> tuple[str, int]:
    """(enterprise id, specific type) under which OpenNMS files an SNMPv2 trap OID."""
    enterprise = oid[:-1]
    if enterprise and enterprise[-1] == 0:
        enterprise = enterprise[:-1]
    return "." + format_oid(enterprise), oid[-1]


def _event(catalog: Catalog, notification: dict, clears: str | None) -> str:
    name = notification["name"]
    enterprise, specific = trap_mask(parse_oid(notification["oid"]))
    objects = list(notification.get("objects") or ())
    for obj in objects:
        catalog.by_name(obj)  # fails generation on a varbind the catalog does not know
    parms = ", ".join(f"{obj}=%parm[#{i}]%" for i, obj in enumerate(objects, start=1))
    severity = SEVERITIES.get(str(notification.get("severity", "indeterminate")).lower(), "Indeterminate")
    uei = f"{UEI_PREFIX}/{name}"
    # The first varbind's OID carries the row (series, channel), or .0 for a node-wide state.
    reduction = f"{uei}:%dpname%:%nodeid%:%parm[name-#1]%"
    if clears:
        cleared_key = f"{UEI_PREFIX}/{clears}:%dpname%:%nodeid%:%parm[name-#1]%"
        alarm = (f'    <alarm-data reduction-key={quoteattr(reduction)} alarm-type="2" '
                 f'clear-key={quoteattr(cleared_key)} auto-clean="false"/>\n')
    else:
        alarm = f'    <alarm-data reduction-key={quoteattr(reduction)} alarm-type="1" auto-clean="false"/>\n'
    description = escape(str(notification.get("description", name)).strip())
    return (
        "  <event>\n"
        "    <mask>\n"
        f"      <maskelement><mename>id</mename><mevalue>{enterprise}</mevalue></maskelement>\n"
        "      <maskelement><mename>generic</mename><mevalue>6</mevalue></maskelement>\n"
        f"      <maskelement><mename>specific</mename><mevalue>{specific}</mevalue></maskelement>\n"
        "    </mask>\n"
        f"    <uei>{uei}</uei>\n"
        f"    <event-label>{MIB_NAME} defined trap event: {name}</event-label>\n"
        f"    <descr>&lt;p&gt;{description}&lt;/p&gt;&lt;p&gt;{escape(parms)}&lt;/p&gt;</descr>\n"
        f'    <logmsg dest="logndisplay">&lt;p&gt;{name}: {escape(parms)}&lt;/p&gt;</logmsg>\n'
        f"    <severity>{severity}</severity>\n"
        f"{alarm}"
        "  </event>\n"
    )


def events_xml(catalog: Catalog) -> str:
    notifications = list(catalog.extra.get("notifications") or ())
    names = {n["name"] for n in notifications}
    events = []
    for notification in notifications:
        name = notification["name"]
        clears = notification.get("clears")
        if clears is not None and clears not in names:
            raise ValueError(f"notification {name} clears {clears}, which is not a notification of the catalog")
        events.append(_event(catalog, notification, clears))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        "<!-- Generated by `mysql-snmp generate` from agents/catalog.yaml (agents/generate/opennms.py); do not edit.\n"
        "     Include from eventconf.xml: <event-file>events/MYSQL-SERVER-MIB.events.xml</event-file> -->\n"
        '<events xmlns="http://xmlns.opennms.org/xsd/eventconf">\n'
        + "".join(events)
        + "</events>\n"
    )


def outputs(catalog: Catalog) -> dict[str, str]:
    return {THRESHOLDS_PATH: thresholds_xml(catalog), THRESHD_PATH: threshd_xml(catalog),
            EVENTS_PATH: events_xml(catalog)}
