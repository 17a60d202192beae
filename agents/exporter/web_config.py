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

Paths are relative to the file's directory, as in exporter-toolkit.  Every key is either honoured
or an error at start (docs/security.md, "TLS and web.yml"): a TLS or auth setting dropped with a
warning would serve less than the file asks for.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import os
import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from ..config.names import unknown_names_message
from ..config.textfile import UnusableFile, read_regular_text
from ..config.yaml_errors import describe_load_error


class WebConfigError(ValueError):
    pass


# Names in Python's ssl module (ssl.TLSVersion, ssl.CERT_*), looked up only when TLS is
# configured: most exporters never load ssl (agents/mysql/tls_on_demand.py).
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
    "RequireClientCert": "CERT_REQUIRED",  # exporter-toolkit's older name of RequireAnyClientCert
    "VerifyClientCertIfGiven": "CERT_OPTIONAL",
    "RequireAndVerifyClientCert": "CERT_REQUIRED",
}
_TLS_KEYS = {"cert_file", "key_file", "client_auth_type", "client_ca_file", "client_ca", "min_version", "max_version",
             "client_allowed_sans", "prefer_server_cipher_suites", "cipher_suites"}
# exporter-toolkit keys this exporter does not implement.  A file naming one is refused at start:
# a TLS setting dropped with a warning would serve something weaker than the file asks for.
_TLS_KEYS_REFUSED = {
    "curve_preferences": "Python's ssl cannot set a list of curves; remove it (OpenSSL's defaults apply)",
    "cert": "an inline certificate is not supported: put it in a file named by cert_file",
    "key": "an inline key is not supported: put it in a file named by key_file",
}
# cipher_suites takes the names of Go's tls.CipherSuites(); these are OpenSSL's names of the same
# TLS 1.0-1.2 suites.  TLS 1.3 suites are accepted and, as in Go, not configurable.
_CIPHER_SUITES = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
}
_TLS13_SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
_TOP_KEYS = {"tls_server_config", "basic_auth_users", "http_server_config"}
_HTTP_KEYS = {"headers", "http2"}
# The response headers exporter-toolkit lets a web config set, with the values it allows (None: any).
_EXTRA_HEADERS = {
    "Strict-Transport-Security": None,
    "X-Content-Type-Options": ("nosniff",),
    "X-Frame-Options": ("deny", "sameorigin"),
    "X-XSS-Protection": None,
    "Content-Security-Policy": None,
}
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
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
    client_ca_text: str | None = None  # PEM, exporter-toolkit's client_ca
    min_version: str = "TLSv1_2"  # ssl.TLSVersion names
    max_version: str | None = None
    client_allowed_sans: tuple[str, ...] = ()
    prefer_server_cipher_suites: bool = True
    ciphers: str | None = None  # OpenSSL cipher list for TLS 1.2; "" when cipher_suites names TLS 1.3 ones only

    def context(self) -> "ssl.SSLContext":
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion[self.min_version]
        if self.max_version is not None:
            context.maximum_version = ssl.TLSVersion[self.max_version]
        if not self.prefer_server_cipher_suites:  # Python's ssl sets it on every context
            context.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
        if self.ciphers:
            context.set_ciphers(self.ciphers)
        elif self.ciphers == "":  # no TLS 1.2 suite allowed: Go can then only complete TLS 1.3
            context.minimum_version = ssl.TLSVersion.TLSv1_3
        try:
            context.load_cert_chain(str(self.cert_file), str(self.key_file))
            if self.client_ca_file is not None:
                context.load_verify_locations(str(self.client_ca_file))
            elif self.client_ca_text is not None:
                context.load_verify_locations(cadata=self.client_ca_text)
        except (OSError, ssl.SSLError) as exc:
            raise WebConfigError(f"TLS: cannot load {self.cert_file} / {self.key_file} or the client CA: "
                                 f"{exc}") from exc
        context.verify_mode = ssl.VerifyMode[self.client_auth]
        return context

    def allows_client(self, certificate: dict) -> bool:
        """Whether a verified client certificate (``SSLSocket.getpeercert()``) carries one of
        client_allowed_sans: a DNS name, email address, URI or IP address, compared exactly
        (IP addresses as addresses: Python spells IPv6 ones in full)."""
        allowed = set(self.client_allowed_sans)
        allowed_ips = {ip for ip in map(_ip_or_none, allowed) if ip is not None}
        for kind, value in certificate.get("subjectAltName", ()):
            if kind in ("DNS", "email", "URI") and value in allowed:
                return True
            if kind == "IP Address" and _ip_or_none(value.strip()) in allowed_ips:
                return True
        return False


def _ip_or_none(text: str):
    import ipaddress

    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


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


def _refuse_unknown(where: str, mapping: dict, known: set[str]) -> None:
    unknown = set(mapping) - known
    if unknown:
        raise WebConfigError(f"{where}{unknown_names_message('field', sorted(map(str, unknown)), sorted(known))}")


def _parse_tls(raw_tls: object, base_dir: Path) -> TLSSettings:
    if not isinstance(raw_tls, dict):
        raise WebConfigError("tls_server_config must be a mapping")
    refused = sorted(set(raw_tls) & set(_TLS_KEYS_REFUSED))
    if refused:
        raise WebConfigError(f"tls_server_config.{refused[0]} is not supported here: {_TLS_KEYS_REFUSED[refused[0]]}")
    _refuse_unknown("tls_server_config: ", raw_tls, _TLS_KEYS | set(_TLS_KEYS_REFUSED))
    if not raw_tls.get("cert_file") or not raw_tls.get("key_file"):
        raise WebConfigError("tls_server_config needs both cert_file and key_file")
    auth_type = raw_tls.get("client_auth_type") or ""
    if auth_type not in _CLIENT_AUTH:
        raise WebConfigError(f"tls_server_config.client_auth_type {auth_type!r} is not one of "
                             f"{', '.join(k for k in _CLIENT_AUTH if k)}")
    ca, ca_text = raw_tls.get("client_ca_file"), raw_tls.get("client_ca")
    if ca and ca_text:
        raise WebConfigError("tls_server_config: give client_ca_file or client_ca, not both")
    if ca_text is not None and (not isinstance(ca_text, str) or "-----BEGIN CERTIFICATE-----" not in ca_text):
        raise WebConfigError("tls_server_config.client_ca must be PEM text (-----BEGIN CERTIFICATE-----)")
    verify = _CLIENT_AUTH[auth_type]
    # Python's ssl verifies every client certificate it asks for, so even
    # RequestClientCert / RequireAnyClientCert need the CA that signed them.
    if verify != "CERT_NONE" and not (ca or ca_text):
        raise WebConfigError(f"client_auth_type {auth_type} needs client_ca_file")
    if verify == "CERT_NONE" and (ca or ca_text):  # exporter-toolkit refuses it too
        raise WebConfigError("a client CA is given but client_auth_type asks for no client certificate")
    sans = raw_tls.get("client_allowed_sans")
    if sans is not None:
        if not isinstance(sans, list) or not sans or not all(isinstance(s, str) and s for s in sans):
            raise WebConfigError("tls_server_config.client_allowed_sans must be a list of names")
        if verify != "CERT_REQUIRED":
            raise WebConfigError("client_allowed_sans needs client_auth_type RequireAnyClientCert or "
                                 "RequireAndVerifyClientCert: otherwise a client may send no certificate")
    ciphers = _ciphers(raw_tls.get("cipher_suites"))
    prefer = raw_tls.get("prefer_server_cipher_suites", True)
    if not isinstance(prefer, bool):
        raise WebConfigError("tls_server_config.prefer_server_cipher_suites must be true or false")
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
    return TLSSettings(
        cert_file=_path(base_dir, raw_tls["cert_file"], "cert_file"),
        key_file=_path(base_dir, raw_tls["key_file"], "key_file"),
        client_auth=verify,
        client_ca_file=_path(base_dir, ca, "client_ca_file") if ca else None,
        client_ca_text=ca_text,
        client_allowed_sans=tuple(sans or ()),
        prefer_server_cipher_suites=prefer,
        ciphers=ciphers,
        **versions,
    )


def _ciphers(suites: object) -> str | None:
    """OpenSSL's cipher list for exporter-toolkit's ``cipher_suites`` (None: not given)."""
    if suites is None:
        return None
    if not isinstance(suites, list) or not suites or not all(isinstance(name, str) for name in suites):
        raise WebConfigError("tls_server_config.cipher_suites must be a list of cipher suite names")
    unknown = [name for name in suites if name not in _CIPHER_SUITES and name not in _TLS13_SUITES]
    if unknown:
        raise WebConfigError("tls_server_config.cipher_suites: " + unknown_names_message(
            "cipher suite", unknown, sorted(_CIPHER_SUITES.keys() | _TLS13_SUITES)))
    return ":".join(_CIPHER_SUITES[name] for name in suites if name in _CIPHER_SUITES)


def _parse_http(raw_http: object) -> dict[str, str]:
    if raw_http is None:
        return {}
    if not isinstance(raw_http, dict):
        raise WebConfigError("http_server_config must be a mapping")
    _refuse_unknown("http_server_config: ", raw_http, _HTTP_KEYS)
    if raw_http.get("http2", False) is not False:
        raise WebConfigError("http_server_config.http2: this exporter serves HTTP/1.1 only; remove it or set false")
    headers = raw_http.get("headers") or {}
    if not isinstance(headers, dict):
        raise WebConfigError("http_server_config.headers must be a mapping")
    for name, value in headers.items():
        if name not in _EXTRA_HEADERS:
            raise WebConfigError(f"http_server_config.headers: {name!r} cannot be set; "
                                 f"known: {', '.join(_EXTRA_HEADERS)}")
        if not isinstance(value, str) or not _HEADER_VALUE.fullmatch(value):
            raise WebConfigError(f"http_server_config.headers.{name} must be one line of text")
        allowed = _EXTRA_HEADERS[name]
        if allowed is not None and value not in allowed:
            raise WebConfigError(f"http_server_config.headers.{name} {value!r} is not one of {', '.join(allowed)}")
    return dict(headers)


def parse_web_config(document: object, base_dir: Path) -> WebConfig:
    if document is None:
        return WebConfig()
    if not isinstance(document, dict):
        raise WebConfigError("not a YAML mapping")
    _refuse_unknown("", document, _TOP_KEYS)
    raw_tls = document.get("tls_server_config")
    tls = _parse_tls(raw_tls, base_dir) if raw_tls else None

    users = document.get("basic_auth_users") or {}
    if not isinstance(users, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in users.items()):
        raise WebConfigError("basic_auth_users must map user names to bcrypt hashes")
    for user, hashed in users.items():
        if not _BCRYPT_HASH.fullmatch(hashed):
            raise WebConfigError(f"basic_auth_users.{user}: not a bcrypt hash")
    return WebConfig(tls=tls, users=dict(users), headers=_parse_http(document.get("http_server_config")))


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


class Verdict(enum.Enum):
    ALLOWED = "allowed"
    REFUSED = "refused"
    BUSY = "busy"  # too many password checks already running or queued: retry


# bcrypt reads at most 72 bytes of a password; longer ones are cut there, as Go's bcrypt and
# htpasswd do (the bcrypt module refuses them instead, which made a long password fail differently
# for a known user than for an unknown one).
BCRYPT_PASSWORD_BYTES = 72
SUCCESS_CACHE_SIZE = 100
WAITING_CHECKS = 4


class BasicAuthVerifier:
    """Checks basic-auth credentials against bcrypt hashes.

    bcrypt costs ~50-500 ms of CPU on purpose, so:

    - credentials that succeeded are remembered (under a keyed digest, never the password
      itself): Prometheus sends the same ones every scrape and pays no bcrypt after the first;
      only successes are kept, so wrong guesses cannot push them out;
    - one bcrypt runs at a time (exporter-toolkit's rule) and at most ``WAITING_CHECKS`` wait for
      it; a check beyond those is answered BUSY at once, so a flood of guesses holds neither CPU
      nor connections;
    - an unknown user costs a bcrypt against the costliest configured hash, and every failure
      the same REFUSED: neither the answer nor its time tells which user names exist.
    """

    def __init__(self, users: dict[str, str], cache_size: int = SUCCESS_CACHE_SIZE,
                 waiting_checks: int = WAITING_CHECKS):
        try:
            import bcrypt  # optional dependency: only needed when basic auth is configured
        except ImportError:
            raise WebConfigError(BCRYPT_MISSING) from None
        self._bcrypt = bcrypt
        self._users = {user.encode(): hashed.encode() for user, hashed in users.items()}
        # The cost is the two digits after "$2b$": an unknown user is checked against the dearest hash.
        self._decoy_hash = max(self._users.values(), key=lambda hashed: int(hashed[4:6]))
        self._successes: OrderedDict[bytes, None] = OrderedDict()
        self._cache_size = cache_size
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._hashing = threading.Lock()
        self._admitted = 0
        self._max_admitted = 1 + waiting_checks
        self.busy_answers = 0

    @property
    def cached_successes(self) -> int:
        with self._lock:
            return len(self._successes)

    def check_header(self, header: str) -> Verdict:
        """The verdict on an Authorization header's value."""
        scheme, _, encoded = header.partition(" ")
        if scheme.lower() != "basic":
            return Verdict.REFUSED
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True)
        except ValueError:  # not base64, or not even ASCII
            return Verdict.REFUSED
        user, colon, password = decoded.partition(b":")
        return self.check(user, password) if colon else Verdict.REFUSED

    def check(self, user: bytes, password: bytes) -> Verdict:
        hashed = self._users.get(user)
        digest = hmac.new(self._key, b"".join(len(part).to_bytes(4, "big") + part
                                              for part in (user, hashed or b"", password)), hashlib.sha256).digest()
        with self._lock:
            if digest in self._successes:
                self._successes.move_to_end(digest)
                return Verdict.ALLOWED
            if self._admitted >= self._max_admitted:
                self.busy_answers += 1
                return Verdict.BUSY
            self._admitted += 1
        try:
            with self._hashing:
                matched = self._bcrypt.checkpw(password[:BCRYPT_PASSWORD_BYTES], hashed or self._decoy_hash)
        except ValueError:  # a hash the module cannot read: a failure like any other
            matched = False
        finally:
            with self._lock:
                self._admitted -= 1
        if hashed is None or not matched:
            return Verdict.REFUSED
        with self._lock:
            self._successes[digest] = None
            while len(self._successes) > self._cache_size:
                self._successes.popitem(last=False)
        return Verdict.ALLOWED
