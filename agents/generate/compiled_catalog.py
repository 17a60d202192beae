"""agents/catalog.json: the catalog YAML compiled to JSON, which every process loads instead.

The catalog object is not what is compiled: the YAML document is, as written, so the
loader's validation runs on it exactly as on the YAML.
"""

from __future__ import annotations

from ..catalog import COMPILED_PATH, Catalog, compiled_catalog_text


def outputs(catalog: Catalog) -> dict[str, str]:
    return {f"agents/{COMPILED_PATH.name}": compiled_catalog_text()}
