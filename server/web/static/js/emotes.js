// Quick emotes on the race page (docs/WEB.md "Quick emotes"): the fixed phrases of the protocol's `emote`
// request, said in the reader's own language (`emote.<phrase>` of the word tables), the opponent's shown as a
// bubble on its panel, and a remembered per-player mute.

import { h } from "./dom.js";
import { t } from "./i18n.js";

/** The phrases, in the menu's order: the wire's `Emote` values (shared/protocol/states.py). */
export const PHRASES = ["hello", "good_luck", "have_fun", "nice_move", "oops", "wow", "well_played", "thanks", "rematch", "bye"];
/** How long a received phrase stays on its player's panel. */
export const BUBBLE_MS = 6000;
const MUTED_KEY = "fg.muted_emotes";

/** Who a mute is remembered for: the account's handle, else (a guest, a bot's session) the player id. */
function muteKey(player) {
  return player.account ? `account:${player.account}` : `player:${player.player}`;
}

function mutedSet() {
  try {
    const stored = JSON.parse(localStorage.getItem(MUTED_KEY) || "[]");
    return new Set(Array.isArray(stored) ? stored : []);
  } catch {
    return new Set();
  }
}

/** Whether this browser hides `player`'s emotes. */
export function isMuted(player) {
  return Boolean(player) && mutedSet().has(muteKey(player));
}

/** Hide (true) or show again (false) `player`'s emotes, in every race from now on. */
export function setMuted(player, muted) {
  const set = mutedSet();
  if (muted) set.add(muteKey(player));
  else set.delete(muteKey(player));
  localStorage.setItem(MUTED_KEY, JSON.stringify([...set].slice(-200)));
}

/** A phrase in the reader's words. */
export function phraseText(phrase) {
  return t(`emote.${phrase}`);
}

/** The bubble of a phrase on a player's panel (`data-phrase`, announced politely to screen readers). */
export function emoteBubble(phrase) {
  return h("span", { class: "emote-bubble", role: "status", dataset: { phrase } }, phraseText(phrase));
}

/**
 * The emote menu under the table: a button opening the phrases and, for the opponent `opponent` (its name in
 * `name`), the remembered mute. `send(phrase)` sends one; `onMute()` redraws. The page redraws its controls on
 * every event, so whether the menu is open is the page's (`open`, told by `onToggle(open)`): an opponent's move
 * never closes it under the pointer.
 */
export function emotePicker({ opponent, name, send, onMute, open = false, onToggle = () => {} }) {
  const menu = h("details", { class: "emote-picker", open, ontoggle: () => onToggle(menu.open) },
    h("summary", { "aria-label": t("web.emote.bar"), title: t("web.emote.bar") }, h("span", { "aria-hidden": "true" }, "☺")),
    h("div", { class: "emote-menu", role: "group", "aria-label": t("web.emote.bar") },
      PHRASES.map((phrase) => h("button", { type: "button", dataset: { phrase }, onclick: () => {
        menu.open = false;
        onToggle(false);
        send(phrase);
      } }, phraseText(phrase))),
      opponent ? h("label", { class: "toggle emote-mute" },
        h("input", { type: "checkbox", name: "mute-emotes", checked: isMuted(opponent), onchange: (event) => {
          setMuted(opponent, event.target.checked);
          onMute();
        } }),
        " ", t("web.emote.mute", { name }),
      ) : null,
    ),
  );
  return menu;
}
