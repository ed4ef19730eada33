// The page's look, chosen from the settings menu in the top bar of every page (docs/WEB.md "Settings"): a theme
// (the green felt, light, dark or high contrast) and the card size. Both are remembered in localStorage and set on
// <html> as data-theme and data-cards; the shell's first script sets them from storage before the page is drawn, so
// a page never flashes in another theme. The style sheet (css/app.css) draws each theme; board_view.js sizes cards.

import { t } from "./i18n.js";

export const THEMES = ["felt", "light", "dark", "contrast"];
export const CARD_SIZES = ["small", "fit", "large"];
export const THEME_KEY = "fg.theme";
export const CARDS_KEY = "fg.cards";
/** How much of the fitted size each card size asks for: [of the width, of the height] (1: as large as fits). */
const CARD_SCALE = { small: [0.8, 0.8], fit: [1, 1], large: [1, 1.35] };

function stored(key, allowed) {
  try {
    const value = localStorage.getItem(key);
    return allowed.includes(value) ? value : allowed === THEMES ? "felt" : "fit";
  } catch {
    return allowed === THEMES ? "felt" : "fit"; // storage blocked: the default look
  }
}

/** The remembered theme (default: the green felt). */
export function currentTheme() {
  return stored(THEME_KEY, THEMES);
}

/** The remembered card size (default: as large as the screen allows with the whole table in view). */
export function currentCardSize() {
  return stored(CARDS_KEY, CARD_SIZES);
}

/** The card size's scale of the space a table is fitted to: [width, height]. */
export function cardScale() {
  return CARD_SCALE[currentCardSize()];
}

function remember(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // storage blocked: the choice holds for this page only
  }
}

/** Apply `theme` and remember it. */
export function setTheme(theme) {
  if (!THEMES.includes(theme)) return;
  remember(THEME_KEY, theme);
  document.documentElement.dataset.theme = theme;
}

/** Apply `size` and remember it; a race page fits its table again (it listens for resize). */
export function setCardSize(size) {
  if (!CARD_SIZES.includes(size)) return;
  remember(CARDS_KEY, size);
  document.documentElement.dataset.cards = size;
  window.dispatchEvent(new Event("resize"));
}

function choice(name, label, values, current, wordsOf, onChange) {
  const select = document.createElement("select");
  select.name = name;
  for (const value of values) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = wordsOf(value);
    option.selected = value === current;
    select.append(option);
  }
  select.addEventListener("change", () => onChange(select.value));
  const wrapper = document.createElement("label");
  wrapper.className = "setting";
  wrapper.append(label, " ", select);
  return wrapper;
}

/** The settings menu of the top bar: a ⚙ that opens the theme and card-size choices. */
export function settingsMenu() {
  const menu = document.createElement("details");
  menu.className = "settings-menu";
  const summary = document.createElement("summary");
  summary.textContent = "⚙";
  summary.title = t("web.settings.label");
  summary.setAttribute("aria-label", t("web.settings.label"));
  const panel = document.createElement("div");
  panel.className = "settings-panel";
  panel.append(
    choice("theme", t("web.settings.theme"), THEMES, currentTheme(), (theme) => t(`web.theme.${theme}`), setTheme),
    choice("cards", t("web.settings.cards"), CARD_SIZES, currentCardSize(), (size) => t(`web.cards.${size}`), setCardSize),
  );
  menu.append(summary, panel);
  return menu;
}
