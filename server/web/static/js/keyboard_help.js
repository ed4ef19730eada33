// The keyboard help (press ? on any page): every key the pages answer, in one dialog. Esc or the button closes it.

import { h } from "./dom.js";

const KEYS = [
  ["Race", [
    ["5d, 10h, th, kc, 5♦", "pick up that card (type its rank and suit)"],
    ["Tab, then Enter", "move to a card that can be picked up, and pick it up"],
    ["f", "send the picked-up card to its foundation"],
    ["1 – 6", "send it to that column"],
    ["Backspace", "take back the last letter typed"],
    ["Esc", "put the card down"],
  ]],
  ["Replay", [
    ["← →", "one move back, one move on"],
  ]],
  ["Everywhere", [
    ["?", "this help"],
  ]],
];

let dialog = null;

/** Open the keyboard help, or close it when it is open. */
export function toggleKeyboardHelp() {
  if (dialog && dialog.open) {
    dialog.close();
    return;
  }
  if (!dialog) {
    dialog = h("dialog", { class: "panel keyboard-help", "aria-labelledby": "keyboard-help-title" },
      h("h2", { id: "keyboard-help-title" }, "Keyboard"),
      KEYS.map(([title, keys]) => h("section", {}, h("h3", {}, title),
        h("dl", {}, keys.flatMap(([key, what]) => [h("dt", {}, h("kbd", {}, key)), h("dd", {}, what)])))),
      h("form", { method: "dialog" }, h("button", { class: "primary", dataset: { action: "close-help" } }, "Close")));
    document.body.append(dialog);
  }
  dialog.showModal();
}

/** Whether a key press belongs to a form field (typing a "?" in a name is no call for help). */
export function typingInField(event) {
  return !!(event.target.closest && event.target.closest("input, textarea, select"));
}
