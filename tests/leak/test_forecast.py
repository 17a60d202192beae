"""The RSS forecast counts towards the mysqld process's cgroup limit when the snapshot has one."""

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.leak.config import PROCESS_RSS_SERIES, load_leak_config
from mysql_snmp.agents.leak.forecast import forecast, forecast_band
from mysql_snmp.agents.leak.series_detector import LEAKING, Reading

GIB = 2**30


def rss_series():
    return next(s for s in load_leak_config(None).series if s.name == PROCESS_RSS_SERIES)


def growing(level: float, rate_bytes_per_hour: float, error: float | None = None) -> Reading:
    return Reading(state=LEAKING, reason="", level=level, rate_bytes_per_hour=rate_bytes_per_hour,
                   window_seconds=3600.0, window_growth_bytes=rate_bytes_per_hour, growing=True,
                   rate_error_bytes_per_hour=error)


def test_the_cgroup_limit_binds_when_below_physical_memory():
    assert "process_cgroup_memory_limit_bytes" in load_catalog()  # the name the collector emits
    values = {"process_cgroup_memory_limit_bytes": 4 * GIB, "host_memory_total_bytes": 16 * GIB}
    seconds, limit = forecast(growing(3 * GIB, GIB), rss_series(), values)
    assert limit == 4 * GIB and seconds == 3600.0


def test_without_a_cgroup_limit_physical_memory_is_the_limit():
    seconds, limit = forecast(growing(3 * GIB, GIB), rss_series(), {"host_memory_total_bytes": 16 * GIB})
    assert limit == 16 * GIB and seconds == 13 * 3600.0


def test_the_band_is_the_forecast_at_the_rate_three_standard_errors_either_side():
    values = {"host_memory_total_bytes": 16 * GIB}
    # 13 GiB of room at 1 GiB/h +- 0.1 GiB/h: 13 h, between 13/1.3 and 13/0.7 hours
    lower, upper = forecast_band(growing(3 * GIB, GIB, 0.1 * GIB), rss_series(), values)
    assert (lower, upper) == (13 * 3600.0 / 1.3, 13 * 3600.0 / 0.7)
    # never narrower than 15 % of the rate either side
    assert forecast_band(growing(3 * GIB, GIB, 0.0), rss_series(), values) == (13 * 3600.0 / 1.15, 13 * 3600.0 / 0.85)
    # a rate whose lower end is no growth: no latest time (no limit in sight)
    assert forecast_band(growing(3 * GIB, GIB, 0.5 * GIB), rss_series(), values) == (13 * 3600.0 / 2.5, None)
    # no error known (not leaking): no band
    assert forecast_band(growing(3 * GIB, GIB), rss_series(), values) == (None, None)
