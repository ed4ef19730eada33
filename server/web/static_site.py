"""Serves the browser client's files on the WebSocket port: the page shell for each page URL, and the assets.

Assets live under ``/static/<build>/…`` where ``<build>`` is a hash of every
file, so browsers may keep them for a year (``immutable``): a new release has
a new build id and the page shell, which is never cached (``no-cache``), names
it. A request for another build's asset (a page loaded from an older process
behind the same load balancer) still gets the current file, but uncached.
Everything is read once at start-up; nothing is fetched from anywhere else.

A page needs one request before it opens its WebSocket: its shell carries the style sheet and the whole client
inline, every module joined into one script by :mod:`server.web.bundle`, with the word table of the shell's language
in it. The shell's language is the one remembered by the page's picker (the ``fg.lang`` cookie), else the first of
the request's ``Accept-Language`` the page speaks; it is said in ``<html lang>``. The shell is ``no-cache`` with an
``ETag`` (build and language), so a page opened again gets ``304`` with no body while nothing changed.

The words of the page are the tables of :mod:`shared.words` (the terminal's too), also served as ES modules at
``js/words/<language>.js`` (the page fetches one only when its language is not the shell's).
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Response

from server.web.bundle import BundleError, bundle
from shared.words import LANGUAGES, TABLES

STATIC_ROOT = Path(__file__).resolve().parent / "static"
SHELL_FILE = "app.html"
SERVICE_WORKER = "sw.js"
BUILD_PLACEHOLDER = "{{build}}"
STYLE_PLACEHOLDER = "{{style}}"
SCRIPT_PLACEHOLDER = "{{script}}"
"""Where the shell carries the style sheet and the whole client inline. File by file (every module preloaded), the
lobby was usable only after 2.7 s at 150 ms round-trip time: 49 requests, each on a new connection, six at a time."""
STYLE_SHEET = "css/app.css"
ENTRY_MODULE = "js/main.js"
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL)
"""The shell's inline scripts (the early WebSocket and the client): the policy allows each by its hash."""
LANGUAGE_COOKIE = "fg.lang"
"""The cookie the language picker sets (``js/i18n.js``), so the shell is in the chosen language from the first byte."""
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
    "default-src 'self'; script-src 'self' {script}; style-src 'self' {style}; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""Only this server's own files and WebSocket, and the shell's one inline script and style sheet, named by their
SHA-256 (no other inline script runs); no third party."""


def _source_hash(text: str) -> str:
    """A CSP source naming exactly this inline script or style (``'sha256-…'``)."""
    return f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'"


def _inline_script(text: str) -> str:
    """``text`` safe inside ``<script>``: no ``</script`` (written ``<\\/script``, the same in a string or regex)."""
    if "<!--" in text:
        raise BundleError("the client contains '<!--', which an inline script cannot carry")
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Shell:
    """The page shell in one language: the page, its policy (its inline script's and style's hashes), its validator."""

    asset: Asset
    policy: str
    etag: str


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
        sources = {name: asset.body.decode() for name, asset in self.assets.items() if name.endswith(MODULE_SUFFIXES)}
        style = self.assets[STYLE_SHEET].body.decode()
        page = shell.body.replace(BUILD_PLACEHOLDER.encode(), self.build.encode())
        self.shells: dict[str, Shell] = {}
        """The page shell for each language: the whole client inline, with that language's words."""
        for language in LANGUAGES:
            script = _inline_script(bundle(sources, [f"{WORDS_FOLDER}{language}.js", ENTRY_MODULE]))
            spoken = WORDS_PLACEHOLDER.sub(functools.partial(_spoken, TABLES[language]), page).decode().replace(LANGUAGE_PLACEHOLDER, language)
            # Each placeholder once, the shell's own (inserted text is never read for placeholders again).
            body = spoken.replace(STYLE_PLACEHOLDER, f"<style>{style}</style>", 1).replace(SCRIPT_PLACEHOLDER, f'<script type="module">{script}</script>', 1).encode()
            scripts = " ".join(_source_hash(text) for text in INLINE_SCRIPT.findall(body.decode()))
            policy = CONTENT_SECURITY_POLICY.format(script=scripts, style=_source_hash(style))
            self.shells[language] = Shell(Asset.of(body, shell.content_type), policy, f'"{self.build}-{language}"')
        self.shell = self.shells[LANGUAGES[0]]
        """The English shell (a request that names no language the page speaks)."""

    @classmethod
    @functools.cache
    def default(cls) -> StaticSite:
        """The client's own files, read and joined once per process (every server of a test run shares them)."""
        return cls()

    def respond(self, path: str, headers: Mapping[str, str]) -> Response | None:
        """The answer to ``GET path`` with the request's ``headers``: a page, an asset, a 404 for a missing asset or
        (to a browser) for a page that does not exist, or None (not the site's URL: the caller asks for a WebSocket
        upgrade).

        With ``gzip`` in Accept-Encoding, text is sent compressed. A browser (``text/html`` in Accept) that asks for an
        unknown page gets the shell with status 404, whose script says "No such page" with a link to the lobby, instead
        of a bare 426 it cannot explain to a person. The shell is in the language of the ``fg.lang`` cookie, else of
        Accept-Language; an If-None-Match naming it answers 304 with no body.
        """
        gzip_ok = "gzip" in headers.get("Accept-Encoding", "").lower()
        shell = self.shells[language_of(headers.get("Accept-Language", ""), cookie_language(headers.get("Cookie", "")))]
        if path == f"/{SERVICE_WORKER}":
            return _response(HTTPStatus.OK, self.service_worker, NO_CACHE, gzip_ok)
        if PAGE_PATHS.fullmatch(path):
            if shell.etag in (tag.strip() for tag in headers.get("If-None-Match", "").split(",")):
                return _response(HTTPStatus.NOT_MODIFIED, NOT_MODIFIED, NO_CACHE, gzip_ok, page=shell)
            return _response(HTTPStatus.OK, shell.asset, NO_CACHE, gzip_ok, page=shell)
        if not path.startswith("/static/"):
            return _response(HTTPStatus.NOT_FOUND, shell.asset, NO_CACHE, gzip_ok, page=shell) if "text/html" in headers.get("Accept", "").lower() else None
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


def cookie_language(cookie: str) -> str | None:
    """The language remembered in a Cookie header's ``fg.lang``, when the page speaks it."""
    for part in cookie.split(";"):
        name, _, value = part.strip().partition("=")
        if name == LANGUAGE_COOKIE and value in TABLES:
            return value
    return None


def language_of(accept_language: str, remembered: str | None = None) -> str:
    """``remembered`` (the picker's choice) when given, else the first language of an Accept-Language header
    (``pt-BR,pt;q=0.9,en;q=0.8`` -> ``pt``) that the page speaks, by weight then order; English when none is."""
    if remembered is not None:
        return remembered
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
NOT_MODIFIED = Asset(b"", CONTENT_TYPES[".html"])


def _response(status: HTTPStatus, asset: Asset, cache: str, gzip_ok: bool, *, page: Shell | None = None) -> Response:
    compressed = gzip_ok and asset.gzipped is not None
    body = asset.gzipped if compressed and asset.gzipped is not None else asset.body
    headers = Headers(
        [
            ("Content-Type", asset.content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
            ("Vary", "Accept-Encoding, Accept-Language, Cookie" if page else "Accept-Encoding"),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    if compressed:
        headers["Content-Encoding"] = "gzip"
    if page is not None:
        headers["Content-Security-Policy"] = page.policy
        headers["Referrer-Policy"] = "same-origin"
        if status is not HTTPStatus.NOT_FOUND:
            headers["ETag"] = page.etag
    return Response(status.value, status.phrase, headers, body)
