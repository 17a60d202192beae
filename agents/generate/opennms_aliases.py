"""OpenNMS aliases: the name of each collected object's RRD file and data source.

RRD data source names hold at most 19 characters of [A-Za-z0-9_], and OpenNMS files every
node-level value of a node in one directory, so an alias must be short and unique.  An alias
names a file on disk for years: it is derived from the object's own SNMP name only (never from
its neighbours), so adding catalog entries never renames an existing file.

- The original mysql-snmp objects keep the alias the original collected them under
  (``snmp.legacy.opennms_alias``), so a site's RRD history continues.
- Other objects: ``snmp.opennms_alias`` when the catalog names one, else the SNMP name when it
  fits, else the name with its words shortened (WORDS, right to left, until it fits), then
  inner vowels dropped from the longest word, then its last letters.  Two objects deriving the
  same alias fail generation: give one of them ``snmp.opennms_alias``.
"""

from __future__ import annotations

import re

from ..catalog import Catalog, Metric

ALIAS_LIMIT = 19
ALIAS_RE = re.compile(r"^[A-Za-z0-9_]{1,19}$")
PREFIX = "my"

# Short forms of the words the catalog's SNMP names are made of.
WORDS = {
    "Adaptive": "Adpt", "Allocated": "Alloc", "Average": "Avg", "Background": "Bg", "Binlog": "Blog",
    "Buffer": "Buf", "Bytes": "B", "Cache": "C", "Checkpoint": "Chkp", "Commit": "Cmt",
    "Compressed": "Cmp", "Compression": "Cmp", "Connection": "Conn", "Connections": "Conn",
    "Count": "Cnt", "Defragment": "Dfrg", "Dictionary": "Dict", "Encryption": "Enc", "Error": "Err",
    "Errors": "Err", "Failures": "Fail", "File": "F", "Files": "F", "Group": "Grp", "Handler": "Hdl",
    "Index": "Idx", "Innodb": "Ib", "Lock": "Lk", "Locks": "Lk", "Log": "Lg", "Maximum": "Max",
    "Memory": "Mem", "Number": "Num", "Operations": "Ops", "Page": "Pg", "Pagecache": "Pc",
    "Pages": "Pg", "Pending": "Pnd", "Per": "P", "Performance": "Perf", "Pool": "Pl",
    "Processlist": "Pl", "Queries": "Q", "Query": "Q", "Read": "Rd", "Reads": "Rds",
    "Replica": "Rpl", "Replication": "Rpl", "Requests": "Req", "Rounds": "Rnd", "Rows": "Row",
    "Schema": "Sch", "Scrub": "Scrb", "Second": "S", "Seconds": "Sec", "Semaphore": "Sem",
    "Size": "Sz", "Source": "Src", "Spin": "Spn", "Statement": "Stmt", "Statements": "Stmt",
    "Status": "St", "Table": "Tbl", "Tables": "Tbl", "Temporary": "Tmp", "Thread": "Thr",
    "Threads": "Thr", "Time": "T", "Total": "Tot", "Transaction": "Trx", "Transactions": "Trx",
    "Trigger": "Trg", "Underflow": "Uflw", "Unknown": "Unk", "Variable": "Var", "Wait": "Wt",
    "Waits": "Wt", "Write": "Wr", "Writes": "Wr", "Written": "Wrtn",
}
VOWELS = frozenset("aeiou")


class AliasError(ValueError):
    pass


def _words(name: str) -> list[str]:
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)


def _length(words: list[str]) -> int:
    return len(PREFIX) + sum(len(w) for w in words)


def _longest(words: list[str]) -> int:
    # the rightmost of the longest words: names are most specific at their end
    return max(range(len(words)), key=lambda i: (len(words[i]), i))


def abbreviate(snmp_name: str) -> str:
    """An alias of at most ALIAS_LIMIT characters for an SNMP object name (my + CamelCase)."""
    if len(snmp_name) <= ALIAS_LIMIT:
        return snmp_name
    if not snmp_name.startswith(PREFIX):
        raise AliasError(f"{snmp_name}: expected a name starting with {PREFIX!r}")
    words = _words(snmp_name[len(PREFIX):])
    for i in reversed(range(len(words))):
        if _length(words) <= ALIAS_LIMIT:
            break
        words[i] = WORDS.get(words[i], words[i])
    while _length(words) > ALIAS_LIMIT:
        i = _longest(words)
        word = words[i]
        inner = [k for k in range(1, len(word)) if word[k] in VOWELS]
        if not inner:
            break
        words[i] = word[: inner[-1]] + word[inner[-1] + 1:]
    while _length(words) > ALIAS_LIMIT:
        i = _longest(words)
        words[i] = words[i][:-1]
    return PREFIX + "".join(words)


def new_tree_alias(metric: Metric) -> str:
    """The alias of a metric's object in the new tree."""
    alias = metric.snmp.opennms_alias or abbreviate(metric.snmp.name)
    if not ALIAS_RE.match(alias):
        raise AliasError(f"{metric.name}: OpenNMS alias {alias!r} is not 1-{ALIAS_LIMIT} of [A-Za-z0-9_]")
    return alias


def check_unique(owners: dict[str, str], alias: str, owner: str) -> None:
    """Record alias -> owner; two owners of one alias fail generation."""
    if alias in owners:
        raise AliasError(f"OpenNMS alias {alias} used by {owners[alias]} and {owner}: "
                         "give one of them snmp.opennms_alias in the catalog")
    owners[alias] = owner


def legacy_alias(metric: Metric) -> str | None:
    """The original's alias of a legacy object; None for the objects it never collected."""
    return metric.snmp.legacy.opennms_alias


def all_aliases(catalog: Catalog) -> dict[str, str]:
    """alias -> owning SNMP object name, over every object that has one."""
    owners: dict[str, str] = {}
    for metric in catalog:
        if metric.snmp is None:
            continue
        if metric.snmp.legacy and legacy_alias(metric):
            check_unique(owners, legacy_alias(metric), metric.snmp.legacy.name)
        if metric.snmp.oid or metric.snmp.table:
            check_unique(owners, new_tree_alias(metric), metric.snmp.name)
    return owners
