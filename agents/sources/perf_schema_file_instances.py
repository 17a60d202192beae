"""performance_schema.file_summary_by_instance: reads and writes per file (--collect.perf_schema.file_instances.*)."""

from . import SourceResult
from .table_source import TableSource, sql_text
from mysql_snmp.parsers.perf_schema_files import file_instances_series


class PerfSchemaFileInstances(TableSource):
    name = "perf_schema_file_instances"
    heavy = True
    description = "file I/O per file and mode (performance_schema.file_summary_by_instance)"

    def statement(self, server):
        return ("SELECT FILE_NAME, EVENT_NAME, COUNT_READ, COUNT_WRITE, SUM_NUMBER_OF_BYTES_READ,"
                " SUM_NUMBER_OF_BYTES_WRITE FROM performance_schema.file_summary_by_instance"
                f" WHERE FILE_NAME REGEXP {sql_text(self.options.file_instances_filter)}")

    def parse(self, rows):
        return SourceResult(series=file_instances_series(rows, self.options.file_instances_remove_prefix))


SCRAPER = PerfSchemaFileInstances
