"""The store's own failures: the seam that keeps redis-py's exceptions inside ``server/store/``.

Every public coroutine method of a store class decorated with :func:`translate_errors` raises
:class:`StoreUnavailable` where redis-py raised a connection or timeout error (or the socket an ``OSError``), or a
Redis Cluster was reconfiguring (a failover: the cluster down, the slot moving or not served, a replica that
refuses writes) or Redis is out of memory, and :class:`StoreError` for any other redis-py error. Services and the event hub catch these, never
``redis.exceptions``.

The translation is total for the driver: any other exception raised from inside a driver call (redis-py's code, or
the store's own bare connections, ``script_pipeline.py`` and ``direct_channels.py``) is a connection being torn down
under the call — redis-py raised ``AttributeError: 'NoneType' object has no attribute 'writelines'`` during Cluster
failovers — and becomes :class:`StoreUnavailable` too (logged once with its traceback). An exception raised by the
store's own code outside any driver call is a bug and goes up as it is (``internal_error``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from collections.abc import Callable, Coroutine, Iterator
from types import TracebackType
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


DRIVER_MODULES = ("redis", "server.store.script_pipeline", "server.store.direct_channels")
"""The modules that talk to Redis on the store's behalf: redis-py, and the store's bare connections of its own."""

log = logging.getLogger(__name__)


def _driver_module(name: str) -> bool:
    return any(name == module or name.startswith(f"{module}.") for module in DRIVER_MODULES)


def raised_by_driver(error: BaseException) -> bool:
    """Whether ``error`` was raised from inside a driver call: a frame of its traceback runs code of a module in
    :data:`DRIVER_MODULES` (a frame of the store's own code alone, or of code the store called after a driver call
    returned, is not one)."""
    trace: TracebackType | None = error.__traceback__
    while trace is not None:
        if _driver_module(str(trace.tb_frame.f_globals.get("__name__", ""))):
            return True
        trace = trace.tb_next
    return False


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
        except StoreError:
            raise
        except Exception as error:
            if not raised_by_driver(error):
                raise  # a bug of the store's own code
            log.warning("the Redis driver failed (%s: %s); answered as unavailable", type(error).__name__, error, exc_info=error)
            raise StoreUnavailable(f"the Redis driver failed: {type(error).__name__}: {error}") from error

    return call


@contextlib.contextmanager
def suppress_store_failures() -> Iterator[None]:
    """Ignore any failure of Redis or of its driver in the block (best-effort work: closing a connection that failed,
    a follow-up the caller's request does not depend on); a bug of the store's own code still goes up."""
    try:
        yield
    except (*UNAVAILABLE_ERRORS, RedisError):
        pass
    except Exception as error:
        if not raised_by_driver(error):
            raise


def translate_errors(cls: C) -> C:
    """Class decorator: every public ``async def`` of ``cls`` raises StoreError/StoreUnavailable instead of redis-py's."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, _translated(member))
    return cls
