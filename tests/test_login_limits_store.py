"""The login limits' script on a real Redis: the delays an address earns by failing grow, and the global budget
refuses only addresses that failed lately."""

from __future__ import annotations

import secrets
from dataclasses import replace

from redis.asyncio import Redis

from server.services.accounts import LoginLimits
from server.store import LoginLimit, PlayerStore


def address() -> str:
    """An address no other test of the session counted (Redis is shared by the session)."""
    return f"198.51.100.{secrets.randbelow(250)}-{secrets.token_hex(3)}"


async def test_an_address_that_keeps_failing_waits_longer_each_time_up_to_the_longest_delay(redis: Redis) -> None:
    store = PlayerStore(redis)
    budget = replace(LoginLimits(), per_address=0, per_handle_address=0, per_handle=0).budget()
    source = address()
    delays = [(await store.login_attempt(source, f"h{index}", budget)).delay_ms for index in range(12)]
    # 5 free failures, then 0.5 s doubled each time up to 10 s (each attempt counts as failed until refunded).
    assert delays == [0, 0, 0, 0, 0, 0, 500, 1000, 2000, 4000, 8000, 10000]
    await store.login_refund(source, "h11")  # a right password gives its failure back
    assert (await store.login_attempt(source, "h12", budget)).delay_ms == 10000
    assert (await store.login_attempt(address(), "h13", budget)).delay_ms == 0  # another address is not slowed


async def test_a_spent_global_budget_refuses_only_addresses_that_failed_lately(redis: Redis) -> None:
    store = PlayerStore(redis)
    await redis.delete("fgr:{logins}:attempts:all")
    budget = replace(LoginLimits(), per_address=0, overall=3).budget()
    failing = address()
    for index in range(3):
        assert (await store.login_attempt(failing, f"g{index}", budget)).refused is None
    refused = await store.login_attempt(failing, "g3", budget)
    assert refused.refused is LoginLimit.GLOBAL and refused.retry_after_ms > 0
    clean = address()
    assert (await store.login_attempt(clean, "g4", budget)).refused is None  # a flood does not keep the others out
    assert (await store.login_attempt(address(), None, budget)).refused is None  # nor their registrations
    await redis.delete("fgr:{logins}:attempts:all")
