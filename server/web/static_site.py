"""Serves the browser client's files on the WebSocket port: the page shell for each page URL, and the assets.

Assets live under ``/static/<build>/…`` where ``<build>`` is a hash of every
file, so browsers may keep them for a year (``immutable``): a new release has
a new build id and the page shell, which is never cached (``no-cache``), names
it. A request for another build's asset (a page loaded from an older process
behind the same load balancer) still gets the current file, but uncached.
Everything is read once at start-up; nothing is fetched from anywhere else.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Response

STATIC_ROOT = Path(__file__).resolve().parent / "static"
SHELL_FILE = "app.html"
SERVICE_WORKER = "sw.js"
BUILD_PLACEHOLDER = "{{build}}"
PRELOAD_PLACEHOLDER = "{{modulepreload}}"
"""Where the shell lists every module of the client, so the browser fetches them all at once instead of discovering
them import by import (a waterfall of round trips: 2.0 s to a usable lobby at 150 ms round-trip time)."""
MODULE_SUFFIXES = (".js", ".mjs")

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
PAGE_PATHS = re.compile(
    rf"/|/race/{_RACE_ID}|/invite/{_INVITE_CODE}|/watch/{_RACE_ID}|/replay/{_RACE_ID}|/account|/leaderboard|/daily|/rules|/player/{_HANDLE}"
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
        preloads = "\n".join(
            f'<link rel="modulepreload" href="/static/{self.build}/{name}">' for name in sorted(self.assets) if name.endswith(MODULE_SUFFIXES)
        )
        body = shell.body.replace(PRELOAD_PLACEHOLDER.encode(), preloads.encode()).replace(BUILD_PLACEHOLDER.encode(), self.build.encode())
        self.shell = Asset.of(body, shell.content_type)

    def respond(self, path: str, accept_encoding: str = "", accept: str = "") -> Response | None:
        """The answer to ``GET path``: a page, an asset, a 404 for a missing asset or (to a browser) for a page that
        does not exist, or None (not the site's URL: the caller asks for a WebSocket upgrade).

        ``accept_encoding`` is the request's Accept-Encoding: with ``gzip`` in it, text is sent compressed. ``accept``
        is its Accept: a browser (``text/html``) that asks for an unknown page gets the shell with status 404, whose
        script says "No such page" with a link to the lobby, instead of a bare 426 it cannot explain to a person.
        """
        gzip_ok = "gzip" in accept_encoding.lower()
        if path == f"/{SERVICE_WORKER}":
            return _response(HTTPStatus.OK, self.service_worker, NO_CACHE, gzip_ok)
        if PAGE_PATHS.fullmatch(path):
            return _response(HTTPStatus.OK, self.shell, NO_CACHE, gzip_ok, page=True)
        if not path.startswith("/static/"):
            return _response(HTTPStatus.NOT_FOUND, self.shell, NO_CACHE, gzip_ok, page=True) if "text/html" in accept.lower() else None
        build, _, name = path.removeprefix("/static/").partition("/")
        asset = self.assets.get(name)
        if asset is None:
            return _response(HTTPStatus.NOT_FOUND, NOT_FOUND, NO_CACHE, gzip_ok)
        return _response(HTTPStatus.OK, asset, IMMUTABLE if build == self.build else NO_CACHE, gzip_ok)


NOT_FOUND = Asset(b"not found\n", CONTENT_TYPES[".txt"])


def _response(status: HTTPStatus, asset: Asset, cache: str, gzip_ok: bool, *, page: bool = False) -> Response:
    compressed = gzip_ok and asset.gzipped is not None
    body = asset.gzipped if compressed and asset.gzipped is not None else asset.body
    headers = Headers(
        [
            ("Content-Type", asset.content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
            ("Vary", "Accept-Encoding"),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    if compressed:
        headers["Content-Encoding"] = "gzip"
    if page:
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        headers["Referrer-Policy"] = "same-origin"
    return Response(status.value, status.phrase, headers, body)
