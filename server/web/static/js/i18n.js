// The page's words in the visitor's language: English, Portuguese, French or Spanish. The tables are the terminal
// app's too (shared/words/*.py); the server serves each as the module js/words/<language>.js, and the page shell
// carries the one of its language inline (the picker's cookie, else Accept-Language). The language is the one picked with the picker (remembered in
// localStorage), else the browser's first language the page speaks, else English. t(key, params) is the one way the
// page says something: a key missing from the table shows as the key itself (tests look for those).

export const LANGUAGES = ["en", "pt", "fr", "es"];
/** Each language's name in itself, as the picker offers it. */
export const LANGUAGE_NAMES = { en: "English", pt: "Português", fr: "Français", es: "Español" };
export const LANGUAGE_KEY = "fg.lang";

/** The language to speak: the remembered choice, else the first of the browser's languages the page speaks. */
export function chosenLanguage() {
  const stored = storedLanguage();
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"]) {
    const code = String(tag).split("-")[0].toLowerCase();
    if (LANGUAGES.includes(code)) return code;
  }
  return "en";
}

/** The picker's remembered choice, or null (none, or storage blocked: the browser's language still works). */
function storedLanguage() {
  try {
    return localStorage.getItem(LANGUAGE_KEY);
  } catch {
    return null;
  }
}

/** Remember `code` for the server too, so the next page shell comes in it (with its words inline). */
function rememberForServer(code) {
  document.cookie = `${LANGUAGE_KEY}=${code}; path=/; max-age=31536000; SameSite=Lax`;
}

export const language = chosenLanguage();
if (storedLanguage() === language && !document.cookie.includes(`${LANGUAGE_KEY}=${language}`)) rememberForServer(language);
const table = (await import(`./words/${language}.js`)).default;
document.documentElement.lang = language;

/** The words of `key` in the page's language, each `{name}` filled from `params`. */
export function t(key, params = {}) {
  const text = table[key];
  if (text === undefined) return key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

/** Whether the tables have words for `key` (a refusal code without words is said with the server's message). */
export function hasWords(key) {
  return key in table;
}

/** The words of `key` for `count` things ("1 game", "3 games"): its ".one" or ".other" form, `{count}` filled in. */
export function tn(key, count, params = {}) {
  return t(`${key}.${count === 1 ? "one" : "other"}`, { count, ...params });
}

/** A number in the page's language (1 234 in French, 1.234 in Portuguese and Spanish). */
export function numberText(value) {
  return new Intl.NumberFormat(language).format(value);
}

/** Speak `code` from now on: remembered, and the page is drawn again in it (the session and races carry on). */
export function setLanguage(code) {
  if (!LANGUAGES.includes(code) || code === language) return;
  try {
    localStorage.setItem(LANGUAGE_KEY, code);
    rememberForServer(code);
  } catch {
    // storage blocked: the choice holds for this load only
  }
  location.reload();
}

/** The language picker: a labelled select of the four languages, each named in itself. */
export function languagePicker() {
  const select = document.createElement("select");
  select.className = "language-picker";
  select.name = "language";
  select.setAttribute("aria-label", t("web.language.label"));
  select.title = t("web.language.label");
  for (const code of LANGUAGES) {
    const option = document.createElement("option");
    option.value = code;
    option.lang = code;
    option.textContent = LANGUAGE_NAMES[code];
    option.selected = code === language;
    select.append(option);
  }
  select.addEventListener("change", () => setLanguage(select.value));
  return select;
}
