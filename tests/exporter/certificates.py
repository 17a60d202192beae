"""A test CA and the certificates it signs, made with ``cryptography`` (a test dependency): a server
certificate for 127.0.0.1 and client certificates carrying chosen subject alternative names."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Issued:
    cert: Path
    key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(value: str) -> x509.GeneralName:
    kind, _, text = value.partition(":")
    if kind == "DNS":
        return x509.DNSName(text)
    if kind == "IP":
        return x509.IPAddress(ipaddress.ip_address(text))
    if kind == "email":
        return x509.RFC822Name(text)
    if kind == "URI":
        return x509.UniformResourceIdentifier(text)
    raise ValueError(f"unknown SAN kind in {value!r}")


class TestCA:
    __test__ = False  # not a pytest class

    def __init__(self, directory: Path, name: str = "test CA"):
        self.directory = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = _name(name)
        now = datetime.datetime.now(datetime.timezone.utc)
        self.certificate = (x509.CertificateBuilder().subject_name(self.name).issuer_name(self.name)
                            .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                            .not_valid_before(now - datetime.timedelta(minutes=5))
                            .not_valid_after(now + datetime.timedelta(days=1))
                            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                            .sign(self.key, hashes.SHA256()))
        self.cert = directory / f"{name.replace(' ', '-')}.crt"
        self.cert.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    def issue(self, file_stem: str, common_name: str, sans: list[str], *, server: bool = False) -> Issued:
        """A certificate signed by this CA; ``sans`` as ``DNS:name``, ``IP:addr``, ``email:a@b``, ``URI:u``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        usage = x509.oid.ExtendedKeyUsageOID.SERVER_AUTH if server else x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(self.name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName([_san(s) for s in sans]), critical=False)
        certificate = builder.sign(self.key, hashes.SHA256())
        issued = Issued(self.directory / f"{file_stem}.crt", self.directory / f"{file_stem}.key")
        issued.cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        issued.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()))
        return issued
