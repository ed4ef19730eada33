// The lobby (/): open races (live from lobby events), quick match and create with every setting, join by
// invite code, races being played (to watch) and recently finished races (to replay).

import { errorText } from "./refusals.js";
import { ageText, dealText, field, fill, h, settingsText, statusText } from "./dom.js";
import { botLevelSelect, playerLabel } from "./players.js";
import { parseSeed } from "./protocol.js";
import { offerTutorial } from "./tutorial_offer.js";
import { t, tn } from "./i18n.js";

const LIVE_REFRESH_MS = 3000;
/** The quick-pairing grid, as lichess's: common time limits (minutes) by rules profile. A cell is a quick match on
 * exactly those settings (no undo, no redeal, any deal), so it pairs only players who picked the same cell. */
export const QUICK_MINUTES = [3, 5, 10];
export const QUICK_PROFILES = ["classic", "foundation-only"];

export function mountLobby(root, app) {
  const view = new LobbyView(root, app);
  view.start();
  return view;
}

class LobbyView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.open = new Map();
    this.live = [];
    this.liveSeen = new Map();
    this.timer = null;
    this.offEvent = this.conn.on("event", (event) => this.onEvent(event));
    this.offResumed = this.conn.on("resumed", (resumed) => resumed.lobby && this.setLobby(resumed.lobby.races));
  }

  async start() {
    document.title = "Flower Garden Race";
    this.build();
    try {
      const lobby = await this.conn.watchLobby();
      this.setLobby(lobby.races);
    } catch (error) {
      this.error(error);
    }
    this.refreshLive();
    this.timer = setInterval(() => this.refreshLive(), LIVE_REFRESH_MS);
    this.ageTimer = setInterval(() => this.renderOpen(), 1000);
  }

  unmount() {
    clearInterval(this.timer);
    clearInterval(this.ageTimer);
    this.offEvent();
    this.offResumed();
    this.conn.unwatchLobby().catch(() => {});
  }

  build() {
    const form = h(
      "form",
      { class: "settings", onsubmit: (event) => event.preventDefault() },
      field(t("web.lobby.rules"), h("select", { name: "profile" }, h("option", { value: "classic" }, t("web.profile.classic")), h("option", { value: "foundation-only" }, t("web.profile.foundation_only")))),
      field(t("web.lobby.spectators"), h("select", { name: "spectators" },
        h("option", { value: "" }, t("web.lobby.spectators_default")),
        h("option", { value: "anyone" }, t("web.lobby.spectators_anyone")),
        h("option", { value: "link" }, t("web.lobby.spectators_link")),
        h("option", { value: "nobody" }, t("web.lobby.spectators_nobody")))),
      field(t("web.lobby.time_limit"), h("select", { name: "time_limit" }, h("option", { value: "" }, t("web.lobby.no_time_limit")), ...[60, 180, 300, 600, 900].map((s) => h("option", { value: String(s), selected: s === 300 }, t("web.lobby.minutes", { count: s / 60 }))))),
      this.ratedField(),
      h("div", { class: "checks" },
        h("label", {}, h("input", { type: "checkbox", name: "undo" }), " ", t("web.lobby.undo")),
        h("label", {}, h("input", { type: "checkbox", name: "redeal_once" }), " ", t("web.lobby.redeal")),
        h("label", {}, h("input", { type: "checkbox", name: "solvable_only" }), " ", t("web.lobby.solvable")),
        h("label", {}, h("input", { type: "checkbox", name: "private" }), " ", t("web.lobby.private")),
      ),
      h("details", { class: "more" },
        h("summary", {}, t("web.lobby.more")),
        field(t("web.lobby.seed"), h("input", { name: "seed", inputmode: "numeric", placeholder: t("web.lobby.seed_random"), autocomplete: "off" }), t("web.lobby.seed_hint")),
        field(t("web.lobby.spectator_delay"), h("input", { name: "spectator_delay", type: "number", min: "0", max: "3600", placeholder: t("web.lobby.server_default") })),
        field(t("web.lobby.grace"), h("input", { name: "grace", type: "number", min: "1", max: "3600", placeholder: t("web.lobby.server_default") }), t("web.lobby.grace_hint")),
      ),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", dataset: { action: "quick-match" }, onclick: () => this.quickMatch() }, t("web.lobby.quick_match")),
        h("button", { type: "button", dataset: { action: "create" }, onclick: () => this.create() }, t("web.lobby.create")),
      ),
      h("p", { class: "error-text", role: "alert" }),
    );
    this.form = form;
    this.botLevel = botLevelSelect();
    this.botOfferText = h("p", {}, t("web.lobby.bot_offer"));
    this.botOffer = h("div", { class: "bot-offer" },
      this.botOfferText,
      h("div", { class: "actions" }, this.botLevel, h("button", { type: "button", class: "primary", dataset: { action: "race-bot" }, onclick: () => this.raceBot() }, t("web.lobby.race_bot"))));
    this.openList = h("div", { class: "race-list", id: "open-races" });
    this.onlineLine = h("p", { class: "online-count" });
    this.liveList = h("div", { class: "race-list", id: "live-races" });
    this.finishedList = h("div", { class: "race-list", id: "finished-races" });
    const invite = h("form", { class: "invite-form", onsubmit: (event) => {
      event.preventDefault();
      const code = event.target.code.value.trim();
      if (code) this.app.navigate(`/invite/${encodeURIComponent(code)}`);
    } }, h("input", { name: "code", placeholder: t("web.lobby.invite_code"), autocomplete: "off", "aria-label": t("web.lobby.invite_code") }), h("button", { type: "submit" }, t("web.lobby.join")));
    fill(
      this.root,
      h("div", { class: "lobby" },
        h("h1", { class: "sr-only" }, t("web.lobby.title")),
        offerTutorial(),
        h("section", { class: "panel play" }, h("h2", {}, t("web.lobby.play")), this.onlineLine,
          h("p", { class: "hint quick-grid-title" }, t("web.lobby.quick_grid")), this.quickGrid(), form, h("h3", {}, t("web.lobby.have_invite")), invite),
        h("section", { class: "panel" }, h("h2", {}, t("web.lobby.open_races")), this.openList, this.botOffer),
        h("section", { class: "panel" }, h("h2", {}, t("web.lobby.live_races")), this.liveList),
        h("section", { class: "panel" }, h("h2", {}, t("web.lobby.finished_races")), this.finishedList),
      ),
    );
    this.renderFinished();
  }

  settings({ forQuickMatch }) {
    const form = this.form;
    const settings = { profile: form.profile.value, undo: form.undo.checked, redeal_once: form.redeal_once.checked, solvable_only: form.solvable_only.checked };
    settings.time_limit = form.time_limit.value ? Number(form.time_limit.value) : null;
    settings.seed = parseSeed(form.seed.value);
    if (form.spectators.value) settings.spectators = form.spectators.value;
    if (!forQuickMatch) settings.private = form.private.checked;
    if (form.rated.checked) settings.rated = true;
    for (const name of ["spectator_delay", "grace"]) if (form[name].value !== "") settings[name] = Number(form[name].value);
    return settings;
  }

  /** "rated": only for a logged-in session; it excludes a chosen seed and undo (the server refuses both). */
  ratedField() {
    const account = this.conn.session.account;
    const box = h("input", { type: "checkbox", name: "rated", disabled: !account, onchange: () => this.ratedChanged() });
    const hint = t(account ? "web.lobby.rated_hint" : "web.lobby.rated_login");
    return h("div", { class: "rated-field" },
      h("label", { class: account ? "" : "disabled", title: hint }, box, " ", t("setting.rated")),
      h("span", { class: "hint rated-hint" }, account ? hint : h("a", { href: "/account", dataset: { link: "" } }, hint)));
  }

  ratedChanged() {
    const rated = this.form.rated.checked;
    for (const name of ["undo", "seed"]) {
      const control = this.form[name];
      control.disabled = rated;
      if (rated) control.type === "checkbox" ? (control.checked = false) : (control.value = "");
    }
  }

  /** Open a race with the form's settings and have the server seat a practice bot in it. */
  async raceBot() {
    let seated;
    try {
      seated = await this.conn.create({ ...this.settings({ forQuickMatch: false }), private: true }); // nobody else takes the seat
    } catch (error) {
      return this.error(error);
    }
    this.app.navigate(`/race/${seated.race.race}`, { seated, botLevel: Number(this.botLevel.value) });
  }

  async create() {
    try {
      const seated = await this.conn.create(this.settings({ forQuickMatch: false }));
      this.app.navigate(`/race/${seated.race.race}`, { seated });
    } catch (error) {
      this.error(error);
    }
  }

  /** The quick-pairing grid: one button per profile and time limit. */
  quickGrid() {
    const profileName = (profile) => t(`web.profile.${profile.replace("-", "_")}`);
    return h("div", { class: "quick-grid", role: "group", "aria-label": t("web.lobby.quick_grid") },
      QUICK_PROFILES.flatMap((profile) => QUICK_MINUTES.map((minutes) => h("button", {
        type: "button", class: "quick-cell", dataset: { profile, minutes: String(minutes) },
        title: t("web.lobby.quick_cell", { profile: profileName(profile), minutes }),
        onclick: () => this.quickMatch(this.cellSettings(profile, minutes)),
      }, h("strong", {}, t("web.lobby.minutes", { count: minutes })), h("span", {}, profileName(profile))))));
  }

  /** A grid cell's settings: its profile and time limit, rated if the form says so (a logged-in player). */
  cellSettings(profile, minutes) {
    const settings = { profile, time_limit: minutes * 60, undo: false, redeal_once: false, solvable_only: false, seed: null };
    if (this.form.rated.checked) settings.rated = true;
    return settings;
  }

  async quickMatch(settings = this.settings({ forQuickMatch: true })) {
    try {
      const reply = await this.conn.quickMatch(settings);
      this.app.navigate(`/race/${reply.race.race}`, { seated: reply, queued: reply.type === "queued" });
    } catch (error) {
      this.error(error);
    }
  }

  async join(race) {
    try {
      const seated = await this.conn.join(race);
      this.app.navigate(`/race/${race}`, { seated });
    } catch (error) {
      this.error(error);
    }
  }

  error(error) {
    const text = errorText(error);
    this.form.querySelector(".error-text").textContent = text;
  }

  setLobby(races) {
    this.open = new Map(races.map((entry) => [entry.race, entry]));
    this.renderOpen();
  }

  onEvent(event) {
    if (event.type === "lobby_added" || event.type === "lobby_changed") this.open.set(event.entry.race, event.entry);
    else if (event.type === "lobby_removed") this.open.delete(event.race);
    else if (event.type === "lobby_reset") return this.setLobby(event.races);
    else return;
    this.renderOpen();
  }

  renderOpen() {
    const now = this.conn.serverNow();
    const mine = this.conn.session && this.conn.session.player;
    const rows = [...this.open.values()].map((entry) =>
      h("div", { class: "race-row", dataset: { race: entry.race } },
        h("div", { class: "who" }, h("strong", {}, playerLabel({ name: entry.creator, account: entry.creator_account, bot: entry.creator_bot })), h("span", { class: "settings-text" }, settingsText(entry.settings) + dealText(entry))),
        h("div", { class: "meta" }, `${t("web.lobby.seats", { seats: entry.seats })} · ${ageText(now - entry.created_at)}`),
        entry.player === mine
          ? h("a", { class: "button", href: `/race/${entry.race}`, dataset: { link: "" } }, t("web.lobby.yours"))
          : h("button", { class: "primary", disabled: entry.status !== "waiting", onclick: () => this.join(entry.race) }, t(entry.status === "waiting" ? "web.lobby.join" : "web.lobby.full")),
      ),
    );
    fill(this.openList, rows.length ? rows : h("p", { class: "empty" }, t("web.lobby.no_open")));
    const othersWaiting = [...this.open.values()].some((entry) => entry.status === "waiting" && entry.player !== mine);
    this.botOffer.classList.toggle("alone", !othersWaiting);
    this.botOfferText.textContent = t(othersWaiting ? "web.lobby.bot_offer_others" : "web.lobby.bot_offer_alone");
  }

  /** "12 players online · 4 racing", asked with the live races (every server process's players: `online`). */
  async refreshOnline() {
    try {
      const { online, racing } = await this.conn.online();
      this.onlineLine.dataset.online = String(online);
      this.onlineLine.dataset.racing = String(racing);
      this.onlineLine.textContent = `${tn("web.lobby.online", online)} · ${tn("web.lobby.racing", racing)}`;
    } catch {
      // the line keeps what it said; the next refresh asks again
    }
  }

  async refreshLive() {
    this.refreshOnline();
    let reply;
    try {
      reply = await this.conn.liveRaces(50);
    } catch {
      return;
    }
    const current = new Set(reply.races.map((race) => race.race));
    for (const [race, info] of this.liveSeen) if (!current.has(race)) this.app.rememberFinished(info);
    this.liveSeen = new Map(reply.races.map((race) => [race.race, race]));
    const rows = reply.races.map((race) =>
      h("div", { class: "race-row", dataset: { race: race.race } },
        h("div", { class: "who" }, h("strong", {}, race.players.map((p) => h("span", { class: "live-player" }, playerLabel(p), ` ${p.count}`)).flatMap((part, index) => (index ? [" – ", part] : [part]))), h("span", { class: "settings-text" }, settingsText(race.settings) + dealText(race))),
        h("div", { class: "meta" }, `${statusText(race.status)} · ${tn("web.watching", race.watchers ?? 0)}`),
        h("a", { class: "button", href: `/watch/${race.race}`, dataset: { link: "" } }, t("web.lobby.watch")),
      ),
    );
    fill(this.liveList, rows.length ? rows : h("p", { class: "empty" }, t("web.lobby.no_live")));
    this.renderFinished();
  }

  renderFinished() {
    const finished = this.app.finishedRaces();
    const rows = finished.map((race) =>
      h("div", { class: "race-row", dataset: { race: race.race } },
        h("div", { class: "who" }, h("strong", {}, race.names.join(` ${t("web.versus")} `)), h("span", { class: "settings-text" }, race.settings ? settingsText(race.settings) : "")),
        h("div", { class: "meta" }, ageText(Date.now() - race.seen)),
        h("a", { class: "button", href: `/replay/${race.race}`, dataset: { link: "" } }, t("web.replay")),
      ),
    );
    fill(this.finishedList, rows.length ? rows : h("p", { class: "empty" }, t("web.lobby.no_finished")));
  }
}
