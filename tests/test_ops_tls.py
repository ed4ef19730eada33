"""wss:// directly: a server given a certificate and key speaks TLS on its port (WebSocket and HTTP endpoints)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from ops_helpers import http_base, http_get
from race_helpers import player, server_config
from server_processes import ROOT

from server.app import RaceServer


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key (PEM files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = folder / "cert.pem", folder / "key.pem"
    certfile.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return certfile, keyfile


async def test_a_server_with_a_certificate_speaks_wss_and_https(redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    certfile, keyfile = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(certfile))  # the client trusts the test certificate (default verification)
    async with RaceServer(server_config(redis_url, certfile=str(certfile), keyfile=str(keyfile))) as server:
        assert server.url.startswith("wss://127.0.0.1:")
        client = await player(server.url, "Ann")
        assert client.session is not None and client.session.name == "Ann"
        await client.close()
        trusting = ssl.create_default_context(cafile=str(certfile))
        status, body = await http_get(f"{http_base(server.url)}/ready", trusting)
        assert status == 200 and b"ready" in body
        with pytest.raises(OSError):  # the certificate is not trusted without it: verification is on
            await http_get(f"{http_base(server.url)}/health", ssl.create_default_context(cafile=None, capath="/nonexistent"))


def test_serve_with_an_unusable_certificate_stops_with_a_clear_error(tmp_path: Path) -> None:
    certfile, _ = self_signed(tmp_path)
    wrong_key = tmp_path / "other.pem"
    wrong_key.write_text("not a key", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "cli", "serve", "--redis", "redis://127.0.0.1:1/0", "--port", "0",
         "--certfile", str(certfile), "--keyfile", str(wrong_key)],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode != 0
    assert "bad_tls" in result.stderr and str(certfile) in result.stderr, result.stderr
