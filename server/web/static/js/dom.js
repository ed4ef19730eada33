// Small helpers to build the page without a framework.

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
  return `time limit ${clockText(seconds * 1000)}`;
}

/** "12 s ago", "3 min ago". */
export function ageText(ms) {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}

/** The settings of a race in a few words: "classic · undo · time limit 5:00 · solvable" (a ghost race's label first). */
export function settingsText(settings) {
  const parts = [settings.profile === "foundation-only" ? "foundation-only" : "classic"];
  if (settings.ghost) parts.unshift(`ghost race: ${settings.ghost}`); // never rated; seat 2 replays a recorded attempt
  if (settings.rated) parts.push("rated");
  if (settings.undo) parts.push("undo");
  if (settings.redeal_once) parts.push("redeal");
  if (settings.time_limit) parts.push(timeLimitText(settings.time_limit));
  if (settings.solvable_only) parts.push("solvable");
  if (settings.private) parts.push("private");
  if (settings.spectators === "link") parts.push("spectators with the link");
  if (settings.spectators === "nobody") parts.push("no spectators");
  return parts.join(" · ");
}

/**
 * What is known of the deal (docs/FAIRPLAY.md): a seed the creator chose is always said, the tier when known,
 * and the seed itself once the result revealed it. deal: { seed_chosen, difficulty, seed } (RaceInfo or LobbyEntry
 * fields, or a RaceState's seedChosen / difficulty / seed).
 */
export function dealText(deal) {
  const parts = [];
  if (deal.seed_chosen || deal.seedChosen) parts.push("chosen seed (may have been studied; never rated)");
  if (deal.difficulty) parts.push(`${deal.difficulty} deal`);
  if (deal.seed !== null && deal.seed !== undefined) parts.push(`seed ${deal.seed}`);
  return parts.length ? ` · ${parts.join(" · ")}` : "";
}

/** Where a race is (`status` of a race, a lobby entry, a live race) in words: the page's one copy (the Python
 * clients' is `client/race_view.py` `RACE_STATUSES`). */
export const RACE_STATUSES = {
  waiting: "waiting for an opponent",
  countdown: "starting",
  running: "racing",
  finished: "finished",
  closed: "closed",
};

/** `running` -> "racing"; an unknown status with its underscores as spaces. */
export function statusText(status) {
  return RACE_STATUSES[status] || String(status).replace(/_/g, " ");
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
  return `${now === "finished" ? "finished" : "under way"} · shown ${Math.round(delayMs / 1000)} s late`;
}

/** The status whose colour a watched race's badge wears: the race's as it is now while the view lags it. */
export function watchedStatusColour(shown, now) {
  return lagging(shown, now) ? now : shown;
}

/** What a spectator waits for while its view lags the race (null once it has caught up): "The race is under way:
 * you see it 30 s late." (`watched_status_note` in Python). */
export function watchedStatusNote(shown, now, delayMs) {
  if (!lagging(shown, now) || now === "closed") return null;
  const late = `${Math.round(delayMs / 1000)} s`;
  return now === "finished" ? `The race is over: you see it as it was played, ${late} late, up to its result.` : `The race is under way: you see it ${late} late.`;
}

/** What a watched board without cards says: a race dealt since the delayed view shows its cards one delay late. */
export function watchedBoardEmptyText(shown, now, delayMs) {
  if (!lagging(shown, now) || now === "closed") return "The cards are dealt when the race starts.";
  return `The cards were dealt: they show here ${Math.round(delayMs / 1000)} s after the start.`;
}

/** Sentences for how an attempt ended and why a race ended. */
export const ENDINGS = {
  playing: "playing",
  cleared: "cleared the board",
  resigned: "resigned",
  abandoned: "left (grace period over)",
  stuck: "declared stuck",
  dead: "no way forward (proved)",
  blocked: "no legal move",
  time_limit: "time limit",
  race_over: "race decided",
};

/** Why a race closed without a result (`race_closed` `reason`), in words; an operator's `message` says more. */
export const CLOSED_REASONS = {
  left: "the creator left",
  abandoned: "the creator went away",
  cancelled: "the quick-match entry was cancelled",
  lobby_full: "the lobby was full",
  expired: "nobody joined in time",
  operator: "an operator closed it",
  paired: "quick match seated you in another race",
};

/** Why `state`'s race closed, in words: "nobody joined in time", "an operator closed it (reported abuse)". */
export function closedWhy(state) {
  const why = CLOSED_REASONS[state.closedReason] || String(state.closedReason || "no reason given").replace(/_/g, " ");
  return state.closedMessage ? `${why} (${state.closedMessage})` : why;
}
