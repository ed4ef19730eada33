// The keyboard help (press ? on any page): every key the pages answer, in one dialog. Esc or the button closes it.

import { h } from "./dom.js";
import { t } from "./i18n.js";

const KEYS = [
  ["web.keys.race", [
    ["5d, 10h, th, kc, 5♦", "web.keys.type_card"],
    ["web.keys.tab_enter", "web.keys.tab_enter_what"],
    ["f", "web.keys.foundation"],
    ["1 – 6", "web.keys.column"],
    ["web.keys.backspace", "web.keys.backspace_what"],
    ["web.keys.esc", "web.keys.esc_what"],
  ]],
  ["web.replay", [
    ["← →", "web.keys.replay_steps"],
  ]],
  ["web.keys.everywhere", [
    ["?", "web.keys.this_help"],
  ]],
];

/** A key's name: the words of a table key ("Tab, then Enter"), else the keys themselves ("1 – 6"). */
function keyName(key) {
  return key.startsWith("web.") ? t(key) : key;
}

let dialog = null;

/** Open the keyboard help, or close it when it is open. */
export function toggleKeyboardHelp() {
  if (dialog && dialog.open) {
    dialog.close();
    return;
  }
  if (!dialog) {
    dialog = h("dialog", { class: "panel keyboard-help", "aria-labelledby": "keyboard-help-title" },
      h("h2", { id: "keyboard-help-title" }, t("web.keys.title")),
      KEYS.map(([title, keys]) => h("section", {}, h("h3", {}, t(title)),
        h("dl", {}, keys.flatMap(([key, what]) => [h("dt", {}, h("kbd", {}, keyName(key))), h("dd", {}, t(what))])))),
      h("form", { method: "dialog" }, h("button", { class: "primary", dataset: { action: "close-help" } }, t("web.close"))));
    document.body.append(dialog);
  }
  dialog.showModal();
}

/** Whether a key press belongs to a form field (typing a "?" in a name is no call for help). */
export function typingInField(event) {
  return !!(event.target.closest && event.target.closest("input, textarea, select"));
}
