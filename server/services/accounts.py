"""Accounts: registering a handle, logging in from any client, and keeping password guessing slow.

A password is stored only as a salted scrypt hash (``hashlib.scrypt``, parameters in :data:`KDF`, recorded
with each hash); a bot account gets a generated secret key instead, hashed the same way. Failed logins are
limited per handle (in Redis, so across processes) and per connection; a login to an unknown handle costs the
same hash and counts the same way, and both answers are ``bad_credentials``: only registration tells whether
a handle is taken.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Final, Protocol

from server.services.errors import ServiceError
from server.services.sessions import Session, SessionService
from server.store import AccountRecord, PlayerStore, RaceRecord
from shared.protocol import AttemptState, ErrorCode, RaceStatus

HANDLE_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{2,19}")
"""3 to 20 ASCII letters, digits, ``_`` and ``-``, beginning with a letter or digit (never read as an option)."""
MIN_PASSWORD_LEN: Final = 8
SCRYPT_N: Final = 2**14
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
SCRYPT_LEN: Final = 32
KDF: Final = f"scrypt:n={SCRYPT_N},r={SCRYPT_R},p={SCRYPT_P},len={SCRYPT_LEN}"
"""16 MiB per hash; measured 56 ms a hash on the 2-core development machine (load average 6.8; 146 ms while the test
suite ran beside it): cheap for a login, slow for guessing."""
_DUMMY_SALT: Final = secrets.token_bytes(16)


@dataclass(frozen=True, slots=True)
class LoginLimits:
    """How many failed logins are allowed (``flowergarden serve`` uses these defaults)."""

    per_handle: int = 10
    """Failures per handle per window: then every login to it is refused until the window ends."""
    handle_window_seconds: float = 900.0
    per_connection: int = 5
    """Failures per connection per window."""
    connection_window_seconds: float = 60.0
    attempts_per_connection: int = 20
    """Logins and registrations (failed or not) per connection per window: each costs a slow hash."""
    registrations_per_address: int = 10
    """Accounts registered from one client address (IPv4, IPv6 /64) per address window (0: no limit)."""
    address_window_seconds: float = 3600.0


@dataclass(slots=True)
class LoginGuard:
    """One connection's recent failed logins and recent attempts of any outcome (monotonic times)."""

    failures: deque[float] = field(default_factory=deque)
    attempts: deque[float] = field(default_factory=deque)

    def recent(self, times: deque[float], window: float, now: float) -> int:
        """How many of ``times`` fall in the window ending now (older ones are dropped)."""
        while times and times[0] <= now - window:
            times.popleft()
        return len(times)


def valid_handle(handle: str) -> bool:
    """Whether ``handle`` is a handle one may register."""
    return HANDLE_PATTERN.fullmatch(handle) is not None


def _derive(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=SCRYPT_LEN)


async def hash_secret(secret: str, salt: bytes) -> bytes:
    """The scrypt hash of ``secret`` (computed in a worker thread: it takes tens of milliseconds)."""
    return await asyncio.to_thread(_derive, secret, salt)


class RaceFinder(Protocol):
    """Where the races are looked up (the race service)."""

    async def find(self, race_id: str) -> RaceRecord | None:
        """The race's stored record, or None if there is none (or it expired)."""


def plays_on(record: RaceRecord | None, player: str) -> bool:
    """Whether ``player`` still has something to do in the race: it waits, counts down, or runs with the player's
    attempt not over."""
    seat = next((seat for seat in record.seats if seat.player == player), None) if record is not None else None
    if record is None or seat is None:
        return False
    return record.status in (RaceStatus.WAITING, RaceStatus.COUNTDOWN) or (
        record.status is RaceStatus.RUNNING and seat.state is AttemptState.PLAYING
    )


class AccountService:
    """Registers accounts and logs sessions in to them."""

    def __init__(self, store: PlayerStore, sessions: SessionService, limits: LoginLimits | None = None, *, races: RaceFinder) -> None:
        self.store = store
        self.sessions = sessions
        self.limits = limits or LoginLimits()
        self.races = races

    async def _refuse_while_playing(self, session: Session) -> None:
        """``already_seated`` while the session plays on in a race: a seat belongs to the player id that took it, which
        logging in would change (the session could no longer move, sync or leave there). Forgets finished races."""
        race_ids = await self.sessions.seat_races(session)
        records = await asyncio.gather(*(self.races.find(race_id) for race_id in race_ids))  # at once, not one by one
        playing = [race_id for race_id, record in zip(race_ids, records) if plays_on(record, session.player)]
        await self.sessions.forget_seats(session, [race_id for race_id in race_ids if race_id not in playing])
        if playing:
            raise ServiceError(
                ErrorCode.ALREADY_SEATED,
                f"you still play in race {playing[0]} (a seat stays with the player who took it): finish or resign it, or leave it "
                "while it waits, then log in",
            )

    def _attempt(self, guard: LoginGuard) -> float:
        """Count one slow-hash request of a connection; ``rate_limited`` past the per-connection allowance."""
        now = time.monotonic()
        if guard.recent(guard.attempts, self.limits.connection_window_seconds, now) >= self.limits.attempts_per_connection:
            raise ServiceError(ErrorCode.RATE_LIMITED, "too many logins and registrations on this connection; wait a minute")
        guard.attempts.append(now)
        return now

    async def register(
        self, session: Session, handle: str, password: str | None, *, bot: bool, guard: LoginGuard, address: str
    ) -> tuple[Session, str | None]:
        """Register ``handle`` and log ``session`` in to it; a bot gets a generated key (returned once)."""
        self._attempt(guard)
        await self._refuse_while_playing(session)
        if not valid_handle(handle):
            raise ServiceError(
                ErrorCode.BAD_FIELD, "a handle is 3 to 20 letters, digits, _ or -, beginning with a letter or digit", field="handle"
            )
        key = None
        if bot:
            if password is not None:
                raise ServiceError(ErrorCode.BAD_FIELD, "a bot gets a generated key: send no password", field="password")
            key = password = secrets.token_urlsafe(24)
        elif password is None or len(password) < MIN_PASSWORD_LEN:
            raise ServiceError(ErrorCode.BAD_FIELD, f"a password has at least {MIN_PASSWORD_LEN} characters", field="password")
        window_ms = round(self.limits.address_window_seconds * 1000)
        most = self.limits.registrations_per_address
        if most and await self.store.count_registration(address, window_ms) > most:
            raise ServiceError(ErrorCode.RATE_LIMITED, "too many accounts registered from your address; try again later", field="handle")
        salt = secrets.token_bytes(16)
        account = AccountRecord(
            handle=handle,
            player=secrets.token_urlsafe(9),
            bot=bot,
            secret_hash=(await hash_secret(password, salt)).hex(),
            salt=salt.hex(),
            kdf=KDF,
            created_at=int(time.time() * 1000),
        )
        if not await self.store.register(account):
            raise ServiceError(ErrorCode.HANDLE_TAKEN, "this handle is taken (handles are unique regardless of case)", field="handle")
        return await self.sessions.log_in(session, player=account.player, handle=account.handle, bot=bot), key

    async def login(self, session: Session, handle: str, password: str, guard: LoginGuard) -> Session:
        """Log ``session`` in to the account of ``handle`` (any case); ``bad_credentials`` or ``rate_limited`` otherwise."""
        now = self._attempt(guard)
        if guard.recent(guard.failures, self.limits.connection_window_seconds, now) >= self.limits.per_connection:
            raise ServiceError(ErrorCode.RATE_LIMITED, "too many failed logins on this connection; wait a minute", field="password")
        if await self.store.login_failures(handle) >= self.limits.per_handle:
            raise ServiceError(ErrorCode.RATE_LIMITED, "too many failed logins to this handle; try again later", field="handle")
        account = await self.store.account(handle) if valid_handle(handle) else None
        salt = bytes.fromhex(account.salt) if account is not None else _DUMMY_SALT
        derived = await hash_secret(password, salt)  # also for an unknown handle: the answer takes as long
        if account is None or account.kdf != KDF or not hmac.compare_digest(derived.hex(), account.secret_hash):
            guard.failures.append(now)
            await self.store.count_login_failure(handle, round(self.limits.handle_window_seconds * 1000))
            raise ServiceError(ErrorCode.BAD_CREDENTIALS, "wrong handle or password")
        if account.player != session.player:  # logging in again to the same account changes no seat
            await self._refuse_while_playing(session)
        return await self.sessions.log_in(session, player=account.player, handle=account.handle, bot=account.bot)

    async def change_password(self, session: Session, password: str, new_password: str, guard: LoginGuard) -> int:
        """Change the password of the session's account after checking the current one (``bad_credentials``, counted
        like a failed login), then end every other session of the account: a thief's token is worth nothing once the
        owner changed the password. Returns how many sessions ended."""
        if session.account is None:
            raise ServiceError(ErrorCode.ACCOUNT_REQUIRED, "log in first: only an account has a password")
        now = self._attempt(guard)
        if guard.recent(guard.failures, self.limits.connection_window_seconds, now) >= self.limits.per_connection:
            raise ServiceError(ErrorCode.RATE_LIMITED, "too many failed logins on this connection; wait a minute", field="password")
        if len(new_password) < MIN_PASSWORD_LEN:
            raise ServiceError(ErrorCode.BAD_FIELD, f"a password has at least {MIN_PASSWORD_LEN} characters", field="new_password")
        account = await self.store.account(session.account)
        if account is None or account.bot:
            raise ServiceError(ErrorCode.BAD_FIELD, "a bot's key cannot be changed; register a new bot", field="password")
        derived = await hash_secret(password, bytes.fromhex(account.salt))
        if account.kdf != KDF or not hmac.compare_digest(derived.hex(), account.secret_hash):
            guard.failures.append(now)
            await self.store.count_login_failure(account.handle, round(self.limits.handle_window_seconds * 1000))
            raise ServiceError(ErrorCode.BAD_CREDENTIALS, "wrong password", field="password")
        salt = secrets.token_bytes(16)
        await self.store.set_secret(account.handle, (await hash_secret(new_password, salt)).hex(), salt.hex(), KDF)
        return await self.sessions.end_others(session)
