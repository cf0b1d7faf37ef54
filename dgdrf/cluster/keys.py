"""The cluster's identities: a certificate authority and one certificate per role or node.

Network mode authenticates every connection both ways with TLS (mutual: the dialling
process shows its certificate too). A certificate's subject names who holds it (common
name) and the role it may play (organizational unit): ``bootstrap``, ``collector``,
``gateway``, ``server``, ``user``, or ``admin`` (the operator: may stop nodes and read
their counters, hosts no actor). Whoever holds a certificate and its key signed by the
cluster's CA is that member; nobody else can connect. The CA's own key signs
certificates and never leaves the machine where ``dgdrf cluster keys`` ran.

Host names are not checked: nodes are found by the addresses they registered with the
bootstrap, and it is the certificate's name that binds a process to the actors it
hosts (:mod:`dgdrf.cluster.membership`, :mod:`dgdrf.runtime.net`).
"""

from __future__ import annotations

import datetime as dt
import os
import ssl
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dgdrf.errors import ConfigError
from dgdrf.runtime.roles import ADMIN, MEMBER_ROLES, ROLES, Identity, identity_of

CA_CERT = "ca.crt"
CA_KEY = "ca.key"
#: certificates are valid this long by default
DEFAULT_DAYS = 365


def _write(path: Path, data: bytes, private: bool) -> None:
    """Write atomically (a node may be waiting for the file), private keys mode 0600."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def make_keys(directory: Path, names: dict[str, str] | None = None, days: int = DEFAULT_DAYS, force: bool = False) -> list[Path]:
    """Make a CA and a certificate (with its key) for each ``name -> role`` (default: one
    per role, named after it) in ``directory``; the CA certificate is written last, so a
    node waiting for it finds every file complete. Returns the files written."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    names = dict(names) if names is not None else {r: r for r in ROLES}
    for name, role in names.items():
        if role not in ROLES:
            raise ConfigError(f"certificate {name!r}: unknown role {role!r} (roles: {', '.join(ROLES)})")
        if not name or "/" in name or name.startswith("."):
            raise ConfigError(f"certificate name {name!r} must be a plain file name")
    directory.mkdir(parents=True, exist_ok=True)
    if (directory / CA_CERT).exists() and not force:
        raise ConfigError(f"{directory / CA_CERT} exists: these keys were made already (--force makes new ones, and the old certificates stop working)")
    now = dt.datetime.now(dt.timezone.utc)
    begin, end = now - dt.timedelta(minutes=5), now + dt.timedelta(days=days)
    pem = serialization.Encoding.PEM
    raw_key = lambda k: k.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())  # noqa: E731

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dgdrf cluster CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(begin).not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    written: list[Path] = []
    for name, role in names.items():
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name), x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, role)])
        cert = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(begin).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )  # fmt: skip
        _write(directory / f"{name}.key", raw_key(key), private=True)
        _write(directory / f"{name}.crt", cert.public_bytes(pem), private=False)
        written += [directory / f"{name}.crt", directory / f"{name}.key"]
    _write(directory / CA_KEY, raw_key(ca_key), private=True)
    _write(directory / CA_CERT, ca.public_bytes(pem), private=False)
    return [*written, directory / CA_KEY, directory / CA_CERT]


@dataclass(frozen=True)
class Credentials:
    """A node's certificate and key, and the CA it trusts."""

    ca: Path
    cert: Path
    key: Path

    @classmethod
    def from_dir(cls, directory: Path, name: str) -> Credentials:
        """``DIR/ca.crt`` and ``DIR/NAME.crt``/``NAME.key``, as ``dgdrf cluster keys`` lays them out."""
        creds = cls(directory / CA_CERT, directory / f"{name}.crt", directory / f"{name}.key")
        missing = [str(p) for p in (creds.ca, creds.cert, creds.key) if not p.is_file()]
        if missing:
            raise ConfigError(f"no {' / '.join(missing)}: make the cluster's keys with `dgdrf cluster keys {directory}` and give this node its role's files")
        return creds

    @property
    def identity(self) -> Identity:
        from cryptography import x509
        from cryptography.x509.oid import NameOID

        try:
            cert = x509.load_pem_x509_certificate(self.cert.read_bytes())
        except ValueError as exc:
            raise ConfigError(f"{self.cert}: not a PEM certificate ({exc})") from None
        cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        ou = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME)
        if not cn or not ou or ou[0].value not in ROLES:
            raise ConfigError(f"{self.cert}: not a dgdrf node certificate (no name or role in its subject)")
        return Identity(str(cn[0].value), str(ou[0].value))

    def _context(self, purpose: ssl.Purpose) -> ssl.SSLContext:
        try:
            ctx = ssl.create_default_context(purpose, cafile=str(self.ca))
            ctx.load_cert_chain(str(self.cert), str(self.key))
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(f"cannot use {self.cert} / {self.key} with CA {self.ca}: {exc}") from None
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx

    def server_context(self) -> ssl.SSLContext:
        """For listening: peers must show a certificate of our CA."""
        return self._context(ssl.Purpose.CLIENT_AUTH)

    def client_context(self) -> ssl.SSLContext:
        """For dialling: the peer must show a certificate of our CA (its name is checked
        against the directory, not against the host name)."""
        ctx = self._context(ssl.Purpose.SERVER_AUTH)
        ctx.check_hostname = False
        return ctx


def wait_for_keys(directory: Path, name: str, patience: float) -> None:
    """Wait up to ``patience`` seconds for ``ca.crt`` (written last) and the node's
    certificate to appear, saying so every few seconds (compose starts a keys container
    beside the nodes)."""
    deadline = time.monotonic() + patience
    said = 0.0
    while not ((directory / CA_CERT).is_file() and (directory / f"{name}.crt").is_file()):
        now = time.monotonic()
        if now >= deadline:
            return  # Credentials.from_dir then says what is missing
        if now - said >= 5.0:
            print(f"dgdrf node: waiting for the cluster's keys in {directory} ({deadline - now:.0f} s left)", file=sys.stderr)
            said = now
        time.sleep(0.2)


def node_names(servers: int = 0, users: int = 0) -> dict[str, str]:
    """One certificate per role, plus ``server-1..N`` and ``user-1..M`` for clusters
    whose servers and users should not be able to speak for one another."""
    names = {r: r for r in ROLES}
    names |= {f"server-{i}": "server" for i in range(1, servers + 1)}
    names |= {f"user-{i}": "user" for i in range(1, users + 1)}
    return names


__all__ = ["ADMIN", "CA_CERT", "Credentials", "Identity", "MEMBER_ROLES", "identity_of", "make_keys", "node_names"]
