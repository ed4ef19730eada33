// Arena tournaments (docs/COMMUNITY.md): /tournaments lists the listed ones (upcoming, running, finished);
// /tournament/<id> (canonical; /arena/<id> shows the same) an arena's clock, live standings (pushed at most once a
// second, to players and watchers: arena_watch), the races being played with Watch, Join and Pause, and the podium
// once it is over; /arena opens a private one. A joined player's next race opens by itself: the app follows
// arena_paired to the race page (main.js), and the next pairing after that race's result opens the next one.

import { arenaRecordPanel } from "./arena_record_view.js";
import { errorText } from "./refusals.js";
import { field, fill, h } from "./dom.js";
import { t } from "./i18n.js";

export function mountArena(root, app, params) {
  const view = new ArenaView(root, app, params.arena);
  view.start();
  return view;
}

export function mountTournaments(root, app) {
  const view = new TournamentList(root, app);
  view.start();
  return view;
}

/** The link of an arena's page. */
export function tournamentPath(arena) {
  return `/tournament/${arena}`;
}

class TournamentList {
  constructor(root, app) {
    this.root = root;
    this.conn = app.conn;
  }

  async start() {
    document.title = `${t("web.tournaments.title")} · Flower Garden Race`;
    let reply;
    try {
      reply = await this.conn.arenaList();
    } catch (error) {
      return fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.tournaments.title")), h("p", { class: "error-text", role: "alert" }, errorText(error))));
    }
    const section = (kind, arenas) => h("section", { class: `tournaments ${kind}`, dataset: { list: kind } },
      h("h2", {}, t(`web.tournaments.${kind}`)),
      arenas.length
        ? h("ul", {}, ...arenas.map((info) => h("li", { dataset: { arena: info.arena } },
            h("a", { href: tournamentPath(info.arena), dataset: { link: "" } }, info.name), " · ", arenaFacts(info))))
        : h("p", { class: "empty" }, t("web.tournaments.none")));
    fill(this.root, h("div", { class: "panel tournaments-page" },
      h("h1", {}, t("web.tournaments.title")),
      section("running", reply.running), section("upcoming", reply.upcoming), section("finished", reply.finished),
      h("p", {}, h("a", { href: "/arena", dataset: { link: "" } }, t("web.tournaments.open_private")))));
  }
}

/** "from 18:00 to 18:55 · 5:00 a race · rated · 12 players" */
function arenaFacts(info) {
  const time = (ms) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const parts = [t("web.tournaments.when", { start: time(info.start_at), end: time(info.end_at) }), t("web.arena.per_race", { seconds: info.time_limit })];
  if (info.rated) parts.push(t("setting.rated"));
  parts.push(info.max_players ? t("web.tournaments.players_of", { count: info.players, max: info.max_players }) : t("web.tournaments.players", { count: info.players }));
  return parts.join(" · ");
}

class ArenaView {
  constructor(root, app, arena) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.arena = arena;
  }

  unmount() {
    this.unmounted = true;
    if (this.watching) this.conn.arenaUnwatch(this.arena).catch(() => {});
  }

  async start() {
    document.title = `${t("web.nav.arena")} · Flower Garden Race`;
    if (!this.arena) return this.form();
    let reply;
    try {
      reply = await this.conn.arenaWatch(this.arena); // the whole table now, the top of it pushed from now on
      this.watching = true;
    } catch (error) {
      return fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.arena.unknown")), h("p", { class: "error-text", role: "alert" }, errorText(error))));
    }
    this.info = reply.arena;
    this.status = h("p", { class: "arena-status", role: "status" });
    this.table = h("div", { class: "arena-standings" });
    this.podium = h("div", { class: "arena-podium" });
    this.races = h("div", { class: "arena-races" });
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
      h("p", { class: "arena-facts" }, arenaFacts(this.info)),
      actions, this.status, this.podium, this.table, this.races, arenaRecordPanel(this.app, this.arena),
      h("p", { class: "hint" }, t("web.arena.open_hint"))));
    this.onStandings(reply);
  }

  /** The podium, once the clock has run out and the last race is booked: the first three of the final table. */
  showPodium(lines, final) {
    if (!final || !lines.length) return fill(this.podium);
    const medals = ["🥇", "🥈", "🥉"];
    fill(this.podium, h("h2", {}, t("web.arena.podium")),
      h("ol", { class: "podium" }, ...lines.slice(0, 3).map((line, index) =>
        h("li", { dataset: { place: String(index + 1), handle: line.handle } }, `${medals[index]} ${line.handle} · `, t("web.arena.points", { count: line.score })))));
  }

  /** The races of this arena being played, each with Watch (from live_races). */
  async showRaces() {
    let listed;
    try {
      listed = (await this.conn.liveRaces(100)).races.filter((race) => race.settings.arena === this.arena);
    } catch {
      return;
    }
    if (this.unmounted) return;
    fill(this.races, listed.length ? h("h2", {}, t("web.arena.races")) : null, listed.length
      ? h("ul", {}, ...listed.map((race) => h("li", { dataset: { race: race.race } },
          race.players.map((seat) => seat.account || seat.name).join(" – "), " ",
          h("a", { class: "button", href: `/watch/${race.race}`, dataset: { link: "" } }, t("web.arena.watch")))))
      : null);
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
        this.app.navigate(tournamentPath(reply.arena.arena));
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
    const status = message.status ?? message.arena?.status;
    const races = message.races ?? message.arena?.races ?? 0;
    this.showPodium(message.standings, status === "finished" && races === 0);
    this.showRaces();
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
