"""Joins the browser client's ES modules into one script, so a page needs no request for its code.

Each module file cost a request, and the server's HTTP answers close their connection (websockets'
``process_request``), so every file was a new TCP handshake plus a request, six at a time: at 150 ms round-trip time
the lobby was usable only after 2.7 s even with every module preloaded. The page shell now carries the whole client
inline (``static_site.py``), joined here once at start-up from the files as they are: no build step, no Node.

The modules keep to a small, checked subset of the syntax: ``import { a, b as c } from "./x.js"``, ``export``
before a ``function``/``class``/``const`` declaration, ``export { a, b }``, ``export default <expression>``, and
``import(…)``. Each module becomes an async function run once, in dependency order (so a top-level ``await`` works),
whose exports land in one table; an import reads them from it. ``import("./view.js")`` of a module of the client
joins that module too; an ``import()`` of a computed name (the word table of the page's language) asks the table
first and fetches the served module only when the bundle does not carry it. Anything else at the start of a line
beginning ``import``/``export`` (``import *``, a re-export, a cycle, a path outside the client) is refused with the
module's name, so the server does not start with a client it cannot join — and the modules are still served one by
one as before (the service worker, the offline page and the tests import them that way).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

REGISTRY = "__fg"
"""The table (a module-scope constant of the bundle) holding every module's exports, by the module's path."""
IMPORTER = "__fgImport"
"""The bundle's stand-in for an ``import()`` of a computed name: the table's module, else the served file."""
STATIC_ATTRIBUTE = "static"
"""``<html data-static="/static/<build>/">``: where the served modules are, for :data:`IMPORTER`'s fetches."""

_NAME = r"[A-Za-z_$][\w$]*"
_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"([^"]+)"\s*;?[ \t]*$', re.MULTILINE)
_EXPORT_DECLARATION = re.compile(rf"^export\s+((?:async\s+)?function\s*\*?\s*|class\s+|const\s+)({_NAME})", re.MULTILINE)
_EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\}\s*;?[ \t]*$", re.MULTILINE)
_EXPORT_DEFAULT = re.compile(r"^export\s+default\s+", re.MULTILINE)
_DYNAMIC_IMPORT = re.compile(r'\bimport\(\s*"([^"]+)"\s*\)')
_COMPUTED_IMPORT = re.compile(r"\bimport\((?!\s*\")")
_LEFT_OVER = re.compile(r"^(import|export)\b.*$", re.MULTILINE)
_DEFAULT = "__default"

_PRELUDE = f"""const {REGISTRY} = Object.create(null);
const {IMPORTER} = (from, specifier) => {{
  const base = document.documentElement.dataset.{STATIC_ATTRIBUTE};
  const url = new URL(specifier, new URL(base + from, location.href));
  const name = url.pathname.slice(new URL(base, location.href).pathname.length);
  return name in {REGISTRY} ? Promise.resolve({REGISTRY}[name]) : import(url.href);
}};"""


class BundleError(ValueError):
    """A module the bundle cannot join (its name and why)."""


def _names(listing: str, module: str) -> list[tuple[str, str]]:
    """``a, b as c,`` → [(a, a), (b, c)]: (name in the other module, name here)."""
    pairs = []
    for part in (piece.strip() for piece in listing.split(",")):
        if not part:
            continue
        match = re.fullmatch(rf"({_NAME})(?:\s+as\s+({_NAME}))?", part)
        if match is None:
            raise BundleError(f"{module}: cannot read the import/export list {listing.strip()!r}")
        pairs.append((match.group(1), match.group(2) or match.group(1)))
    return pairs


def _resolve(module: str, target: str, sources: Mapping[str, str]) -> str:
    if not target.startswith("./") and not target.startswith("../"):
        raise BundleError(f"{module}: imports {target!r}, not a relative path of the client")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(module), target))
    if resolved not in sources:
        raise BundleError(f"{module}: imports {target!r} ({resolved}), which is not a module of the client")
    return resolved


def _module_function(module: str, source: str, sources: Mapping[str, str]) -> tuple[str, list[str]]:
    """The module as the body of a function returning its exports, and the modules it needs first."""
    needs: list[str] = []
    exports: list[tuple[str, str]] = []

    def imported(match: re.Match[str]) -> str:
        dependency = _resolve(module, match.group(2), sources)
        needs.append(dependency)
        fields = ", ".join(name if name == local else f"{name}: {local}" for name, local in _names(match.group(1), module))
        return f"const {{ {fields} }} = {REGISTRY}[{dependency!r}];"

    def declared(match: re.Match[str]) -> str:
        exports.append((match.group(2), match.group(2)))
        return match.group(1) + match.group(2)

    def listed(match: re.Match[str]) -> str:
        exports.extend((local, exported) for local, exported in _names(match.group(1), module))
        return ""

    def defaulted(_match: re.Match[str]) -> str:
        exports.append((_DEFAULT, "default"))
        return f"const {_DEFAULT} = "

    def dynamic(match: re.Match[str]) -> str:
        dependency = _resolve(module, match.group(1), sources)
        needs.append(dependency)
        return f"Promise.resolve({REGISTRY}[{dependency!r}])"

    body = _IMPORT.sub(imported, source)
    body = _EXPORT_DECLARATION.sub(declared, body)
    body = _EXPORT_LIST.sub(listed, body)
    body = _EXPORT_DEFAULT.sub(defaulted, body)
    body = _DYNAMIC_IMPORT.sub(dynamic, body)
    body = _COMPUTED_IMPORT.sub(f"{IMPORTER}({module!r}, ", body)
    left = _LEFT_OVER.search(body)
    if left is not None:
        raise BundleError(f"{module}: the bundle cannot join {left.group(0).strip()[:80]!r}")
    table = ", ".join(local if local == exported else f"{exported}: {local}" for local, exported in exports)
    return f"{body}\nreturn Object.freeze({{ {table} }});", needs


def bundle(sources: Mapping[str, str], entries: Iterable[str]) -> str:
    """One module script running each of ``entries`` in order, and everything they import (statically or with
    ``import()`` of a literal path), each module once, after the modules it needs; a cycle or a module outside
    ``sources`` raises BundleError."""
    functions: dict[str, str] = {}
    order: list[str] = []
    visiting: list[str] = []

    def visit(module: str) -> None:
        if module in functions:
            return
        if module in visiting:
            raise BundleError(f"import cycle: {' → '.join([*visiting[visiting.index(module):], module])}")
        visiting.append(module)
        function, needs = _module_function(module, sources[module], sources)
        for dependency in needs:
            visit(dependency)
        visiting.pop()
        functions[module] = function
        order.append(module)

    for entry in entries:
        if entry not in sources:
            raise BundleError(f"the entry module {entry} is missing")
        visit(entry)
    parts = [_PRELUDE]
    parts.extend(f"// ---- {module}\n{REGISTRY}[{module!r}] = await (async () => {{\n{functions[module]}\n}})();" for module in order)
    return "\n".join(parts) + "\n"
