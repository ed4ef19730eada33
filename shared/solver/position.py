"""Positions as the search sees them: canonical byte keys in which bouquet cards laid on columns are anonymous.

A search position is one ``bytes`` key: the four foundation heights, then the
six columns sorted (column order never matters), joined by ``SEPARATOR``. A
column holds *tokens*: a real card 0–51, or ``VIRTUAL + rank - 1`` for a card
taken from the bouquet whose suit is not decided yet (see docs/SOLVER.md,
"Anonymous bouquet cards"). The bouquet itself is implied: the *pool* is every
bouquet card of the search's starting position not yet on a foundation, and
``free(rank)`` of them are still in the bouquet, the rest lie on columns as
anonymous tokens.

:class:`Expander` lists the children of a key, applying the forced (safe)
foundation moves, and scores keys for best-first search.
"""

from __future__ import annotations

from collections.abc import Iterable

SEPARATOR = 0x7F
SEPARATOR_BYTE = bytes((SEPARATOR,))
VIRTUAL = 52
"""Token of an anonymous bouquet card of rank r: ``VIRTUAL + r - 1``."""
BOUQUET_SRC = 6
FOUNDATION_DST = 7

TOKEN_RANK: tuple[int, ...] = tuple([card % 13 + 1 for card in range(52)] + list(range(1, 14)))
TOKEN_SUIT: tuple[int, ...] = tuple([card // 13 for card in range(52)] + [-1] * 13)
TOKEN_BYTE: tuple[bytes, ...] = tuple(bytes((token,)) for token in range(VIRTUAL + 13))

RawMove = tuple[int, int, int]
"""(token or card, source, target): source 0–5 or BOUQUET_SRC, target 0–5 or FOUNDATION_DST, in key column order.

A move to the foundation always names the real card, also when the column's
top is an anonymous token (that is when its suit is decided)."""

Child = tuple[bytes, tuple[RawMove, ...]]


def make_key(found: list[int], cols: list[bytes]) -> bytes:
    """The canonical key of a position."""
    return bytes(found) + SEPARATOR_BYTE.join(sorted(cols))


def split_key(key: bytes) -> tuple[list[int], list[bytes]]:
    """Foundation heights and the six columns (in key order) of a key."""
    return list(key[:4]), key[4:].split(SEPARATOR_BYTE)


REAL_TOKENS = bytes(range(VIRTUAL))
VIRTUAL_TOKENS = bytes(range(VIRTUAL, VIRTUAL + 13))


def virtual_counts(cols: list[bytes]) -> list[int]:
    """How many anonymous tokens of each rank (index 1–13) lie on the columns."""
    counts = [0] * 15
    for column in cols:
        for token in column.translate(None, REAL_TOKENS):
            counts[token - VIRTUAL + 1] += 1
    return counts


class Expander:
    """Move generation, forced moves and scoring for one search.

    ``pool`` is the bouquet of the search's starting position; ``builds`` says
    whether cards may go to columns (classic) or only to foundations;
    ``foundation_moves`` is False for the dead-position search, which looks
    for a position where a foundation move *becomes available* without playing one.
    ``anonymous`` searches the *relaxed game* instead (docs/SOLVER.md, "The
    relaxed game"): a column card that moves to a column forgets its suit, like
    a bouquet card, and a lone card is always anonymous. It can win where the
    real game cannot, never the other way round, so only its exhaustion is used:
    as a proof that the real position is unsolvable.
    ``shuffles`` False makes the *finder* (docs/SOLVER.md, "Finding hard wins"):
    a card lying on a card one rank higher never moves onto another column's
    card of that rank. That search is incomplete (its exhaustion proves
    nothing) but much smaller, and many hard wins lie inside it.
    """

    def __init__(
        self, pool: Iterable[int], builds: bool, foundation_moves: bool = True, anonymous: bool = False, shuffles: bool = True
    ) -> None:
        self.pool_suits: list[tuple[int, ...]] = [tuple(sorted(card // 13 for card in pool if card % 13 + 1 == rank)) for rank in range(15)]
        self.builds = builds
        self.foundation_moves = foundation_moves
        self.anonymous = anonymous
        self.shuffles = shuffles
        self._margin = 1 if anonymous else 2
        """A real column card of rank r goes up by force when every rank r − margin card is up."""
        self._column_cost: dict[bytes, int] = {}
        self._pools: dict[bytes, list[list[int]]] = {}

    # --- pool arithmetic ---------------------------------------------------------

    def pool_masks(self) -> bytes:
        """Per rank 0–14, a bit per suit the starting bouquet holds (the compiled search's form of the pool)."""
        return bytes(sum(1 << suit for suit in self.pool_suits[rank]) for rank in range(15))

    def pool(self, found: list[int], rank: int) -> list[int]:
        """Suits of the rank's pool cards not yet on a foundation."""
        return [suit for suit in self.pool_suits[rank] if found[suit] < rank]

    def pools(self, found_bytes: bytes, found: list[int], cols: list[bytes]) -> list[list[int]]:
        """Per rank 0–14, the suits an anonymous token or a bouquet card of that rank may go up as.

        In the real game: the starting bouquet's suits not yet up. In the relaxed
        game: every suit not yet up whose card does not lie on a column as itself
        (it is in the bouquet or has become a token).
        """
        if self.anonymous:
            real = set(b"".join(cols).translate(None, VIRTUAL_TOKENS))
            return [[suit for suit in range(4) if found[suit] < rank and suit * 13 + rank - 1 not in real] if 1 <= rank <= 13 else [] for rank in range(15)]
        pools = self._pools.get(found_bytes)
        if pools is None:
            pools = self._pools[found_bytes] = [self.pool(found, rank) for rank in range(15)]
        return pools

    # --- forced moves ----------------------------------------------------------------

    def play_forced(self, found: list[int], cols: list[bytes], virtual: list[int], moves: list[RawMove]) -> None:
        """Play every safe foundation move (docs/SOLVER.md, "Safe foundation moves") in place, recording them."""
        while self._lift_columns(found, cols, virtual, moves) | self._lift_bouquet(found, virtual, moves):
            pass
        if self.anonymous:
            for index, column in enumerate(cols):
                if len(column) == 1 and column[0] < VIRTUAL:
                    cols[index] = TOKEN_BYTE[VIRTUAL + column[0] % 13]

    def _lift_columns(self, found: list[int], cols: list[bytes], virtual: list[int], moves: list[RawMove]) -> bool:
        """Send up every safe column top, column after column; whether any went up."""
        builds = self.builds
        lowest = min(found)
        progress = False
        for index in range(6):
            column = cols[index]
            while column:
                token = column[-1]
                if token >= VIRTUAL:
                    break
                rank = token % 13 + 1
                suit = token // 13
                if found[suit] != rank - 1 or (builds and (rank > lowest + self._margin or virtual[rank - 1])):
                    break
                column = column[:-1]
                found[suit] = rank
                moves.append((token, index, FOUNDATION_DST))
                lowest = min(found)
                progress = True
            cols[index] = column
        return progress

    def _lift_bouquet(self, found: list[int], virtual: list[int], moves: list[RawMove]) -> bool:
        """Send up every safe bouquet card, rank by rank; whether any went up."""
        builds = self.builds
        progress = False
        for rank in range(1, 14 if not builds else min(min(found) + 1, 13) + 1):
            if builds and virtual[rank]:
                continue
            for suit in self.pool_suits[rank]:
                if found[suit] == rank - 1:
                    found[suit] = rank
                    moves.append((suit * 13 + rank - 1, BOUQUET_SRC, FOUNDATION_DST))
                    progress = True
        return progress

    # --- children ----------------------------------------------------------------------

    def children(self, key: bytes) -> list[Child]:
        """Every child position of ``key`` (after forced moves) with the moves that reach it, in a fixed order."""
        found_bytes = key[:4]
        found = list(found_bytes)
        cols = key[4:].split(SEPARATOR_BYTE)
        virtual = virtual_counts(cols)
        pools = self.pools(found_bytes, found, cols)
        free = [len(pools[rank]) - virtual[rank] for rank in range(15)]
        steps: list[tuple[RawMove, ...]] = []
        if self.foundation_moves:
            self._foundation_steps(found, cols, pools, free, steps)
        if self.builds:
            self._column_steps(cols, free, steps)
        children: list[Child] = []
        forcing = self.foundation_moves
        for step in steps:
            child_found, child_cols, child_virtual, lifted = self._after(step, found, cols, virtual)
            if forcing and (lifted or self.anonymous or self._exposes_forced(step, child_found, child_cols, child_virtual)):
                moves = list(step)
                self.play_forced(child_found, child_cols, list(child_virtual), moves)
                step = tuple(moves)
            children.append((bytes(child_found) + SEPARATOR_BYTE.join(sorted(child_cols)), step))
        return children

    def _after(
        self, step: tuple[RawMove, ...], found: list[int], cols: list[bytes], virtual: list[int]
    ) -> tuple[list[int], list[bytes], list[int], bool]:
        """The foundations, columns and virtual counts after ``step`` (new lists; ``virtual`` itself when the step
        leaves it alone), and whether a card went up."""
        child_found = list(found)
        child_cols = list(cols)
        child_virtual = virtual
        lifted = False
        for token, source, target in step:
            if source == BOUQUET_SRC:
                if token >= VIRTUAL:
                    if child_virtual is virtual:
                        child_virtual = list(virtual)
                    child_virtual[token - VIRTUAL + 1] += 1
            else:
                top = child_cols[source][-1]
                child_cols[source] = child_cols[source][:-1]
                if top >= VIRTUAL and target == FOUNDATION_DST:
                    child_virtual = list(virtual)
                    child_virtual[top - VIRTUAL + 1] -= 1
            if target == FOUNDATION_DST:
                child_found[token // 13] += 1
                lifted = True
            elif token < VIRTUAL and self.anonymous:
                if child_virtual is virtual:
                    child_virtual = list(virtual)
                child_virtual[token % 13 + 1] += 1
                child_cols[target] = child_cols[target] + TOKEN_BYTE[VIRTUAL + token % 13]
            else:
                child_cols[target] = child_cols[target] + TOKEN_BYTE[token]
        return child_found, child_cols, child_virtual, lifted

    def _exposes_forced(self, step: tuple[RawMove, ...], found: list[int], cols: list[bytes], virtual: list[int]) -> bool:
        """Whether a step without foundation moves uncovered a card that must go up (only its sources can have)."""
        limit = min(found) + self._margin
        for _, source, _ in step:
            if source != BOUQUET_SRC and cols[source]:
                token = cols[source][-1]
                if token < VIRTUAL:
                    rank = token % 13 + 1
                    if found[token // 13] == rank - 1 and (not self.builds or (rank <= limit and not virtual[rank - 1])):
                        return True
        return False

    def _foundation_steps(
        self, found: list[int], cols: list[bytes], pools: list[list[int]], free: list[int], steps: list[tuple[RawMove, ...]]
    ) -> None:
        for index, column in enumerate(cols):
            if not column:
                continue
            token = column[-1]
            rank = TOKEN_RANK[token]
            if token < VIRTUAL:
                if found[token // 13] == rank - 1:
                    steps.append(((token, index, FOUNDATION_DST),))
            else:
                for suit in pools[rank]:
                    if found[suit] == rank - 1:
                        steps.append(((suit * 13 + rank - 1, index, FOUNDATION_DST),))
        for suit in range(4):
            rank = found[suit] + 1
            if rank <= 13 and free[rank] > 0 and suit in pools[rank]:
                steps.append(((suit * 13 + rank - 1, BOUQUET_SRC, FOUNDATION_DST),))

    def _column_steps(self, cols: list[bytes], free: list[int], steps: list[tuple[RawMove, ...]]) -> None:
        targets: list[list[int]] = [[] for _ in range(15)]
        for index, column in enumerate(cols):
            targets[TOKEN_RANK[column[-1]] if column else 0].append(index)
        first_empty = targets[0][0] if targets[0] else -1
        for source, column in enumerate(cols):
            if not column:
                continue
            token = column[-1]
            rank = TOKEN_RANK[token]
            seated = len(column) > 1 and TOKEN_RANK[column[-2]] == rank + 1
            for target in targets[rank + 1] if self.shuffles or not seated else ():
                steps.append(((token, source, target),))
            if first_empty >= 0 and len(column) > 1:
                steps.append(((token, source, first_empty),))
            self._bridge_steps(token, source, rank, targets, free, steps)

    @staticmethod
    def _bridge_steps(token: int, source: int, rank: int, targets: list[list[int]], free: list[int], steps: list[tuple[RawMove, ...]]) -> None:
        """Steps that put free bouquet cards of the ranks above ``rank`` on a column as a bridge, then the column top
        ``token`` on the bridge."""
        height = rank
        bridge: tuple[RawMove, ...] = ()
        while height < 13 and free[height + 1] > 0:
            height += 1
            bridge = ((VIRTUAL + height - 1, BOUQUET_SRC, -1),) + bridge
            for target in targets[height + 1]:
                if target != source:
                    steps.append(tuple((bridged, BOUQUET_SRC, target) for bridged, _, _ in bridge) + ((token, source, target),))

    # --- scoring --------------------------------------------------------------------------

    def estimate(self, key: bytes) -> int:
        """Heuristic distance to a win (docs/SOLVER.md, "Estimate"), weighted by :data:`ESTIMATE_WEIGHTS`."""
        lift, _, _, _, empty = ESTIMATE_WEIGHTS
        total = lift * (52 - sum(key[:4]))
        cache = self._column_cost
        for column in key[4:].split(SEPARATOR_BYTE):
            cost = cache.get(column)
            if cost is None:
                cost = cache[column] = _column_cost(column) if column else -empty
            total += cost
        return max(total, 0)


ESTIMATE_WEIGHTS = (2, 2, 5, 0, 0)
"""Weights of the estimate: per card not yet up; per card above its column's ordered base; more for such a card
above a lower card of its own suit; more for such a king; less per empty column. The compiled search gets them too."""


def _column_cost(column: bytes) -> int:
    """A non-empty column's part of :meth:`Expander.estimate`."""
    _, above, blocked, king, _ = ESTIMATE_WEIGHTS
    size = len(column)
    ordered = 1
    while ordered < size and TOKEN_RANK[column[ordered]] + 1 == TOKEN_RANK[column[ordered - 1]]:
        ordered += 1
    cost = 0
    lowest = [99, 99, 99, 99]
    for index, token in enumerate(column):
        suit = TOKEN_SUIT[token]
        rank = TOKEN_RANK[token]
        if index >= ordered:
            cost += above
            if suit >= 0 and lowest[suit] < rank:
                cost += blocked
            if rank == 13:
                cost += king
        if suit >= 0 and rank < lowest[suit]:
            lowest[suit] = rank
    return cost


WON_PREFIX = bytes((13, 13, 13, 13))


def is_won(key: bytes) -> bool:
    """Whether every card of the key is on its foundation."""
    return key[:4] == WON_PREFIX


def has_foundation_move(key: bytes) -> bool:
    """Whether a real card at a column's end can go to its foundation (the dead search's goal)."""
    found, cols = split_key(key)
    for column in cols:
        if column:
            token = column[-1]
            if token < VIRTUAL and found[token // 13] == TOKEN_RANK[token] - 1:
                return True
    return False


def buried_depth(key: bytes) -> int:
    """The dead search's estimate: fewest cards lying on a card its foundation wants."""
    found, cols = split_key(key)
    wanted = [suit * 13 + height for suit, height in enumerate(found) if height < 13]
    best = 52
    for column in cols:
        for card in wanted:
            index = column.find(card)
            if index >= 0:
                best = min(best, len(column) - 1 - index)
    return best
