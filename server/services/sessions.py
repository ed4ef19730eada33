"""Sessions: ``hello`` gives a player a random, unguessable token that later proves its seats.

A new session is provisional (stored with a short lifetime) until it is used — until it takes a seat — and the
sessions one client address may create are counted per window: a loop of fresh hellos cannot fill Redis.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, replace

from server.services.errors import ServiceError
from server.store import Identity, SessionRecord, SessionStore
from shared.names import InvalidName, normalize_name
from shared.protocol import ErrorCode


@dataclass(frozen=True, slots=True)
class Session:
    """An identified player: the secret token, the public player id and the display name; logged in to an account
    (its handle, and whether it is a bot) or anonymous."""

    token: str
    player: str
    name: str
    kept: bool = False
    """Whether the session was used (took a seat) and is stored for the long lifetime."""
    account: str | None = None
    bot: bool = False

    @property
    def identity(self) -> Identity:
        """Who this session's player is, as seats record it."""
        return Identity(self.player, self.name, self.account, self.bot)


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """How many sessions one client address may create, and how long an unused one lives."""

    max_new_per_address: int = 60
    """New sessions (``hello`` without a token) per client address and window; more get ``rate_limited`` (0: no limit)."""
    window_seconds: float = 3600.0
    provisional_seconds: float = 3600.0
    """Lifetime of a session that never took a seat, renewed by each ``hello`` with its token."""


def clean_name(name: str) -> str:
    """The display name as everybody will see it (:func:`shared.names.normalize_name`); ServiceError ``bad_field``
    ``name`` when nothing visible is left or it breaks a rule."""
    try:
        return normalize_name(name)
    except InvalidName as error:
        raise ServiceError(ErrorCode.BAD_FIELD, str(error), field="name") from None


class SessionService:
    """Creates and resumes sessions."""

    def __init__(self, store: SessionStore, limits: SessionLimits | None = None) -> None:
        self.store = store
        self.limits = limits or SessionLimits()

    async def hello(self, name: str, token: str | None, address: str) -> Session:
        """A new session for ``name`` (counted against client ``address``), or the session of ``token`` (its stored
        name is kept)."""
        if token is not None:
            record = await self.store.resume(token)
            if record is None:
                raise ServiceError(ErrorCode.BAD_TOKEN, "unknown or expired session token", field="token")
            return Session(token=token, player=record.player, name=record.name, kept=record.kept, account=record.account, bot=record.bot)
        cleaned = clean_name(name)
        most = self.limits.max_new_per_address
        if most and await self.store.count_new(address, round(self.limits.window_seconds * 1000)) > most:
            raise ServiceError(
                ErrorCode.RATE_LIMITED,
                f"at most {self.limits.max_new_per_address} new sessions per address and hour; say hello with your token",
                field="token",
            )
        session = Session(token=secrets.token_urlsafe(32), player=secrets.token_urlsafe(9), name=cleaned)
        await self.store.create(session.token, SessionRecord(player=session.player, name=session.name))
        return session

    async def keep(self, session: Session, race_id: str) -> Session:
        """The session took (or synced) a seat in ``race_id``: remember the race (see :meth:`seat_races`) and store
        the session for the long lifetime (once)."""
        await self.store.add_seat(session.token, race_id, int(time.time() * 1000))  # the order only: which to forget first
        if session.kept:
            return session
        await self.store.keep(session.token)
        return replace(session, kept=True)

    async def seat_races(self, session: Session) -> list[str]:
        """The races the session took seats in, newest first (finished ones too, until :meth:`forget_seats`)."""
        return await self.store.seat_races(session.token)

    async def forget_seats(self, session: Session, race_ids: list[str]) -> None:
        """The session no longer plays in these races."""
        await self.store.forget_seats(session.token, race_ids)

    async def log_in(self, session: Session, *, player: str, handle: str, bot: bool) -> Session:
        """The session logged in to an account: from now on it plays as the account's player, named by its handle,
        under a **fresh token** (the one it had ends: a token planted before the login is worth nothing after it),
        kept for the long lifetime."""
        logged_in = Session(token=secrets.token_urlsafe(32), player=player, name=handle, kept=True, account=handle, bot=bot)
        await self.store.log_in(session.token, logged_in.token, SessionRecord(player=player, name=handle, account=handle, bot=bot))
        return logged_in

    async def log_out(self, session: Session) -> None:
        """End the session: its token stops working on every connection that says ``hello`` with it."""
        await self.store.end(session.token, session.player)

    async def end_others(self, session: Session) -> int:
        """End every other session of the session's account (after a password change); how many ended."""
        return await self.store.end_others(session.player, session.token)
