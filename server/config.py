"""The effective server settings from defaults, a TOML file, environment variables and flags, in that order.

Every field of :class:`server.app.ServerConfig` is a key: top-level fields at the top of the file, the nested
limits in ``[limits]`` (:class:`server.transport.TransportLimits`) and ``[lobby]``
(:class:`server.services.lobby.LobbyLimits`). The environment variable of a key is ``FLOWERGARDEN_`` and the key
in capitals, a table's keys prefixed with its name (``FLOWERGARDEN_LIMITS_RATE_PER_SECOND``); ``REDIS_URL`` also
sets ``redis_url`` and ``REDIS_CLUSTER_URL`` ``redis_cluster_url``. An unknown key, or a value of the wrong type, is an error naming it.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from server.app import ServerConfig
from server.logs import REDACTED
from server.peers import parse_networks
from server.store.connection import cluster_nodes
from shared.arena import parse_schedule

ENV_PREFIX = "FLOWERGARDEN_"
ENV_ALIASES = {"REDIS_URL": "redis_url", "REDIS_CLUSTER_URL": "redis_cluster_url", "DATABASE_URL": "database_url"}
SECRET_KEYS = frozenset({"operator_secret"})
"""Keys whose value ``--print-config`` does not show."""
REDACTION_MARKERS = frozenset({"[set, not shown]", REDACTED})
"""Texts that stand in for a hidden value (in old ``--print-config`` output, in logs): never loaded as a secret, since
anyone who has seen such a file or log line knows them."""


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the key and where it came from."""


def _is_table(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def keys(cls: type = ServerConfig, prefix: str = "") -> dict[str, Any]:
    """Every key (dotted for tables) -> its type."""
    found: dict[str, Any] = {}
    for name, hint in _hints(cls).items():
        if _is_table(hint):
            found.update(keys(hint, f"{prefix}{name}."))
        else:
            found[prefix + name] = hint
    return found


def env_name(key: str) -> str:
    """The environment variable of ``key``."""
    return ENV_PREFIX + key.replace(".", "_").upper()


def _convert(key: str, value: Any, hint: Any, source: str) -> Any:
    """``value`` as ``hint`` (strings from the environment are parsed); ConfigError otherwise."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [option for option in get_args(hint) if option is not type(None)]
        if value is None or (value == "" and source.startswith("environment")):
            return None
        return _convert(key, value, options[0], source)
    if origin is tuple:
        return _strings(key, value, source)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _choice(key, value, hint, source)
    if hint is bool:
        return _boolean(key, value, source)
    if hint is int or hint is float:
        return _number(key, value, hint, source)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string, got {value!r}")
        return value
    raise TypeError(f"unsupported setting type {hint!r} of {key}")  # a new kind of field: teach _convert


def _strings(key: str, value: Any, source: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [item.strip() for item in value.split(",") if item.strip()]
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{source}: {key} must be a list of strings, got {value!r}")
    return tuple(value)


def _choice(key: str, value: Any, hint: type[Enum], source: str) -> Enum:
    try:
        return hint(value)
    except ValueError:
        choices = ", ".join(str(member.value) for member in hint)
        raise ConfigError(f"{source}: {key} must be one of {choices}, got {value!r}") from None


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _boolean(key: str, value: Any, source: str) -> bool:
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
    return value


def _number(key: str, value: Any, hint: type[int | float], source: str) -> int | float:
    kind = "an integer" if hint is int else "a number"
    if isinstance(value, str):
        try:
            value = hint(value)
        except ValueError:
            raise ConfigError(f"{source}: {key} must be {kind}, got {value!r}") from None
    if hint is int and isinstance(value, float) and value.is_integer():
        value = int(value)  # 604800.0 seconds from a flag that also takes days
    if isinstance(value, bool) or not isinstance(value, int | float) or (hint is int and not isinstance(value, int)):
        raise ConfigError(f"{source}: {key} must be {kind}, got {value!r}")
    if value < 0:
        raise ConfigError(f"{source}: {key} must not be negative, got {value!r}")
    return hint(value)


def _flatten(document: Mapping[str, Any], source: str, known: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in document.items():
        key = prefix + name
        if isinstance(value, dict):
            if not any(known_key.startswith(key + ".") for known_key in known):
                raise ConfigError(f"{source}: unknown table [{key}] (tables: {', '.join(sorted(_tables(known)))})")
            flat.update(_flatten(value, source, known, key + "."))
        elif key not in known:
            raise ConfigError(f"{source}: unknown key {key!r} ({_suggestion(key, known)})")
        else:
            flat[key] = _convert(key, value, known[key], source)
    return flat


def _tables(known: Mapping[str, Any]) -> set[str]:
    return {key.split(".", 1)[0] for key in known if "." in key}


def _suggestion(key: str, known: Mapping[str, Any]) -> str:
    prefix = key.rsplit(".", 1)[0] + "." if "." in key else ""
    siblings = sorted(k[len(prefix):] for k in known if k.startswith(prefix) and "." not in k[len(prefix):])
    return f"known keys{' in [' + prefix[:-1] + ']' if prefix else ''}: {', '.join(siblings)}"


def from_file(path: Path) -> dict[str, Any]:
    """The settings a TOML file gives (flattened, checked)."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the config file ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    return _flatten(document, str(path), keys())


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings environment variables give. ``FLOWERGARDEN_*`` variables that name no setting are left alone
    (clients and tools have their own)."""
    known = keys()
    by_env = {env_name(key): key for key in known}
    found: dict[str, Any] = {}
    for alias, key in ENV_ALIASES.items():
        if environ.get(alias):
            found[key] = _convert(key, environ[alias], known[key], f"environment {alias}")
    for variable, text in environ.items():
        if not variable.startswith(ENV_PREFIX):
            continue
        setting = by_env.get(variable)
        if setting is not None:
            found[setting] = _convert(setting, text, known[setting], f"environment {variable}")
    return found


def build(settings: Mapping[str, Any]) -> ServerConfig:
    """The ServerConfig of flattened ``settings`` over the defaults."""
    known = keys()

    def make(cls: type, prefix: str) -> Any:
        values: dict[str, Any] = {}
        for name, hint in _hints(cls).items():
            if _is_table(hint):
                values[name] = make(hint, f"{prefix}{name}.")
            elif prefix + name in settings:
                values[name] = settings[prefix + name]
        return cls(**values)

    unknown = set(settings) - set(known)
    if unknown:
        raise ConfigError(f"unknown keys: {', '.join(sorted(unknown))}")
    settings = {"redis_url": "", **settings}
    config: ServerConfig = make(ServerConfig, "")
    try:
        parse_networks(config.trusted_proxies)
    except ValueError as error:
        raise ConfigError(f"trusted_proxies: {error}") from None
    if config.redis_url and config.redis_cluster_url:
        raise ConfigError("redis_url and redis_cluster_url are both set: give one Redis or one Redis Cluster")
    if config.redis_cluster_url:
        try:
            cluster_nodes(config.redis_cluster_url)
        except ValueError as error:
            raise ConfigError(f"redis_cluster_url: {error}") from None
    for secret in sorted(SECRET_KEYS):
        if str(getattr(config, secret) or "").strip() in REDACTION_MARKERS:
            raise ConfigError(f"{secret}: {getattr(config, secret)!r} stands in for a hidden value; give the real secret")
    _check_schedules(config.arena.recurring)
    if (config.certfile is None) != (config.keyfile is None):
        raise ConfigError("certfile and keyfile go together: give both for wss://, or neither")
    return config


def _check_schedules(specs: tuple[str, ...]) -> None:
    """ConfigError naming the first recurring arena spec (``arena.recurring``) that does not read."""
    for spec in specs:
        try:
            parse_schedule(spec)
        except ValueError as error:
            raise ConfigError(f"arena.recurring: {spec!r}: {error}") from None


def effective(file: Path | None, environ: Mapping[str, str], flags: Mapping[str, Any]) -> ServerConfig:
    """Defaults, then the file, then the environment, then flags (already flattened keys)."""
    settings: dict[str, Any] = {}
    if file is not None:
        settings.update(from_file(file))
    settings.update(from_environment(environ))
    known = keys()
    settings.update({key: _convert(key, value, known[key], "command line") for key, value in flags.items()})
    return build(settings)


def _toml_value(value: Any) -> str:
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def to_toml(config: ServerConfig) -> str:
    """The effective settings as a config file (unset optional keys as comments; the operator secret hidden)."""
    return "\n".join(_toml_table(config, "")) + "\n"


def _toml_table(table: Any, name: str) -> list[str]:
    """A table's ``key = value`` lines, then its nested tables as ``[name.sub]`` sections."""
    lines = [f"\n[{name}]"] if name else []
    nested: list[tuple[str, Any]] = []
    for spec in dataclasses.fields(table):
        value = getattr(table, spec.name)
        if dataclasses.is_dataclass(value):
            nested.append((f"{name}.{spec.name}" if name else spec.name, value))
        else:
            lines.append(_toml_line(spec.name, value))
    for sub_name, sub_table in nested:
        lines.extend(_toml_table(sub_table, sub_name))
    return lines


def _toml_line(name: str, value: Any) -> str:
    if value is None:
        return f"# {name} = (not set)"
    if name in SECRET_KEYS:
        return f"# {name} is set, not shown: give it again ({env_name(name)} or this file) when loading this file"
    return f"{name} = {_toml_value(value)}"
