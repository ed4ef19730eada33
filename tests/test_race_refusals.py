"""Refused requests: each engine code comes back unchanged and changes nothing; seats and tokens are enforced."""

from __future__ import annotations

import pytest
from race_helpers import Race, player, seated_race, server_config
from winning_lines import winning_deal

from client import RaceClient, ServerError
from server.app import RaceServer
from shared import (
    BOUQUET,
    FOUNDATION,
    Board,
    IllegalMoveCode,
    Move,
    NotationErrorCode,
    Profile,
    Rules,
    action_text,
    parse_action,
    rank_of,
)
from shared.protocol import PROTOCOL_VERSION, Error, Hello, MoveRequest, RaceSettings, Welcome


def column_move(board: Board, want: IllegalMoveCode) -> str:
    """A move on a fresh deal that the engine refuses with ``want``."""
    tops = [column[-1] for column in board.columns]
    bouquet = board.bouquet
    if want is IllegalMoveCode.CARD_NOT_AT_SOURCE:
        return action_text(Move(bouquet[0], 0, FOUNDATION))
    if want is IllegalMoveCode.CARD_COVERED:
        return action_text(Move(board.columns[0][0], 0, FOUNDATION))
    if want is IllegalMoveCode.SAME_PLACE:
        return action_text(Move(tops[0], 0, 0))
    if want is IllegalMoveCode.NOT_NEXT_ON_FOUNDATION:
        card = next(card for card in bouquet if rank_of(card) > 1)
        return action_text(Move(card, BOUQUET, FOUNDATION))
    if want is IllegalMoveCode.COLUMN_RANK_MISMATCH:
        card = next(card for card in bouquet if rank_of(card) + 1 != rank_of(tops[0]))
        return action_text(Move(card, BOUQUET, 0))
    raise AssertionError(want)


async def assert_refused_and_unchanged(server: RaceServer, race: Race, move: str, code: str) -> None:
    before = await server.races.rebuild(race.race_id)  # type: ignore[union-attr]
    with pytest.raises(ServerError) as refused:
        await race.ann.move(race.race_id, move)
    assert refused.value.code == code, refused.value
    after = await server.races.rebuild(race.race_id)  # type: ignore[union-attr]
    assert [board.to_json() for board in after] == [board.to_json() for board in before]
    record = await server.races.store.load_race(race.race_id)  # type: ignore[union-attr]
    assert record is not None and record.status == "running"


@pytest.mark.parametrize(
    "code",
    [
        IllegalMoveCode.CARD_NOT_AT_SOURCE,
        IllegalMoveCode.CARD_COVERED,
        IllegalMoveCode.SAME_PLACE,
        IllegalMoveCode.NOT_NEXT_ON_FOUNDATION,
        IllegalMoveCode.COLUMN_RANK_MISMATCH,
    ],
)
async def test_each_illegal_move_comes_back_with_the_engine_code(race_server: RaceServer, code: IllegalMoveCode) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=8))
    try:
        move = column_move(Board.deal(8), code)
        error = Board.deal(8).check_action(parse_action(move))
        assert error is not None and error.code is code  # the engine's own verdict
        await assert_refused_and_unchanged(race_server, race, move, code.value)
    finally:
        await race.close()


async def test_moving_from_an_emptied_column_is_source_empty(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    board = Board.deal(seed)
    played: list[str] = []
    while all(board.columns):
        played.append(line[len(played)])
        board.play(parse_action(played[-1]))
    empty = next(index for index, column in enumerate(board.columns) if not column)
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        for move in played:
            await race.ann.move(race.race_id, move)
        await assert_refused_and_unchanged(race_server, race, action_text(Move(board.bouquet[0], empty, FOUNDATION)), "source_empty")
    finally:
        await race.close()


@pytest.mark.parametrize(
    ("settings", "actions", "code"),
    [
        (RaceSettings(seed=8, profile=Profile.FOUNDATION_ONLY.value), [], IllegalMoveCode.COLUMN_BUILDING_FORBIDDEN),
        (RaceSettings(seed=8), ["undo"], IllegalMoveCode.UNDO_NOT_ALLOWED),
        (RaceSettings(seed=8, undo=True), ["undo"], IllegalMoveCode.NOTHING_TO_UNDO),
        (RaceSettings(seed=8), ["redeal"], IllegalMoveCode.REDEAL_NOT_ALLOWED),
        (RaceSettings(seed=8, redeal_once=True), ["redeal", "redeal"], IllegalMoveCode.REDEAL_ALREADY_USED),
    ],
)
async def test_rule_options_are_enforced_with_engine_codes(
    race_server: RaceServer, settings: RaceSettings, actions: list[str], code: IllegalMoveCode
) -> None:
    race = await seated_race(race_server.url, settings)
    try:
        *allowed, refused = actions or [column_move(Board.deal(8), IllegalMoveCode.COLUMN_RANK_MISMATCH)]
        if code is IllegalMoveCode.COLUMN_BUILDING_FORBIDDEN:
            board = Board.deal(8, Rules(Profile.FOUNDATION_ONLY))
            refused = action_text(Move(board.bouquet[0], BOUQUET, 0))
        for action in allowed:
            await race.ann.move(race.race_id, action)
        await assert_refused_and_unchanged(race_server, race, refused, code.value)
    finally:
        await race.close()


@pytest.mark.parametrize(
    ("text", "code"), [("hello", NotationErrorCode.BAD_MOVE), ("ZZ b>f", NotationErrorCode.BAD_CARD), ("AC x>f", NotationErrorCode.BAD_PLACE)]
)
async def test_unreadable_moves_come_back_with_the_notation_code(race_server: RaceServer, text: str, code: NotationErrorCode) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=8))
    try:
        await assert_refused_and_unchanged(race_server, race, text, code.value)
    finally:
        await race.close()


async def test_a_player_without_a_seat_cannot_move(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=8))
    carol = await player(race_server.url, "Carol")
    try:
        for attempt in (carol.move(race.race_id, "AC b>f"), carol.resign(race.race_id), carol.sync(race.race_id)):
            with pytest.raises(ServerError) as refused:
                await attempt
            assert refused.value.code == "not_seated"
        with pytest.raises(ServerError) as refused:
            await carol.join(race.race_id)
        assert refused.value.code == "race_full"
        with pytest.raises(ServerError) as refused:
            await carol.move("no-such-race", "AC b>f")
        assert refused.value.code == "unknown_race"
        with pytest.raises(ServerError) as refused:
            await carol.move("{race:x}", "AC b>f")
        assert refused.value.code == "unknown_race"
        assert await race_server.races.store.actions(race.race_id, 0) == []  # type: ignore[union-attr]
    finally:
        await carol.close()
        await race.close()


async def test_a_move_with_another_players_token_is_refused(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        forged = MoveRequest(id=999, token=race.ann.token, race=race.race_id, seq=0, move_id="forged", move=line[0])
        with pytest.raises(ServerError) as refused:
            await race.bob.request(forged, Error)
        assert (refused.value.code, refused.value.field) == ("bad_token", "token")
        assert await race_server.races.store.actions(race.race_id, 0) == []  # type: ignore[union-attr]
        assert await race_server.races.store.actions(race.race_id, 1) == []  # type: ignore[union-attr]
    finally:
        await race.close()


async def test_joining_ones_own_race_is_refused(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        seated = await ann.create(RaceSettings(seed=1))
        with pytest.raises(ServerError) as refused:
            await ann.join(seated.race.race)
        assert refused.value.code == "already_seated"
        with pytest.raises(ServerError) as refused:
            await ann.move(seated.race.race, "AC b>f")
        assert refused.value.code == "not_started"
        assert seated.race.seed is None  # a seed stays secret until the countdown
    finally:
        await ann.close()


async def test_moves_wait_for_the_common_start_time(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=30)) as server:
        race = await seated_race(server.url, RaceSettings(seed=8), start=False)
        try:
            with pytest.raises(ServerError) as refused:
                await race.ann.move(race.race_id, "AC b>f")
            assert refused.value.code == "not_started"  # the race's state is checked before the engine's verdict
            legal = action_text(Board.deal(8).legal_moves()[0])
            with pytest.raises(ServerError) as refused:
                await race.ann.move(race.race_id, legal)
            assert refused.value.code == "not_started"
        finally:
            await race.close()


async def test_hello_is_required_once_with_the_right_protocol(race_server: RaceServer) -> None:
    client = await RaceClient.connect(race_server.url)
    try:
        with pytest.raises(ServerError) as refused:
            await client.request(MoveRequest(id=1, token="x", race="r", seq=0, move_id="m", move="AC b>f"), Error)
        assert refused.value.code == "hello_required"
        with pytest.raises(ServerError) as refused:
            await client.request(Hello(id=2, protocol=PROTOCOL_VERSION + 1, name="Ann"), Welcome)
        assert refused.value.code == "unsupported_protocol"
        with pytest.raises(ServerError) as refused:
            await client.hello("Ann", token="not-a-token")
        assert refused.value.code == "bad_token"
        with pytest.raises(ServerError) as refused:
            await client.hello("\x00bad")
        assert (refused.value.code, refused.value.field) == ("bad_field", "name")
        welcome = await client.hello("Ann")
        with pytest.raises(ServerError) as refused:
            await client.hello("Ann")
        assert refused.value.code == "already_hello"
        resumed = await player(race_server.url, "ignored")
        await resumed.close()
        again = await RaceClient.connect(race_server.url)
        same = await again.hello("Someone else", token=welcome.token)
        assert (same.player, same.name) == (welcome.player, "Ann")
        await again.close()
    finally:
        await client.close()
