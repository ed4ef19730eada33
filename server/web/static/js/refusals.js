// A refused move or action (resign, stuck, rematch, leave, …) in words for players: "8♠ can't go to its foundation: the
// 7♠ isn't there yet", "the race has no result yet".
// The server's refusal carries a code (not_next_on_foundation) and a message in notation (8S 2>f: …); the page says
// what the code means for the move made, with the cards as the move list writes them (engine.js cardLabel). This is
// the page's one mapping from a refusal's code to words; the words are the tables' "refusal.<code>" keys
// (shared/words), which the Python clients' client/refusals.py says too. The code itself goes to the refusal's title
// and data-code, for an operator. A code without words is shown with the server's message and the code (errorText).

import { ConnectionLost, ServerError } from "./connection.js";
import { FOUNDATION, cardLabel, makeCard, rankOf, suitOf } from "./engine.js";
import { hasWords, t } from "./i18n.js";

/** A place as a refusal names it: `form` "in" ("in column 3") or "to" ("on column 3"); `where` null: unknown. */
function place(form, where) {
  if (where === null) return t(`place.${form}.unknown`);
  return where === "b" ? t(`place.${form}.bouquet`) : where === FOUNDATION ? t(`place.${form}.foundation`) : t(`place.${form}.column`, { number: where });
}

/** What a refusal's words need beyond the card and its places, per code; null when the page cannot say it. */
const NEEDS = {
  not_next_on_foundation: (r) => (r.rank > 1 ? { below: cardLabel(makeCard(r.rank - 1, r.suit)) } : null),
  column_rank_mismatch: (r) => {
    const column = r.board && r.move && r.board.columns[Number(r.move.to) - 1];
    return column && column.length ? { last: cardLabel(column[column.length - 1]) } : null;
  },
};

/** The words for a refusal `code` of `move` ({card, from, to} or {special}) on `board` as the page saw it; null when
 * there are none. */
export function refusalWords(code, move = null, board = null) {
  const key = `refusal.${code}`;
  if (!hasWords(key)) return null;
  const card = move && move.card;
  const refused = { rank: card ? rankOf(card) : 0, suit: card ? suitOf(card) : 0, move: card ? move : null, board };
  const more = NEEDS[code] ? NEEDS[code](refused) : {};
  if (more === null) return null;
  return t(key, {
    card: card ? cardLabel(card) : t("place.the_card"),
    in_source: place("in", card ? move.from : null),
    in_target: place("in", card ? move.to : null),
    to_target: place("to", card ? move.to : null),
    ...more,
  });
}

/** Any failure in words for the person at the page: a refusal's words when its code has them, a lost connection,
 * else the server's message and code (which an operator needs then). */
export function errorText(error) {
  if (error instanceof ConnectionLost) return t("web.connection.lost");
  if (error instanceof ServerError) {
    const words = refusalWords(error.code);
    return words ? sentence(words) : `${error.message} (${error.code}${error.field ? `: ${error.field}` : ""})`;
  }
  return String((error && error.message) || error);
}

function sentence(words) {
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
}

/** A refused move or other action (a ServerError; `move` null for an action that is no move) for the notice: its text ("Refused: 8♠ can't go …."), its code, and a title with the
 * code and the server's message for an operator. */
export function refusalNotice(error, move, board) {
  const words = refusalWords(error.code, move, board);
  return { text: t("web.refused", { words: words ? `${words}.` : errorText(error) }), code: error.code, title: `${error.code}: ${error.message}` };
}

/** Why the server refused this page's `hello` (a ServerError), in words for the person at the page. */
export function helloRefusalWords(error) {
  if (error.code === "bad_field" && error.field === "name") return t("web.hello.bad_name", { reason: error.message });
  const key = `web.hello.${error.code}`;
  if (hasWords(key)) return t(key, { reason: error.message });
  return errorText(error);
}
