"""``flowergarden logout`` and ``flowergarden password``: end sessions on the server (docs/PLAYERS.md "Sessions").

The terminal keeps no login of its own (each command logs in afresh); what it keeps are the sessions of the races it
sat in (``client/sessions.py``, for ``race --resume``). ``logout`` ends those sessions on the server and forgets them;
``password`` changes an account's password, which ends every other session of the account.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from cli.connected import run_connected
from cli.output import emit_json
from cli.player_commands import add_common_arguments, read_password
from client import RaceClient, ServerError
from client.race_session import Credentials, introduce
from client.sessions import SessionStore


def register(subparsers: Any) -> None:
    """Add ``logout`` and ``password``."""
    parser = subparsers.add_parser(
        "logout",
        help="end the sessions this terminal saved for a server (their tokens stop working)",
        description=(
            "End, on the server, every session this terminal saved to resume its races (race --resume), and forget them "
            "here: a copied token is worth nothing afterwards. To end the sessions of an account everywhere (other "
            "devices too), change its password: flowergarden password HANDLE."
        ),
    )
    add_common_arguments(parser)
    parser.set_defaults(handler=lambda args: run_connected(args, _logout))

    parser = subparsers.add_parser(
        "password",
        help="change an account's password; every other session of the account ends",
        description=(
            "Log in to HANDLE with its current password, then set a new one (8 to 128 characters). Every other session "
            "of the account ends at once: other devices log in again with the new password. The current password is "
            "read like `login` reads it ($FLOWERGARDEN_PASSWORD, the terminal, or stdin's first line); the new one from "
            "$FLOWERGARDEN_NEW_PASSWORD, else typed twice on the terminal, else the next line of stdin."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("handle", metavar="HANDLE")
    parser.set_defaults(handler=lambda args: run_connected(args, _password))


async def _logout(args: argparse.Namespace) -> None:
    store = SessionStore()
    saved = [entry for entry in store.load() if entry.server == args.server]
    ended = 0
    for token in dict.fromkeys(entry.token for entry in saved):  # each session once, however many races it saved
        async with await RaceClient.connect(args.server) as client:
            with contextlib.suppress(ServerError):  # expired or ended already: nothing left to end
                await client.hello("logout", token)
                await client.logout()
                ended += 1
    for entry in saved:
        store.forget(entry.race)
    if args.json:
        emit_json({"ended": ended, "forgotten": len(saved)})
    else:
        print(f"Ended {ended} saved session(s) on {args.server}; forgot {len(saved)} saved race(s).")


NEW_PASSWORD_ENV = "FLOWERGARDEN_NEW_PASSWORD"
"""Where ``password`` reads the new password from first (else the terminal, twice, else stdin's next line)."""


async def _password(args: argparse.Namespace) -> None:
    current = read_password("Current password: ")
    new = read_password("New password: ", confirm=True, env=NEW_PASSWORD_ENV)
    async with await RaceClient.connect(args.server) as client:
        await introduce(client, args.handle, Credentials(args.handle, current))
        await client.change_password(current, new)
    if args.json:
        emit_json({"handle": args.handle, "changed": True})
    else:
        print(f"Password of {args.handle} changed; every other session of the account ended.")
