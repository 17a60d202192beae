"""SHOW GLOBAL VARIABLES: the server's configuration, name as printed -> typed value."""

from . import NameValueScraper


class GlobalVariables(NameValueScraper):
    name = "global_variables"
    catalog_kind = "global_variables"
    description = "server configuration (SHOW GLOBAL VARIABLES)"
    statement = "SHOW GLOBAL VARIABLES"


SCRAPER = GlobalVariables
