"""Practice bots on request (``summon_bot``): this server process runs a bot client against itself.

A lone player in the web lobby has nobody to race; ``flowergarden bot`` needs someone to start it. So the
server starts one: a :class:`client.practice_bot.PracticeBot` on a :class:`client.RaceClient` connected to this
very server's WebSocket, which says ``hello``, logs in to a bot account and joins the waiting race through the
ordinary protocol, exactly as the ``flowergarden bot`` process would. The bot is therefore labelled a bot in
every view, and the server treats it like any other player.

Each process keeps its bot accounts in memory: a bot of a level takes an account of that level that is not
playing (a player plays one rated race at a time, so two bots at once need two accounts), registering a new
one (``FlowerBot<level>_<hex>``) only when all are busy, and resumes that account's session (its token), so
bots count neither as new registrations nor as new sessions of the server's own address. A restart registers
new ones. At most ``max_bots`` summoned bots play at once in a process, and a player has at most one playing
at a time (``rate_limited`` otherwise).
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from websockets.exceptions import InvalidHandshake

from client import RaceClient, ServerError
from client.ghost_player import GhostPlayer
from client.practice_bot import LEVELS, BotBrain, PracticeBot
from client.race_view import rules_of
from server.services.errors import ServiceError
from shared.protocol import ErrorCode, Seated

log = logging.getLogger(__name__)

MAX_SUMMONED_BOTS = 4
"""Summoned bots playing at once in one server process (each is a connection and a thread of solver work)."""


@dataclass(slots=True)
class BotAccount:
    """A bot account this process registered: its handle, key (its password) and the session it plays in."""

    level: int
    handle: str
    key: str
    token: str


class BotHost:
    """Seats practice bots in waiting races on request and lets them play to the result."""

    def __init__(
        self, url: Callable[[], str], *, max_bots: int = MAX_SUMMONED_BOTS, pace: float = 1.0, tls: ssl.SSLContext | None = None
    ) -> None:
        self._url = url
        self._tls = tls
        """How the bots check this process's certificate on ``wss://`` (their URL is a loopback address the
        certificate does not name)."""
        self.max_bots = max_bots
        self.pace = pace
        self._idle: list[BotAccount] = []
        self._starting: set[str] = set()
        """Players whose bot is being seated now."""
        self._playing: dict[asyncio.Task[None], str] = {}
        """Each bot's game, and the player who summoned it."""

    async def summon(self, requester: str, race_id: str, level: int, *, invite: str | None = None) -> str:
        """Seat a bot of ``level`` in ``race_id`` (waiting, opened by ``requester``; by its ``invite`` code when it is a
        private race, as any joiner); returns the bot's handle.

        Returns once the bot sits in the race; it then plays on in the background until the result.
        """
        if requester in self._starting or requester in self._playing.values():
            raise ServiceError(ErrorCode.RATE_LIMITED, "a practice bot you called is still playing: one at a time", field="race")
        if len(self._starting) + len(self._playing) >= self.max_bots:
            raise ServiceError(ErrorCode.RATE_LIMITED, f"this server runs {self.max_bots} practice bots already; try again later", field="level")
        self._starting.add(requester)
        try:
            return await self._seat(requester, race_id, level, invite)
        finally:
            self._starting.discard(requester)

    async def _seat(self, requester: str, race_id: str, level: int, invite: str | None) -> str:
        account = next((idle for idle in self._idle if idle.level == level), None)
        if account is not None:
            self._idle.remove(account)
        client: RaceClient | None = None
        try:
            client = await RaceClient.connect(self._url(), tls=self._tls)
            account = await self._log_in(client, level, account)
            # The creator who called the bot chose its race's spectator delay; a practice bot accepts any delay
            # (accept_delay 0: "as low as 0 s"), so a private race below the server's minimum gets its bot too.
            seated = await (client.join_invite(invite, accept_delay=0) if invite is not None else client.join(race_id, accept_delay=0))
        except ServerError as error:
            await self._done(client, account)
            code = ErrorCode(error.code) if error.code in ErrorCode.__members__.values() else ErrorCode.UNAVAILABLE
            raise ServiceError(code, f"the bot could not join: {error.error.message}", field=error.field) from error
        except (OSError, InvalidHandshake, TimeoutError) as error:  # its own port refused it (TLS, drain, limits)
            await self._done(client, account)
            log.warning("a summoned bot could not connect to %s: %r", self._url(), error)
            raise ServiceError(ErrorCode.UNAVAILABLE, "this server cannot start a practice bot right now") from error
        except BaseException:
            await self._done(client, account)
            raise
        task = asyncio.create_task(self._play(client, seated, level, account), name=f"bot {account.handle} in {race_id}")
        self._playing[task] = requester
        task.add_done_callback(self._playing.pop)
        return account.handle

    async def _log_in(self, client: RaceClient, level: int, account: BotAccount | None) -> BotAccount:
        """Resume ``account``'s session (or log in to it again), or register a new bot account of ``level``."""
        if account is not None:
            try:
                await client.hello(account.handle, account.token)
                return account
            except ServerError as error:
                if error.code != ErrorCode.BAD_TOKEN:
                    raise
            await client.hello(account.handle)
            await client.login(account.handle, account.key)
            account.token = client.token
            return account
        handle = f"FlowerBot{level}_{secrets.token_hex(3)}"
        await client.hello(handle)
        reply = await client.register(handle, bot=True)
        assert reply.key is not None
        return BotAccount(level, handle, reply.key, client.token)

    async def _done(self, client: RaceClient | None, account: BotAccount | None) -> None:
        """Close the bot's connection; its account is free for the next bot of its level."""
        if client is not None:
            await client.close()
        if account is not None and account.token:
            self._idle.append(account)

    async def _play(self, client: RaceClient, seated: Seated, level: int, account: BotAccount) -> None:
        settings = seated.race.settings
        bot = PracticeBot(client, BotBrain(LEVELS[level], random.Random()), pace=self.pace)
        try:
            async with asyncio.timeout(6 * 3600):
                await bot.play(seated.race.race, seated.slot, rules_of(settings))
        except (ServerError, ConnectionError, TimeoutError) as error:
            log.info("summoned bot stopped in race %s: %s", seated.race.race, error)
        except Exception:
            log.exception("summoned bot failed in race %s", seated.race.race)
        finally:
            await self._done(client, account)

    async def send_ghost(self, requester: str, invite: str, name: str, moves: Sequence[str], times: Sequence[int], end_ms: int) -> None:
        """Seat a ghost named ``name`` in the private ghost race of ``invite`` (opened by ``requester``) that plays
        ``moves`` at ``times`` (server/services/ghost.py); returns once it sits in the race. It counts as one of the
        requester's (one at a time) and the process's summoned bots."""
        if requester in self._starting or requester in self._playing.values():
            raise ServiceError(ErrorCode.RATE_LIMITED, "a practice bot or ghost you called is still playing: one at a time", field="source")
        if len(self._starting) + len(self._playing) >= self.max_bots:
            raise ServiceError(ErrorCode.RATE_LIMITED, f"this server runs {self.max_bots} practice bots and ghosts already; try again later")
        self._starting.add(requester)
        client: RaceClient | None = None
        try:
            client = await RaceClient.connect(self._url(), tls=self._tls)
            await client.hello(name)
            seated = await client.join_invite(invite, accept_delay=0)
        except (ServerError, OSError, InvalidHandshake, TimeoutError) as error:
            if client is not None:
                await client.close()
            log.warning("a ghost could not join its race: %r", error)
            raise ServiceError(ErrorCode.UNAVAILABLE, "this server cannot start the ghost right now") from error
        finally:
            self._starting.discard(requester)
        ghost = GhostPlayer(client, moves, times, end_ms)
        task = asyncio.create_task(self._haunt(client, ghost, seated), name=f"ghost in {seated.race.race}")
        self._playing[task] = requester
        task.add_done_callback(self._playing.pop)

    @staticmethod
    async def _haunt(client: RaceClient, ghost: GhostPlayer, seated: Seated) -> None:
        try:
            async with asyncio.timeout(6 * 3600):
                await ghost.play(seated.race.race, seated.slot)
        except (ServerError, ConnectionError, TimeoutError) as error:
            log.info("ghost stopped in race %s: %s", seated.race.race, error)
        except Exception:
            log.exception("ghost failed in race %s", seated.race.race)
        finally:
            await client.close()

    @property
    def playing(self) -> int:
        """Summoned bots playing now."""
        return len(self._playing)

    async def stop(self) -> None:
        """Stop every bot (server shutdown); their seats then go the way of any disconnected player's."""
        tasks = list(self._playing)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
