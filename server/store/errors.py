"""The store's own failures: the seam that keeps redis-py's exceptions inside ``server/store/``.

Every public coroutine method of a store class decorated with :func:`translate_errors` raises
:class:`StoreUnavailable` where redis-py raised a connection or timeout error (or the socket an ``OSError``), or a
Redis Cluster was reconfiguring (a failover: the cluster down, the slot moving or not served, a replica that
refuses writes) or Redis is out of memory, and :class:`StoreError` for any other redis-py error. Services and the event hub catch these, never
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
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

UNAVAILABLE_ERRORS = (
    RedisConnectionError, RedisTimeoutError, OSError, ClusterError, AskError, TryAgainError, ReadOnlyError, RedisClusterException,
    OutOfMemoryError,
)  # fmt: skip
"""What redis-py raises when Redis could not be reached or a Cluster is failing over (ClusterDown, MasterDown,
MOVED/ASK/TRYAGAIN after redis-py's own retries, a demoted primary's READONLY, a slot no node serves yet), or
Redis is full (OOM at ``maxmemory`` with ``noeviction``: the write was refused, a resend may pass once memory is
freed, so the client is told ``unavailable`` as for an outage, not ``internal_error``)."""

OUT_OF_MEMORY = "OOM command not allowed"
"""How Redis refuses a write when full. Redis 7 sends it as its own error (redis-py's OutOfMemoryError); Redis 6
wraps it in the error of the script that tried the write ("Error running script ... -OOM command not allowed ...")."""


def _unavailable(error: Exception) -> bool:
    return isinstance(error, UNAVAILABLE_ERRORS) or (isinstance(error, ResponseError) and OUT_OF_MEMORY in str(error))


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
        except (*UNAVAILABLE_ERRORS, RedisError) as error:
            if _unavailable(error):
                raise StoreUnavailable(f"{type(error).__name__}: {error}") from error
            raise StoreError(f"{type(error).__name__}: {error}") from error

    return call


def translate_errors(cls: C) -> C:
    """Class decorator: every public ``async def`` of ``cls`` raises StoreError/StoreUnavailable instead of redis-py's."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, _translated(member))
    return cls
