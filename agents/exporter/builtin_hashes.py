"""hashlib's built-in SHA-1/SHA-2 instead of OpenSSL's, in the exporter process.

Importing hashlib loads OpenSSL's libcrypto through ``_hashlib`` when it can.  The exporter
hashes little: a password scramble per MySQL login (SHA-1, SHA-256), the basic-auth cache key
and the catalog's digest at start.  The interpreter's own implementations (what hashlib uses
when Python is built without OpenSSL, the same algorithms and results) do that as well.
Making ``_hashlib`` unimportable before hashlib's first import keeps libcrypto out of the
process unless TLS (ssl) brings it in: with no TLS configured and ssl not imported, 3.7 MB
less resident memory; with ssl imported, 0.5 MB.
"""

from __future__ import annotations

import sys


def use_builtin_hashes() -> bool:
    """Before any import of hashlib (and hmac, secrets, pymysql): True when it took effect,
    False when hashlib is already imported (it keeps whatever it found then)."""
    if "hashlib" in sys.modules or "_hashlib" in sys.modules:
        return False
    sys.modules["_hashlib"] = None  # the import system's "not available": hashlib falls back
    return True
