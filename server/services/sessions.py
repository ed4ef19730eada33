"""Sessions: ``hello`` gives a player a random, unguessable token that later proves its seats."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from server.services.errors import ServiceError
from server.store import SessionRecord, SessionStore
from shared.names import InvalidName, normalize_name
from shared.protocol import ErrorCode


@dataclass(frozen=True, slots=True)
class Session:
    """An identified player: the secret token, the public player id and the display name."""

    token: str
    player: str
    name: str


def clean_name(name: str) -> str:
    """The display name as everybody will see it (:func:`shared.names.normalize_name`); ServiceError ``bad_field``
    ``name`` when nothing visible is left or it breaks a rule."""
    try:
        return normalize_name(name)
    except InvalidName as error:
        raise ServiceError(ErrorCode.BAD_FIELD, str(error), field="name") from None


class SessionService:
    """Creates and resumes sessions."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store

    async def hello(self, name: str, token: str | None) -> Session:
        """A new session for ``name``, or the session of ``token`` (its stored name is kept)."""
        if token is not None:
            record = await self.store.resume(token)
            if record is None:
                raise ServiceError(ErrorCode.BAD_TOKEN, "unknown or expired session token", field="token")
            return Session(token=token, player=record.player, name=record.name)
        session = Session(token=secrets.token_urlsafe(32), player=secrets.token_urlsafe(9), name=clean_name(name))
        await self.store.create(session.token, SessionRecord(player=session.player, name=session.name))
        return session
