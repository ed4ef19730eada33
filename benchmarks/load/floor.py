"""The floor server of ``flowergarden bench load``: websockets + msgpack + one Redis Lua EVAL per message.

It does the least any server of this stack must do for a move (decode the frame, one atomic script in Redis,
encode and send the reply, and pass the move on to the opponent), so the project's figures can be given as
ratios against it, measured in the same run on the same machine.

    python3 -m benchmarks.load.floor --redis URL [--port 0] [--pipelined]     prints "floor listening on PORT"

With ``--pipelined`` its scripts go through the race server's own Redis pipeline (``server/store/script_pipeline.py``:
raw RESP over one connection, every script of a loop turn in one write) instead of redis-py's pooled client: the
honest lower bound for a server that pipelines as the project does.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

import msgpack
from redis.asyncio import BlockingConnectionPool, Redis
from websockets.asyncio.server import ServerConnection, broadcast, serve

from server.store.script_pipeline import ScriptPipeline

FLOOR_SCRIPT = "return redis.call('RPUSH', KEYS[1], ARGV[1])"
"""Append the move to the race's list: the least the race server's move script must do."""


class FloorServer:
    """Answers ``{"type": "move", "id", "race", "move"}`` with ``{"type": "moved", "id", "seq"}`` and passes the move
    on to the race's other connections (``{"type": "join", "race"}`` adds one) without waiting for them."""

    def __init__(self, redis: Redis, pipelined: bool = False) -> None:
        self.redis = redis
        self.script = redis.register_script(FLOOR_SCRIPT)
        self.pipeline = ScriptPipeline.for_client(redis) if pipelined else None
        if pipelined and self.pipeline is None:
            raise SystemExit("--pipelined needs one Redis over TCP or a unix socket")
        self.races: dict[str, list[ServerConnection]] = {}

    async def handle(self, connection: ServerConnection) -> None:
        """Serve one connection until it closes."""
        joined: str | None = None
        try:
            async for frame in connection:
                if not isinstance(frame, bytes):
                    continue
                message: dict[str, Any] = msgpack.unpackb(frame, raw=False)
                race = str(message.get("race", ""))
                if message.get("type") == "join":
                    joined = race
                    self.races.setdefault(race, []).append(connection)
                    await connection.send(msgpack.packb({"type": "joined", "id": message.get("id")}))
                    continue
                keys, args = [f"floor:{{{race}}}:moves"], [message.get("move", "")]
                if self.pipeline is not None:
                    seq = await self.pipeline.run_script(self.script, keys, args)
                else:
                    seq = await self.script(keys=keys, args=args)
                await connection.send(msgpack.packb({"type": "moved", "id": message.get("id"), "seq": seq}))
                event = msgpack.packb({"type": "progress", "race": race, "seq": seq})
                broadcast([other for other in self.races.get(race, ()) if other is not connection], event)
        finally:
            if joined is not None and connection in self.races.get(joined, []):
                self.races[joined].remove(connection)


async def run(redis_url: str, host: str, port: int, pipelined: bool = False) -> None:
    """Listen until SIGTERM or SIGINT."""
    # A blocking pool, as the race server's: redis-py's default pool raises past 100 connections.
    redis = Redis(connection_pool=BlockingConnectionPool.from_url(redis_url, max_connections=64, timeout=10))
    floor = FloorServer(redis, pipelined)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stop.set)
    async with serve(floor.handle, host, port, compression=None, max_queue=16) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        print(f"floor listening on {bound}", flush=True)
        await stop.wait()
    if floor.pipeline is not None:
        await floor.pipeline.close()
    await redis.aclose()


def main() -> None:
    """Command line of the floor server."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis", required=True, help="redis://host:port/db")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--pipelined", action="store_true", help="scripts over the race server's one-connection RESP pipeline")
    args = parser.parse_args()
    asyncio.run(run(args.redis, args.host, args.port, args.pipelined))


if __name__ == "__main__":
    main()
