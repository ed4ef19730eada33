"""The terminal's words in the four languages of the web page: every table complete, the language from $LANG or
--lang, and the line mode and the app speaking it."""

from __future__ import annotations

import asyncio
import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from race_helpers import player
from server_processes import flowergarden, read_until
from tui_helpers import SMALL, ann_in_the_app, until

from client.words import LANGUAGES, TABLES, language_from_env, set_language
from server.app import RaceServer
from shared.protocol import RaceSettings, Started


def fields(text: str) -> set[str]:
    """The ``{placeholders}`` of a text."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


ALIKE = {
    "player.bot",
    "web.race.berserk_tag",
    "web.arena.podium",
    "web.arena.points",
    "web.lobby.minutes",
    "web.tutorial.label",
    "web.keys.esc",
    "web.board.bouquet",
    "web.board.bouquet_title",
    "web.race.code",
    "web.replay.pause",
    "web.rating.provisional_short",
    "emote.said",
}
"""Keys whose words some language writes as English does ("bot", "{count} min", "Esc", the bouquet in French and
Portuguese, "Code" in French, "provisional" in Spanish, "tutorial" in Portuguese and Spanish, "{name}: {phrase}")."""


def test_every_language_has_every_key_with_the_same_placeholders() -> None:
    assert set(LANGUAGES) == {"en", "pt", "fr", "es"}
    reference = TABLES["en"]
    for language, table in TABLES.items():
        assert set(table) == set(reference), (
            f"{language}: missing {set(reference) - set(table)}, extra {set(table) - set(reference)}"
        )
        for key, text in table.items():
            assert text.strip(), f"{language}: {key} is empty"
            assert fields(text) == fields(reference[key]), f"{language}: {key} has other placeholders"
        if language != "en":
            same = [key for key in table if table[key] == reference[key] and key not in ALIKE]
            assert not same, f"{language}: left in English: {same}"


@pytest.mark.parametrize(
    ("environment", "language"),
    [({"LANG": "pt_BR.UTF-8"}, "pt"), ({"LANG": "fr_FR"}, "fr"), ({"LANG": "es"}, "es"), ({"LANG": "C.UTF-8"}, "en"),
     ({"LANG": "de_DE.UTF-8"}, "en"), ({}, "en"), ({"LANG": "en_GB.UTF-8", "LC_ALL": "fr_CA.UTF-8"}, "fr")],
)  # fmt: skip
def test_the_language_comes_from_the_locale_variables(environment: dict[str, str], language: str) -> None:
    assert language_from_env(environment) == language


async def test_the_line_mode_speaks_lang_and_lang_overrides_it(race_server: RaceServer) -> None:
    for extra, environment, go, draw in (
        ((), {"LANG": "es_ES.UTF-8"}, "¡Ya!", "Empate: ambos tienen 0/52 en los fundamentos."),
        (("--lang", "fr"), {"LANG": "es_ES.UTF-8"}, "Partez !", "Égalité : chacun a 0/52 sur les fondations."),
    ):
        ann = await player(race_server.url, "Ann")
        seated = await ann.create(RaceSettings(seed=15))
        bob = flowergarden(
            "race", "--server", race_server.url, "--name", "Bob", "--join", seated.race.race, *extra, env=environment
        )
        try:
            await read_until(bob, go, timeout=20)
            await ann.wait_for(Started)
            await ann.resign(seated.race.race)
            assert bob.stdin is not None
            bob.stdin.write("resign\n")
            bob.stdin.flush()
            output, _ = await asyncio.to_thread(bob.communicate, timeout=20)
            assert draw in output and bob.returncode == 4, output
        finally:
            if bob.poll() is None:
                bob.kill()
            await ann.close()


@pytest.fixture
def portuguese() -> Iterator[None]:
    set_language("pt")
    try:
        yield
    finally:
        set_language("en")


async def test_the_app_speaks_the_language(race_server: RaceServer, tmp_path: Path, portuguese: None) -> None:
    del portuguese
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=SMALL) as race:
        screen = race.screen
        await until(race.pilot, lambda: "à espera de um adversário" in str(screen.query_one("#race-status").render()))
        assert "À espera de um adversário ..." in screen.messages and "O seu adversário entra com:" in screen.messages


ROOT = Path(__file__).resolve().parent.parent
SOURCES = [*sorted((ROOT / "server/web/static/js").glob("*.js")), ROOT / "server/web/static/app.html", ROOT / "server/web/static/offline.html",
           *sorted(ROOT.glob("client/**/*.py")), *sorted(ROOT.glob("cli/**/*.py"))]  # fmt: skip
"""Every file that says something through the tables."""
LITERAL = re.compile(r"""["'`]((?:[a-z0-9_]+\.)+[a-z0-9_-]+)["'`]|\{\{t:([a-z0-9_.]+)\}\}""")
WORDED = re.compile(r"""_?worded\(\s*["']([a-z_]+)["']""")
TEMPLATE = re.compile(r"""`((?:[a-z0-9_.]|\$\{[^}]+\})+)`|f["']((?:[a-z0-9_.]|\{[^}]+\})+)["']""")


def used_keys() -> tuple[set[str], list[re.Pattern[str]]]:
    """The keys the clients name literally, and the patterns of those they build (``status.${status}``)."""
    literal: set[str] = set()
    built: list[re.Pattern[str]] = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        literal |= {match[0] or match[1] for match in LITERAL.findall(text)}
        built += [re.compile(re.escape(kind) + r"\.[a-z_-]+") for kind in WORDED.findall(text)]  # worded("status", …)
        for template, fstring in TEMPLATE.findall(text):
            pattern = template or fstring
            if "." in pattern and ("${" in pattern or "{" in pattern) and not pattern.startswith(("$", "{")):
                built.append(re.compile("[a-z_]+".join(re.escape(part) for part in re.split(r"\$?\{[^}]+\}", pattern))))
    return literal, built


def test_every_key_in_the_tables_is_said_by_a_client_and_every_key_said_is_in_them() -> None:
    literal, built = used_keys()
    reference = set(TABLES["en"])
    said = literal | {key.removesuffix(".one").removesuffix(".other").removesuffix("_you") for key in literal}

    def is_said(key: str) -> bool:  # a count's forms (tn), the viewer's own form (`${key}_you`), a built key
        base = re.sub(r"(\.one|\.other|_you)$", "", key)
        return key in literal or base in said or any(pattern.fullmatch(key) or pattern.fullmatch(base) for pattern in built)

    unused = sorted(key for key in reference if not is_said(key))
    assert not unused, f"keys no client says: {unused}"
    prefixes = {key.split(".", 1)[0] for key in reference}
    forms = {re.sub(r"(\.one|\.other|_you)$", "", key) for key in reference}
    missing = sorted(
        key
        for key in literal
        if key.split(".", 1)[0] in prefixes
        and key not in reference
        and key not in forms
        and not key.endswith((".js", ".py", ".html"))
    )
    assert not missing, f"keys the clients say that the tables lack: {missing}"
