"""The TOML config file: every setting a key, precedence defaults < file < environment < flags, unknown keys and
bad values refused with a message naming them, --print-config showing the effective settings."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from server_processes import ROOT

from server import config
from server.app import ServerConfig
from server.logs import LogFormat

OPERATIONS_MD = ROOT / "docs" / "OPERATIONS.md"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "flowergarden.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_environment_overrides_the_file_and_flags_override_both(tmp_path: Path) -> None:
    file = write(
        tmp_path,
        'port = 9000\ngrace_seconds = 12.5\nlog_format = "json"\n[limits]\nburst = 7\nrate_per_second = 5\n'
        "[lobby.invites]\nper_source = 5\noverall = 100\n",
    )
    environ = {
        "FLOWERGARDEN_PORT": "9100", "FLOWERGARDEN_LIMITS_BURST": "8", "REDIS_URL": "redis://example:6379/0",
        "FLOWERGARDEN_LOBBY_INVITES_OVERALL": "50",
    }
    effective = config.effective(file, environ, {"port": 9200})
    assert effective.port == 9200  # flag > environment > file
    assert effective.limits.burst == 8  # environment > file
    assert effective.limits.rate_per_second == 5.0  # file > default
    assert (effective.lobby.invites.per_source, effective.lobby.invites.overall) == (5, 50)  # a table in a table
    assert effective.grace_seconds == 12.5
    assert effective.log_format is LogFormat.JSON
    assert effective.redis_url == "redis://example:6379/0"
    assert effective.lobby_max_listed == ServerConfig(redis_url="").lobby_max_listed  # default kept


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("prot = 9000\n", "unknown key 'prot'"),
        ("[limits]\nrate_per_secnd = 5\n", "unknown key 'limits.rate_per_secnd'"),
        ("[limitz]\nburst = 5\n", "unknown table [limitz]"),
        ('port = "x"\n', "port must be an integer"),
        ("grace_seconds = -1\n", "grace_seconds must not be negative"),
        ('log_format = "xml"\n', "log_format must be one of text, json"),
        ('certfile = "cert.pem"\n', "certfile and keyfile go together"),
        ('trusted_proxies = ["10.0.0.0/33"]\n', "trusted_proxies: not an IP address or network: '10.0.0.0/33'"),
        ("port = \n", "not valid TOML"),
    ],
)
def test_a_bad_config_file_is_refused_with_a_message_naming_the_key(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(config.ConfigError) as refused:
        config.effective(write(tmp_path, text), {}, {})
    assert named in str(refused.value)
    assert str(tmp_path) in str(refused.value) or named.startswith(("certfile", "trusted"))


def test_a_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(config.ConfigError, match="FLOWERGARDEN_LIMITS_BURST"):
        config.effective(None, {"FLOWERGARDEN_LIMITS_BURST": "many"}, {})


def test_print_config_shows_the_effective_settings_as_a_config_file_that_loads_back(tmp_path: Path) -> None:
    file = write(tmp_path, 'port = 9000\noperator_secret = "hunter2"\ntrusted_proxies = ["10.0.0.0/8"]\n[lobby]\nstale_seconds = 9.0\n')
    printed = subprocess.run(
        [sys.executable, "-m", "cli", "serve", "--config", str(file), "--print-config", "--grace", "7"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert printed.returncode == 0, printed.stderr
    assert "hunter2" not in printed.stdout
    document = tomllib.loads(printed.stdout)
    assert (document["port"], document["grace_seconds"], document["lobby"]["stale_seconds"]) == (9000, 7.0, 9.0)
    assert document["trusted_proxies"] == ["10.0.0.0/8"]
    reloaded = config.effective(write(tmp_path, printed.stdout), {}, {})
    assert reloaded.port == 9000 and reloaded.lobby.stale_seconds == 9.0


def test_a_server_started_from_print_config_output_has_no_operator_secret(tmp_path: Path) -> None:
    """The printed file says the secret is set without giving anything loadable: a server started from it obeys no
    command (signed with the marker text or anything else) until the real secret is given again."""
    file = write(tmp_path, 'operator_secret = "hunter2"\n')
    printed = subprocess.run(
        [sys.executable, "-m", "cli", "serve", "--config", str(file), "--print-config"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert printed.returncode == 0, printed.stderr
    assert "operator_secret is set" in printed.stdout
    assert config.effective(write(tmp_path, printed.stdout), {}, {}).operator_secret is None
    secret_given_again = config.effective(write(tmp_path, printed.stdout), {"FLOWERGARDEN_OPERATOR_SECRET": "hunter2"}, {})
    assert secret_given_again.operator_secret == "hunter2"


@pytest.mark.parametrize("marker", ["[set, not shown]", "[redacted]"])
def test_a_redaction_marker_is_refused_as_the_operator_secret(tmp_path: Path, marker: str) -> None:
    """A file or variable carrying the text that stands for a hidden value (which anyone can read) stops serve."""
    with pytest.raises(config.ConfigError, match="operator_secret"):
        config.effective(write(tmp_path, f'operator_secret = "{marker}"\n'), {}, {})
    with pytest.raises(config.ConfigError, match="operator_secret"):
        config.effective(None, {"FLOWERGARDEN_OPERATOR_SECRET": marker}, {})


def test_an_unknown_config_key_stops_serve_with_a_clear_error(tmp_path: Path) -> None:
    file = write(tmp_path, "[limits]\nburts = 5\n")
    result = subprocess.run(
        [sys.executable, "-m", "cli", "serve", "--config", str(file)],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode != 0
    assert "unknown key 'limits.burts'" in result.stderr


@pytest.mark.parametrize("key", sorted(config.keys()))
def test_every_config_key_is_documented_in_operations_md(key: str) -> None:
    assert f"`{key}`" in OPERATIONS_MD.read_text(encoding="utf-8"), f"docs/OPERATIONS.md does not describe {key}"
