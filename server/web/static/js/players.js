// Who a player is, as every page shows it (docs/PLAYERS.md): a registered handle (linked to its history), a bot
// (always marked), or an anonymous name — which proves nothing, so it is marked as a guest's even when it
// equals a registered handle. And ratings: "1662?" while provisional, changes as "1500 → 1662 (+162)".

import { h } from "./dom.js";

/** "bot", "account" or "guest" for anything carrying `account` and `bot` (PlayerInfo, result lines, lobby entries). */
export function kindOf(player) {
  if (player.bot) return "bot";
  return player.account ? "account" : "guest";
}

/** The name in plain text: "Ann", "Ann (guest)", "Bot3_a1b2c3 (bot)". */
export function playerText(player) {
  const kind = kindOf(player);
  const name = player.account || player.name || "?";
  return kind === "account" ? name : `${name} (${kind})`;
}

/** The name as an element: handles link to /player/<handle>; bots and guests carry a tag. */
export function playerLabel(player, { link = true } = {}) {
  const kind = kindOf(player);
  const name = player.account || player.name || "?";
  const text = link && player.account
    ? h("a", { href: `/player/${encodeURIComponent(player.account)}`, dataset: { link: "" } }, name)
    : name;
  return h(
    "span",
    { class: `pname ${kind}`, dataset: { kind }, title: kind === "guest" ? "anonymous: not a registered account" : kind === "bot" ? "a practice bot" : "registered player" },
    text,
    kind === "account" ? null : h("span", { class: `kind-tag ${kind}` }, kind),
  );
}

/** A rating in a few characters: "1803", "1662?" while provisional (deviation in the title). */
export function ratingText(rating) {
  if (!rating) return "unrated";
  return `${rating.rating}${rating.provisional ? "?" : ""}`;
}

export function ratingBadge(rating) {
  if (!rating) return h("span", { class: "rating unrated", title: "no rated race yet in this profile" }, "unrated");
  const title = `deviation ±${rating.deviation}${rating.provisional ? " · provisional: not on the leaderboard yet" : ""} · ${gamesText(rating.games, "rated game")}`;
  return h("span", { class: `rating${rating.provisional ? " provisional" : ""}`, title, dataset: { rating: String(rating.rating) } }, ratingText(rating));
}

/** A RatingChange (before, after, delta, deviation, provisional) as "1500 → 1662 (+162)". */
export function ratingChangeText(change) {
  const sign = change.delta > 0 ? "+" : change.delta < 0 ? "−" : "±";
  return `${change.before} → ${change.after}${change.provisional ? "?" : ""} (${sign}${Math.abs(change.delta)})`;
}

export function ratingChangeCell(change) {
  if (!change) return h("span", { class: "rating-change none" }, "—");
  const direction = change.delta > 0 ? "up" : change.delta < 0 ? "down" : "same";
  return h("span", { class: `rating-change ${direction}`, dataset: { delta: String(change.delta), after: String(change.after) }, title: `deviation ±${change.deviation}${change.provisional ? ", provisional" : ""}` }, ratingChangeText(change));
}

/** Why a rated race was aborted, rated for nobody (the result's and a history line's `aborted`), in words. */
export const ABORT_REASONS = {
  too_few_moves: "a player made too few moves for the race to count",
  too_short: "the race ended too soon after its start to count",
};

/** "aborted: not rated" with the reason in its title and `data-aborted` (the code), or null for a race that counted. */
export function abortedBadge(reason) {
  if (!reason) return null;
  return h("span", { class: "aborted", dataset: { aborted: reason }, title: ABORT_REASONS[reason] || reason }, "aborted: not rated");
}

export const PROFILES = [["classic", "Classic"], ["foundation-only", "Foundation only"]];

export const BOT_LEVELS = [[1, "1 · beginner"], [2, "2"], [3, "3 · steady"], [4, "4"], [5, "5 · expert"]];

/** The practice bot's level (docs/PLAYERS.md: 1 slow and often random … 5 follows the solver's line). */
export function botLevelSelect() {
  return h("select", { name: "bot_level", "aria-label": "bot level" }, BOT_LEVELS.map(([level, label]) => h("option", { value: String(level), selected: level === 3 }, `level ${label}`)));
}

/** "1 game", "2 games" (`noun` another singular: "1 rated game"). */
export function gamesText(count, noun = "game") {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
