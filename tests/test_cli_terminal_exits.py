"""The line mode on a real pseudo-terminal, inside a shell: it ends at once after the result, on Ctrl-C and on
Ctrl-D, and never swallows what is typed next (the shell runs it). Also the full-screen app's Ctrl-C."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from collections.abc import AsyncIterator

import pexpect
import pytest
import pytest_asyncio
from player_helpers import new_handle, registered
from race_helpers import player
from server_processes import ROOT

from client import RaceClient, ServerError
from server.app import RaceServer
from shared.protocol import Disconnected, PlayerJoined, RaceSettings, Started

PROMPT = "SHELL-READY> "


class Shell:
    """An interactive bash on a pseudo-terminal; commands typed as a person types them."""

    def __init__(self) -> None:
        environment = {**os.environ, "PYTHONPATH": str(ROOT), "PS1": PROMPT, "TERM": "xterm-256color"}
        environment.pop("FLOWERGARDEN_PASSWORD", None)  # the password prompts are asked on the terminal
        self.child = pexpect.spawn(
            "bash", ["--norc", "--noprofile", "-i"], env=environment, cwd=str(ROOT), encoding="utf-8", dimensions=(40, 120)
        )

    async def expect(self, pattern: str, timeout: float = 15) -> str:
        """Wait for ``pattern`` (literal text) in the output; what came before it."""
        await asyncio.to_thread(self.child.expect_exact, pattern, timeout=timeout)
        return str(self.child.before)

    def type(self, text: str) -> None:
        self.child.send(text)

    def close(self) -> None:
        self.child.close(force=True)


@pytest_asyncio.fixture
async def shell() -> AsyncIterator[Shell]:
    terminal = Shell()
    await terminal.expect(PROMPT)
    yield terminal
    terminal.close()


def command_line(*arguments: str) -> str:
    """``flowergarden ARGUMENTS; echo EXITED:$?`` typed into the shell, Enter included."""
    words = [sys.executable, "-m", "cli", *arguments]
    return " ".join(shlex.quote(word) for word in words) + "; echo EXITED:$?\r"


def race_command(url: str, race_id: str, *extra: str) -> str:
    return command_line("race", "--server", url, "--name", "Bob", "--join", race_id, *extra)


async def assert_the_shell_runs_the_next_line(shell: Shell, marker: str) -> None:
    """The command has ended: the prompt is back and a line typed now is run by the shell, not swallowed."""
    await shell.expect(PROMPT)
    shell.type(f"echo {marker}\r")
    await shell.expect(f"{marker}\r\n")


async def joined_race(url: str) -> tuple[RaceClient, str]:
    ann = await player(url, "Ann")
    seated = await ann.create(RaceSettings(seed=15))
    return ann, seated.race.race


async def test_after_the_result_the_line_mode_ends_and_the_next_typed_line_reaches_the_shell(race_server: RaceServer, shell: Shell) -> None:
    ann, race_id = await joined_race(race_server.url)
    try:
        shell.type(race_command(race_server.url, race_id, "--plain"))
        await shell.expect("Go!")
        shell.type("resign\r")
        await ann.wait_for(Started)
        await ann.resign(race_id)
        output = await shell.expect("EXITED:4")  # a draw's exit code
        assert "Draw: both have 0/52 on foundations." in output
        await assert_the_shell_runs_the_next_line(shell, "typed-after-the-race")  # not swallowed by a lingering client
    finally:
        await ann.close()


async def test_ctrl_c_mid_race_ends_the_line_mode_at_once_keeping_the_seat(race_server: RaceServer, shell: Shell) -> None:
    ann, race_id = await joined_race(race_server.url)
    try:
        shell.type(race_command(race_server.url, race_id, "--plain"))
        await shell.expect("Go!")
        shell.type("\x03")
        output = await shell.expect("EXITED:130", timeout=10)
        assert f"'flowergarden race --resume {race_id}' takes it back" in output
        assert (await ann.wait_for(Disconnected)).slot == 1
        await assert_the_shell_runs_the_next_line(shell, "still-here")
    finally:
        await ann.close()


async def test_ctrl_d_before_the_start_leaves_the_race_and_ends_the_line_mode(race_server: RaceServer, shell: Shell) -> None:
    ann = await player(race_server.url, "Ann")
    shell.type(command_line("race", "--server", race_server.url, "--plain", "--private"))
    try:
        output = await shell.expect("Waiting for an opponent")
        invite = output.split("--invite ")[1].split()[0]
        shell.type("\x04")
        assert "Left the race." in await shell.expect("EXITED:5", timeout=10)  # left before a result
        with pytest.raises(ServerError) as refused:  # the race closed when its creator left
            await ann.join_invite(invite)
        assert refused.value.code == "unknown_invite"
    finally:
        await ann.close()


@pytest.mark.parametrize(("key", "exit_code"), [("\x03", 130), ("\x04", 0)], ids=["ctrl-c", "ctrl-d"])
async def test_ctrl_c_and_ctrl_d_end_the_full_screen_app_at_once_and_restore_the_terminal(
    race_server: RaceServer, shell: Shell, key: str, exit_code: int
) -> None:
    ann, race_id = await joined_race(race_server.url)
    try:
        shell.type(race_command(race_server.url, race_id))
        await ann.wait_for(PlayerJoined)
        await ann.wait_for(Started)
        await shell.expect("Type a card")  # the app is drawn
        shell.type(key)
        assert f"'flowergarden race --resume {race_id}' takes it back" in await shell.expect(f"EXITED:{exit_code}", timeout=10)
        await assert_the_shell_runs_the_next_line(shell, "back-in-the-shell")
        await ann.wait_for(Disconnected)
    finally:
        await ann.close()


async def test_the_full_screen_app_reports_an_unreachable_server_in_one_line_after_restoring_the_terminal(shell: Shell) -> None:
    shell.type(command_line("race", "--server", "ws://127.0.0.1:1", "--name", "Ann"))
    output = await shell.expect("EXITED:1", timeout=20)
    assert "flowergarden: error [connection_failed]: ws://127.0.0.1:1: nothing answers there (connection refused)" in output
    assert "Traceback" not in output
    await assert_the_shell_runs_the_next_line(shell, "after-the-error")


PASSWORD_PROMPTS = {
    "register": (("register", "Ann"), "Choose a password: "),
    "login": (("login", "Ann"), "Password: "),
    "race --login": (("race", "--login", "Ann"), "Password: "),
    "leaderboard --login": (("leaderboard", "--login", "Ann"), "Password: "),
}


@pytest.mark.parametrize("command", list(PASSWORD_PROMPTS))
async def test_ctrl_d_at_a_password_prompt_is_a_one_line_error_without_a_traceback(race_server: RaceServer, shell: Shell, command: str) -> None:
    arguments, prompt = PASSWORD_PROMPTS[command]
    shell.type(command_line(*arguments, "--server", race_server.url))
    await shell.expect(prompt)
    shell.type("\x04")
    output = await shell.expect("EXITED:2", timeout=10)
    assert "flowergarden: error [bad_input]: no password typed (Ctrl-D ended the input)" in output
    assert "Traceback" not in output and "EOFError" not in output
    await assert_the_shell_runs_the_next_line(shell, "after-ctrl-d")


@pytest.mark.parametrize("command", list(PASSWORD_PROMPTS))
async def test_ctrl_c_at_a_password_prompt_ends_the_command_at_once(race_server: RaceServer, shell: Shell, command: str) -> None:
    arguments, prompt = PASSWORD_PROMPTS[command]
    shell.type(command_line(*arguments, "--server", race_server.url))
    await shell.expect(prompt)
    shell.type("\x03")  # no Enter after it: the command must not wait for one
    output = await shell.expect("EXITED:130", timeout=10)
    assert "Traceback" not in output
    await assert_the_shell_runs_the_next_line(shell, "after-ctrl-c")  # echo is back on: the line typed shows


async def test_a_guest_joining_a_rated_race_in_the_app_is_told_why_with_the_code_once(race_server: RaceServer, shell: Shell) -> None:
    ann = await registered(race_server.url, new_handle("Ann"))
    try:
        seated = await ann.create(RaceSettings(rated=True))
        shell.type(race_command(race_server.url, seated.race.race))  # Bob, a guest, in the full-screen app
        output = await shell.expect("EXITED:1", timeout=20)
        error = output[output.index("flowergarden: error [") :].splitlines()[0]  # after the terminal's restore sequences
        code = error.split("[", 1)[1].split("]", 1)[0]
        assert code == "account_required"
        assert error.count(code) == 1, error
        assert "Traceback" not in output
    finally:
        await ann.close()
