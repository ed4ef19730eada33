// Small helpers to build the page without a framework, and the words every page says (in the tables of i18n.js).

import { t } from "./i18n.js";

/** h("div", {class: "x", onclick: f, dataset: {card: "5D"}}, child, "text", …) → an element. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else if (key === "style") element.style.cssText = value; // through the CSSOM: the page's CSP allows no style attributes
    else if (value === true) element.setAttribute(key, "");
    else element.setAttribute(key, value);
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A form field: its label, the control, and a hint below it. */
export function field(label, control, hint) {
  return h("label", { class: "field" }, h("span", { class: "label" }, label), control, hint ? h("span", { class: "hint" }, hint) : null);
}

/** Replace an element's content. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** "1:05" from milliseconds. */
export function clockText(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/** A race's time limit in seconds as "time limit 5:00" (the lobby, the settings line, the clock line): the page's one
 * form, the words of the Python clients' `client/race_view.py` `time_limit_words`. */
export function timeLimitText(seconds) {
  return t("setting.time_limit", { clock: clockText(seconds * 1000) });
}

/** "12 s ago", "3 min ago". */
export function ageText(ms) {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return t("web.ago.seconds", { count: seconds });
  if (seconds < 3600) return t("web.ago.minutes", { count: Math.round(seconds / 60) });
  return t("web.ago.hours", { count: Math.round(seconds / 3600) });
}

/** The settings of a race in a few words: "classic · undo · time limit 5:00 · solvable" (a ghost race's label first). */
export function settingsText(settings) {
  const parts = [t(settings.profile === "foundation-only" ? "setting.foundation_only" : "setting.classic")];
  if (settings.ghost) parts.unshift(t("web.setting.ghost", { ghost: settings.ghost })); // never rated; seat 2 replays a recorded attempt
  if (settings.arena) parts.unshift(t("web.setting.arena")); // one of an arena's races: booked into its standings
  if (settings.rated) parts.push(t("setting.rated"));
  if (settings.undo) parts.push(t("setting.undo"));
  if (settings.redeal_once) parts.push(t("setting.redeal"));
  if (settings.time_limit) parts.push(timeLimitText(settings.time_limit));
  if (settings.solvable_only) parts.push(t("setting.solvable"));
  if (settings.hints) parts.push(t("setting.hints"));
  if (settings.private) parts.push(t("setting.private"));
  if (settings.spectators === "link") parts.push(t("web.setting.spectators_link"));
  if (settings.spectators === "nobody") parts.push(t("web.setting.spectators_nobody"));
  return parts.join(" · ");
}

/**
 * What is known of the deal (docs/FAIRPLAY.md): a seed the creator chose is always said, the tier when known,
 * and the seed itself once the result revealed it. deal: { seed_chosen, difficulty, seed } (RaceInfo or LobbyEntry
 * fields, or a RaceState's seedChosen / difficulty / seed).
 */
export function dealText(deal) {
  const parts = [];
  if (deal.seed_chosen || deal.seedChosen) parts.push(t("web.deal.chosen_seed"));
  if (deal.difficulty) parts.push(t("web.deal.difficulty", { difficulty: t(`difficulty.${deal.difficulty}`) }));
  if (deal.seed !== null && deal.seed !== undefined) parts.push(t("web.deal.seed", { seed: deal.seed }));
  return parts.length ? ` · ${parts.join(" · ")}` : "";
}

/** A closed set's value in words: the tables' `kind.value` (`status.running` -> "racing"), the Python clients'
 * words too (`client/race_view.py` `_worded`); an unknown value with its underscores as spaces. */
export function worded(kind, value) {
  const key = `${kind}.${value}`;
  const words = t(key);
  return words === key ? String(value).replace(/_/g, " ") : words;
}

/** Where a race is (`status` of a race, a lobby entry, a live race) in words: `running` -> "racing". */
export function statusText(status) {
  return worded("status", status);
}

const STATUS_ORDER = ["waiting", "countdown", "running", "finished"];

/** Whether a race's status `now` (`watching.status_now`) is past the status `shown` (a spectator's snapshot, one
 * delay ago, and the delayed events since): the race started, finished or closed within the delay. */
function lagging(shown, now) {
  return Boolean(now) && now !== shown && (now === "closed" || STATUS_ORDER.indexOf(now) > STATUS_ORDER.indexOf(shown));
}

/** A watched race's status as true for the spectator: "racing" when the delayed view has caught up, else what the
 * race is now with the lag: "under way · shown 30 s late", "finished · shown 30 s late" — never "waiting for an
 * opponent" for a race under way (the Python clients' `client/race_view.py` `watched_status_words`). */
export function watchedStatusText(shown, now, delayMs) {
  if (!lagging(shown, now)) return statusText(shown);
  if (now === "closed") return statusText(now);
  return t(now === "finished" ? "watched.finished_late" : "watched.under_way_late", { seconds: Math.round(delayMs / 1000) });
}

/** The status whose colour a watched race's badge wears: the race's as it is now while the view lags it. */
export function watchedStatusColour(shown, now) {
  return lagging(shown, now) ? now : shown;
}

/** What a spectator waits for while its view lags the race (null once it has caught up): "The race is under way:
 * you see it 30 s late." (`watched_status_note` in Python). */
export function watchedStatusNote(shown, now, delayMs) {
  if (!lagging(shown, now) || now === "closed") return null;
  return t(now === "finished" ? "watched.note_finished" : "watched.note_under_way", { seconds: Math.round(delayMs / 1000) });
}

/** What a watched board without cards says: a race dealt since the delayed view shows its cards one delay late. */
export function watchedBoardEmptyText(shown, now, delayMs) {
  if (!lagging(shown, now) || now === "closed") return t("web.watch.dealt_at_start");
  return t("web.watch.dealt_late", { seconds: Math.round(delayMs / 1000) });
}

/** Where an attempt is (`playing`) or how it ended (`cleared`, `time_limit`, …) in words. */
export function endingText(state) {
  return state === "playing" ? t("web.attempt.playing") : worded("attempt", state);
}

/** Why `state`'s race closed, in words: "nobody joined in time", "an operator closed it (reported abuse)". */
export function closedWhy(state) {
  const why = state.closedReason ? worded("closed", state.closedReason) : t("web.closed.no_reason");
  return state.closedMessage ? `${why} (${state.closedMessage})` : why;
}
