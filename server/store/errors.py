"""The store's own failures: the seam that keeps redis-py's exceptions inside ``server/store/``.

Every public coroutine method of a store class decorated with :func:`translate_errors` raises
:class:`StoreUnavailable` where redis-py raised a connection or timeout error (or the socket an ``OSError``), or a
Redis Cluster was reconfiguring (a failover: the cluster down, the slot moving or not served, a replica that
refuses writes), and :class:`StoreError` for any other redis-py error. Services and the event hub catch these, never
``redis.exceptions``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from redis.exceptions import (
    AskError,
    ClusterError,
    CrossSlotTransactionError,
    InvalidPipelineStack,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

UNAVAILABLE_ERRORS = (
    RedisConnectionError, RedisTimeoutError, OSError, ClusterError, AskError, TryAgainError, ReadOnlyError, RedisClusterException
)
"""What redis-py raises when Redis could not be reached or a Cluster is failing over (ClusterDown, MasterDown,
MOVED/ASK/TRYAGAIN after redis-py's own retries, a demoted primary's READONLY, a slot no node serves yet)."""


class StoreError(Exception):
    """The store failed in a way that is not the caller's fault (an unexpected reply, a script error)."""


class StoreUnavailable(StoreError):
    """Redis could not be reached or did not answer in time: a change may or may not have been applied."""


P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=type)


def _translated(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except (CrossSlotTransactionError, InvalidPipelineStack) as error:  # a bug in the store, not an outage
            raise StoreError(f"{type(error).__name__}: {error}") from error
        except UNAVAILABLE_ERRORS as error:
            raise StoreUnavailable(f"{type(error).__name__}: {error}") from error
        except RedisError as error:
            raise StoreError(f"{type(error).__name__}: {error}") from error

    return call


def translate_errors(cls: C) -> C:
    """Class decorator: every public ``async def`` of ``cls`` raises StoreError/StoreUnavailable instead of redis-py's."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, _translated(member))
    return cls
