// The engine's rules in the browser, for display only: which cards are playable, where a card may go, the
// deal of a seed, and the position after a list of actions. The server checks every move with the Python
// engine (shared/board.py) and its verdict is final; this mirrors it so the page can highlight and replay.

export const RANKS = "A23456789TJQK";
export const SUITS = "CDHS";
export const SUIT_SYMBOLS = "♣♦♥♠";
export const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
export const COLUMN_COUNT = 6;
export const BOUQUET = "b";
export const FOUNDATION = "f";
const MASK64 = (1n << 64n) - 1n;
const REDEAL_SALT = 0x52454445414cn;

/** A card is its notation text ("5D"); rank 1..13 and suit index 0..3 are read from it. */
export function rankOf(card) {
  return RANKS.indexOf(card[0]) + 1;
}

export function suitOf(card) {
  return SUITS.indexOf(card[1]);
}

export function makeCard(rank, suit) {
  return RANKS[rank - 1] + SUITS[suit];
}

/** Reads what people type: "5d", "10h", "T♠", "kc" → "5D", "TH", "TS", "KC"; null if it is not a card. */
export function parseCard(text) {
  let cleaned = text.trim().replace(/\ufe0f/g, "").toUpperCase();
  if (cleaned.startsWith("10")) cleaned = "T" + cleaned.slice(2);
  if (cleaned.length !== 2) return null;
  const symbol = "♣♦♥♠♧♢♡♤".indexOf(cleaned[1]);
  const suit = symbol >= 0 ? symbol % 4 : SUITS.indexOf(cleaned[1]);
  const rank = RANKS.indexOf(cleaned[0]);
  return rank < 0 || suit < 0 ? null : RANKS[rank] + SUITS[suit];
}

/** The card for people: "5♦". */
export function cardLabel(card) {
  return (card[0] === "T" ? "10" : card[0]) + SUIT_SYMBOLS[suitOf(card)];
}

// --- deals (docs/NOTATION.md "Deals"): SplitMix64, rejection sampling, Fisher-Yates ---------------------

class SplitMix64 {
  constructor(seed) {
    this.state = BigInt(seed) & MASK64;
  }

  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }

  below(bound) {
    const big = BigInt(bound);
    const limit = (1n << 64n) - ((1n << 64n) % big);
    for (;;) {
      const value = this.next();
      if (value < limit) return Number(value % big);
    }
  }
}

function shuffle(cards, rng) {
  for (let i = cards.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
}

/** The fresh layout of a seed (a Number or BigInt, 0..2^64-1): { columns: 6 arrays, bouquet: 16 cards }. */
export function deal(seed) {
  const deck = [];
  for (let suit = 0; suit < 4; suit++) for (let rank = 1; rank <= 13; rank++) deck.push(makeCard(rank, suit));
  shuffle(deck, new SplitMix64(seed));
  const columns = [];
  for (let k = 0; k < COLUMN_COUNT; k++) columns.push(deck.slice(k * 6, k * 6 + 6));
  return { columns, bouquet: deck.slice(36) };
}

function redealColumns(seed, columns) {
  const gathered = columns.flat();
  shuffle(gathered, new SplitMix64(BigInt(seed) ^ REDEAL_SALT));
  return columns.map((_, k) => gathered.filter((__, i) => i % COLUMN_COUNT === k));
}

// --- moves ------------------------------------------------------------------------------------------

/** "5D b>3" → { card: "5D", from: "b", to: "3" }; "undo" / "redeal" → { special }; null if unreadable. */
export function parseMove(text) {
  const word = text.trim().toLowerCase();
  if (word === "undo" || word === "redeal") return { special: word };
  const match = /^(\S+)\s+([bB1-6])>([fF1-6])$/.exec(text.trim());
  if (!match) return null;
  const card = parseCard(match[1]);
  return card && { card, from: match[2].toLowerCase(), to: match[3].toLowerCase() };
}

export function moveText(move) {
  return move.special || `${move.card} ${move.from}>${move.to}`;
}

/** A move in notation (`7D b>5`) for people: `7♦ b→5` — the one form every page shows a move in (the replay's
 * move list and winning lines, the analysis' fatal move); `undo`, `redeal` and what is not a move as they are. */
export function moveLabel(text) {
  const move = parseMove(text);
  return move && move.card ? `${cardLabel(move.card)} ${move.from}→${move.to}` : text;
}

// --- the position ----------------------------------------------------------------------------------

/** One player's position, with the race's rules (profile, undo, redeal_once) and its history for undo. */
export class Board {
  constructor(layout, rules = {}, seed = null) {
    this.columns = layout.columns.map((column) => [...column]);
    this.bouquet = [...layout.bouquet];
    this.foundations = layout.foundations ? [...layout.foundations] : [0, 0, 0, 0];
    this.rules = { profile: rules.profile || "classic", undo: !!rules.undo, redeal_once: !!rules.redeal_once };
    this.seed = seed;
    this.history = [];
    this.undoFloor = 0;
    this.undos = 0;
    this.redealUsed = false;
    this.actions = 0;
    this.lastMove = null;
  }

  static deal(seed, rules) {
    return new Board(deal(seed), rules, seed);
  }

  get count() {
    return this.foundations.reduce((a, b) => a + b, 0);
  }

  get buildsOnColumns() {
    return this.rules.profile === "classic";
  }

  /** The top card of each foundation in suit order C, D, H, S, or null. */
  foundationTops() {
    return this.foundations.map((top, suit) => (top ? makeCard(top, suit) : null));
  }

  /** Where an available card lies ("b" or "1".."6"), or null when it is covered, or gone. */
  sourceOf(card) {
    if (this.bouquet.includes(card)) return BOUQUET;
    const index = this.columns.findIndex((column) => column.length && column[column.length - 1] === card);
    return index < 0 ? null : String(index + 1);
  }

  acceptsOnFoundation(card) {
    return this.foundations[suitOf(card)] + 1 === rankOf(card);
  }

  /** Why a move is refused (an engine code), or null when legal. */
  check(move) {
    if (move.special === "undo") {
      if (!this.rules.undo) return "undo_not_allowed";
      return this.history.length <= this.undoFloor ? "nothing_to_undo" : null;
    }
    if (move.special === "redeal") {
      if (!this.rules.redeal_once) return "redeal_not_allowed";
      return this.redealUsed ? "redeal_already_used" : null;
    }
    if (move.from === BOUQUET) {
      if (!this.bouquet.includes(move.card)) return "card_not_at_source";
    } else {
      const column = this.columns[Number(move.from) - 1];
      if (!column.length) return "source_empty";
      if (column[column.length - 1] !== move.card) return column.includes(move.card) ? "card_covered" : "card_not_at_source";
    }
    if (move.to === FOUNDATION) return this.acceptsOnFoundation(move.card) ? null : "not_next_on_foundation";
    if (move.to === move.from) return "same_place";
    if (!this.buildsOnColumns) return "column_building_forbidden";
    const target = this.columns[Number(move.to) - 1];
    if (target.length && rankOf(target[target.length - 1]) !== rankOf(move.card) + 1) return "column_rank_mismatch";
    return null;
  }

  /** The legal destinations ("f", "1".."6") of an available card. */
  destinations(card) {
    const from = this.sourceOf(card);
    if (from === null) return [];
    return [FOUNDATION, "1", "2", "3", "4", "5", "6"].filter((to) => to !== from && this.check({ card, from, to }) === null);
  }

  /** Every available card that has at least one legal move. */
  playable() {
    const cards = [...this.bouquet, ...this.columns.filter((c) => c.length).map((c) => c[c.length - 1])];
    return cards.filter((card) => this.destinations(card).some((to) => !this.pointless(card, to)));
  }

  /** A lone column card to an empty column: legal, but it changes nothing. */
  pointless(card, to) {
    const from = this.sourceOf(card);
    return to !== FOUNDATION && from !== BOUQUET && !this.columns[Number(to) - 1].length && this.columns[Number(from) - 1].length === 1;
  }

  /**
   * A card that can safely go to its foundation: every card of the rank below, in all four suits, is already
   * on the foundations, so no column will ever need this card to build on (the solver's rule).
   */
  safeFoundationMove() {
    const lowest = Math.min(...this.foundations);
    const cards = [...this.bouquet, ...this.columns.filter((c) => c.length).map((c) => c[c.length - 1])];
    for (const card of cards) {
      if (this.acceptsOnFoundation(card) && rankOf(card) - 1 <= lowest) return { card, from: this.sourceOf(card), to: FOUNDATION };
    }
    return null;
  }

  /**
   * Applies an action already accepted by the server (or being replayed); throws on an illegal one. A redeal
   * takes `dealt`, the columns the server says it dealt (the seed is hidden until the result), else shuffles
   * from the board's seed.
   */
  play(move, dealt = null) {
    const refusal = this.check(move);
    if (refusal) throw new Error(`${moveText(move)}: ${refusal}`);
    this.actions += 1;
    if (move.special === "undo") {
      this.undos += 1;
      this.lastMove = null;
      return this.pop();
    }
    if (move.special === "redeal") {
      if (!dealt && (this.seed === null || this.seed === undefined)) throw new Error("redeal: the columns it dealt are unknown");
      const before = this.columns.map((column) => [...column]);
      this.columns = dealt ? dealt.map((column) => [...column]) : redealColumns(this.seed, this.columns);
      this.history.push({ move, before, undoFloor: this.undoFloor });
      this.undoFloor = this.history.length;
      this.redealUsed = true;
      this.lastMove = move;
      return move;
    }
    let index = -1;
    if (move.from === BOUQUET) {
      index = this.bouquet.indexOf(move.card);
      this.bouquet.splice(index, 1);
    } else {
      this.columns[Number(move.from) - 1].pop();
    }
    if (move.to === FOUNDATION) this.foundations[suitOf(move.card)] += 1;
    else this.columns[Number(move.to) - 1].push(move.card);
    this.history.push({ move, index });
    this.lastMove = move;
    return move;
  }

  pop() {
    const { move, index } = this.history.pop();
    if (move.to === FOUNDATION) this.foundations[suitOf(move.card)] -= 1;
    else this.columns[Number(move.to) - 1].pop();
    if (move.from === BOUQUET) this.bouquet.splice(index, 0, move.card);
    else this.columns[Number(move.from) - 1].push(move.card);
    return move;
  }
}

/**
 * The board of a dealt layout ({columns, bouquet}: a sync reply's or a snapshot's `deal`) after a player's actions
 * (`moves`), its redeal taking `redealColumns` (the reply's `redeal_columns`): no seed needed.
 */
export function replayLayout(layout, rules, moves, redealColumns = null) {
  const board = new Board(layout, rules, null);
  for (const text of moves) board.play(parseMove(text), redealColumns);
  return board;
}
