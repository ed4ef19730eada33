"""Deterministic deals: SplitMix64 against published values, the bounded draw, Fisher–Yates, and the
committed vectors in tests/vectors/deals.json, which must keep passing forever."""

from __future__ import annotations

from typing import Any

import pytest
from engine_positions import VECTORS

from shared import SplitMix64, card_text, deal, parse_card, parse_seed
from shared.cards import FULL_DECK, Card
from shared.deal import redeal_columns, shuffle


class ScriptedGenerator(SplitMix64):
    """A SplitMix64 whose raw outputs are given, to test what is built on top of them."""

    def __init__(self, outputs: list[int]) -> None:
        super().__init__(0)
        self.outputs = list(outputs)

    def next_u64(self) -> int:
        return self.outputs.pop(0)


def texts(cards: tuple[Card, ...]) -> list[str]:
    return [card_text(card) for card in cards]


# --- SplitMix64 against values published independently of this project ------------------------------------


def test_splitmix64_matches_the_reference_implementation_for_seed_0() -> None:
    # Vigna's splitmix64.c (prng.di.unimi.it/splitmix64.c) with x = 0.
    generator = SplitMix64(0)
    assert [generator.next_u64() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_splitmix64_matches_the_rand_xoshiro_reference_stream() -> None:
    # rust-random/rngs rand_xoshiro/src/splitmix64.rs, test "reference", produced with the C reference implementation.
    generator = SplitMix64(1477776061723855037)
    assert [generator.next_u64() for _ in range(6)] == [
        1985237415132408290, 2979275885539914483, 13511426838097143398,
        8488337342461049707, 15141737807933549159, 17093170987380407015,
    ]  # fmt: skip


# --- the committed vectors ----------------------------------------------------------------------------------


def test_the_vectors_cover_the_edge_seeds() -> None:
    seeds = {int(vector["seed"]) for vector in VECTORS["deals"]}
    assert len(seeds) >= 25
    assert {0, 1, 42, 2**32, 2**53 + 1, 2**63, 2**64 - 1} <= seeds


@pytest.mark.parametrize("vector", VECTORS["splitmix64"], ids=lambda vector: vector["seed"])
def test_splitmix64_outputs_match_the_vectors(vector: dict[str, Any]) -> None:
    generator = SplitMix64(int(vector["seed"]))
    assert [f"0x{generator.next_u64():016x}" for _ in vector["outputs"]] == vector["outputs"]


@pytest.mark.parametrize("vector", VECTORS["shuffle_draws"], ids=lambda vector: vector["seed"])
def test_the_shuffle_draws_match_the_vectors(vector: dict[str, Any]) -> None:
    generator = SplitMix64(int(vector["seed"]))
    assert [generator.below(i + 1) for i in range(51, 0, -1)] == vector["draws"]


@pytest.mark.parametrize("vector", VECTORS["deals"], ids=lambda vector: vector["seed"])
def test_every_deal_vector_still_deals_the_same_layout(vector: dict[str, Any]) -> None:
    layout = deal(int(vector["seed"]))
    assert [texts(column) for column in layout.columns] == vector["columns"]
    assert texts(layout.bouquet) == vector["bouquet"]


@pytest.mark.parametrize("vector", VECTORS["redeals"], ids=lambda vector: vector["seed"])
def test_every_redeal_vector_still_redeals_the_same_columns(vector: dict[str, Any]) -> None:
    before = tuple(tuple(parse_card(text) for text in column) for column in vector["columns_before"])
    after = redeal_columns(int(vector["seed"]), before)
    assert [texts(column) for column in after] == vector["columns_after"]


# --- the algorithm, piece by piece --------------------------------------------------------------------------


def test_the_bounded_draw_redraws_outputs_at_or_past_the_largest_multiple_of_the_bound() -> None:
    # 2**64 mod 3 == 1, so the largest multiple of 3 below 2**64 is 2**64 - 1: that output alone is redrawn.
    assert ScriptedGenerator([2**64 - 1, 2**64 - 2]).below(3) == (2**64 - 2) % 3
    assert ScriptedGenerator([2**64 - 2]).below(3) == (2**64 - 2) % 3
    assert ScriptedGenerator([7]).below(4) == 3  # a power of two never redraws


@pytest.mark.parametrize("bound", [1, 2, 3, 7, 52, 2**63 + 1])
def test_the_bounded_draw_stays_below_its_bound(bound: int) -> None:
    generator = SplitMix64(bound)
    assert all(0 <= generator.below(bound) < bound for _ in range(200))


def test_the_shuffle_is_fisher_yates_from_the_last_index_down() -> None:
    cards = [Card(i) for i in range(4)]
    shuffle(cards, ScriptedGenerator([0, 0, 0]))  # swap 3<->0, then 2<->0, then 1<->0
    assert cards == [1, 2, 3, 0]


def test_a_deal_slices_the_shuffled_deck_into_six_columns_of_six_then_the_bouquet() -> None:
    deck = list(FULL_DECK)
    shuffle(deck, SplitMix64(42))
    layout = deal(42)
    assert layout.columns == tuple(tuple(deck[6 * k : 6 * k + 6]) for k in range(6))
    assert layout.bouquet == tuple(deck[36:])


# --- seeds --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [-1, 2**64, True, 1.0, "1", None])
def test_a_deal_refuses_anything_but_an_unsigned_64_bit_integer(seed: object) -> None:
    with pytest.raises(ValueError, match="seed must be"):
        deal(seed)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "seed"),
    [(42, 42), ("42", 42), (" 0042 ", 42), ("0x2A", 42), ("0x0000000000000000002a", 42), (str(2**64 - 1), 2**64 - 1),
     ("0xffffffffffffffff", 2**64 - 1)],
)
def test_a_seed_may_be_given_as_a_decimal_or_hex_text(value: object, seed: int) -> None:
    assert parse_seed(value) == seed


@pytest.mark.parametrize("value", ["-1", "4_2", "1e3", "", "0x", "0x1g", str(2**64), "9" * 5000, pytest.param(10**5000, id="5001-digit-int"), True, None, 42.0])
def test_a_seed_text_refuses_anything_else(value: object) -> None:
    with pytest.raises(ValueError, match="seed must be"):
        parse_seed(value)
