// An arena tournament (/arena/<id>; /arena opens one; docs/COMMUNITY.md): its clock and live standings (pushed at
// most once a second), Join and Pause. A joined player's next race opens by itself: the app follows arena_paired to
// the race page (main.js), and the next pairing after that race's result opens the next one.

import { errorText } from "./refusals.js";
import { field, fill, h } from "./dom.js";
import { t } from "./i18n.js";

export function mountArena(root, app, params) {
  const view = new ArenaView(root, app, params.arena);
  view.start();
  return view;
}

class ArenaView {
  constructor(root, app, arena) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.arena = arena;
  }

  async start() {
    document.title = `${t("web.nav.arena")} · Flower Garden Race`;
    if (!this.arena) return this.form();
    let reply;
    try {
      reply = await this.conn.arenaStandings(this.arena);
    } catch (error) {
      return fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.arena.unknown")), h("p", { class: "error-text", role: "alert" }, errorText(error))));
    }
    this.info = reply.arena;
    this.status = h("p", { class: "arena-status", role: "status" });
    this.table = h("div", { class: "arena-standings" });
    const over = this.conn.serverNow() >= this.info.end_at;
    const actions = this.conn.session.account
      ? h("div", { class: "actions" },
          over ? null : h("button", { class: "primary", dataset: { action: "arena-join" }, onclick: () => this.join() }, t("web.arena.join")),
          over ? null : h("button", { dataset: { action: "arena-pause" }, onclick: () => this.pause() }, t("web.arena.pause")))
      : h("p", {}, h("a", { href: "/account", dataset: { link: "" } }, t("web.arena.login")));
    const until = new Date(this.info.end_at).toLocaleTimeString();
    fill(this.root, h("section", { class: "panel arena-page", dataset: { arena: this.arena } },
      h("h1", {}, t("web.arena.title", { name: this.info.name })),
      h("p", { class: "arena-clock" }, over ? t("web.arena.over") : t("web.arena.clock", { time: until, seconds: this.info.time_limit })),
      actions, this.status, this.table,
      h("p", { class: "hint" }, t("web.arena.open_hint"))));
    this.onStandings(reply);
  }

  form() {
    const name = h("input", { name: "name", required: "", maxlength: "32", value: "Arena" });
    const minutes = h("input", { name: "minutes", type: "number", min: "1", max: "180", value: "20" });
    const seconds = h("input", { name: "time_limit", type: "number", min: "10", max: "3600", value: "300" });
    const error = h("p", { class: "error-text", role: "alert" });
    const submit = async (event) => {
      event.preventDefault();
      try {
        const reply = await this.conn.arenaCreate(name.value, Number(minutes.value), Number(seconds.value));
        this.app.navigate(`/arena/${reply.arena.arena}`);
      } catch (refusal) {
        error.textContent = errorText(refusal);
      }
    };
    fill(this.root, h("section", { class: "panel arena-page" }, h("h1", {}, t("web.arena.new")),
      this.conn.session.account ? null : h("p", {}, h("a", { href: "/account", dataset: { link: "" } }, t("web.arena.login"))),
      h("form", { dataset: { form: "arena" }, onsubmit: submit },
        field(t("web.arena.name"), name), field(t("web.arena.minutes"), minutes), field(t("web.arena.time_limit"), seconds),
        h("button", { type: "submit", class: "primary" }, t("web.arena.create"))),
      error, h("p", { class: "hint" }, t("web.arena.open_hint"))));
  }

  /** Draw the standings (the reply's, or an arena_standings event's). */
  onStandings(message) {
    if (!this.table || (message.arena !== this.arena && message.arena?.arena !== this.arena)) return;
    const me = this.conn.session.account;
    const lines = [...message.standings];
    if (message.own && !lines.some((line) => line.handle === message.own.handle)) lines.push(message.own); // a push: the top, then one's own place
    const rows = lines.map((line) =>
      h("tr", { class: line.handle === me ? "me" : "", dataset: { rank: String(line.rank), handle: line.handle } },
        h("td", {}, String(line.rank)), h("td", {}, line.handle, line.fire ? h("span", { class: "fire", title: t("web.arena.fire") }, " 🔥") : null,
          line.berserks ? h("span", { class: "berserks", title: t("web.race.berserk_title") }, ` ⚡${line.berserks}`) : null),
        h("td", { class: "score" }, String(line.score)), h("td", {}, String(line.performance)), h("td", {}, String(line.games))));
    fill(this.table, rows.length
      ? h("table", { class: "leaderboard" },
          h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, t("web.arena.player")), h("th", {}, t("web.arena.score")), h("th", {}, t("web.arena.performance")), h("th", {}, t("web.arena.games")))),
          h("tbody", {}, rows))
      : h("p", { class: "empty" }, t("web.arena.empty")));
  }

  async join() {
    try {
      this.onStandings(await this.conn.arenaJoin(this.arena));
      this.status.textContent = t("web.arena.joined");
    } catch (error) {
      this.status.textContent = errorText(error);
    }
  }

  async pause() {
    try {
      await this.conn.arenaPause(this.arena);
      this.status.textContent = t("web.arena.paused");
    } catch (error) {
      this.status.textContent = errorText(error);
    }
  }
}
