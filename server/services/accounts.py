"""Accounts: registering a handle, logging in from any client, and keeping password guessing slow.

A password is stored only as a salted scrypt hash (``hashlib.scrypt``, parameters in :data:`KDF`, recorded with each
hash, so a hash made with older parameters still verifies and is made again with these at its next login); a bot
account gets a generated secret key instead, hashed the same way. Every login and registration is checked against
the limits of :class:`LoginLimits` and counted in Redis in one script before its hash runs (per address, per
handle and address, per handle, overall), and hashes wait in a bounded queue (:class:`HashGate`). A login to an
unknown handle costs the same hash and counts the same way, and both answers are ``bad_credentials``: only
registration tells whether a handle is taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import os
import re
import secrets
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Final, Protocol

from server.services.errors import ServiceError
from server.services.sessions import Session, SessionService
from server.store import AccountRecord, LoginAdmission, LoginBudget, LoginLimit, PlayerRecords, PlayerStore, RaceRecord
from shared.protocol import AttemptState, ErrorCode, RaceStatus

HANDLE_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{2,19}")
"""3 to 20 ASCII letters, digits, ``_`` and ``-``, beginning with a letter or digit (never read as an option)."""
MIN_PASSWORD_LEN: Final = 8
SCRYPT_N: Final = 2**14
SCRYPT_R: Final = 8
SCRYPT_P: Final = 5
SCRYPT_LEN: Final = 32
KDF: Final = f"scrypt:n={SCRYPT_N},r={SCRYPT_R},p={SCRYPT_P},len={SCRYPT_LEN}"
"""One of the settings OWASP's Password Storage Cheat Sheet lists as its scrypt minimum (N=2^17, r=8, p=1 or an
equivalent; this is N=2^14, r=8, p=5): 16 MiB of memory per hash, the least of those settings. Its cost on the
2-core development machine is in docs/PLAYERS.md ("Passwords")."""
_KDF_TEXT: Final = re.compile(r"scrypt:n=(\d+),r=(\d+),p=(\d+),len=(\d+)")
_DUMMY_SALT: Final = secrets.token_bytes(16)
COMMON_PASSWORDS: Final = frozenset(
    line.strip()
    for line in resources.files("server.services").joinpath("data", "common_passwords.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)
"""The commonest passwords of at least 8 characters (data/common_passwords.txt), refused in any case."""


def weak_password(password: str) -> str | None:
    """Why ``password`` is refused (``weak_password``), or None: all blank, one character repeated, or one of the
    commonest passwords (in any case)."""
    if not password.strip():
        return "a password cannot be all blank"
    if len(set(password)) == 1:
        return "a password cannot be one character repeated"
    if password.lower() in COMMON_PASSWORDS:
        return "this password is one of the commonest, tried first by anyone guessing: choose another"
    return None


@dataclass(frozen=True, slots=True)
class LoginLimits:
    """How many logins and registrations are allowed, and how they are slowed (``flowergarden serve`` uses these
    defaults; a limit of 0 is no limit). Every count is in Redis, so it holds across connections and processes, and
    each request is checked and counted in one script before its slow hash (lua/login_attempt.lua)."""

    per_address: int = 20
    """Logins and registrations (of any outcome) from one client address (IPv4, IPv6 /64) per attempt window."""
    overall: int = 1200
    """Logins and registrations of everybody together per attempt window; once spent, only addresses with a failed login
    in the failure window are refused (a flood never keeps the others out)."""
    attempt_window_seconds: float = 60.0
    per_handle_address: int = 10
    """Failed logins to one handle from one address per failure window: then that address is locked out of that handle
    (``rate_limited``) until the window ends; the owner elsewhere is not."""
    per_handle: int = 10
    """Failed logins to one handle from anywhere per failure window: past it every login to the handle is delayed
    (``first_delay_seconds``, doubled each failure, up to ``longest_delay_seconds``), the right password still logs in."""
    failure_window_seconds: float = 900.0
    free_failures_per_address: int = 5
    """Failed logins of one address per failure window before its logins and registrations are delayed the same way."""
    first_delay_seconds: float = 0.5
    longest_delay_seconds: float = 10.0
    registrations_per_address: int = 10
    """Accounts registered from one client address (IPv4, IPv6 /64) per address window."""
    address_window_seconds: float = 3600.0
    concurrent_hashes: int = 2
    """Password hashes computed at once by one server process (each keeps a core busy)."""
    queued_hashes: int = 16
    """Password hashes that may wait for one of those; a request past them is refused ``server_busy``."""

    def budget(self) -> LoginBudget:
        """The numbers the store's script checks."""
        return LoginBudget(
            per_address=self.per_address,
            overall=self.overall,
            attempt_window_ms=round(self.attempt_window_seconds * 1000),
            failure_window_ms=round(self.failure_window_seconds * 1000),
            per_handle_address=self.per_handle_address,
            per_handle=self.per_handle,
            free_failures=self.free_failures_per_address,
            first_delay_ms=round(self.first_delay_seconds * 1000),
            longest_delay_ms=round(self.longest_delay_seconds * 1000),
            registrations=self.registrations_per_address,
            registration_window_ms=round(self.address_window_seconds * 1000),
        )


REFUSALS: Final = {
    LoginLimit.ADDRESS: "too many logins and registrations from your address",
    LoginLimit.GLOBAL: "too many logins on this server, and your address failed lately",
    LoginLimit.HANDLE: "too many failed logins to this handle from your address",
    LoginLimit.REGISTRATIONS: "too many accounts registered from your address",
}
"""The message of each login limit (``rate_limited``), before the wait."""


class HashGate:
    """A bounded queue in front of the slow hash: at most ``concurrent`` hashes run at once, at most ``queued`` wait;
    a request past those is refused at once (``server_busy``) instead of piling up behind a flood."""

    def __init__(self, concurrent: int, queued: int) -> None:
        self._running = asyncio.Semaphore(max(concurrent, 1))
        self._queued = queued
        self._waiting = 0

    async def hash(self, secret: str, salt: bytes, kdf: str = KDF) -> bytes:
        """The hash of ``secret`` (see :func:`hash_secret`), once a place is free; ``server_busy`` when none will be."""
        if self._running.locked() and self._waiting >= self._queued:
            raise ServiceError(ErrorCode.SERVER_BUSY, "too many password checks are waiting on this server; try again in a few seconds")
        self._waiting += 1
        try:
            await self._running.acquire()
        finally:
            self._waiting -= 1
        try:
            return await hash_secret(secret, salt, kdf)
        finally:
            self._running.release()


def valid_handle(handle: str) -> bool:
    """Whether ``handle`` is a handle one may register."""
    return HANDLE_PATTERN.fullmatch(handle) is not None


def _derive(secret: str, salt: bytes, kdf: str) -> bytes:
    match = _KDF_TEXT.fullmatch(kdf)
    if match is None:
        raise ValueError(f"unknown key derivation {kdf!r}")
    n, r, p, length = (int(part) for part in match.groups())
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=length, maxmem=2 * 128 * n * r + (1 << 20))


HASH_NICENESS: Final = 10
"""How much lower than the event loop's the password-hash threads' priority is (Linux: per thread): a hash takes a
core for about half a second, and when the cores are busy the loop's replies come first."""


def _lower_priority() -> None:
    """Lower the calling thread's priority by :data:`HASH_NICENESS` (Linux sets a nice value per thread; elsewhere
    the call would lower the whole process, so nothing is done)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0) + HASH_NICENESS)


HASHERS: Final = ThreadPoolExecutor(max_workers=max(4, os.cpu_count() or 1), thread_name_prefix="password-hash", initializer=_lower_priority)
"""The threads password hashes run on, at a lower priority than the event loop (:class:`HashGate` bounds how many
run at once per service)."""


async def hash_secret(secret: str, salt: bytes, kdf: str = KDF) -> bytes:
    """The scrypt hash of ``secret`` with the parameters of ``kdf`` (as recorded with an account; computed in a
    low-priority worker thread, :data:`HASHERS`: it takes tens of milliseconds or more)."""
    return await asyncio.get_running_loop().run_in_executor(HASHERS, _derive, secret, salt, kdf)


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

    def __init__(
        self, store: PlayerStore, sessions: SessionService, limits: LoginLimits | None = None, *, races: RaceFinder,
        records: PlayerRecords | None = None,
    ) -> None:
        """``store``: the login limits; ``records``: the accounts (the database's, else ``store``'s)."""
        self.store = store
        self.records: PlayerRecords = records or store
        self.sessions = sessions
        self.limits = limits or LoginLimits()
        self.races = races
        self.hashes = HashGate(self.limits.concurrent_hashes, self.limits.queued_hashes)

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

    async def _admit(self, address: str, handle: str | None) -> LoginAdmission:
        """Take a login to ``handle`` (None: a registration) from ``address`` through the limits, before any hash:
        ``rate_limited`` (with the wait) when one is reached, else the delay the address or the handle earned."""
        admission = await self.store.login_attempt(address, handle, self.limits.budget())
        if admission.refused is not None:
            wait = -(-admission.retry_after_ms // 1000)
            field = "handle" if admission.refused is not LoginLimit.ADDRESS else None
            raise ServiceError(ErrorCode.RATE_LIMITED, f"{REFUSALS[admission.refused]}; try again in {wait} s", field=field)
        return admission

    async def register(self, session: Session, handle: str, password: str | None, *, bot: bool, address: str) -> tuple[Session, str | None]:
        """Register ``handle`` and log ``session`` in to it; a bot gets a generated key (returned once)."""
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
        elif (weakness := weak_password(password)) is not None:
            raise ServiceError(ErrorCode.WEAK_PASSWORD, weakness, field="password")
        await asyncio.sleep((await self._admit(address, None)).delay_ms / 1000)
        salt = secrets.token_bytes(16)
        account = AccountRecord(
            handle=handle,
            player=secrets.token_urlsafe(9),
            bot=bot,
            secret_hash=(await self.hashes.hash(password, salt)).hex(),
            salt=salt.hex(),
            kdf=KDF,
            created_at=int(time.time() * 1000),
        )
        if not await self.records.register(account):
            raise ServiceError(ErrorCode.HANDLE_TAKEN, "this handle is taken (handles are unique regardless of case)", field="handle")
        return await self.sessions.log_in(session, player=account.player, handle=account.handle, bot=bot), key

    async def _checked(self, address: str, handle: str, password: str) -> AccountRecord | None:
        """The account of ``handle`` if ``password`` is its password, else None (counted as a failed login): through
        the limits first (``rate_limited``, or the delay earned), then the bounded hash queue (``server_busy``)."""
        admission = await self._admit(address, handle)
        checked = False
        try:
            await asyncio.sleep(admission.delay_ms / 1000)
            account = await self.records.account(handle) if valid_handle(handle) else None
            salt = bytes.fromhex(account.salt) if account is not None else _DUMMY_SALT
            # Also for an unknown handle: the answer takes as long.
            derived = await self.hashes.hash(password, salt, account.kdf if account is not None else KDF)
            checked = True
        finally:
            if not checked:  # the password was never checked: that was no failed login
                await self.store.login_refund(address, handle)
        if account is None or not hmac.compare_digest(derived.hex(), account.secret_hash):
            return None
        await self.store.login_refund(address, handle)
        if account.kdf != KDF:
            await self._store_secret(account, password)
        return account

    async def login(self, session: Session, handle: str, password: str, address: str) -> Session:
        """Log ``session`` in to the account of ``handle`` (any case); ``bad_credentials``, ``rate_limited`` or
        ``server_busy`` otherwise."""
        account = await self._checked(address, handle, password)
        if account is None:
            raise ServiceError(ErrorCode.BAD_CREDENTIALS, "wrong handle or password")
        if account.player != session.player:  # logging in again to the same account changes no seat
            await self._refuse_while_playing(session)
        return await self.sessions.log_in(session, player=account.player, handle=account.handle, bot=account.bot)

    async def change_password(self, session: Session, password: str, new_password: str, address: str) -> int:
        """Change the password of the session's account after checking the current one (``bad_credentials``, counted
        and limited like a failed login), then end every other session of the account: a thief's token is worth
        nothing once the owner changed the password. Returns how many sessions ended."""
        if session.account is None:
            raise ServiceError(ErrorCode.ACCOUNT_REQUIRED, "log in first: only an account has a password")
        if len(new_password) < MIN_PASSWORD_LEN:
            raise ServiceError(ErrorCode.BAD_FIELD, f"a password has at least {MIN_PASSWORD_LEN} characters", field="new_password")
        if (weakness := weak_password(new_password)) is not None:
            raise ServiceError(ErrorCode.WEAK_PASSWORD, weakness, field="new_password")
        known = await self.records.account(session.account)
        if known is None or known.bot:
            raise ServiceError(ErrorCode.BAD_FIELD, "a bot's key cannot be changed; register a new bot", field="password")
        account = await self._checked(address, session.account, password)
        if account is None:
            raise ServiceError(ErrorCode.BAD_CREDENTIALS, "wrong password", field="password")
        await self._store_secret(account, new_password)
        return await self.sessions.end_others(session)

    async def _store_secret(self, account: AccountRecord, password: str) -> None:
        """Store a fresh salted hash of ``password`` with today's :data:`KDF` (a new password, or a right one whose hash
        was made with older parameters)."""
        salt = secrets.token_bytes(16)
        secret_hash = (await self.hashes.hash(password, salt)).hex()
        await self.records.set_secret(account.handle, secret_hash=secret_hash, salt=salt.hex(), kdf=KDF)
