// A refused move or action (resign, stuck, rematch, leave, …) in words for players: "8♠ can't go to its foundation: the
// 7♠ isn't there yet", "the race has no result yet".
// The server's refusal carries a code (not_next_on_foundation) and a message in notation (8S 2>f: …); the page says
// what the code means for the move made, with the cards as the move list writes them (engine.js cardLabel). This is
// the page's one mapping from a refusal's code to words (the Python clients' is client/refusals.py, in the same
// words); the code itself goes to the refusal's title and data-code, for an operator. A code without words here is
// shown with the server's message and the code (errorText).

import { errorText } from "./connection.js";
import { FOUNDATION, cardLabel, makeCard, rankOf, suitOf } from "./engine.js";

function place(where) {
  return where === "b" ? "the bouquet" : where === FOUNDATION ? "its foundation" : `column ${where}`;
}

const WORDS = {
  not_next_on_foundation: (r) => (r.rank > 1 ? `${r.card} can't go to its foundation: the ${cardLabel(makeCard(r.rank - 1, r.suit))} isn't there yet` : null),
  column_rank_mismatch: (r) => {
    const column = r.board && r.move && r.board.columns[Number(r.move.to) - 1];
    return column && column.length ? `${r.card} can't go on ${r.target}: it ends in ${cardLabel(column[column.length - 1])}, which takes only a card one rank lower` : null;
  },
  column_building_forbidden: (r) => `${r.card} can't go on a column: in a foundation-only race cards go to the foundations only`,
  card_covered: (r) => `${r.card} can't move yet: other cards lie on it in ${r.source}`,
  card_not_at_source: (r) => `${r.card} is not in ${r.source}`,
  same_place: (r) => `${r.card} is already in ${r.target}`,
  source_empty: (r) => `${r.source} is empty`,
  undo_not_allowed: () => "this race has no undo",
  nothing_to_undo: () => "there is no move to undo",
  redeal_not_allowed: () => "this race has no redeal",
  redeal_already_used: () => "the one redeal is used up",
  not_started: () => "the race has not started yet",
  race_over: () => "the race is over",
  attempt_over: () => "your attempt has ended",
  too_many_moves: () => "this attempt has made as many moves as a race allows",
  spectating: () => "this connection watches the race, so it cannot play in it",
  rate_limited: () => "too many moves at once: slow down a little",
  unavailable: () => "the server cannot reach its store just now: nothing was played, try again",
  not_seated: () => "you have no seat in this race",
  not_finished: () => "the race has no result yet",
  race_closed: () => "the race was closed before it started",
  already_started: () => "the race has started: resign instead",
  unknown_race: () => "the server knows no such race",
  not_queued: () => "you are not waiting in the quick-match queue",
  seed_pool_empty: () => "no proven deal is ready just now: try again in a few seconds",
  overloaded: () => "the server is too busy to start anything new just now: try again in a few seconds",
  weak_password: () => "this password is too easy to guess: choose another",
  invite_required: () => "this private race is joined with its invite code, not its link",
  server_busy: () => "the server is busy checking other passwords: nothing was done, try again in a few seconds",
};

/** The words for a refusal `code` of `move` ({card, from, to} or {special}) on `board` as the page saw it; null when
 * there are none. */
export function refusalWords(code, move = null, board = null) {
  const card = move && move.card;
  const words = WORDS[code];
  if (!words) return null;
  return words({
    card: card ? cardLabel(card) : "the card",
    rank: card ? rankOf(card) : 0,
    suit: card ? suitOf(card) : 0,
    source: card ? place(move.from) : "its place",
    target: card ? place(move.to) : "there",
    move: card ? move : null,
    board,
  });
}

/** A refused move or other action (a ServerError; `move` null for an action that is no move) for the notice: its text ("Refused: 8♠ can't go …."), its code, and a title with the
 * code and the server's message for an operator. */
export function refusalNotice(error, move, board) {
  const words = refusalWords(error.code, move, board);
  return { text: `Refused: ${words ? `${words}.` : errorText(error)}`, code: error.code, title: `${error.code}: ${error.message}` };
}

/** Why the server refused this page's `hello` (a ServerError), in words for the person at the page. */
export function helloRefusalWords(error) {
  if (error.code === "bad_field" && error.field === "name") return `The server cannot use this name: ${error.message}. Choose another one.`;
  if (error.code === "rate_limited") {
    return "Too many new visitors have come from your network in the last hour (a school or a café shares one address). "
      + "Try again later: a browser that has been here before carries on with its saved session.";
  }
  if (error.code === "banned") return `An operator has banned this player: ${error.message}`;
  if (error.code === "unsupported_protocol") return "This page is older than the race server: reload it to get the new one.";
  if (error.code === "unavailable") return "The race server cannot reach its store just now: try again in a moment.";
  return errorText(error);
}
