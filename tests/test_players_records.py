"""Race records anyone can check: ``flowergarden export`` writes one, ``flowergarden verify`` replays it with the engine
and confirms every move and the result, and refuses a tampered one; the account commands of the CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from player_helpers import PASSWORD, booked, new_handle, rated_race, registered
from race_helpers import play, player, seated_race
from server_processes import flowergarden
from winning_lines import first_foundation_prefix, winning_deal

from cli.player_commands import record_of
from server.app import RaceServer
from shared.protocol import RaceResult, RaceSettings
from shared.race.record import RecordInvalid, verify_record


async def run_cli(*args: str, password: str | None = None) -> tuple[int, str]:
    """Run ``flowergarden ARGS`` to its end (a password, if any, given on stdin); its exit code and output."""
    process = flowergarden(*args)
    output, _ = await asyncio.to_thread(process.communicate, f"{password}\n" if password else "", 60)
    return process.returncode, output


async def finished_race(server: RaceServer) -> str:
    """A casual race Ann wins by clearing while Bob made a few moves."""
    seed, line = winning_deal()
    race = await seated_race(server.url, RaceSettings(seed=seed))
    await play(race.bob, race.race_id, first_foundation_prefix(seed, line, 1))
    await play(race.ann, race.race_id, list(line))
    await race.ann.wait_for(RaceResult)
    await race.close()
    return race.race_id


async def test_an_exported_record_verifies_and_any_tampering_is_caught(race_server: RaceServer, tmp_path: Path) -> None:
    race_id = await finished_race(race_server)
    target = tmp_path / "race.json"
    code, output = await run_cli("export", "--server", race_server.url, race_id, "--output", str(target))
    assert code == 0, output
    record: dict[str, Any] = json.loads(target.read_text())
    verdict = verify_record(record)
    assert (verdict.race, verdict.winner, verdict.reason, verdict.counts[0]) == (race_id, 0, "cleared", 52)
    code, output = await run_cli("verify", str(target))
    assert code == 0 and "verified" in output and "seat 0 won (cleared)" in output, output

    moves = [event for event in record["events"] if event["type"] == "move" and event["slot"] == 1]
    tampered = json.loads(json.dumps(record))
    next(e for e in tampered["events"] if e["seq"] == moves[0]["seq"])["move"] = "KS b>f"  # a move the engine refuses
    with pytest.raises(RecordInvalid, match=f"event {moves[0]['seq']}"):
        verify_record(tampered)
    swapped = json.loads(json.dumps(record))
    result = next(e for e in swapped["events"] if e["type"] == "result")
    result["winner"] = 1  # claim the other player won
    with pytest.raises(RecordInvalid, match="does not follow"):
        verify_record(swapped)
    inflated = json.loads(json.dumps(record))
    next(e for e in inflated["events"] if e["seq"] == moves[-1]["seq"])["count"] += 1
    with pytest.raises(RecordInvalid, match="the engine counts"):
        verify_record(inflated)
    bad_file = tmp_path / "tampered.json"
    bad_file.write_text(json.dumps(swapped))
    code, output = await run_cli("verify", str(bad_file))
    assert code == 1 and "record_invalid" in output, output


async def test_a_rated_record_with_an_abandonment_verifies(race_server: RaceServer) -> None:
    ann, bob = await registered(race_server.url, new_handle("Ann")), await registered(race_server.url, new_handle("Bob"))
    result = await rated_race(ann, bob)
    await booked(race_server, result.race)


    record = await record_of(ann, result.race)
    verdict = verify_record(record)
    assert (verdict.winner, verdict.reason) == (0, "abandoned")
    record["race"]["settings"]["rated"] = False  # abandoning loses only a rated race
    with pytest.raises(RecordInvalid):
        verify_record(record)
    await ann.close()


async def test_a_record_whose_deal_is_not_the_one_committed_to_is_refused(race_server: RaceServer) -> None:
    """Issue 25.6: a zero-move record (nothing to replay) with a changed seed, a commitment of 64 zeros, another salt
    or another layout printed "verified"; verify now recomputes the commitment and deals the seed."""
    ann, bob = await registered(race_server.url, new_handle("Ann")), await registered(race_server.url, new_handle("Bob"))
    result = await rated_race(ann, bob)
    record = await record_of(ann, result.race)
    verify_record(record)

    def forged(change: Any) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(record))
        countdown = [event for event in copy["events"] if event["type"] == "countdown"][-1]
        change(countdown, next(event for event in copy["events"] if event["type"] == "result"))
        return copy

    def other_seed(countdown: dict[str, Any], result: dict[str, Any]) -> None:
        result["seed"] = (result["seed"] + 1) % 2**64

    def zero_commitment(countdown: dict[str, Any], result: dict[str, Any]) -> None:
        countdown["commitment"] = "0" * 64

    def other_salt(countdown: dict[str, Any], result: dict[str, Any]) -> None:
        result["salt"] = "00" * 16

    def other_layout(countdown: dict[str, Any], result: dict[str, Any]) -> None:
        countdown["bouquet"][0], countdown["bouquet"][1] = countdown["bouquet"][1], countdown["bouquet"][0]

    for change, complaint in ((other_seed, "the commitment does not hold"), (zero_commitment, "the commitment does not hold"),
                              (other_salt, "the commitment does not hold"), (other_layout, "the layout does not hold")):  # fmt: skip
        with pytest.raises(RecordInvalid, match=complaint):
            verify_record(forged(change))
    without = json.loads(json.dumps(record))
    without["events"] = [event for event in without["events"] if event["type"] != "countdown"]
    for number, event in enumerate(without["events"], start=1):
        event["seq"] = number
    with pytest.raises(RecordInvalid, match="no countdown"):
        verify_record(without)
    await asyncio.gather(ann.close(), bob.close())


async def test_a_signed_record_proves_players_abandonment_and_ratings_and_forgeries_are_refused(race_server: RaceServer, tmp_path: Path) -> None:
    """Issue 25.6: the forgeries the moves cannot tell (another race id, other handles, the other seat abandoning and
    so winning, another seed, a commitment of 64 zeros, other ratings) fail the server's signature."""
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    ann, bob = await registered(race_server.url, ann_handle), await registered(race_server.url, bob_handle)
    result = await rated_race(ann, bob)
    target = tmp_path / "race.json"
    code, output = await run_cli("export", "--server", race_server.url, result.race, "--output", str(target))
    assert code == 0, output
    code, output = await run_cli("verify", str(target), "--key-url", race_server.url)
    assert code == 0 and "signed by the server" in output, output
    record: dict[str, Any] = json.loads(target.read_text())

    def events_of(copy: dict[str, Any], kind: str) -> list[dict[str, Any]]:
        return [event for event in copy["events"] if event["type"] == kind]

    def race_id(copy: dict[str, Any]) -> None:
        copy["race"]["race"] = "forged12345"

    def handles(copy: dict[str, Any]) -> None:
        for event in events_of(copy, "player_joined"):
            event["account"] = event["name"] = {ann_handle: bob_handle, bob_handle: ann_handle}[event["account"]]

    def who_abandoned(copy: dict[str, Any]) -> None:  # the winner follows: the rules then name seat 1
        for event in events_of(copy, "attempt_ended"):
            event["slot"] = 1 - event["slot"]
        (final,) = events_of(copy, "result")
        final["winner"] = 1
        for standing in final["players"]:
            standing["ended"] = "abandoned" if standing["slot"] == 0 else "race_over"

    def seed(copy: dict[str, Any]) -> None:
        (final,) = events_of(copy, "result")
        final["seed"] += 1

    def zero_commitment(copy: dict[str, Any]) -> None:
        for event in events_of(copy, "countdown"):
            event["commitment"] = "0" * 64

    def ratings(copy: dict[str, Any]) -> None:
        (final,) = events_of(copy, "result")
        final["players"][0]["rating"]["after"] = 2333

    for forge in (race_id, handles, who_abandoned, seed, zero_commitment, ratings):
        forged: dict[str, Any] = json.loads(json.dumps(record))
        forge(forged)
        target.write_text(json.dumps(forged))
        code, output = await run_cli("verify", str(target), "--key-url", race_server.url)
        assert code == 1 and "record_invalid" in output, (forge.__name__, output)
    key = await run_cli("admin", "--redis", race_server.config.redis_url, "record-key")
    target.write_text(json.dumps(record))
    code, output = await run_cli("verify", str(target), "--key", key[1].split()[-1])
    assert code == 0, output
    await asyncio.gather(ann.close(), bob.close())


async def test_the_account_commands_register_log_in_and_show_leaderboard_and_history(race_server: RaceServer) -> None:
    handle = new_handle("Cli")
    url = race_server.url
    code, output = await run_cli("register", "--server", url, handle, password=PASSWORD)
    assert code == 0 and f"Registered {handle}" in output, output
    code, output = await run_cli("register", "--server", url, handle.lower(), password=PASSWORD)
    assert code == 1 and "handle_taken" in output, output
    code, output = await run_cli("login", "--server", url, handle, password="not the password")
    assert code == 1 and "bad_credentials" in output, output
    code, output = await run_cli("register", "--server", url, new_handle("Bot"), "--bot", "--json")
    assert code == 0 and json.loads(output)["key"], output
    rival = await registered(url, new_handle("Riv"))
    me = await player(url, "me")
    await me.login(handle, PASSWORD)
    result = await rated_race(me, rival)
    await booked(race_server, result.race)
    code, output = await run_cli("history", "--server", url, handle)
    assert code == 0 and result.race in output and "won" in output and "rated" in output and "1 races, 1-0-0" in output, output
    code, output = await run_cli("leaderboard", "--server", url, "--login", handle, password=PASSWORD)
    assert code == 0 and "provisional" in output, output
    await me.close()


async def test_verify_tells_a_document_that_is_no_record_from_a_record_that_does_not_hold(tmp_path: Path) -> None:
    """verify --help: exit 1 (record_invalid) for a record that does not hold, 2 for a file that is no record."""
    other = tmp_path / "other.json"
    other.write_text("{}")
    code, output = await run_cli("verify", str(other))
    assert code == 2 and "not_a_record" in output and "seq" not in output, output


async def test_a_server_refusal_names_its_code_once(race_server: RaceServer) -> None:
    code, output = await run_cli("export", "NoSuchRace1", "--server", race_server.url)
    assert code == 1 and output.count("unknown_race") == 1, output


@pytest.mark.parametrize(("command", "option"), [("leaderboard", "--limit=101"), ("leaderboard", "--offset=-1"), ("history", "--limit=51")])
async def test_a_page_size_the_server_would_refuse_is_a_usage_error_before_connecting(command: str, option: str) -> None:
    args = [command, "Ann"] if command == "history" else [command]
    code, output = await run_cli(*args, option, "--server", "ws://127.0.0.1:9")  # nothing listens there: never reached
    assert code == 2 and "bad_usage" in output and "connection_failed" not in output, output
