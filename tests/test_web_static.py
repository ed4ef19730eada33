"""The web client's files as the server serves them: page URLs, content types, caching, the vendored msgpack copy
and the package data that ships them."""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import gzip
import hashlib
import importlib.util
import re
import tomllib
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path
from types import ModuleType

import pytest
from browser_helpers import http_url

from server.app import RaceServer
from server.web.bundle import BundleError, bundle
from server.web.static_site import IMMUTABLE, NO_CACHE, STATIC_ROOT, StaticSite
from shared.protocol import EVENT_TYPES, LOBBY_EVENT_TYPES

ROOT = Path(__file__).resolve().parent.parent


async def fetch(url: str, accept: str | None = None) -> tuple[int, Message, bytes]:
    """GET ``url`` (in a thread: the server runs on this loop), with ``accept`` as its Accept header: status, headers,
    body."""

    def get() -> tuple[int, Message, bytes]:
        request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    return await asyncio.to_thread(get)


async def test_every_page_url_answers_the_page_shell_never_cached(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    build = StaticSite.default().build
    for path in ("/", "/race/inQH4SkJQ5Y", "/invite/K7QX3M", "/watch/inQH4SkJQ5Y", "/replay/inQH4SkJQ5Y"):
        status, headers, body = await fetch(site + path)
        assert status == 200, path
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Cache-Control"] == NO_CACHE
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        assert f'data-static="/static/{build}/"'.encode() in body
        assert b"{{build}}" not in body


async def test_assets_of_this_build_are_cached_for_a_year_with_their_content_type(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    build = StaticSite.default().build
    for name, content_type in [
        ("js/main.js", "text/javascript; charset=utf-8"),
        ("css/app.css", "text/css; charset=utf-8"),
        ("vendor/msgpack/index.mjs", "text/javascript; charset=utf-8"),
        ("vendor/msgpack/LICENSE.txt", "text/plain; charset=utf-8"),
        ("favicon.svg", "image/svg+xml"),
    ]:
        status, headers, body = await fetch(f"{site}/static/{build}/{name}")
        assert (status, headers["Content-Type"], headers["Cache-Control"]) == (200, content_type, IMMUTABLE), name
        assert body == (STATIC_ROOT / name).read_bytes()
        assert headers["X-Content-Type-Options"] == "nosniff"


async def test_text_is_sent_gzipped_to_browsers_that_accept_it(race_server: RaceServer) -> None:
    url = f"{http_url(race_server.url)}/static/{StaticSite.default().build}/js/engine.js"

    def get() -> tuple[Message, bytes]:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": "gzip, deflate"}), timeout=10) as response:
            return response.headers, response.read()

    headers, body = await asyncio.to_thread(get)
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Vary"] == "Accept-Encoding"
    original = (STATIC_ROOT / "js" / "engine.js").read_bytes()
    assert gzip.decompress(body) == original and len(body) < len(original) / 2


async def test_another_builds_asset_is_served_uncached_and_a_missing_one_is_404(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    status, headers, body = await fetch(f"{site}/static/0123456789ab/js/main.js")
    assert (status, headers["Cache-Control"]) == (200, NO_CACHE)
    assert body == (STATIC_ROOT / "js" / "main.js").read_bytes()
    status, _, _ = await fetch(f"{site}/static/{StaticSite.default().build}/js/nothing-here.js")
    assert status == 404
    status, _, _ = await fetch(f"{site}/static/{StaticSite.default().build}/../../transport.py")
    assert status == 404


async def test_other_plain_http_paths_still_ask_for_a_websocket_upgrade(race_server: RaceServer) -> None:
    status, _, _ = await fetch(http_url(race_server.url) + "/no/such/page")
    assert status == 426


async def test_a_browser_asking_for_a_page_that_does_not_exist_gets_the_page_shell_with_404(race_server: RaceServer) -> None:
    """Not a bare "426 ... You need a WebSocket client" a person cannot act on: the shell, whose router says so."""
    status, headers, body = await fetch(http_url(race_server.url) + "/no/such/page", accept="text/html,application/xhtml+xml")
    assert status == 404 and headers["Content-Type"].startswith("text/html")
    assert b'type="module"' in body and "Content-Security-Policy" in headers


def test_the_build_id_changes_when_a_file_changes(tmp_path: Path) -> None:
    for path in STATIC_ROOT.rglob("*"):
        if path.is_file():
            target = tmp_path / path.relative_to(STATIC_ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    assert StaticSite(tmp_path).build == StaticSite.default().build
    (tmp_path / "css" / "app.css").write_text("body {}")
    assert StaticSite(tmp_path).build != StaticSite.default().build


def load_vendor_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vendor_msgpack", ROOT / "tools" / "vendor_msgpack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vendored_msgpack_matches_its_checksums_and_a_changed_file_is_caught(tmp_path: Path) -> None:
    tool = load_vendor_tool()
    assert tool.verify() == []
    vendor = STATIC_ROOT / "vendor" / "msgpack"
    assert re.fullmatch(r"@msgpack/msgpack \d+\.\d+\.\d+", (vendor / "VERSION").read_text().splitlines()[0])
    assert "ISC" in (vendor / "LICENSE.txt").read_text() or "Permission to use" in (vendor / "LICENSE.txt").read_text()
    copy = tmp_path / "msgpack"
    for path in vendor.rglob("*"):
        if path.is_file():
            (copy / path.relative_to(vendor)).parent.mkdir(parents=True, exist_ok=True)
            (copy / path.relative_to(vendor)).write_bytes(path.read_bytes())
    (copy / "Decoder.mjs").write_text("export const Decoder = null;\n")
    (copy / "extra.mjs").write_text("\n")
    assert tool.verify(copy) == ["Decoder.mjs: checksum differs", "extra.mjs: not listed in SHA256SUMS"]


def test_the_package_data_ships_every_static_file() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["server.web"]
    package = STATIC_ROOT.parent
    for path in STATIC_ROOT.rglob("*"):
        if path.is_file():
            name = path.relative_to(package).as_posix()
            assert any(fnmatch.fnmatch(name, pattern) and name.count("/") == pattern.count("/") for pattern in patterns), name


def js_string_set(source: str, name: str) -> set[str]:
    """The strings of ``export const NAME = new Set([...])`` in a JavaScript module."""
    match = re.search(rf"export const {name} = new Set\(\[(.*?)\]\);", source, re.DOTALL)
    assert match is not None, name
    return set(re.findall(r'"([a-z_]+)"', match.group(1)))


def test_the_pages_protocol_module_knows_every_race_and_lobby_event_of_the_schema() -> None:
    """A new event type in shared/protocol must reach the browser client too (its connection drops unknown types)."""
    source = (STATIC_ROOT / "js" / "protocol.js").read_text()
    assert js_string_set(source, "RACE_EVENTS") == set(EVENT_TYPES)
    assert js_string_set(source, "LOBBY_EVENTS") == set(LOBBY_EVENT_TYPES)


def inline(shell: str, tag: str) -> list[str]:
    """The text of every inline ``<tag>`` element of the shell (a script with a ``src`` is not inline)."""
    return re.findall(rf"<{tag}(?![^>]*\bsrc=)[^>]*>(.*?)</{tag}>", shell, re.DOTALL)


def test_the_page_shell_carries_the_whole_client_inline_so_a_page_needs_one_request() -> None:
    """The lobby took 2.7 s to be usable at 150 ms round-trip time with every module preloaded: 49 requests, each on a
    new connection, six at a time. The shell now carries the style sheet and every module joined into one script, with
    its language's words, and nothing else loads code (benchmarks/web_page_weight.py --rtt-ms 150)."""
    site = StaticSite.default()
    for language, shell_asset in site.shells.items():
        shell = shell_asset.asset.body.decode()
        assert "{{" not in shell
        assert not re.search(r'<script[^>]*\bsrc=|<link rel="(modulepreload|stylesheet)"', shell), "the shell still fetches code"
        early, script = inline(shell, "script")
        assert "new WebSocket(" in early
        [style] = inline(shell, "style")
        assert style == (STATIC_ROOT / "css" / "app.css").read_text()
        for module in sorted([*STATIC_ROOT.glob("js/*.js"), STATIC_ROOT / "vendor" / "msgpack" / "index.mjs"]):
            if module.name != "offline.js":  # the offline page's own script, served to it alone
                assert f"// ---- {module.relative_to(STATIC_ROOT).as_posix()}\n" in script, module
        assert f"// ---- js/words/{language}.js\n" in script
        assert not re.search(r"^(import|export)\b", script, re.MULTILINE)
        policy = shell_asset.policy
        hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'" for text in (early, script))
        assert f"script-src 'self' {hashes};" in policy, "the policy does not allow exactly the inline scripts"
        digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
        assert f"style-src 'self' 'sha256-{digest}';" in policy
        assert "unsafe-inline" not in policy


async def test_a_page_revisited_with_its_shells_validator_gets_304_without_a_body(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    status, headers, body = await fetch(site + "/leaderboard")
    etag = headers["ETag"]
    assert (status, etag) == (200, f'"{StaticSite.default().build}-en"') and len(body) > 10_000

    def revalidate(tag: str, cookie: str = "") -> tuple[int, bytes]:
        request = urllib.request.Request(site + "/race/inQH4SkJQ5Y", headers={"If-None-Match": tag, "Cookie": cookie})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    assert await asyncio.to_thread(revalidate, etag) == (304, b"")
    status, body = await asyncio.to_thread(revalidate, '"0123456789ab-en"')
    assert status == 200 and b"data-static" in body
    status, body = await asyncio.to_thread(revalidate, etag, "other=1; fg.lang=fr")  # the picker chose French since
    assert status == 200 and b'<html lang="fr"' in body


def test_the_bundle_joins_default_exports_and_refuses_what_it_cannot_join() -> None:
    joined = bundle({"js/w.js": "export default {\n\"a\": 1};\n", "js/m.js": 'const w = (await import(`./${"w"}.js`)).default;\n'}, ["js/w.js", "js/m.js"])
    assert "const __default = {" in joined and "return Object.freeze({ default: __default });" in joined
    assert "__fgImport('js/m.js', `./${\"w\"}.js`)" in joined
    sources = {"js/a.js": 'import { b } from "./b.js";\nexport const a = b;\n', "js/b.js": 'import { a } from "./a.js";\nexport const b = 1;\n'}
    with pytest.raises(BundleError, match="import cycle: js/a.js → js/b.js → js/a.js"):
        bundle(sources, ["js/a.js"])
    with pytest.raises(BundleError, match="js/c.js: the bundle cannot join 'import \\* as x from"):
        bundle({"js/c.js": 'import * as x from "./c.js";\n'}, ["js/c.js"])
    with pytest.raises(BundleError, match="js/d.js: imports './gone.js'"):
        bundle({"js/d.js": 'import { x } from "./gone.js";\n'}, ["js/d.js"])
