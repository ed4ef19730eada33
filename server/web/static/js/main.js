// The page's entry point: the session (name and token kept in localStorage), one connection per tab, the
// router from the URL to a view, and the races this page follows (each a RaceState fed by race events).

import { Connection, ServerError } from "./connection.js";
import { fill, h } from "./dom.js";
import { playerLabel, playerText, ratingBadge } from "./players.js";
import { RACE_EVENTS } from "./protocol.js";
import { toggleKeyboardHelp, typingInField } from "./keyboard_help.js";
import { helloRefusalWords } from "./refusals.js";
import { languagePicker, t } from "./i18n.js";
import { feel } from "./feel.js";
import { settingsMenu } from "./settings.js";

const NAME_KEY = "fg.name";
const GUEST_NAME_KEY = "fg.guest";
const TOKEN_KEY = "fg.token";
const FINISHED_KEY = "fg.finished";
const FINISHED_KEPT = 20;
const UNCLAIMED_KEPT = 2000;
const RATING_REFRESH_MS = 1500;

const ROUTES = [
  [/^\/$/, async () => (await import("./lobby_view.js")).mountLobby, () => ({})],
  [/^\/race\/([A-Za-z0-9]+)$/, async () => (await import("./race_view.js")).mountRace, (m) => ({ race: m[1] })],
  [/^\/invite\/([A-Za-z0-9-]+)$/, async () => (await import("./race_view.js")).mountRace, (m) => ({ code: decodeURIComponent(m[1]) })],
  [/^\/watch\/([A-Za-z0-9]+)$/, async () => (await import("./watch_view.js")).mountWatch, (m) => ({ race: m[1] })],
  [/^\/replay\/([A-Za-z0-9]+)$/, async () => (await import("./replay_view.js")).mountReplay, (m) => ({ race: m[1] })],
  [/^\/rules$/, async () => (await import("./rules_view.js")).mountRules, () => ({})],
  [/^\/tutorial$/, async () => (await import("./tutorial_view.js")).mountTutorial, () => ({})],
  [/^\/account$/, async () => (await import("./account_view.js")).mountAccount, () => ({})],
  [/^\/leaderboard$/, async () => (await import("./leaderboard_view.js")).mountLeaderboard, () => ({ profile: new URLSearchParams(location.search).get("profile") || "classic" })],
  [/^\/arena$/, async () => (await import("./arena_view.js")).mountArena, () => ({ arena: null })],
  [/^\/arena\/([A-Za-z0-9_-]+)$/, async () => (await import("./arena_view.js")).mountArena, (m) => ({ arena: m[1] })],
  [/^\/tournament\/([A-Za-z0-9_-]+)$/, async () => (await import("./arena_view.js")).mountArena, (m) => ({ arena: m[1] })],
  [/^\/tournaments$/, async () => (await import("./arena_view.js")).mountTournaments, () => ({})],
  [/^\/daily$/, async () => (await import("./daily_view.js")).mountDaily, () => ({ day: new URLSearchParams(location.search).get("day") })],
  [/^\/ghost$/, async () => (await import("./ghost_view.js")).mountGhost, () => ({ handle: new URLSearchParams(location.search).get("handle") })],
  [/^\/player\/([A-Za-z0-9_-]+)$/, async () => (await import("./player_view.js")).mountPlayer, (m) => ({ handle: m[1] })],
];

/** The first request of the page at `path`, sent right behind the hello (Connection.start): the lobby's races. */
function firstRequest(path) {
  return path === "/" ? { type: "watch_lobby" } : null;
}

class App {
  constructor() {
    this.conn = new Connection();
    this.main = document.getElementById("app");
    this.statusBadge = document.getElementById("connection");
    this.who = document.getElementById("who");
    this.view = null;
    this.feel = feel; // what the page played and animated (feel.js), for the console and tests
    this.states = new Map();
    this.listeners = new Map();
    this.unclaimed = [];
    this.conn.on("event", (event) => this.dispatch(event));
    this.conn.on("status", (status) => this.showStatus(status));
    document.addEventListener("click", (event) => {
      const link = event.target.closest("a[data-link]");
      if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      this.navigate(link.getAttribute("href"));
    });
    window.addEventListener("popstate", () => this.route({}));
    window.addEventListener("keydown", (event) => {
      if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey || typingInField(event)) return;
      event.preventDefault();
      toggleKeyboardHelp();
    });
  }

  /**
   * Say hello (resuming the saved session when there is one). A name the server refuses is never kept: the name
   * form comes back with the reason, and the page says hello again with the new name. Any other refusal is said in
   * words (helloRefusalWords), and the saved token is kept, so "Try again" resumes the same session.
   */
  async start() {
    let refused = null;
    for (;;) {
      const name = localStorage.getItem(NAME_KEY) || await this.askName(refused);
      try {
        const session = await this.conn.start(name, localStorage.getItem(TOKEN_KEY), firstRequest(location.pathname));
        localStorage.setItem(TOKEN_KEY, session.token);
        localStorage.setItem(NAME_KEY, session.name);
        break;
      } catch (error) {
        if (error instanceof ServerError && error.code === "bad_field" && error.field === "name") {
          localStorage.removeItem(NAME_KEY);
          refused = { name, words: helloRefusalWords(error) };
          continue;
        }
        this.showNotLetIn(error);
        return;
      }
    }
    this.showWho();
    this.refreshRating();
    this.route({});
  }

  /** Why the page could not start a session, in words, with a button that tries again (same token). */
  showNotLetIn(error) {
    const refused = error instanceof ServerError;
    const heading = t(refused ? "web.entry.not_let_in" : "web.entry.unreachable");
    const words = refused ? helloRefusalWords(error) : t("web.entry.unreachable_text");
    fill(this.main, h("div", { class: "panel entry not-let-in" }, h("h1", {}, heading),
      h("p", { class: "error-text", role: "alert", dataset: { code: refused ? error.code : "" }, title: refused ? `${error.code}: ${error.message}` : String(error.message || error) }, words),
      h("button", { onclick: () => location.reload() }, t("web.try_again"))));
  }

  /** The first visit's name form; after a refused name, the name again with the server's reason above it. */
  askName(refused = null) {
    return new Promise((resolve) => {
      const input = h("input", { name: "name", maxlength: "32", required: true, autocomplete: "nickname", placeholder: t("web.entry.your_name"), "aria-label": t("web.entry.your_name") });
      if (refused) input.value = refused.name;
      const form = h("form", { class: "panel entry name-form", onsubmit: (event) => {
        event.preventDefault();
        const name = input.value.trim();
        if (!name || /[\u0000-\u001f\u007f]/.test(name)) return;
        resolve(name);
      } }, h("h1", {}, t("web.entry.welcome")), h("p", {}, t("web.entry.pitch")),
      h("p", { class: "hint" }, t("web.entry.new_here"), " ", h("a", { href: "/rules", target: "_blank", dataset: { action: "rules" } }, t("web.nav.rules")), " ", t("web.entry.minute_to_read")),
      refused ? h("p", { class: "error-text name-refused", role: "alert" }, refused.words) : null,
      input, h("button", { type: "submit", class: "primary" }, t("web.entry.start")));
      fill(this.main, form);
      input.focus();
    });
  }

  /** The top bar: who this session is (handle and classic rating, or a guest's name) and the account links. */
  showWho() {
    const session = this.conn.session;
    const leaderboard = [h("a", { href: "/rules", dataset: { link: "" }, class: "nav" }, t("web.nav.rules")), h("a", { href: "/leaderboard", dataset: { link: "" }, class: "nav" }, t("web.nav.leaderboard")), h("a", { href: "/daily", dataset: { link: "" }, class: "nav" }, t("web.nav.daily")), h("a", { href: "/tournaments", dataset: { link: "" }, class: "nav" }, t("web.nav.arena"))];
    if (session.account) {
      fill(this.who, leaderboard, " ", h("span", { class: "me-name" }, playerLabel({ name: session.name, account: session.account, bot: session.bot })), " ",
        this.myRating === undefined ? null : ratingBadge(this.myRating), " ",
        h("button", { class: "link", dataset: { action: "logout" }, title: t("web.who.logout_title"), onclick: () => this.logOut() }, t("web.who.logout")));
      return;
    }
    fill(this.who, leaderboard, " ", h("span", { class: "me-name" }, session.name), h("span", { class: "kind-tag guest", title: t("web.who.guest_title") }, t("web.player.guest")), " ",
      h("a", { href: "/account", dataset: { link: "", action: "login" } }, t("web.who.login")), " ",
      h("button", { class: "link", title: t("web.who.change_name_title"), onclick: () => {
        if (!confirm(t("web.who.change_name_confirm"))) return;
        localStorage.removeItem(NAME_KEY);
        localStorage.removeItem(TOKEN_KEY);
        location.assign("/");
      } }, t("web.who.change_name")));
  }

  /** After register/login: the session now plays as the account (a reload resumes it logged in). */
  async loggedIn() {
    const session = this.conn.session;
    if (!localStorage.getItem(GUEST_NAME_KEY)) localStorage.setItem(GUEST_NAME_KEY, localStorage.getItem(NAME_KEY) || "");
    localStorage.setItem(NAME_KEY, session.name);
    localStorage.setItem(TOKEN_KEY, session.token); // login and register give the session a fresh token
    await this.refreshRating();
  }

  /** This session's classic rating for the top bar (from `stats`); null while it has none. */
  async refreshRating() {
    if (!this.conn.session.account) return;
    try {
      const stats = await this.conn.stats(null);
      const classic = stats.profiles.find((profile) => profile.profile === "classic");
      const fresh = classic ? classic.rating : null;
      // The result's rating is shown until the stats have booked that race too (they follow it closely).
      if (!(this.myRating && (!fresh || fresh.games < this.myRating.games))) this.myRating = fresh;
    } catch {
      // the top bar keeps what it showed
    }
    this.showWho();
  }

  /**
   * A rated result changes this player's rating: shown at once from the result (in its profile's terms, the
   * classic one is the top bar's), then read again from `stats`, which the server updates right after.
   */
  ratedResult(result) {
    const me = result.players.find((player) => player.player === this.conn.session.player);
    if (!me || !me.rating) return;
    const state = this.states.get(result.race);
    if (state && state.settings.profile === "classic") {
      const games = this.myRating ? this.myRating.games + 1 : 1;
      this.myRating = { rating: me.rating.after, deviation: me.rating.deviation, provisional: me.rating.provisional, games };
      this.showWho();
    }
    setTimeout(() => this.refreshRating(), RATING_REFRESH_MS);
  }

  /**
   * Log out: the protocol has no request for it, so the page forgets the session's token and starts a new
   * anonymous session under the name used before logging in (docs/WEB.md).
   */
  async logOut() {
    if (!confirm(t("web.who.logout_confirm"))) return;
    try {
      await this.conn.logout(); // the token ends on the server, not only in this browser
    } catch (error) {
      // offline or ended already: the token is forgotten here all the same
    }
    localStorage.removeItem(TOKEN_KEY);
    const guest = localStorage.getItem(GUEST_NAME_KEY);
    if (guest) localStorage.setItem(NAME_KEY, guest);
    else localStorage.removeItem(NAME_KEY);
    localStorage.removeItem(GUEST_NAME_KEY);
    location.assign("/");
  }

  showStatus(status) {
    this.statusBadge.textContent = t(`web.connection.${status}`);
    this.statusBadge.dataset.status = status;
  }

  /** Show another page of the app without reloading (the connection, and the seats it holds, stay). */
  navigate(path, context = {}) {
    history.pushState({}, "", path);
    this.route(context);
  }

  async route(context) {
    const path = location.pathname;
    if (this.view && this.view.unmount) this.view.unmount();
    this.view = null;
    for (const [pattern, load, paramsOf] of ROUTES) {
      const match = pattern.exec(path);
      if (!match) continue;
      const mount = await load();
      this.view = mount(this.main, this, { ...paramsOf(match), ...context });
      return;
    }
    fill(this.main, h("div", { class: "panel entry not-found" }, h("h1", {}, t("web.not_found.title")), h("p", {}, t("web.not_found.text", { path })), h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.to_lobby"))));
  }

  // --- the races this connection follows ---------------------------------------------------------

  /**
   * Keep `state` fed with its race's events for as long as this connection follows the race (a second sync or
   * watch would not send the past events again, so a page opened again in this tab reuses the state).
   */
  track(state) {
    this.states.set(state.race, state);
    const early = this.unclaimed.filter((event) => event.race === state.race);
    this.unclaimed = this.unclaimed.filter((event) => event.race !== state.race);
    for (const event of early) state.apply(event);
  }

  /** The state of a race this connection follows, or undefined. */
  stateOf(race) {
    return this.states.get(race);
  }

  /** Tell `listener` about each event applied to the race's state; returns the function that stops it. */
  listen(race, listener) {
    this.listeners.set(race, listener);
    return () => {
      if (this.listeners.get(race) === listener) this.listeners.delete(race);
    };
  }

  /** The connection no longer follows the race (left, unwatched). */
  forget(race) {
    this.states.delete(race);
    this.listeners.delete(race);
  }

  dispatch(event) {
    if (event.type === "arena_paired") return this.navigate(`/race/${event.race}`); // the arena's next race: take the seat
    if (event.type === "arena_standings") return this.view?.onStandings?.(event);
    if (!RACE_EVENTS.has(event.type)) return;
    const state = this.states.get(event.race);
    if (!state) {
      // Events that arrive while the page that wants them is still loading (between a reply and the view's start).
      this.unclaimed = [...this.unclaimed, event].slice(-UNCLAIMED_KEPT);
      return;
    }
    if (!state.apply(event)) return;
    if (event.type === "result") {
      this.rememberFinished(state);
      this.ratedResult(event);
    }
    this.listeners.get(event.race)?.(event);
  }

  remember(state) {
    if (state.status === "finished") this.rememberFinished(state);
  }

  /** Keep a finished (or probably finished) race for the lobby's "recently finished" list. */
  rememberFinished(race) {
    const players = race.players || [];
    const entry = { race: race.race, names: players.filter((p) => p.name).map((p) => playerText(p)), settings: race.settings, seen: Date.now() };
    const kept = this.finishedRaces().filter((item) => item.race !== entry.race);
    localStorage.setItem(FINISHED_KEY, JSON.stringify([entry, ...kept].slice(0, FINISHED_KEPT)));
  }

  finishedRaces() {
    try {
      return JSON.parse(localStorage.getItem(FINISHED_KEY) || "[]");
    } catch {
      return [];
    }
  }
}

// Installed as an app, a page the server cannot answer shows the offline page (sw.js) instead of the browser's error.
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});

document.getElementById("language").replaceChildren(languagePicker());
document.getElementById("settings").replaceChildren(settingsMenu());
document.getElementById("connection").textContent = t("web.connection.connecting");
const app = new App();
window.flowerGarden = app; // a handle for the browser's console and for tests (docs/WEB.md)
app.start();
