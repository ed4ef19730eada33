"""Every copy of the race rules agrees with the specification (shared/race/rules.py) on generated races.

Hypothesis generates a race (undo, rated with its abort rule, time limit, grace period, countdown), each seat's line of play on a
winnable deal (its winning line, or random play with undo where allowed) and a sequence of steps: a seat's next
action, a seat ending its attempt, a seat's player leaving or coming back, and time passing with or without the
timer running. The same race runs through

(a) the specification, :class:`RaceRules`;
(b) the Lua scripts on a real Redis, through the real store (``RaceStore``): every script's text is the production
    one but for ``now_ms``, which reads a clock this test sets, so that deadlines and grace periods are reached
    exactly, without waiting (the timer's ticks run when the specification says a rule is due);
(c) the record check (shared/race/record.py) on the record of the finished race, as ``flowergarden export``
    writes it;
(d) the browser's fold of the race's events (race_state.js, with engine.js replaying both boards) in Node, and the
    Python clients' fold (shared/race/fold.py).

After every step the refusal, the race's status, each attempt's state and count and each grace period's end must
agree between (a) and (b); at the end the result must agree between all four. A second property holds the
browser's engine (engine.js) to the Python engine (shared/board.py) on generated move sequences: the same verdict
for every move, legal or not, and the same position after.

A rule changed in one copy only fails here (docs/ARCHITECTURE.md "Where a change goes": a race rule). Needs Node.js
(python3 dev.py test installs Debian's nodejs as root); without it the test fails, saying so.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from engine_positions import random_play
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis
from winning_lines import winning_deal

from server.services.dealer import sealed
from server.services.views import SPECTATOR, event_for, race_info
from server.store import Identity, NewRace, RaceStore, keys, scripts
from server.store.connection import connect_redis
from server.store.race_store import StoreRefusal, presence_member
from shared import (
    Action,
    Board,
    EngineError,
    Profile,
    Rules,
    Special,
    Status,
    action_text,
    card_text,
    parse_action,
)
from shared.cards import FULL_DECK
from shared.protocol import AttemptState, RaceEvent, RaceStatus, ResultReason, as_map, event_from_map
from shared.race.fold import fold_events
from shared.race.record import verify_record
from shared.race.rules import Outcome, RaceRules, attempt_can_end_by_position, deadline_of
from shared.race.settings import SettingsInForce

QUICK_FAILURE = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
"""No explain phase: it costs a minute on a failure and the trace already says which step disagreed."""
RACES = settings(max_examples=60, deadline=None, phases=QUICK_FAILURE, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
MOVES = settings(max_examples=100, deadline=None, phases=QUICK_FAILURE, suppress_health_check=[HealthCheck.function_scoped_fixture])
DRIVER = Path(__file__).parent / "js" / "rules_driver.mjs"
CLOCK_KEY = "rules-differential:clock"
REAL_CLOCK = """local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
"""
"""common.lua's clock, which the scripts under test read the test's clock with instead."""
TEST_CLOCK = f"local function now_ms() return tonumber(redis.call('GET', '{CLOCK_KEY}')) end\n"
START = 1_000_000_000
"""The test clock's time when a race is created (ms)."""
STEP_MS = 5_000
"""Every time in a generated race (waits, countdowns, grace periods, time limits) is a multiple of this."""
LEASE_MS = 10**12
"""A connection's presence lease: never runs out here (players leave and come back by the presence script)."""
PLAYERS = (Identity("ann", "Ann"), Identity("bob", "Bob"))


# --- the browser's copy, in Node ------------------------------------------------------------------------------


class NodeDriver:
    """One Node process running tests/js/rules_driver.mjs: a JSON case in, a JSON answer out, a line each."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            pytest.fail("the differential test runs the browser's race_state.js and engine.js in Node: install Node.js "
                        "(Debian: apt-get install -y nodejs; python3 dev.py test installs it as root)")  # fmt: skip
        self.process = subprocess.Popen([node, str(DRIVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, case: dict[str, Any]) -> dict[str, Any]:
        """The driver's answer to one case; a JavaScript exception fails the test with its stack."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(case) + "\n")
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert "error" not in answer, answer["error"]
        return answer

    def close(self) -> None:
        """Close its input (the driver then ends) and wait for it."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def node() -> Iterator[NodeDriver]:
    driver = NodeDriver()
    yield driver
    driver.close()


# --- the Lua copy, on a real Redis ----------------------------------------------------------------------------


@dataclass
class LuaRaces:
    """The store's scripts on the session's Redis, with the test's clock, driven from a loop of the module's own."""

    runner: asyncio.Runner
    redis: Redis
    races: RaceStore

    def run(self, coroutine: Any) -> Any:
        return self.runner.run(coroutine)


@pytest.fixture(scope="module")
def lua(single_redis_url: str) -> Iterator[LuaRaces]:
    original = scripts._source
    common = original("common")
    assert common.count(REAL_CLOCK) == 1, "common.lua's now_ms changed: update REAL_CLOCK in this test"

    def source(name: str) -> str:
        return common.replace(REAL_CLOCK, TEST_CLOCK) if name == "common" else original(name)

    with asyncio.Runner() as runner, pytest.MonkeyPatch.context() as patch:
        patch.setattr(scripts, "_source", source)
        redis = connect_redis(single_redis_url, max_connections=4)
        assert isinstance(redis, Redis)
        races = runner.run(_store(redis))
        yield LuaRaces(runner, redis, races)
        runner.run(redis.aclose())


async def _store(redis: Redis) -> RaceStore:
    return RaceStore(redis)  # built inside the loop it is used from


# --- generated races ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Played:
    """One action of a seat's line, as the race service sends it to the store after the engine accepted it."""

    text: str
    count: int
    left: int
    status: str
    undos: int
    ends: AttemptState | None


@dataclass(frozen=True, slots=True)
class Case:
    """A generated race: its settings, each seat's line of play, and the steps (see :func:`steps`)."""

    undo: bool
    rated: bool
    time_limit: int | None
    grace_ms: int | None
    countdown_ms: int
    abort_moves: int
    abort_ms: int
    lines: tuple[tuple[Played, ...], tuple[Played, ...]]
    steps: tuple[tuple[Any, ...], ...]


def line_of_play(seed: int, rules: Rules, style: int | None, length: int) -> tuple[Played, ...]:
    """A seat's actions on ``seed``: the deal's winning line (``style`` None) or up to ``length`` actions of the random
    player with SplitMix64(``style``) (undo sometimes where allowed); up to the action that ends the attempt by its
    position."""
    board = Board.deal(seed, rules)
    if style is None:
        actions: Iterator[Action] = iter(parse_action(text) for text in winning_deal()[1])
    else:
        actions = random_play(board, (style, length), specials=(Special.UNDO,) if rules.undo else ())
    played: list[Played] = []
    for action in actions:
        if style is None:
            board.play(action)
        status = board.status()
        ends = AttemptState.CLEARED if board.is_won() else AttemptState.BLOCKED if status is Status.BLOCKED and attempt_can_end_by_position(board) else None
        played.append(Played(action_text(action), board.foundation_count, board.cards_left, status.value, board.undos, ends))
        if ends is not None:
            break
    return tuple(played)


def steps() -> st.SearchStrategy[tuple[Any, ...]]:
    """``("act", slot, n)`` (the seat's next ``n`` actions), ``("end", slot, reason)``, ``("presence", slot)`` (the
    player leaves, or comes back) and ``("wait", ms, timer_runs)``."""
    slots = st.integers(0, 1)
    acts = st.tuples(st.just("act"), slots, st.sampled_from([1, 3, 10, 30, 100]))  # 100: the rest of the line
    return st.one_of(
        acts,
        acts,
        acts,  # actions three times as often as the rest
        st.tuples(st.just("end"), slots, st.sampled_from([AttemptState.RESIGNED, AttemptState.STUCK])),
        st.tuples(st.just("presence"), slots),
        st.tuples(st.just("wait"), st.integers(1, 12).map(lambda n: n * STEP_MS), st.booleans()),
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    undo = draw(st.booleans())
    rules = Rules(Profile.CLASSIC, undo=undo)
    seed = winning_deal()[0]
    lines = tuple(
        line_of_play(seed, rules, draw(st.none() | st.integers(1, 2**32)), draw(st.integers(3, 80))) for _ in range(2)
    )
    return Case(
        undo=undo,
        rated=draw(st.booleans()),
        time_limit=draw(st.sampled_from([None, 60, 120])),
        grace_ms=draw(st.sampled_from([None, 10_000, 20_000, 45_000])),
        countdown_ms=draw(st.sampled_from([0, 0, STEP_MS, 3 * STEP_MS])),
        abort_moves=draw(st.sampled_from([0, 5])),
        abort_ms=draw(st.sampled_from([0, 30_000])),
        lines=(lines[0], lines[1]),
        steps=tuple(draw(st.lists(steps(), min_size=3, max_size=25))),
    )


# --- running one race through the spec and the scripts together ---------------------------------------------


@dataclass
class Race:
    """One generated race run in step through the specification and the scripts, compared after every step."""

    case: Case
    lua: LuaRaces
    race_id: str
    spec: RaceRules
    epoch: int = 0
    now: int = START
    here: list[bool] = field(default_factory=lambda: [True, True])
    log: list[str] = field(default_factory=list)

    async def set_clock(self, now: int) -> None:
        self.now = now
        await self.lua.redis.set(CLOCK_KEY, now)

    async def start(self) -> None:
        races, case = self.lua.races, self.case
        await self.set_clock(START)
        race_settings = SettingsInForce(undo=case.undo, rated=case.rated, time_limit=case.time_limit, grace_ms=case.grace_ms)
        await races.create_race(self.race_id, PLAYERS[0], NewRace(race_settings, sealed(Profile.CLASSIC, winning_deal()[0])))
        await self.connect(0, leave=False)
        keep = {"abort_moves": str(case.abort_moves), "abort_ms": str(case.abort_ms)}  # as ratings.py keeps a rated race's
        start_at, deadline = await races.join_race(self.race_id, PLAYERS[1], countdown_ms=case.countdown_ms, keep=keep)
        await self.connect(1, leave=False)
        record = await races.load_race(self.race_id)
        assert record is not None
        self.epoch = record.epoch
        assert (start_at, deadline or 0) == (self.spec.start_at, self.spec.deadline)

    async def connect(self, slot: int, *, leave: bool) -> int | None:
        member = presence_member(slot, f"c{slot}", PLAYERS[slot].player)
        return await self.lua.races.presence(self.race_id, leave=leave, members=[member], lease_ms=LEASE_MS)

    async def step(self, step: tuple[Any, ...]) -> None:
        self.log.append(repr(step))
        kind = step[0]
        if kind == "act":
            for _ in range(step[2]):
                await self.act(step[1])
        elif kind == "end":
            await self.end(step[1], step[2])
        elif kind == "presence":
            slot = step[1]
            self.here[slot] = not self.here[slot]
            self.spec.presence(slot, here=self.here[slot], now=self.now)
            due = await self.connect(slot, leave=not self.here[slot])
            await self.compare(due)
        else:
            await self.wait(step[1], timer_runs=step[2])

    async def act(self, slot: int) -> None:
        seat = self.spec.seats[slot]
        line = self.case.lines[slot]
        if seat.actions >= len(line):
            return  # this player has nothing left to play
        played, seq = line[seat.actions], seat.actions
        expected = self.spec.act(slot, self.now, played.count, played.ends)
        refusal = None
        try:
            await self.lua.races.apply_action(
                self.race_id, slot, player=PLAYERS[slot].player, epoch=self.epoch, seq=seq,
                move_id=f"{slot}-{seq}", action=played.text, count=played.count, left=played.left,
                status=Status(played.status), undos=played.undos, ends=played.ends,
            )  # fmt: skip
        except StoreRefusal as error:
            refusal = error.code
        assert refusal == expected, self.trace(f"the scripts answered {refusal}, the rules {expected}")
        event(f"an action refused {refusal}" if refusal else "an action stored")
        await self.compare()

    async def end(self, slot: int, reason: AttemptState) -> None:
        expected = self.spec.end_attempt(slot, reason, self.now)
        refusal = None
        try:
            await self.lua.races.end_attempt(self.race_id, slot, reason, player=PLAYERS[slot].player)
        except StoreRefusal as error:
            refusal = error.code
        assert refusal == expected, self.trace(f"the scripts answered {refusal}, the rules {expected}")
        await self.compare()

    async def wait(self, ms: int, *, timer_runs: bool) -> None:
        """Time passes; the timer (if it runs) ticks at every moment a rule is due, as the server's timers do."""
        until = self.now + ms
        while timer_runs and 0 < (due := self.spec.next_due()) <= until:
            await self.set_clock(max(due, self.now))
            self.spec.tick(self.now)
            await self.compare(await self.lua.races.tick(self.race_id))
        await self.set_clock(until)

    async def compare(self, lua_due: int | None = None) -> None:
        """The scripts' race against the specification's: status, attempts, counts, grace periods, result; and the
        timer the scripts ask for comes no later than the next moment a rule is due."""
        fields = await self.lua.redis.hgetall(keys.race_keys(self.race_id)[keys.STATE])
        state = {text(name): text(value) for name, value in fields.items()}
        spec = self.spec
        seen = (state["status"], *((state[f"p{slot}_state"], int(state[f"p{slot}_count"]), int(state[f"p{slot}_grace_until"])) for slot in (0, 1)))
        wanted = (spec.status.value, *((seat.standing.state.value, seat.standing.count, seat.grace_until) for seat in spec.seats))
        assert seen == wanted, self.trace(f"the scripts have {seen}, the rules {wanted}")
        if spec.result is not None:
            assert lua_result(state) == spec.result, self.trace(f"the scripts' result {lua_result(state)}, the rules' {spec.result}")
            aborted = state.get("aborted")
            assert aborted == spec.aborted, self.trace(f"the scripts' abort {aborted}, the rules' {spec.aborted}")
        due = spec.next_due()
        if lua_due is not None and due > 0:
            assert lua_due <= due, self.trace(f"the scripts' timer is due at {lua_due}, a rule at {due}")

    async def finish(self) -> None:
        """Play the race out: the countdown ends, then every attempt still running resigns."""
        if self.spec.status is RaceStatus.COUNTDOWN:
            await self.step(("wait", max(0, self.spec.start_at - self.now), True))
        for slot in (0, 1):
            if self.spec.seats[slot].standing.playing:
                await self.step(("end", slot, AttemptState.RESIGNED))
        assert self.spec.result is not None, self.trace("the race is still on after both resigned")

    async def record(self) -> dict[str, Any]:
        """The finished race's record, as ``flowergarden export`` writes it (the spectators' replay of every event)."""
        races = self.lua.races
        record = await races.load_race(self.race_id)
        assert record is not None
        events = [event_for(event, SPECTATOR).to_wire() for event in await races.events_after(self.race_id, 0) if isinstance(event, RaceEvent)]
        document = {"format": "flowergarden-race-record", "version": 1, "race": as_map(race_info(record)), "events": events}
        stored: dict[str, Any] = json.loads(json.dumps(document))  # as the file holds it
        return stored

    def trace(self, message: str) -> str:
        case, lines = self.case, [[played.text for played in line] for line in self.case.lines]
        settings = (f"undo={case.undo} rated={case.rated} time_limit={case.time_limit} grace_ms={case.grace_ms} "
                    f"countdown_ms={case.countdown_ms} abort_moves={case.abort_moves} abort_ms={case.abort_ms}")
        return f"{message}\n  race: {settings}\n  lines: {lines}\n  steps run: {', '.join(self.log)}"


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def lua_result(state: dict[str, str]) -> Outcome:
    winner = int(state["winner"])
    return Outcome(None if winner < 0 else winner, ResultReason(state["result_reason"]))


def spec_of(case: Case) -> RaceRules:
    start_at = START + case.countdown_ms
    return RaceRules(
        start_at=start_at, deadline=deadline_of(start_at, case.time_limit), rated=case.rated, undo=case.undo, grace_ms=case.grace_ms,
        abort_moves=case.abort_moves, abort_ms=case.abort_ms,
    )


@RACES
@given(case=cases())
def test_the_scripts_the_record_check_and_the_browser_follow_the_race_rules(case: Case, lua: LuaRaces, node: NodeDriver) -> None:
    race = Race(case, lua, f"rules-{secrets.token_hex(6)}", spec_of(case))

    async def run() -> dict[str, Any]:
        await race.start()
        for step in case.steps:
            await race.step(step)
        await race.finish()
        return await race.record()

    record = lua.run(run())
    result = race.spec.result
    assert result is not None
    verdict = verify_record(record)
    assert (verdict.winner, verdict.reason) == (result.winner, result.reason), race.trace(f"the record check gives {verdict}")
    snapshot = fold_events(event_from_map(event) for event in record["events"])  # the Python clients' fold
    folded = (snapshot.status, [(player.state, player.count) for player in snapshot.seats()])
    assert folded == (RaceStatus.FINISHED, [(s.state, s.count) for s in race.spec.standings()]), race.trace(f"the fold gives {folded}")
    browser = node.ask({"kind": "race", "info": record["race"], "events": record["events"]})
    standings = race.spec.standings()
    shown = (browser["status"], browser["winner"], browser["reason"], browser["aborted"], [(p["state"], p["count"]) for p in browser["players"]], browser["boards"])
    wanted = ("finished", result.winner, result.reason.value, race.spec.aborted, [(s.state.value, s.count) for s in standings], [s.count for s in standings])
    assert shown == wanted, race.trace(f"the browser shows {shown}, the rules give {wanted}")
    assert browser["gaps"] == 0
    event(f"result: {result.reason}; attempts: {sorted(s.state.value for s in standings)}")
    event(f"aborted: {race.spec.aborted}")


# --- move legality: engine.js against shared/board.py ----------------------------------------------------------

CARDS = [card_text(card) for card in FULL_DECK]
PLACES = ["b", "1", "2", "3", "4", "5", "6"]


@st.composite
def move_sequences(draw: st.DrawFn) -> tuple[int, Rules, list[str]]:
    """A deal, its rules and a sequence of action texts: mostly legal ones (from the engine's own list, undo and
    redeal), some made up (any card from any place to any place) and some misspelt, so that refusals are compared."""
    seed = draw(st.integers(0, 2**64 - 1))
    rules = Rules(draw(st.sampled_from(Profile)), undo=draw(st.booleans()), redeal_once=draw(st.booleans()))
    board = Board.deal(seed, rules)
    texts: list[str] = []
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(st.sampled_from(["legal", "legal", "legal", "special", "any", "odd"]))
        if kind == "legal" and board.legal_moves():
            text = action_text(draw(st.sampled_from(board.legal_moves())))
        elif kind == "special":
            text = draw(st.sampled_from(["undo", "redeal"]))
        elif kind == "odd":
            text = draw(st.sampled_from(["", "5D", "5D b>", "5d b>f", "10H 1>2", "XX b>f", "5D 7>1", "5D b>b", " undo "]))
        else:
            text = f"{draw(st.sampled_from(CARDS))} {draw(st.sampled_from(PLACES))}>{draw(st.sampled_from(['f', *PLACES[1:]]))}"
        texts.append(text)
        try:
            board.play(parse_action(text))
        except EngineError:
            pass
    return seed, rules, texts


def python_verdicts(seed: int, rules: Rules, texts: list[str]) -> tuple[list[str | None], dict[str, Any]]:
    board = Board.deal(seed, rules)
    codes: list[str | None] = []
    for text in texts:
        try:
            action = parse_action(text)
        except EngineError:
            codes.append("unreadable")
            continue
        refusal = board.check_action(action)
        codes.append(None if refusal is None else refusal.code.value)
        if refusal is None:
            board.play(action)
    position = {
        "columns": [[card_text(card) for card in column] for column in board.columns],
        "bouquet": [card_text(card) for card in board.bouquet],
        "foundations": list(board.foundations),
    }
    return codes, position


@MOVES
@given(case=move_sequences())
def test_the_browser_engine_judges_every_move_as_the_python_engine_does(case: tuple[int, Rules, list[str]], node: NodeDriver) -> None:
    seed, rules, texts = case
    codes, position = python_verdicts(seed, rules, texts)
    browser = node.ask({"kind": "moves", "seed": str(seed), "rules": {"profile": rules.profile.value, "undo": rules.undo, "redeal_once": rules.redeal_once}, "moves": texts})
    for index, text in enumerate(texts):
        assert browser["codes"][index] == codes[index], f"move {index + 1} {text!r}: engine.js {browser['codes'][index]}, board.py {codes[index]}; moves {texts}"
    assert browser["position"] == position
