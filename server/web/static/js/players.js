// Who a player is, as every page shows it (docs/PLAYERS.md): a registered handle (linked to its history), a bot
// (always marked), or an anonymous name — which proves nothing, so it is marked as a guest's even when it
// equals a registered handle. And ratings: "1662?" while provisional, changes as "1500 → 1662 (+162)".

import { h, worded } from "./dom.js";
import { t, tn } from "./i18n.js";

/** "bot", "account" or "guest" for anything carrying `account` and `bot` (PlayerInfo, result lines, lobby entries). */
export function kindOf(player) {
  if (player.bot) return "bot";
  return player.account ? "account" : "guest";
}

/** Whether seat `slot` of a race with `settings` is a ghost: seat 2 of a ghost race replays a recorded attempt
 * (docs/COMMUNITY.md "Ghost races"), whatever name it carries. */
export function ghostSeat(settings, slot) {
  return Boolean(settings && settings.ghost) && slot === 1;
}

/** The name in plain text: "Ann", "Ann (guest)", "Bot3_a1b2c3 (bot)", "Ghost of Ann (ghost)" (`ghost`: a ghost's seat). */
export function playerText(player, { ghost = false } = {}) {
  const kind = ghost ? "ghost" : kindOf(player);
  const name = player.account || player.name || "?";
  return kind === "account" ? name : `${name} (${t(`player.${kind}`)})`;
}

/** The name as an element: handles link to /player/<handle>; bots, guests and ghosts (`ghost`) carry a tag. */
export function playerLabel(player, { link = true, ghost = false } = {}) {
  const kind = ghost ? "ghost" : kindOf(player);
  const name = player.account || player.name || "?";
  const text = link && player.account && !ghost
    ? h("a", { href: `/player/${encodeURIComponent(player.account)}`, dataset: { link: "" } }, name)
    : name;
  return h(
    "span",
    { class: `pname ${kind}`, dataset: { kind }, title: t(`web.player.${kind}_title`) },
    text,
    kind === "account" ? null : h("span", { class: `kind-tag ${kind}` }, t(`player.${kind}`)),
  );
}

/** A rating in a few characters: "1803", "1662?" while provisional (deviation in the title). */
export function ratingText(rating) {
  if (!rating) return t("web.rating.unrated");
  return `${rating.rating}${rating.provisional ? "?" : ""}`;
}

export function ratingBadge(rating) {
  if (!rating) return h("span", { class: "rating unrated", title: t("web.rating.unrated_title") }, t("web.rating.unrated"));
  const parts = [t("web.rating.deviation", { deviation: rating.deviation }), rating.provisional ? t("web.rating.provisional") : null, tn("web.rating.rated_games", rating.games)];
  const title = parts.filter(Boolean).join(" · ");
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
  return h("span", { class: `rating-change ${direction}`, dataset: { delta: String(change.delta), after: String(change.after) }, title: [t("web.rating.deviation", { deviation: change.deviation }), change.provisional ? t("web.rating.provisional_short") : null].filter(Boolean).join(", ") }, ratingChangeText(change));
}

/** "aborted: not rated" with the reason in its title and `data-aborted` (the code), or null for a race that counted. */
export function abortedBadge(reason) {
  if (!reason) return null;
  return h("span", { class: "aborted", dataset: { aborted: reason }, title: worded("aborted", reason) }, t("web.rating.aborted"));
}

/** The rule profiles as pickers and tabs name them. */
export function profiles() {
  return [["classic", t("web.profile.classic")], ["foundation-only", t("web.profile.foundation_only")]];
}

const BOT_LEVELS = [[1, "web.bot.level_1"], [2, "web.bot.level"], [3, "web.bot.level_3"], [4, "web.bot.level"], [5, "web.bot.level_5"]];

/** The practice bot's level (docs/PLAYERS.md: 1 slow and often random … 5 follows the solver's line). */
export function botLevelSelect() {
  return h("select", { name: "bot_level", "aria-label": t("web.bot.level_label") }, BOT_LEVELS.map(([level, key]) => h("option", { value: String(level), selected: level === 3 }, t(key, { level }))));
}

/** "1 game", "2 games". */
export function gamesText(count) {
  return tn("web.games", count);
}
