"""Certificates and keys of a local control plane, the way envtest and local-up-cluster make them.

One CA signs the API server's serving certificate and every client certificate (CN = user, O = groups);
a separate ECDSA key signs service-account tokens. Everything is written as PEM into the cluster's folder.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["Authority", "Credential", "signing_key"]

VALIDITY = datetime.timedelta(days=7)


@dataclass(frozen=True)
class Credential:
    """A certificate and its key on disk."""

    cert: Path
    key: Path


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def write_private(path: Path, data: bytes) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return path


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def subject(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*parts, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class Authority:
    """A CA in `folder`: `ca.crt`, plus whatever it issues there."""

    def __init__(self, folder: Path, name: str = "kplan-dev-ca") -> None:
        self.folder = folder
        self._key = new_key()
        now = datetime.datetime.now(datetime.UTC)
        self._name = subject(name)
        self._cert = (
            x509.CertificateBuilder().subject_name(self._name).issuer_name(self._name)
            .public_key(self._key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.cert = folder / "ca.crt"
        self.cert.write_bytes(cert_pem(self._cert))
        self.key = write_private(folder / "ca.key", key_pem(self._key))

    def issue(self, stem: str, common_name: str, organizations: tuple[str, ...] = (), *,
              server: bool = False) -> Credential:
        """A leaf certificate: a server's for 127.0.0.1 and localhost, or a client's for user `common_name`."""
        key = new_key()
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder().subject_name(subject(common_name, organizations)).issuer_name(self._name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            loopback = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
            names: list[x509.GeneralName] = [x509.DNSName("localhost"), loopback]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        path = self.folder / f"{stem}.crt"
        path.write_bytes(cert_pem(cert))
        return Credential(path, write_private(self.folder / f"{stem}.key", key_pem(key)))


def signing_key(folder: Path) -> Credential:
    """The service-account token signing key (`sa.key`) and its public half (`sa.pub`)."""
    key = new_key()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    (folder / "sa.pub").write_bytes(public)
    return Credential(folder / "sa.pub", write_private(folder / "sa.key", key_pem(key)))
