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

from client import RaceClient
from server.app import RaceServer
from shared.protocol import PlayerJoined, RaceSettings


def self_signed(folder: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A certificate for ``host`` (an IP address or a DNS name) signed by its own key (PEM files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    try:
        subject: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        subject = x509.DNSName(host)
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([subject]), critical=False)
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


async def summoned_bot_joins(url: str, tls: ssl.SSLContext | None = None) -> bool:
    """Whether a bot summoned into Ann's waiting race takes the seat (the bot connects to the server's own port)."""
    ann = await RaceClient.connect(url, tls=tls)
    try:
        await ann.hello("Ann")
        race_id = (await ann.create(RaceSettings(seed=3))).race.race
        await ann.summon_bot(race_id, level=1)
        joined = await ann.wait_for(PlayerJoined, timeout=30)
        while joined.slot != 1:
            joined = await ann.wait_for(PlayerJoined, timeout=30)
        return joined.bot
    finally:
        await ann.close()


async def test_a_server_with_tls_for_its_public_name_hosts_practice_bots(redis_url: str, tmp_path: Path) -> None:
    """The bots connect to the process's loopback port, which the certificate does not name: they trust the
    process's own certificate instead (they failed with a verification error, ``unavailable`` to the creator)."""
    certfile, keyfile = self_signed(tmp_path, "race.example.org")  # names the public host only, never 127.0.0.1
    client_side = ssl.create_default_context(cafile=str(certfile))
    client_side.check_hostname = False  # the test's player, too, reaches the server by its loopback address
    async with RaceServer(server_config(redis_url, certfile=str(certfile), keyfile=str(keyfile), bot_pace=0.0)) as server:
        assert await summoned_bot_joins(server.url, client_side)


async def test_a_server_listening_on_every_ipv6_address_hosts_practice_bots(redis_url: str) -> None:
    """``--host ::`` made the bots' URL ``ws://:::PORT`` (``internal_error``)."""
    async with RaceServer(server_config(redis_url, host="::", bot_pace=0.0)) as server:
        assert await summoned_bot_joins(f"ws://[::1]:{server.port}")
