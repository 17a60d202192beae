"""The exporter-toolkit web configuration file (``--web.config.file``): TLS and basic auth.

Same YAML as every Prometheus exporter, so an operator's existing file works:

    tls_server_config:
      cert_file: server.crt
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert   # optional, with client_ca_file
      client_ca_file: ca.crt
      min_version: TLS12
    basic_auth_users:
      prometheus: $2y$10$...        # bcrypt hash
    http_server_config:
      headers: {X-Frame-Options: deny}

Paths are relative to the file's directory, as in exporter-toolkit.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from mysql_snmp.agents.names import unknown_names_message
from mysql_snmp.agents.textfile import UnusableFile, read_regular_text
from mysql_snmp.agents.yaml_errors import describe_load_error

log = logging.getLogger(__name__)


class WebConfigError(ValueError):
    pass


# Names in Python's ssl module (ssl.TLSVersion, ssl.CERT_*), looked up only when TLS is
# configured: most exporters never load ssl (agents/tls_on_demand.py).
_TLS_VERSIONS = {
    "TLS10": "TLSv1",
    "TLS11": "TLSv1_1",
    "TLS12": "TLSv1_2",
    "TLS13": "TLSv1_3",
}
_WEAK_TLS_VERSIONS = frozenset({"TLS10", "TLS11"})
_CLIENT_AUTH = {
    "": "CERT_NONE",
    "NoClientCert": "CERT_NONE",
    "RequestClientCert": "CERT_OPTIONAL",
    "RequireAnyClientCert": "CERT_REQUIRED",
    "VerifyClientCertIfGiven": "CERT_OPTIONAL",
    "RequireAndVerifyClientCert": "CERT_REQUIRED",
}
_TLS_KEYS = {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version"}
# Accepted so a file written for Go exporters loads; Python's ssl picks these itself.
_TLS_KEYS_IGNORED = {"cipher_suites", "curve_preferences", "prefer_server_cipher_suites", "client_allowed_sans",
                     "cert", "key"}
_TOP_KEYS = {"tls_server_config", "basic_auth_users", "http_server_config"}
# Modular crypt format: $2a$/$2b$/$2y$, a cost of 04..31, then 22 salt + 31 checksum characters
# of bcrypt's base64.  A hash that does not match would make every login fail silently.
_BCRYPT_HASH = re.compile(r"\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")


BCRYPT_MISSING = ("basic_auth_users needs the bcrypt module, which is not installed: "
                  "apt-get install python3-bcrypt, dnf install python3-bcrypt, or pip install 'mysql-snmp[web]'")


@dataclass(frozen=True)
class TLSSettings:
    cert_file: Path
    key_file: Path
    client_auth: str = "CERT_NONE"  # an ssl.VerifyMode name
    client_ca_file: Path | None = None
    min_version: str = "TLSv1_2"  # ssl.TLSVersion names
    max_version: str | None = None

    def context(self) -> "ssl.SSLContext":
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion[self.min_version]
        if self.max_version is not None:
            context.maximum_version = ssl.TLSVersion[self.max_version]
        try:
            context.load_cert_chain(str(self.cert_file), str(self.key_file))
            if self.client_ca_file is not None:
                context.load_verify_locations(str(self.client_ca_file))
        except (OSError, ssl.SSLError) as exc:
            raise WebConfigError(f"TLS: cannot load {self.cert_file} / {self.key_file}: {exc}") from exc
        context.verify_mode = ssl.VerifyMode[self.client_auth]
        return context


@dataclass(frozen=True)
class WebConfig:
    tls: TLSSettings | None = None
    users: dict[str, str] = field(default_factory=dict)  # user -> bcrypt hash
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def auth_required(self) -> bool:
        return bool(self.users)


def _path(base: Path, value: object, what: str) -> Path:
    if not isinstance(value, str) or not value:
        raise WebConfigError(f"tls_server_config.{what} must be a file path")
    path = Path(value)
    return path if path.is_absolute() else base / path


def parse_web_config(document: object, base_dir: Path) -> WebConfig:
    if document is None:
        return WebConfig()
    if not isinstance(document, dict):
        raise WebConfigError("not a YAML mapping")
    unknown = set(document) - _TOP_KEYS
    if unknown:
        raise WebConfigError(unknown_names_message("field", sorted(map(str, unknown)), sorted(_TOP_KEYS)))

    tls = None
    raw_tls = document.get("tls_server_config")
    if raw_tls:
        if not isinstance(raw_tls, dict):
            raise WebConfigError("tls_server_config must be a mapping")
        unknown = set(raw_tls) - _TLS_KEYS - _TLS_KEYS_IGNORED
        if unknown:
            raise WebConfigError("tls_server_config: " + unknown_names_message(
                "field", sorted(map(str, unknown)), sorted(_TLS_KEYS | _TLS_KEYS_IGNORED)))
        for key in sorted(set(raw_tls) & _TLS_KEYS_IGNORED):
            log.warning("web config: tls_server_config.%s is not supported here and is ignored", key)
        if not raw_tls.get("cert_file") or not raw_tls.get("key_file"):
            raise WebConfigError("tls_server_config needs both cert_file and key_file")
        auth_type = raw_tls.get("client_auth_type") or ""
        if auth_type not in _CLIENT_AUTH:
            raise WebConfigError(f"tls_server_config.client_auth_type {auth_type!r} is not one of "
                                 f"{', '.join(k for k in _CLIENT_AUTH if k)}")
        ca = raw_tls.get("client_ca_file")
        # Python's ssl verifies every client certificate it asks for, so even
        # RequestClientCert / RequireAnyClientCert need the CA that signed them.
        if _CLIENT_AUTH[auth_type] != "CERT_NONE" and not ca:
            raise WebConfigError(f"client_auth_type {auth_type} needs client_ca_file")
        versions = {}
        for key in ("min_version", "max_version"):
            if raw_tls.get(key) is not None:
                if raw_tls[key] not in _TLS_VERSIONS:
                    raise WebConfigError(f"tls_server_config.{key} {raw_tls[key]!r} is not one of "
                                         f"{', '.join(_TLS_VERSIONS)}")
                if raw_tls[key] in _WEAK_TLS_VERSIONS:
                    # Deprecated by RFC 8996: a file asking for them is refused, not quietly served.
                    raise WebConfigError(f"tls_server_config.{key} {raw_tls[key]} is too weak "
                                         "(TLS 1.0 and 1.1 are deprecated); use TLS12 or TLS13")
                versions[key] = _TLS_VERSIONS[raw_tls[key]]
        tls = TLSSettings(
            cert_file=_path(base_dir, raw_tls["cert_file"], "cert_file"),
            key_file=_path(base_dir, raw_tls["key_file"], "key_file"),
            client_auth=_CLIENT_AUTH[auth_type],
            client_ca_file=_path(base_dir, ca, "client_ca_file") if ca else None,
            **versions,
        )

    users = document.get("basic_auth_users") or {}
    if not isinstance(users, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in users.items()):
        raise WebConfigError("basic_auth_users must map user names to bcrypt hashes")
    for user, hashed in users.items():
        if not _BCRYPT_HASH.fullmatch(hashed):
            raise WebConfigError(f"basic_auth_users.{user}: not a bcrypt hash")

    headers = (document.get("http_server_config") or {}).get("headers") or {}
    if not isinstance(headers, dict):
        raise WebConfigError("http_server_config.headers must be a mapping")
    return WebConfig(tls=tls, users=dict(users), headers={str(k): str(v) for k, v in headers.items()})


# A web config is a few lines; a bigger file is not one (and must not be read into memory).
MAX_WEB_CONFIG_BYTES = 1 << 20


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def load_web_config(path: str | os.PathLike | None) -> WebConfig:
    if not path:
        return WebConfig()
    path = Path(path)
    import yaml  # only with a file: most processes read no YAML at all

    try:
        document = yaml.safe_load(read_regular_text(path, MAX_WEB_CONFIG_BYTES))
    except OSError as exc:
        raise WebConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnusableFile as exc:
        raise WebConfigError(f"{path}: {_one_line(exc)}") from None
    except yaml.YAMLError as exc:
        raise WebConfigError(f"{path}: {describe_load_error(exc)}") from None
    try:
        config = parse_web_config(document, path.resolve().parent)
        if config.tls is not None:
            config.tls.context()  # fail at start-up, not at the first TLS handshake
        return config
    except WebConfigError as exc:
        raise WebConfigError(f"{path}: {exc}") from exc


class BasicAuthVerifier:
    """Checks user/password against bcrypt hashes, remembering recent verdicts.

    bcrypt costs ~50-250 ms on purpose; Prometheus sends the same credentials
    every scrape, so a verdict is cached under a keyed digest of the credentials
    (never the password itself).  Unknown users still pay one bcrypt so timing
    does not reveal which user names exist.
    """

    def __init__(self, users: dict[str, str], cache_size: int = 256):
        try:
            import bcrypt  # optional dependency: only needed when basic auth is configured
        except ImportError:
            raise WebConfigError(BCRYPT_MISSING) from None
        self._bcrypt = bcrypt
        self._users = {user: hashed.encode() for user, hashed in users.items()}
        self._cache: OrderedDict[bytes, bool] = OrderedDict()
        self._cache_size = cache_size
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._dummy_hash = bcrypt.hashpw(b"not-a-password", bcrypt.gensalt(rounds=10))

    @property
    def cached_verdicts(self) -> int:
        with self._lock:
            return len(self._cache)

    def verify(self, user: str, password: str) -> bool:
        hashed = self._users.get(user)
        digest = hmac.new(self._key, b"\0".join((user.encode(), password.encode(), hashed or b"")),
                          hashlib.sha256).digest()
        with self._lock:
            verdict = self._cache.get(digest)
            if verdict is not None:
                self._cache.move_to_end(digest)
                return verdict
        if hashed is None:
            self._bcrypt.checkpw(password.encode(), self._dummy_hash)
            verdict = False
        else:
            try:
                verdict = self._bcrypt.checkpw(password.encode(), hashed)
            except ValueError:  # malformed hash in the file
                verdict = False
        with self._lock:
            self._cache[digest] = verdict
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return verdict
