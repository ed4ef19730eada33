"""Serves the browser client's files on the WebSocket port: the page shell for each page URL, and the assets.

Assets live under ``/static/<build>/…`` where ``<build>`` is a hash of every
file, so browsers may keep them for a year (``immutable``): a new release has
a new build id and the page shell, which is never cached (``no-cache``), names
it. A request for another build's asset (a page loaded from an older process
behind the same load balancer) still gets the current file, but uncached.
Everything is read once at start-up; nothing is fetched from anywhere else.

The words of the page are the tables of :mod:`shared.words` (the terminal's too), served as ES modules at
``js/words/<language>.js``; the shell preloads the one its request's ``Accept-Language`` asks for (the page itself
picks the language, ``js/i18n.js``: a remembered choice first) and says it in ``<html lang>``.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import html
import json
import re
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Response

from shared.words import LANGUAGES, TABLES

STATIC_ROOT = Path(__file__).resolve().parent / "static"
SHELL_FILE = "app.html"
SERVICE_WORKER = "sw.js"
BUILD_PLACEHOLDER = "{{build}}"
PRELOAD_PLACEHOLDER = "{{modulepreload}}"
"""Where the shell lists every module of the client, so the browser fetches them all at once instead of discovering
them import by import (a waterfall of round trips: 2.0 s to a usable lobby at 150 ms round-trip time)."""
MODULE_SUFFIXES = (".js", ".mjs")
WORDS_FOLDER = "js/words/"
"""Where the word tables are served, one module per language, made from :data:`shared.words.TABLES`."""
LANGUAGE_PLACEHOLDER = "{{lang}}"
WORDS_PLACEHOLDER = re.compile(rb"\{\{t:([a-z0-9_.]+)\}\}")
"""``{{t:key}}`` in the page shell: that key's words in the shell's language (what shows before the script runs)."""

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
}
"""The file types the client ships; anything else under the static folder is not served."""

_RACE_ID = r"[A-Za-z0-9]{1,32}"
_INVITE_CODE = r"[A-Za-z0-9-]{1,16}"
_HANDLE = r"[A-Za-z0-9_-]{1,20}"
_ARENA_ID = r"[A-Za-z0-9_-]{1,16}"
PAGE_PATHS = re.compile(
    rf"/|/race/{_RACE_ID}|/invite/{_INVITE_CODE}|/watch/{_RACE_ID}|/replay/{_RACE_ID}|/account|/leaderboard|/daily|/arena|/arena/{_ARENA_ID}|/tournaments|/tournament/{_ARENA_ID}|/rules|/tutorial|/player/{_HANDLE}"
)
"""The page URLs (docs/WEB.md); each answers the same shell, whose script picks the view from the path."""

IMMUTABLE = "public, max-age=31536000, immutable"
NO_CACHE = "no-cache"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""Only this server's own files and WebSocket; no inline script, no third party."""


@dataclass(frozen=True, slots=True)
class Asset:
    """One file ready to send, with its gzip form when that is smaller."""

    body: bytes
    content_type: str
    gzipped: bytes | None = None

    @classmethod
    def of(cls, body: bytes, content_type: str) -> Asset:
        """The asset, compressed once now (text shrinks to about a third; images are left alone)."""
        packed = gzip.compress(body, compresslevel=9, mtime=0) if content_type.startswith(("text/", "image/svg")) else None
        return cls(body, content_type, packed if packed is not None and len(packed) < len(body) else None)


class StaticSite:
    """The client's files, loaded once (and gzipped once), answering ``GET`` for page URLs and ``/static/…``."""

    def __init__(self, root: Path = STATIC_ROOT) -> None:
        files = sorted(path for path in root.rglob("*") if path.is_file() and path.suffix in CONTENT_TYPES)
        digest = hashlib.sha256()
        self.assets: dict[str, Asset] = {}
        for path in files:
            relative = path.relative_to(root).as_posix()
            body = path.read_bytes()
            digest.update(relative.encode() + b"\0" + body + b"\0")
            self.assets[relative] = Asset.of(body, CONTENT_TYPES[path.suffix])
        for language, table in TABLES.items():
            body = words_module(table)
            digest.update(f"{WORDS_FOLDER}{language}.js".encode() + b"\0" + body + b"\0")
            self.assets[f"{WORDS_FOLDER}{language}.js"] = Asset.of(body, CONTENT_TYPES[".js"])
        self.build = digest.hexdigest()[:12]
        """Identifies this set of files: part of every asset URL."""
        for name, asset in self.assets.items():
            if BUILD_PLACEHOLDER.encode() in asset.body:  # the offline page and the service worker name this build's files
                self.assets[name] = Asset.of(asset.body.replace(BUILD_PLACEHOLDER.encode(), self.build.encode()), asset.content_type)
        self.service_worker = self.assets[SERVICE_WORKER]
        """Served at the root (``/sw.js``), never cached: a worker's scope is the folder it is served from."""
        shell = self.assets.pop(SHELL_FILE, None)
        if shell is None:
            raise FileNotFoundError(f"the web client's page shell {root / SHELL_FILE} is missing")
        modules = [name for name in sorted(self.assets) if name.endswith(MODULE_SUFFIXES) and not name.startswith(WORDS_FOLDER)]
        self.shells: dict[str, Asset] = {}
        """The page shell for each language: it preloads that language's words and says it in ``<html lang>``."""
        for language in LANGUAGES:
            preloads = "\n".join(f'<link rel="modulepreload" href="/static/{self.build}/{name}">' for name in [*modules, f"{WORDS_FOLDER}{language}.js"])
            body = shell.body.replace(PRELOAD_PLACEHOLDER.encode(), preloads.encode()).replace(BUILD_PLACEHOLDER.encode(), self.build.encode())
            body = WORDS_PLACEHOLDER.sub(functools.partial(_spoken, TABLES[language]), body)
            self.shells[language] = Asset.of(body.replace(LANGUAGE_PLACEHOLDER.encode(), language.encode()), shell.content_type)
        self.shell = self.shells[LANGUAGES[0]]
        """The English shell (a request that names no language the page speaks)."""

    def respond(self, path: str, accept_encoding: str = "", accept: str = "", accept_language: str = "") -> Response | None:
        """The answer to ``GET path``: a page, an asset, a 404 for a missing asset or (to a browser) for a page that
        does not exist, or None (not the site's URL: the caller asks for a WebSocket upgrade).

        ``accept_encoding`` is the request's Accept-Encoding: with ``gzip`` in it, text is sent compressed. ``accept``
        is its Accept: a browser (``text/html``) that asks for an unknown page gets the shell with status 404, whose
        script says "No such page" with a link to the lobby, instead of a bare 426 it cannot explain to a person.
        ``accept_language`` is its Accept-Language: the shell of the first language in it that the page speaks.
        """
        gzip_ok = "gzip" in accept_encoding.lower()
        shell = self.shells[language_of(accept_language)]
        if path == f"/{SERVICE_WORKER}":
            return _response(HTTPStatus.OK, self.service_worker, NO_CACHE, gzip_ok)
        if PAGE_PATHS.fullmatch(path):
            return _response(HTTPStatus.OK, shell, NO_CACHE, gzip_ok, page=True)
        if not path.startswith("/static/"):
            return _response(HTTPStatus.NOT_FOUND, shell, NO_CACHE, gzip_ok, page=True) if "text/html" in accept.lower() else None
        build, _, name = path.removeprefix("/static/").partition("/")
        asset = self.assets.get(name)
        if asset is None:
            return _response(HTTPStatus.NOT_FOUND, NOT_FOUND, NO_CACHE, gzip_ok)
        return _response(HTTPStatus.OK, asset, IMMUTABLE if build == self.build else NO_CACHE, gzip_ok)


def _spoken(table: dict[str, str], match: re.Match[bytes]) -> bytes:
    """A shell's ``{{t:key}}`` in the table's words, HTML-escaped."""
    return html.escape(table[match[1].decode()]).encode()


def words_module(table: dict[str, str]) -> bytes:
    """A word table as the ES module the page imports: ``export default {"key": "text", …};``."""
    return b"// Made by server/web/static_site.py from shared/words: edit the tables there.\nexport default " + json.dumps(
        table, ensure_ascii=False, indent=0, sort_keys=True
    ).encode() + b";\n"


def language_of(accept_language: str) -> str:
    """The first language of an Accept-Language header (``pt-BR,pt;q=0.9,en;q=0.8`` -> ``pt``) that the page speaks,
    by weight then order; English when none is."""
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(accept_language.split(",")):
        tag, _, weight = part.strip().partition(";q=")
        try:
            quality = float(weight) if weight else 1.0
        except ValueError:
            continue
        code = tag.split("-", 1)[0].strip().lower()
        if code in TABLES and quality > 0:
            ranked.append((-quality, index, code))
    return min(ranked)[2] if ranked else LANGUAGES[0]


NOT_FOUND = Asset(b"not found\n", CONTENT_TYPES[".txt"])


def _response(status: HTTPStatus, asset: Asset, cache: str, gzip_ok: bool, *, page: bool = False) -> Response:
    compressed = gzip_ok and asset.gzipped is not None
    body = asset.gzipped if compressed and asset.gzipped is not None else asset.body
    headers = Headers(
        [
            ("Content-Type", asset.content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
            ("Vary", "Accept-Encoding, Accept-Language" if page else "Accept-Encoding"),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    if compressed:
        headers["Content-Encoding"] = "gzip"
    if page:
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        headers["Referrer-Policy"] = "same-origin"
    return Response(status.value, status.phrase, headers, body)
