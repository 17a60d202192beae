"""Grafana dashboards (grafana/dashboards/*.json), built with grafana-foundation-sdk.

The SDK is Grafana's own typed model of the dashboard schema: a panel, variable or
field config that Grafana would not accept does not build, and a schema change arrives
with an SDK upgrade instead of a hand-edited JSON template.  It is needed only here, at
generation time (the ``generate`` extra); the boards themselves are in
``dashboard_boards.py``.
"""

from __future__ import annotations

import json

from grafana_foundation_sdk.builders import common, dashboard, prometheus, stat, statetimeline, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import BigValueColorMode, LegendDisplayMode, LegendPlacement
from grafana_foundation_sdk.models.dashboard import (
    DashboardCursorSync,
    DataSourceRef,
    ValueMap,
    ValueMappingResult,
    VariableRefresh,
    VariableSort,
)

from ..catalog import Catalog
from . import served_names
from .dashboard_boards import AnnotationSpec, BoardSpec, PanelSpec, boards

DIRECTORY = "grafana/dashboards"
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
REFRESH_SECONDS = "30s"
PANEL_HEIGHT = 8
TAGS = ["mysql", "mysql-snmp"]


def description(catalog: Catalog, spec: PanelSpec) -> str:
    parts = [catalog.by_name(name).help for name in spec.about]
    if spec.note:
        parts.append(spec.note)
    return " ".join(parts)


def _mappings(spec: PanelSpec) -> list[ValueMap]:
    if not spec.mappings:
        return []
    return [ValueMap(options={
        str(value): ValueMappingResult(text=text, color=colour, index=i)
        for i, (value, text, colour) in enumerate(spec.mappings)})]


def _panel(catalog: Catalog, spec: PanelSpec, panel_id: int):
    builder = {"timeseries": timeseries.Panel, "stat": stat.Panel, "state": statetimeline.Panel}[spec.kind]()
    builder = (builder.id(panel_id).title(spec.title).description(description(catalog, spec)).unit(spec.unit)
               .datasource(DATASOURCE).height(PANEL_HEIGHT).span(spec.width).no_value("no data"))
    for index, query in enumerate(spec.queries):
        builder = builder.with_target(prometheus.Dataquery().expr(query.expr).legend_format(query.legend)
                                      .ref_id(chr(ord("A") + index)).datasource(DATASOURCE))
    if spec.kind == "stat":
        builder = builder.reduce_options(common.ReduceDataOptions().calcs(["lastNotNull"])).color_mode(
            BigValueColorMode.BACKGROUND if spec.mappings else BigValueColorMode.VALUE)
    else:
        builder = builder.legend(common.VizLegendOptions().display_mode(LegendDisplayMode.LIST)
                                 .placement(LegendPlacement.BOTTOM).show_legend(True))
    mappings = _mappings(spec)
    if mappings:
        builder = builder.mappings(mappings)
    return builder


def _annotation(catalog: Catalog, spec: AnnotationSpec):
    query = (dashboard.AnnotationQuery().name(spec.name).datasource(DATASOURCE).enable(True)
             .icon_color("orange").expr(spec.expr))
    built = query.build()
    # The Prometheus annotation editor keeps these beside the query; the SDK's model has
    # no field for them.
    extra = {"titleFormat": spec.title, "textFormat": catalog.by_name(spec.about).help, "step": "60s"}
    return built, extra


def _variables() -> list:
    up = served_names.UP
    return [
        dashboard.DatasourceVariable("datasource").label("Data source").type("prometheus"),
        dashboard.QueryVariable("job").label("Job").datasource(DATASOURCE)
        .query(f"label_values({up}, job)").refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(VariableSort.ALPHABETICAL_ASC).multi(True).include_all(True).all_value(".+"),
        dashboard.QueryVariable("instance").label("Instance").datasource(DATASOURCE)
        .query(f'label_values({up}{{job=~"$job"}}, instance)').refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(VariableSort.ALPHABETICAL_ASC).multi(True).include_all(True).all_value(".+"),
    ]


def board_document(catalog: Catalog, spec: BoardSpec) -> dict:
    builder = (dashboard.Dashboard(spec.title).uid(spec.uid).tags(TAGS).refresh(REFRESH_SECONDS)
               .time("now-3h", "now").timezone("browser").tooltip(DashboardCursorSync.CROSSHAIR)
               .editable())
    for variable in _variables():
        builder = builder.with_variable(variable)
    for panel_id, panel in enumerate(spec.panels, start=1):  # stable ids: links to one panel survive updates
        builder = builder.with_panel(_panel(catalog, panel, panel_id))
    document = json.loads(json.dumps(builder.build(), cls=JSONEncoder))
    for annotation in spec.annotations:
        built, extra = _annotation(catalog, annotation)
        entry = json.loads(json.dumps(built, cls=JSONEncoder))
        entry.update(extra)
        document.setdefault("annotations", {}).setdefault("list", []).append(entry)
    return document


def outputs(catalog: Catalog) -> dict[str, str]:
    return {
        f"{DIRECTORY}/{spec.file}": json.dumps(board_document(catalog, spec), indent=2, sort_keys=True) + "\n"
        for spec in boards(catalog)
    }
