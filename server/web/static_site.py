"""Serves the browser client's files on the WebSocket port: the page shell for each page URL, and the assets.

Assets live under ``/static/<build>/…`` where ``<build>`` is a hash of every
file, so browsers may keep them for a year (``immutable``): a new release has
a new build id and the page shell, which is never cached (``no-cache``), names
it. A request for another build's asset (a page loaded from an older process
behind the same load balancer) still gets the current file, but uncached.
Everything is read once at start-up; nothing is fetched from anywhere else.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Response

STATIC_ROOT = Path(__file__).resolve().parent / "static"
SHELL_FILE = "app.html"
BUILD_PLACEHOLDER = "{{build}}"

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
PAGE_PATHS = re.compile(rf"/|/race/{_RACE_ID}|/invite/{_INVITE_CODE}|/watch/{_RACE_ID}|/replay/{_RACE_ID}")
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
    """One file ready to send."""

    body: bytes
    content_type: str


class StaticSite:
    """The client's files, loaded once, answering ``GET`` for page URLs and ``/static/…``."""

    def __init__(self, root: Path = STATIC_ROOT) -> None:
        files = sorted(path for path in root.rglob("*") if path.is_file() and path.suffix in CONTENT_TYPES)
        digest = hashlib.sha256()
        self.assets: dict[str, Asset] = {}
        for path in files:
            relative = path.relative_to(root).as_posix()
            body = path.read_bytes()
            digest.update(relative.encode() + b"\0" + body + b"\0")
            self.assets[relative] = Asset(body, CONTENT_TYPES[path.suffix])
        self.build = digest.hexdigest()[:12]
        """Identifies this set of files: part of every asset URL."""
        shell = self.assets.pop(SHELL_FILE, None)
        if shell is None:
            raise FileNotFoundError(f"the web client's page shell {root / SHELL_FILE} is missing")
        self.shell = shell.body.replace(BUILD_PLACEHOLDER.encode(), self.build.encode())

    def respond(self, path: str) -> Response | None:
        """The answer to ``GET path``: a page, an asset, a 404 for a missing asset, or None (not the site's URL)."""
        if PAGE_PATHS.fullmatch(path):
            return _response(HTTPStatus.OK, self.shell, CONTENT_TYPES[".html"], NO_CACHE, page=True)
        if not path.startswith("/static/"):
            return None
        build, _, name = path.removeprefix("/static/").partition("/")
        asset = self.assets.get(name)
        if asset is None:
            return _response(HTTPStatus.NOT_FOUND, b"not found\n", CONTENT_TYPES[".txt"], NO_CACHE)
        return _response(HTTPStatus.OK, asset.body, asset.content_type, IMMUTABLE if build == self.build else NO_CACHE)


def _response(status: HTTPStatus, body: bytes, content_type: str, cache: str, *, page: bool = False) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    if page:
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        headers["Referrer-Policy"] = "same-origin"
    return Response(status.value, status.phrase, headers, body)
