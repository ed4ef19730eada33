"""The terminal's words in the four languages of the web page: every table complete, the language from $LANG or
--lang, and the line mode and the app speaking it."""

from __future__ import annotations

import asyncio
import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from race_helpers import finished_race, player
from server_processes import flowergarden, read_until
from textual.widgets import DataTable, Input, Static
from tui_helpers import SIZES, SMALL, ann_in_the_app, save_screenshot, screen_text, send_keys, shown, until

from cli.tui.app import FlowerGardenApp, LobbyStart, ReplayStart
from cli.tui.dialogs import Confirm, HelpScreen, ResultScreen, SettingsScreen
from cli.tui.lobby_screen import LobbyScreen
from cli.tui.spectate_screens import ReplayScreen
from client.race_session import SeatRequest
from client.sessions import SessionStore
from client.words import LANGUAGES, TABLES, language_from_env, set_language
from server.app import RaceServer
from shared import Board, card_label, card_text
from shared.assist import read_typed_move
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
    "term.key.no",
    "term.key.palette",
    "term.board.bouquet",
}
"""Keys whose words some language writes as English does ("bot", "{count} min", "Esc", the bouquet in French and
Portuguese, "Code" in French, "provisional" in Spanish, "tutorial" in Portuguese and Spanish, "{name}: {phrase}",
"no" in Spanish, "palette" in French, the board's "Bouquet" in French and Portuguese)."""


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


def speaking(language: str) -> Iterator[None]:
    """The terminal speaks ``language`` until the test ends, then English again."""
    set_language(language)
    try:
        yield
    finally:
        set_language("en")


@pytest.fixture
def portuguese() -> Iterator[None]:
    yield from speaking("pt")


async def test_the_app_speaks_the_language(race_server: RaceServer, tmp_path: Path, portuguese: None) -> None:
    del portuguese
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=SMALL) as race:
        screen = race.screen
        await until(race.pilot, lambda: "à espera de um adversário" in str(screen.query_one("#race-status").render()))
        assert "À espera de um adversário ..." in screen.messages and "O seu adversário entra com:" in screen.messages
        status = str(screen.query_one("#race-status").render())
        assert f"Corrida {screen.view.race_id}" in status and "0 espectadores" in status and "Você: ligado" in status, status
        assert "jogadas auto desligadas" in status and "clássico" in status, status


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


TERMINAL_ENGLISH = (
    r"\b(?:the|your|you|and|with|of|by|or|race|races|open|lobby|join|create|quick match|resume|quit|help|close|closes|"
    r"cancel|seats?|seated|status|settings|creator|time limit|seconds|spectator|delay|none|server's|rules|counted|"
    r"redeal|private|invite|proven|winnable|rated|needs|whole number|empty|press|pick|arrows|practice|level|guest)\b"
)
"""English words the lobby, its settings dialog and the help said before they spoke the player's language; none of
them is French (key names such as Tab, Enter, Ctrl-Q and the ``--login`` option are the same in every language)."""


def english_left(text: str) -> list[str]:
    """The English words of :data:`TERMINAL_ENGLISH` in ``text`` (a command line such as ``lobby --login`` aside)."""
    return sorted({match.lower() for match in re.findall(TERMINAL_ENGLISH, re.sub(r"(?:lobby )?--\w+", "", text), flags=re.IGNORECASE)})


@pytest.fixture
def french() -> Iterator[None]:
    yield from speaking("fr")


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x45"])
async def test_the_lobby_its_settings_dialog_and_help_speak_french(
    race_server: RaceServer, tmp_path: Path, french: None, size: tuple[int, int]
) -> None:
    del french
    ann = await player(race_server.url, "Ann")
    app = FlowerGardenApp(race_server.url, LobbyStart(SeatRequest(name="Bob")), store=SessionStore(tmp_path / "s.json"))
    try:
        async with app.run_test(size=size) as pilot:
            lobby = await shown(pilot, LobbyScreen)
            race_id = (await ann.create(RaceSettings(seed=15, time_limit=300, undo=True, redeal_once=True))).race.race
            table = lobby.query_one(DataTable)
            await until(pilot, lambda: race_id in [key.value for key in table.rows], what="the new race in the table")
            while lobby.selected_race() != race_id:
                await pilot.press("down")
            await pilot.pause()
            rendered = {"lobby": screen_text(app)}
            assert "annulation" in rendered["lobby"] and "limite de temps 5:00" in rendered["lobby"], rendered["lobby"]
            await pilot.press("question_mark")
            help_screen = await shown(pilot, HelpScreen)
            rendered["help"] = screen_text(app)
            assert "Touches du salon" in rendered["help"], rendered["help"]
            await pilot.press("escape")
            await until(pilot, lambda: not help_screen.is_attached, what="the help closed")
            await pilot.press("c")
            dialog = await shown(pilot, SettingsScreen)
            dialog.query_one("#time-limit", Input).value = "0"
            await pilot.click("#create")
            await until(pilot, lambda: bool(str(dialog.query_one("#settings-error", Static).render())), what="the refusal")
            rendered["dialog"] = screen_text(app)
            assert "Une nouvelle course" in rendered["dialog"] and "la limite de temps est un nombre entier" in rendered["dialog"]
            save_screenshot(app, f"lobby-settings-fr-{size[0]}x{size[1]}")
            for part, text in rendered.items():
                assert not english_left(text), f"{part} at {size}: English left: {english_left(text)} in\n{text}"
    finally:
        await ann.close()


async def test_the_line_modes_help_and_sentences_speak_french(race_server: RaceServer) -> None:
    bob = flowergarden("race", "--server", race_server.url, "--name", "Bob", "--lang", "fr")
    try:
        await read_until(bob, "Bob", timeout=20)  # seated: the race is created
        output, _ = await asyncio.to_thread(bob.communicate, "board\nmoves\nhelp\n", 20)
    finally:
        if bob.poll() is None:
            bob.kill()
    help_text = TABLES["fr"]["term.line_help"]
    assert help_text in output, output
    assert TABLES["en"]["term.line_help"].splitlines()[0] not in output
    for key in ("term.line.no_deal", "term.line.no_legal_move", "term.line.left"):  # board, moves before the deal; the end
        assert TABLES["fr"][key] in output and TABLES["en"][key] not in output, output
    assert not english_left(re.sub(r"\b(?:moves|undo|redeal|stuck|resign|board|help)\b", "", help_text))


async def test_the_race_screens_refusals_confirmations_and_result_speak_french(race_server: RaceServer, tmp_path: Path, french: None) -> None:
    del french
    board = Board.deal(15)
    covered = next(column[0] for column in board.columns if len(column) > 1)  # at the bottom of a column: cannot move
    assert read_typed_move(board, card_text(covered)).why_not is not None
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15, redeal_once=True), size=SMALL) as race:
        app, pilot, screen = race.app, race.pilot, race.screen
        said = {}
        await pilot.press("g")  # before the start: the race's keys say why not
        await until(pilot, lambda: "La course n'a pas encore commencé." in screen.messages, what="the not-started line")
        await race.start()
        send_keys(app, *card_text(covered).lower())
        await until(pilot, lambda: any(line.startswith(f"{card_label(covered)} ne peut pas encore bouger") for line in screen.messages), what="the refusal")
        said["refusal"] = screen.messages[-1]
        assert "couvrent" in said["refusal"], said["refusal"]
        for key, question in (("g", "Abandonner cette course ?"), ("x", "Déclarer que vous êtes bloqué ?"), ("e", "Redistribuer les colonnes ?")):
            await pilot.press(key)
            await shown(pilot, Confirm, question)
            said[key] = screen_text(app)
            assert question in said[key], said[key]
            await pilot.press("n")
            await until(pilot, lambda: app.screen is screen, what="the question closed")
        save_screenshot(app, "race-confirm-fr-80x24")
        await pilot.press("g")
        await shown(pilot, Confirm, "the resign question")
        await pilot.press("y")
        await until(pilot, lambda: screen.view.me is not None and not screen.view.me.playing, what="the resignation")
        await race.bob.resign(screen.view.race_id)
        await shown(pilot, ResultScreen, "the result")
        said["result"] = screen_text(app)
        assert "Égalité : chacun a 0/52 sur les fondations." in said["result"] and "coups, 0 annulation" in said["result"], said["result"]
        for part, text in said.items():
            assert not english_left(text), f"{part}: English left: {english_left(text)} in\n{text}"
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running or app.return_value is not None, what="the app's exit")
    assert app.farewell[0].startswith(f"Course {screen.view.race_id} : Égalité"), app.farewell  # the summary left in the scrollback


async def test_the_replay_screen_speaks_french(race_server: RaceServer, french: None) -> None:
    del french
    race_id = await finished_race(race_server.url, RaceSettings(seed=15))
    app = FlowerGardenApp(race_server.url, ReplayStart(race_id))
    async with app.run_test(size=SMALL) as pilot:
        screen = await shown(pilot, ReplayScreen)
        await pilot.press("end")
        await until(pilot, lambda: screen.view.result is not None, what="the replay's end")
        await pilot.pause()
        text = screen_text(app)
        assert f"Rediffusion de la course {race_id}" in text and "en pause à 1x le rythme de la course" in text, text
        assert "suivant" in text and "Fondations" in text, text
        assert not english_left(re.sub(r"\b(?:Ann|Bob)\b", "", text)), f"English left: {english_left(text)} in\n{text}"
