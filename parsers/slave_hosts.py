"""SHOW REPLICAS / SHOW REPLICA HOSTS / SHOW SLAVE HOSTS rows: the replicas registered with a source."""

from __future__ import annotations

from typing import Iterable

from .columns import MISSING, fold_row, pick
from .types import Labels, labels_of
from .values import text_of


def _text(folded: dict, *columns: str) -> str:
    value = pick(folded, columns)
    return "" if value is MISSING else text_of(value) or ""


def replica_host_series(rows: Iterable[object]) -> dict[str, dict[Labels, int]]:
    """One info sample per registered replica, labelled as mysqld_exporter labels it.

    MySQL 8.0.22+ says Source_Id / Replica_UUID where older servers say Master_id / Slave_UUID;
    MariaDB prints no UUID at all.
    """
    info: dict[Labels, int] = {}
    for index, row in enumerate(rows):
        folded = fold_row(row, f"replica hosts row {index}")
        info[labels_of(server_id=_text(folded, "Server_id"), slave_host=_text(folded, "Host"),
                       port=_text(folded, "Port"), master_id=_text(folded, "Master_id", "Source_Id"),
                       slave_uuid=_text(folded, "Slave_UUID", "Replica_UUID"))] = 1
    return {"slave_hosts_info": info} if info else {}
