// The daily deal (/daily, /daily?day=YYYY-MM-DD; docs/COMMUNITY.md): one deal a UTC day for everybody. The page
// shows the day's commitment, the player's own attempt and streak, and plays the attempt (solo, against its clock,
// undo off: the server checks every move). Once the day is over: its seed, the solver's line, the leaderboard, the
// statistics and everybody's replay at its recorded pace or raced as a ghost; the archive of past days, each
// playable again uncounted.

import { errorText } from "./refusals.js";
import { clockText, fill, h } from "./dom.js";
import { BoardView } from "./board_view.js";
import { Board, moveText, parseMove } from "./engine.js";
import { t } from "./i18n.js";

export function mountDaily(root, app, params) {
  const view = new DailyView(root, app, params.day || null);
  view.start();
  return view;
}

/** An attempt's result in words ("cleared: 52/52 in 88 moves, 241.0 s"). */
export function resultText(result) {
  const counted = t(result.counted ? "web.daily.counted" : "web.daily.uncounted");
  if (result.state === "playing") return t("web.daily.result.playing", { count: result.count, moves: result.moves, counted });
  const state = t(`web.daily.state.${result.state}`);
  return t("web.daily.result.ended", { state, count: result.count, moves: result.moves, seconds: (result.time_ms / 1000).toFixed(1), counted });
}

class DailyView {
  constructor(root, app, day) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.day = day;
    this.timer = null;
    this.replayTimer = null;
  }

  unmount() {
    clearInterval(this.timer);
    clearTimeout(this.replayTimer);
  }

  async start() {
    this.unmount();
    document.title = `${t("web.nav.daily")} · Flower Garden Race`;
    fill(this.root, h("p", { class: "loading" }, t("web.daily.loading")));
    let info;
    let archive = null;
    try {
      info = await this.conn.daily(this.day);
      if (!this.day) archive = await this.conn.dailyArchive(14);
    } catch (error) {
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.daily.none")), h("p", { class: "error-text", role: "alert" }, errorText(error))));
      return;
    }
    this.info = info;
    const tier = info.difficulty || t("web.daily.any_tier");
    const own = info.own
      ? h("p", { class: "own-attempt", dataset: { state: info.own.state } }, t("web.daily.your_attempt", { result: resultText(info.own) }))
      : h("p", { class: "own-attempt" }, t(this.conn.session.account ? "web.daily.not_played" : "web.daily.guest"));
    const playable = !info.own || info.own.state === "playing" || info.over || !info.own.counted;
    const play = playable
      ? h("button", { class: "primary", dataset: { action: "daily-play" }, onclick: () => this.play() }, t(info.over ? "web.daily.play_again" : info.own ? "web.daily.resume" : "web.daily.play"))
      : null;
    fill(this.root, h("section", { class: "panel daily-page", dataset: { day: info.day, over: String(info.over) } },
      h("h1", {}, t("web.daily.title", { day: info.day })),
      h("p", {}, t("web.daily.rules", { profile: info.profile, tier, minutes: Math.round(info.time_limit / 60) }), " ",
        this.conn.session.account ? t("web.daily.streak", { streak: info.streak, best: info.best_streak }) : ""),
      h("p", { class: "commitment" }, t("web.daily.commitment"), h("code", {}, info.commitment)),
      own,
      h("div", { class: "actions" }, play),
      h("div", { class: "daily-play" }),
      info.over ? this.reveal(info) : h("p", { class: "hint" }, t("web.daily.hidden")),
      archive ? this.archive(archive) : h("p", {}, h("a", { href: "/daily", dataset: { link: "" } }, t("web.daily.today")))));
  }

  reveal(info) {
    const stats = info.stats;
    const share = stats.players ? Math.round((100 * stats.cleared) / stats.players) : 0;
    const bars = stats.clear_minutes.map((count, minute) => (count ? t("web.daily.bar", { from: minute, to: minute + 1, count }) : null)).filter(Boolean).join(", ");
    const rows = (info.top || []).map((entry) =>
      h("tr", { dataset: { rank: String(entry.rank), handle: entry.handle } },
        h("td", {}, String(entry.rank)), h("td", {}, entry.handle), h("td", {}, resultText(entry.result)),
        h("td", {}, h("button", { dataset: { action: "daily-replay" }, onclick: () => this.replay(entry.handle) }, t("web.daily.replay")), " ",
          h("button", { dataset: { action: "daily-ghost" }, onclick: () => this.ghost(entry.handle) }, t("web.daily.ghost")))));
    return h("div", { class: "daily-reveal" },
      h("p", {}, t("web.daily.seed", { seed: info.seed }), h("code", {}, info.salt), "."),
      h("p", { class: "stats" }, t("web.daily.stats", { players: stats.players, cleared: stats.cleared, share }), bars ? t("web.daily.clears", { bars }) : "", "."),
      h("table", { class: "leaderboard daily-board" },
        h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, t("web.daily.player")), h("th", {}, t("web.daily.result")), h("th", {}, ""))),
        h("tbody", {}, rows)),
      h("details", {}, h("summary", {}, t("web.daily.solver_line")), h("p", {}, (info.proving_line || []).join(" "))),
      h("div", { class: "daily-replay" }));
  }

  archive(archive) {
    const items = archive.days.map((day) =>
      h("li", { dataset: { day: day.day } }, h("a", { href: `/daily?day=${day.day}`, dataset: { link: "" } }, day.day),
        t("web.daily.archive_line", { players: day.players, cleared: day.cleared, own: day.own ? resultText(day.own) : "–" })));
    return h("div", { class: "daily-archive" }, h("h2", {}, t("web.daily.past")),
      items.length ? h("ul", {}, items) : h("p", { class: "empty" }, t("web.daily.no_past")));
  }

  async play() {
    let attempt;
    try {
      attempt = await this.conn.dailyStart(this.day);
    } catch (error) {
      return this.say(errorText(error));
    }
    this.attempt = attempt;
    this.clockOffset = attempt.now - Date.now(); // the attempt's clock, as the reply gives it
    const button = this.root.querySelector("[data-action=daily-play]");
    if (button) button.hidden = true;
    this.board = new Board({ columns: attempt.columns, bouquet: attempt.bouquet }, { profile: this.info.profile });
    for (const move of attempt.moves) this.board.play(parseMove(move));
    const holder = this.root.querySelector(".daily-play");
    const table = h("div", { class: "table" });
    this.clock = h("p", { class: "clock", "aria-live": "off" });
    this.status = h("p", { class: "daily-status", role: "status" });
    fill(holder, this.clock, this.status, table,
      h("div", { class: "actions" }, h("button", { dataset: { action: "daily-stop" }, onclick: () => this.stop() }, t("web.daily.stop"))));
    this.view = new BoardView(table, { interactive: true, label: "your board", onMove: (move) => this.move(move) });
    this.result = attempt.result;
    this.render();
    this.timer = setInterval(() => this.tick(), 250);
  }

  tick() {
    const left = this.attempt.deadline - (Date.now() + this.clockOffset);
    this.clock.textContent = t("web.daily.time_left", { time: clockText(left) });
    if (left <= 0 && this.result.state === "playing") this.stop();
  }

  render() {
    const live = this.result.state === "playing";
    this.view.render(this.board, this.pending || null, live);
    this.status.dataset.state = this.result.state;
    this.status.textContent = live ? `${this.board.count} / 52` : t("web.daily.over", { result: resultText(this.result) });
    if (!live) clearInterval(this.timer);
  }

  async move(move) {
    if (this.pending || this.result.state !== "playing") return;
    this.pending = move.card;
    this.render();
    try {
      const reply = await this.conn.dailyMove(this.attempt.attempt, this.board.actions, moveText(move));
      this.board.play(move);
      this.result = reply.result;
    } catch (error) {
      this.say(errorText(error));
    } finally {
      this.pending = null;
      this.render();
    }
  }

  async stop() {
    try {
      this.result = (await this.conn.dailyStop(this.attempt.attempt)).result;
    } catch (error) {
      this.say(errorText(error));
    }
    this.render();
  }

  /** A counted attempt of the finished day, move by move at the pace it was played. */
  async replay(handle) {
    clearTimeout(this.replayTimer);
    let replay;
    try {
      replay = await this.conn.dailyReplay(this.info.day, handle);
    } catch (error) {
      return this.say(errorText(error));
    }
    const holder = this.root.querySelector(".daily-replay");
    const table = h("div", { class: "table" });
    const caption = h("p", { class: "replay-caption" });
    fill(holder, h("h2", {}, t("web.daily.attempt_of", { name: replay.handle })), caption, table);
    const view = new BoardView(table, { interactive: false, label: `board of ${replay.handle}` });
    const board = new Board({ columns: replay.columns, bouquet: replay.bouquet }, { profile: this.info.profile });
    let next = 0;
    const step = () => {
      view.render(board, null, false);
      const done = next === replay.moves.length ? ` — ${resultText(replay.result)}` : "";
      caption.textContent = t("web.daily.progress", { done: next, total: replay.moves.length }) + done;
      if (next >= replay.moves.length) return;
      const wait = replay.times[next] - (next ? replay.times[next - 1] : 0);
      this.replayTimer = setTimeout(() => {
        board.play(parseMove(replay.moves[next]));
        next += 1;
        step();
      }, Math.min(wait, 3000));
    };
    step();
  }

  /** A ghost race against a finished day's attempt: the race page, with the ghost in the opponent's seat. */
  async ghost(handle) {
    try {
      const seated = await this.conn.ghostRace("daily", { day: this.info.day, handle });
      this.app.navigate(`/race/${seated.race.race}`, { seated });
    } catch (error) {
      this.say(errorText(error));
    }
  }

  say(text) {
    const status = this.root.querySelector(".daily-status") || this.root.querySelector(".own-attempt");
    if (status) status.textContent = text;
  }
}
