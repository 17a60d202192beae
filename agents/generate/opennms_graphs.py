"""OpenNMS graph reports (etc/snmp-graph.properties.d/mysql-snmp-graph.properties).

The original mysql-snmp's 38 reports keep their ids (``report.mysql.<id>``) and data sources, so
a site's saved graphs and KSC reports keep working; its defects are gone (a report without a
name, a data source listed twice).  New reports cover what the new tree adds.  Columns are
named here by MIB object; the alias, RRD type and resource type come from the generated
collection, so a report can only use what is collected, and a table report carries its
table's resource type.

The command is what OpenNMS appends to ``rrdtool graph``: ``{rrdN}`` is the RRD file of the
N-th column, and the text is a Java properties value (``\\`` for one backslash, so rrdtool
receives ``\\:`` and ``\\n``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..catalog import Catalog
from .opennms_collection import Collected, by_snmp_name

GRAPHS_PATH = "opennms/snmp-graph.properties.d/mysql-snmp-graph.properties"
REPORT_PREFIX = "mysql."
NODE_TYPE = "nodeSnmp"
COLORS = ("1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd", "8c564b", "e377c2", "7f7f7f", "bcbd22",
          "17becf", "393b79", "ad494a", "637939", "843c39", "7b4173", "3182bd")
LEAK_COLOR = "d62728"
# Wide enough for the longest legend line (a leak state and growth rate after the size's
# statistics); rrdtool's default 400x100 cuts it.
WIDTH, HEIGHT = 640, 200
# Words a name's capitals would otherwise split ("Inno DB", "AIO Log I Os"), and spellings
# a name's camel case loses ("myInnodbTransactions").
WHOLE_WORDS = ("InnoDB", "MyISAM", "IOs")
SPELLINGS = {"Innodb": "InnoDB"}


@dataclass(frozen=True)
class Report:
    id: str
    title: str
    columns: tuple[str, ...]  # MIB object names
    vertical_label: str = ""  # default: from the first column's unit
    labels: dict = field(default_factory=dict)  # object name -> legend text
    # size object -> (its leak state object, its growth rate object), both also in columns:
    # not lines of their own; the size's line turns red while the state is suspect or
    # leaking, and its legend ends with the last state and rate.
    leak: dict = field(default_factory=dict)
    # A fixed vertical range (a state 0..2), so a line at 0 is not drawn on the axis alone.
    value_range: tuple[float, float] | None = None


# The original's reports: ids, titles and data sources as it shipped them (duplicates removed;
# myisamkeycache had no title).
LEGACY_REPORTS = (
    Report("myisamindexes", "MyISAM Indexes", ("myKeyReadRequests", "myKeyReads", "myKeyWriteRequests", "myKeyWrites")),
    Report("innodbbufferpool", "InnoDB Buffer Pool", ("myPoolSize", "myDatabasePages", "myFreePages", "myModifiedPages")),
    Report("innodbio", "InnoDB I/O", ("myFileReads", "myFileWrites", "myLogWrites", "myFileFsyncs")),
    Report("innodbinsertbuffer", "InnoDB Insert Buffer", ("myIbufInserts", "myIbufMerged", "myIbufMerges")),
    Report("innodbinsertbufferusage", "InnoDB Insert Buffer Usage", ("myIBufCellCount", "myIBufUsedCells", "myIBufFreeCells")),
    Report("innodbsemaphores", "InnoDB Semaphores", ("mySpinRounds", "mySpinWaits", "myOsWaits")),
    Report("innodbrowoperations", "InnoDB Row Operations", ("myRowsRead", "myRowsDeleted", "myRowsUpdated", "myRowsInserted")),
    Report("mysqltablelocks", "MySQL Table Locks", ("myTableLocksImmediate", "myTableLocksWaited", "mySlowQueries")),
    Report("mysqlconnections", "MySQL Connections", ("myMaxConnections", "myMaxUsedConnections", "myAbortedClients",
                                                     "myAbortedConnects", "myThreadsConnected", "myConnections")),
    Report("mysqlreplication", "MySQL Replication", ("mySlaveRunning", "mySlaveStopped", "mySlaveLag",
                                                     "mySlaveOpenTempTables", "mySlaveRetriedTransactions")),
    Report("mysqlquerycache", "MySQL Query Cache", ("myQcacheQueriesInCache", "myQcacheHits", "myQcacheInserts",
                                                    "myQcacheNotCached", "myQcacheLowmemPrunes")),
    Report("mysqlquerycachememory", "MySQL Query Cache Memory", ("myQueryCacheSize", "myQcacheFreeMemory",
                                                                 "myQcacheTotalBlocks", "myQcacheFreeBlocks")),
    Report("mysqlcommandcounters", "MySQL Command Counters", ("myQuestions", "myComSelect", "myComDelete", "myComInsert",
                                                              "myComUpdate", "myComReplace", "myComLoad", "myComDeleteMulti",
                                                              "myComInsertSelect", "myComUpdateMulti", "myComReplaceSelect")),
    Report("mysqlselecttypes", "MySQL Select Types", ("mySelectFullJoin", "mySelectFullRangeJoin", "mySelectRange",
                                                      "mySelectRangeCheck", "mySelectScan")),
    Report("mysqlsorts", "MySQL Sorts", ("mySortRows", "mySortRange", "mySortMergePasses", "mySortScan")),
    Report("mysqltemporaryobjects", "MySQL Temporary Objects", ("myCreatedTmpTables", "myCreatedTmpDiskTables", "myCreatedTmpFiles")),
    Report("mysqlnetworktraffic", "MySQL Network Traffic", ("myBytesSent", "myBytesReceived")),
    Report("innodbbufferpoolactivity", "InnoDB Buffer Pool Activity", ("myPagesCreated", "myPagesRead", "myPagesWritten")),
    Report("innodbiopending", "InnoDB I/O Pending", ("myPendingAIOLogIOs", "myPendingAIOSyncIOs", "myPendingBufPoolFlushes",
                                                     "myPendingChkpWrites", "myPendingIbufAIOReads", "myPendingLogFlushes",
                                                     "myPendingLogWrites", "myPendingNormalAIOReads", "myPendingNormalAIOWrites")),
    Report("innodblog", "InnoDB Log", ("myInnodbLogBufferSize", "myLogBytesWritten", "myLogBytesFlushed", "myUnflushedLog")),
    Report("mysqlbinaryrelaylogs", "MySQL Binary/Relay Logs", ("myBinlogCacheUse", "myBinlogCacheDiskUse", "myBinaryLogSpace", "myRelayLogSpace")),
    Report("innodbtransactions", "InnoDB Transactions", ("myInnodbTransactions", "myCurrentTransactions", "myHistoryList", "myReadViews")),
    Report("innodbactivelockedtransactions", "InnoDB Active/Locked Transactions", ("myActiveTransactions", "myLockedTransactions")),
    Report("mysqlfilesandtables", "MySQL Files and Tables", ("myTableCache", "myOpenTables", "myOpenFiles", "myOpenedTables")),
    Report("mysqlthreads", "MySQL Threads", ("myThreadCacheSize", "myThreadsCreated")),
    Report("innodbmemoryallocation", "InnoDB Memory Allocation", ("myTotalMemAlloc", "myAdditionalPoolAlloc")),
    Report("innodbadaptivehashindex", "InnoDB Adaptive Hash Index", ("myHashIndexCellsTotal", "myHashIndexCellsUsed")),
    Report("innodbinternalhashmemoryusage", "InnoDB Internal Hash Memory Usage", (
        "myAdaptiveHashMemory", "myPageHashMemory", "myDictionaryCacheMemory", "myFileSystemMemory",
        "myLockSystemMemory", "myRecoverySystemMemory", "myThreadHashMemory")),
    Report("innodbtablesinuse", "InnoDB Tables In Use", ("myInnoDBTablesInUse", "myInnoDBLockedTables")),
    Report("innodbcurrentlockwaits", "InnoDB Current Lock Waits", ("myInnoDBLockWaitSecs",)),
    Report("innodblockstructures", "InnoDB Lock Structures", ("myInnoDBLockStructs",)),
    Report("innodbcheckpointage", "InnoDB Checkpoint Age", ("myUncheckpointedBytes",)),
    Report("mysqlprocesslist", "MySQL Processlist", (
        "myStateClosingTables", "myStateCopyingToTmpTable", "myStateEnd", "myStateFreeingItems", "myStateInit",
        "myStateLocked", "myStateLogin", "myStatePreparing", "myStateReadingFromNet", "myStateSendingData",
        "myStateSortingResult", "myStateStatistics", "myStateUpdating", "myStateWritingToNet", "myStateNone",
        "myStateOther")),
    Report("innodbsemaphorewaits", "InnoDB Semaphore Waits", ("myInnoDBSemWaits",)),
    Report("innodbsemaphorewaittime", "InnoDB Semaphore Wait Time", ("myInnoDBSemWaitTime",)),
    Report("myisamkeycache", "MyISAM Key Cache", ("myKeyBufferSize", "myKeyBufBytesUsed", "myKeyBufBytesUnflushed")),
    Report("innodbrowlocktime", "InnoDB Row Lock Time", ("myInnoDBRowLockTime",)),
    Report("innodbrowlockwaits", "InnoDB Row Lock Waits", ("myInnoDBRowLockWaits",)),
)

NEW_REPORTS = (
    # One report per watched InnoDB memory size: sizes orders of magnitude apart (a 1 MB
    # dictionary beside 100 MB in total) flatten each other on one linear axis, and Backshift
    # (OpenNMS's default web graph engine) draws no logarithmic axis.
    Report("innodbdictionarymemory", "InnoDB Dictionary Cache and Leak State", (
        "myDictionaryCacheMemory", "myLeakDictionaryState", "myLeakDictionaryGrowthBytesPerHour"),
           labels={"myDictionaryCacheMemory": "Dictionary cache"},
           leak={"myDictionaryCacheMemory": ("myLeakDictionaryState", "myLeakDictionaryGrowthBytesPerHour")}),
    Report("innodbadaptivehashmemory", "InnoDB Adaptive Hash Index Memory and Leak State", (
        "myAdaptiveHashMemory", "myLeakAdaptiveHashState", "myLeakAdaptiveHashGrowthBytesPerHour"),
           labels={"myAdaptiveHashMemory": "Adaptive hash index"},
           leak={"myAdaptiveHashMemory": ("myLeakAdaptiveHashState", "myLeakAdaptiveHashGrowthBytesPerHour")}),
    Report("innodbtotalmemory", "InnoDB Total Memory and Leak State", (
        "myTotalMemAlloc", "myLeakInnodbTotalState", "myLeakInnodbTotalGrowthBytesPerHour"),
           labels={"myTotalMemAlloc": "Total allocated"},
           leak={"myTotalMemAlloc": ("myLeakInnodbTotalState", "myLeakInnodbTotalGrowthBytesPerHour")}),
    Report("leakstate", "Memory Leak Detector State", ("myLeakState", "myLeakReasonCode"),
           vertical_label="0 ok 1 suspect 2 leaking", value_range=(-0.1, 2.1),
           labels={"myLeakState": "State", "myLeakReasonCode": "Reason (1 tables, 2 unexplained)"}),
    Report("leakgrowth", "Memory Leak Growth Rate", ("myLeakGrowthBytesPerHour",), vertical_label="bytes per hour",
           labels={"myLeakGrowthBytesPerHour": "Growth"}),
    Report("leakforecast", "Memory Leak Time To Limit", ("myLeakTimeToLimitSeconds",), vertical_label="seconds",
           labels={"myLeakTimeToLimitSeconds": "Time to limit"}),
    Report("innodbcheckpointlimit", "InnoDB Checkpoint Age and Limit", ("myStatusInnodbCheckpointAge", "myStatusInnodbCheckpointMaxAge"),
           labels={"myStatusInnodbCheckpointAge": "Checkpoint age", "myStatusInnodbCheckpointMaxAge": "Maximum age"}),
    Report("innodbhistorylist", "InnoDB History List Length", ("myInnodbTrxHistoryListLength",),
           labels={"myInnodbTrxHistoryListLength": "Undo log records"}),
    Report("replicationlag", "Replication and Heartbeat Lag", ("mySlaveLag", "myHeartbeatLagSeconds"), vertical_label="seconds",
           labels={"mySlaveLag": "Seconds behind source", "myHeartbeatLagSeconds": "Heartbeat lag"}),
    Report("replicationchannellag", "Replication Channel Lag", ("myReplicaSecondsBehindSource", "myReplicaSqlDelaySeconds"),
           labels={"myReplicaSecondsBehindSource": "Seconds behind source",
                   "myReplicaSqlDelaySeconds": "Configured delay"}),
    Report("replicationchannelthreads", "Replication Channel Threads", ("myReplicaIoRunning", "myReplicaSqlRunning"),
           vertical_label="running (1) or not",
           labels={"myReplicaIoRunning": "IO thread", "myReplicaSqlRunning": "SQL thread"}),
    Report("innodbsemaphoreoswaits", "InnoDB Semaphore OS Waits", (
        "myInnodbSemMutexOsWaits", "myInnodbSemRwSharedOsWaits", "myInnodbSemRwExclOsWaits", "myInnodbSemRwSxOsWaits"),
           labels={"myInnodbSemMutexOsWaits": "Mutex", "myInnodbSemRwSharedOsWaits": "RW shared",
                   "myInnodbSemRwExclOsWaits": "RW exclusive", "myInnodbSemRwSxOsWaits": "RW SX"}),
    Report("bufferpoolpages", "InnoDB Buffer Pool Instance Pages", (
        "myInnodbPoolSizePages", "myInnodbPoolDatabasePages", "myInnodbPoolFreePages", "myInnodbPoolModifiedPages"),
           labels={"myInnodbPoolSizePages": "Size", "myInnodbPoolDatabasePages": "Database",
                   "myInnodbPoolFreePages": "Free", "myInnodbPoolModifiedPages": "Modified"}),
    Report("hostload", "Host Load Average", ("myHostLoad1", "myHostLoad5", "myHostLoad15"), vertical_label="load",
           labels={"myHostLoad1": "1 minute", "myHostLoad5": "5 minutes", "myHostLoad15": "15 minutes"}),
    Report("hostcpu", "Host CPU Time", ("myHostCpuSeconds",), vertical_label="CPU seconds per second",
           labels={"myHostCpuSeconds": "CPU"}),
    Report("hostmemory", "Host Memory", ("myHostMemoryTotalBytes", "myHostMemoryAvailableBytes"),
           labels={"myHostMemoryTotalBytes": "Total", "myHostMemoryAvailableBytes": "Available"}),
    # On its own axis: beside tens of GB of host memory a few hundred MB draw flat.
    Report("mysqldmemory", "mysqld Resident Memory", ("myProcessResidentMemoryBytes",),
           labels={"myProcessResidentMemoryBytes": "Resident"}),
    Report("mysqldcpu", "mysqld CPU", ("myProcessCpuUserSeconds", "myProcessCpuSystemSeconds"),
           vertical_label="CPU seconds per second",
           labels={"myProcessCpuUserSeconds": "User", "myProcessCpuSystemSeconds": "System"}),
)

REPORTS = LEGACY_REPORTS + NEW_REPORTS


class GraphError(ValueError):
    pass


def _words(snmp_name: str) -> str:
    whole = "|".join(WHOLE_WORDS)
    words = re.findall(rf"{whole}|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", snmp_name.removeprefix("my"))
    return " ".join(SPELLINGS.get(word, word) for word in words)


def resource_type(report: Report, columns: list[Collected]) -> str:
    types = {c.resource_type or NODE_TYPE for c in columns}
    if len(types) != 1:
        raise GraphError(f"report {report.id}: columns from several resource types {sorted(types)}")
    return types.pop()


def _mixed(columns: list[Collected]) -> bool:
    """Rates (counters) and levels (gauges) on one axis: each rate's legend says so."""
    return len({c.rrd_type for c in columns}) > 1


def _vertical_label(report: Report, columns: list[Collected]) -> str:
    if report.vertical_label:
        return report.vertical_label
    units = " / ".join(dict.fromkeys(c.metric.unit or "count" for c in columns))
    return f"{units} per second" if all(c.rrd_type == "COUNTER" for c in columns) else units


def _legend(report: Report, column: Collected, mixed: bool) -> str:
    text = report.labels.get(column.snmp_name, _words(column.snmp_name))
    return f"{text} per s" if mixed and column.rrd_type == "COUNTER" else text


def _command(report: Report, columns: list[Collected]) -> list[str]:
    companions = {name for pair in report.leak.values() for name in pair}
    plotted = [c for c in columns if c.snmp_name not in companions]
    lines = [f'--title="{report.title}"', f'--vertical-label="{_vertical_label(report, plotted)}"',
             f"--width={WIDTH} --height={HEIGHT}"]
    if report.value_range:
        low, high = report.value_range
        lines.append(f"--lower-limit={low} --upper-limit={high} --rigid")
    position = {c.snmp_name: i for i, c in enumerate(columns, start=1)}
    drawn = [(i, c) for i, c in enumerate(columns, start=1) if c.snmp_name not in companions]
    mixed = _mixed(plotted)
    width = max(len(_legend(report, c, mixed)) for c in plotted)
    for line, (i, column) in enumerate(drawn):
        pair = report.leak.get(column.snmp_name)
        raw = f"raw{i}" if column.type == "TimeTicks" else f"v{i}"
        lines.append(f"DEF:{raw}={{rrd{i}}}:{column.alias}:AVERAGE")
        if pair:
            state, rate = (position[name] for name in pair)
            lines.append(f"DEF:v{state}={{rrd{state}}}:{columns[state - 1].alias}:AVERAGE")
            lines.append(f"DEF:v{rate}={{rrd{rate}}}:{columns[rate - 1].alias}:AVERAGE")
        if column.type == "TimeTicks":  # hundredths of a second on the wire
            lines.append(f"CDEF:v{i}=raw{i},100,/")
        label = _legend(report, column, mixed).ljust(width)
        lines.append(f'LINE2:v{i}#{COLORS[line % len(COLORS)]}:"{label}"')
        for name, function in (("avg", "AVERAGE"), ("min", "MINIMUM"), ("max", "MAXIMUM")):  # rrdgraph_rpn VDEF
            lines.append(f"VDEF:v{i}{name}=v{i},{function}")
        lines.append(f'GPRINT:v{i}avg:"Avg\\\\: %8.2lf %s"')
        lines.append(f'GPRINT:v{i}min:"Min\\\\: %8.2lf %s"')
        lines.append(f'GPRINT:v{i}max:"Max\\\\: %8.2lf %s\\\\n"')
        if not pair:
            continue
        lines.append(f"CDEF:v{i}leak=v{state},1,GE,v{i},UNKN,IF")  # the size where suspect (1) or leaking (2)
        lines.append(f"LINE3:v{i}leak#{LEAK_COLOR}")
        for j in (state, rate):
            lines.append(f"VDEF:v{j}last=v{j},LAST")
        lines.append(f'GPRINT:v{state}last:"{"":{width}}  leak state\\\\: %1.0lf"')
        lines.append(f'GPRINT:v{rate}last:"  growth\\\\: %6.2lf %sB/h\\\\n"')
    if report.leak:
        lines.append(f'COMMENT:"Red\\\\: the size while its leak state is 1 (suspect) or 2 (leaking)\\\\n"')
    return lines


def report_columns(report: Report, collected: dict[str, Collected]) -> list[Collected]:
    missing = [name for name in report.columns if name not in collected]
    if missing:
        raise GraphError(f"report {report.id}: {missing} not collected (not in the catalog, or never collected)")
    columns = [collected[name] for name in report.columns]
    strings = [c.snmp_name for c in columns if c.rrd_type is None]
    if strings:
        raise GraphError(f"report {report.id}: {strings} are text (strings.properties), not RRD data sources")
    return columns


def properties(catalog: Catalog) -> str:
    collected = by_snmp_name(catalog)
    ids = [REPORT_PREFIX + r.id for r in REPORTS]
    if len(set(ids)) != len(ids):
        raise GraphError("a report id is used twice")
    out = [
        "# Generated by `mysql-snmp generate` from agents/catalog.yaml (agents/generate/opennms_graphs.py); do not edit.",
        "# Copy to etc/snmp-graph.properties.d/ (OpenNMS reads new files there without a restart).",
        "",
        "reports=" + ", \\\n".join(ids),
    ]
    for report in REPORTS:
        columns = report_columns(report, collected)
        key = f"report.{REPORT_PREFIX}{report.id}"
        out += [
            "",
            f"{key}.name={report.title}",
            f"{key}.columns={','.join(c.alias for c in columns)}",
            f"{key}.type={resource_type(report, columns)}",
            f"{key}.command=" + " \\\n ".join(_command(report, columns)),
        ]
    return "\n".join(out) + "\n"


def outputs(catalog: Catalog) -> dict[str, str]:
    return {GRAPHS_PATH: properties(catalog)}
