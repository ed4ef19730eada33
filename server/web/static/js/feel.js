// How the table feels: sounds made on the spot with WebAudio (no sound files), the flight of a moved card to where it
// went, a win's celebration, and the cues a player in another tab gets (the tab's title, an opt-in notification).
// Motion is off under prefers-reduced-motion; sound is on until muted, and the mute switch is remembered
// (localStorage fg.sound = "off"). `feel.played` and `feel.flights` count what happened, for the console and tests.

import { h } from "./dom.js";
import { t } from "./i18n.js";

export const SOUND_KEY = "fg.sound";


/** Each sound: notes (Hz), each this long (s), with this wave; generated, never downloaded. */
const SOUNDS = {
  start: { notes: [523, 659, 784], length: 0.09, wave: "triangle" },
  move: { notes: [880], length: 0.04, wave: "sine" },
  refusal: { notes: [196, 165], length: 0.09, wave: "square", gain: 0.05 },
  milestone: { notes: [660, 660], length: 0.05, wave: "sine" },
  low_time: { notes: [988, 0, 988], length: 0.07, wave: "square", gain: 0.05 },
  win: { notes: [523, 659, 784, 1047], length: 0.12, wave: "triangle" },
  result: { notes: [392, 330], length: 0.14, wave: "triangle" },
  joined: { notes: [587, 784], length: 0.08, wave: "sine" },
};

export const feel = {
  played: [],
  flights: 0,
  audio: null,
  sleep: null,
};

export function soundOn() {
  return localStorage.getItem(SOUND_KEY) !== "off";
}

export function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/** Play one of SOUNDS (unless muted). The AudioContext is made on first use; a browser that keeps it suspended until a
 * click plays nothing audible then, which is all it allows. */
export function play(name) {
  const sound = SOUNDS[name];
  if (!sound || !soundOn()) return;
  feel.played.push(name);
  try {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    feel.audio = feel.audio || new Context();
    const audio = feel.audio;
    if (audio.state === "suspended") audio.resume().catch(() => {});
    let at = audio.currentTime + 0.01;
    for (const frequency of sound.notes) {
      if (frequency) {
        const oscillator = audio.createOscillator();
        const gain = audio.createGain();
        oscillator.type = sound.wave;
        oscillator.frequency.value = frequency;
        gain.gain.setValueAtTime(sound.gain || 0.08, at);
        gain.gain.exponentialRampToValueAtTime(0.0001, at + sound.length);
        oscillator.connect(gain).connect(audio.destination);
        oscillator.start(at);
        oscillator.stop(at + sound.length);
      }
      at += sound.length;
    }
    // A running AudioContext renders (silence) all the time: it sleeps again once the last note is over.
    clearTimeout(feel.sleep);
    feel.sleep = setTimeout(() => audio.suspend().catch(() => {}), Math.ceil((at - audio.currentTime) * 1000) + 100);
  } catch {
    // No audio device: the game goes on in silence.
  }
}

/** The mute switch (a toggle button, remembered). */
export function soundSwitch() {
  const button = h("button", { class: "link sound-switch", type: "button", title: t("web.feel.sound_title"), dataset: { action: "sound" } });
  const show = () => {
    // On a phone the words give way to a sign (the row of controls must not wrap below the screen); the name stays.
    const words = soundOn() ? t("web.feel.sound_on") : t("web.feel.sound_off");
    button.replaceChildren(h("span", { class: "sound-sign", "aria-hidden": "true" }, soundOn() ? "♪" : "♪̸"), h("span", { class: "sound-words" }, words));
    button.setAttribute("aria-label", words);
    button.setAttribute("aria-pressed", soundOn() ? "false" : "true");
    button.dataset.sound = soundOn() ? "on" : "off";
  };
  button.addEventListener("click", () => {
    localStorage.setItem(SOUND_KEY, soundOn() ? "off" : "on");
    show();
  });
  show();
  return button;
}

/** Where each card of `root` is now, to animate the moved one after a redraw (`fly`). */
export function cardPlaces(root) {
  const places = new Map();
  for (const node of root.querySelectorAll("[data-card]")) places.set(node.dataset.card, node.getBoundingClientRect());
  return places;
}

/** Slide `card` from where it was (`before`, from cardPlaces) to where it is drawn now; nothing under reduced motion. */
export function fly(root, before, card) {
  if (!card || reducedMotion()) return;
  const was = before.get(card);
  const node = root.querySelector(`[data-card="${card}"]`);
  if (!was || !node || typeof node.animate !== "function") return;
  const now = node.getBoundingClientRect();
  const dx = was.left - now.left;
  const dy = was.top - now.top;
  if (!dx && !dy) return;
  feel.flights += 1;
  node.animate([{ transform: `translate(${dx}px, ${dy}px)`, zIndex: 5 }, { transform: "translate(0, 0)", zIndex: 5 }], { duration: 220, easing: "cubic-bezier(.2,.7,.3,1)" });
}

/** A win's celebration over `root`: petals falling (still ones under reduced motion), gone after a few seconds. */
export function celebrate(root) {
  const petals = Array.from({ length: 18 }, (_, index) =>
    h("span", { class: "petal", "aria-hidden": "true", style: `--x:${(index * 37) % 100}%;--delay:${(index % 6) * 0.15}s` }, "✿"));
  const layer = h("div", { class: `celebration${reducedMotion() ? " still" : ""}`, role: "status" }, h("span", { class: "sr-only" }, t("web.feel.celebrate")), petals);
  root.append(layer);
  setTimeout(() => layer.remove(), 4000);
  return layer;
}

/** The tab's title while something needs the player ("▶ Bob joined · …"), back to `plain` at the player's next key
 * or click in the page, or once a hidden tab is looked at again. */
export function cueTitle(text, plain) {
  document.title = `▶ ${text} · ${plain}`;
  const back = () => {
    if (document.hidden) return;
    if (document.title.startsWith("▶ ")) document.title = plain;
    for (const type of ["visibilitychange", "pointerdown", "keydown"]) document.removeEventListener(type, back, true);
  };
  for (const type of ["visibilitychange", "pointerdown", "keydown"]) document.addEventListener(type, back, true);
}

/** A browser notification, only if the player allowed them and the tab is not in view. */
export function notify(text) {
  if (!("Notification" in window) || Notification.permission !== "granted" || !document.hidden) return null;
  try {
    return new Notification("Flower Garden Race", { body: text, tag: "flower-garden-race" });
  } catch {
    return null;
  }
}

/** The opt-in: a button asking the browser's permission to notify; says how it stands. */
export function notifySwitch() {
  if (!("Notification" in window)) return null;
  const button = h("button", { class: "link notify-switch", type: "button", dataset: { action: "notify" } });
  const show = () => {
    const permission = Notification.permission;
    button.textContent = permission === "granted" ? t("web.feel.notify_on") : permission === "denied" ? t("web.feel.notify_denied") : t("web.feel.notify_ask");
    button.disabled = permission !== "default";
    button.dataset.permission = permission;
  };
  button.addEventListener("click", () => Notification.requestPermission().then(show, show));
  show();
  return button;
}
