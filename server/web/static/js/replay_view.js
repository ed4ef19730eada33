// A finished race (/replay/<id>): both boards, step forward and back, play at the race's own pace or faster,
// jump to any move; the move list beside. Each position is rebuilt from the race's event log.
// The post-race analysis (get_analysis) marks where each player lost the win in the move list, and the server's
// solver (solve_from) gives a winning line from any point of a player's line, to step through on that board.

import { BoardView } from "./board_view.js";
import { ServerError } from "./connection.js";
import { errorText } from "./refusals.js";
import { clockText, dealText, fill, h, settingsText } from "./dom.js";
import { moveLabel, parseMove } from "./engine.js";
import { playerText } from "./players.js";
import { RaceState } from "./race_state.js";
import { playerPanel, resultTable, verdictWords } from "./race_view.js";
import { t, tn } from "./i18n.js";

const SPEEDS = [1, 2, 4, 8, 16];
const ANALYSIS_RETRY_MS = 3000;
const ANALYSIS_TRIES = 40;

export function mountReplay(root, app, params) {
  const view = new ReplayView(root, app, params.race);
  view.start();
  return view;
}

class ReplayView {
  constructor(root, app, race) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.race = race;
    this.events = [];
    this.moves = [];
    this.position = 0;
    this.speed = 1;
    this.playing = null;
    this.analysis = null;
    this.line = null; // the winning line shown on one board: { slot, actions, verdict, line, step, from }
    this.mounted = true;
  }

  async start() {
    fill(this.root, h("p", { class: "loading" }, t("web.replay.loading")));
    try {
      let after = 0;
      for (;;) {
        const page = await this.conn.replayPage(this.race, after);
        this.info = page.race;
        this.events.push(...page.events);
        if (page.complete || !page.events.length) break;
        after = page.events[page.events.length - 1].seq;
      }
    } catch (error) {
      const text = errorText(error);
      const live = error instanceof ServerError && error.code === "not_finished";
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.replay.none")), h("p", { class: "error-text", role: "alert" }, text),
        live ? h("a", { class: "button", href: `/watch/${this.race}`, dataset: { link: "" } }, t("web.replay.watch_live")) : h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.to_lobby"))));
      return;
    }
    this.moves = this.events.map((event, index) => ({ event, index })).filter((item) => item.event.type === "move");
    this.build();
    this.show(0);
    const stored = this.events.find((event) => event.type === "analysis");
    if (stored) this.setAnalysis(stored.analysis);
    else this.loadAnalysis(ANALYSIS_TRIES);
  }

  unmount() {
    this.mounted = false;
    this.pause();
    clearTimeout(this.analysisRetry);
    window.removeEventListener("keydown", this.keys);
  }

  /** Ask for the analysis until the background worker has stored it (a race just finished is analysed soon after). */
  async loadAnalysis(tries) {
    try {
      const report = await this.conn.analysis(this.race);
      if (report.analysis) return this.setAnalysis(report.analysis);
      fill(this.analysisPanel, h("p", { class: "analysis pending" }, t("web.replay.analysing")));
      if (this.mounted && tries > 1) this.analysisRetry = setTimeout(() => this.loadAnalysis(tries - 1), ANALYSIS_RETRY_MS);
    } catch (error) {
      fill(this.analysisPanel, h("p", { class: "analysis error-text" }, t("web.replay.no_analysis", { why: errorText(error) })));
    }
  }

  setAnalysis(analysis) {
    this.analysis = analysis;
    const name = (slot) => this.nameOf(slot);
    fill(this.analysisPanel,
      h("h2", {}, t("web.replay.analysis")),
      h("ul", { class: "analysis" }, analysis.players.map((p) => h("li", { dataset: { slot: String(p.slot), verdict: p.verdict } }, `${name(p.slot)}: ${verdictWords(p)}`))));
    for (const player of analysis.players) this.markLine(player);
    this.show(this.position);
  }

  /** The verdict on one player's line, on its moves in the list: the fatal move, the range of moves, or the end. */
  markLine(player) {
    const items = [...this.list.children].filter((item) => Number(item.dataset.slot) === player.slot);
    const bySeq = (action) => items.find((item) => Number(item.dataset.seq) === action + 1);
    const mine = this.isMine(player.slot);
    const who = this.nameOf(player.slot);
    const said = (key, params = {}) => t(mine ? `${key}_you` : key, { who, ...params });
    const note = (item, text, ...more) => item.append(h("span", { class: "note" }, text, ...more));
    if (player.verdict === "lost_at") {
      const item = bySeq(player.fatal_action);
      if (!item) return;
      item.classList.add("fatal");
      item.dataset.fatal = "";
      const before = Number(item.dataset.position) - 1;
      note(item, said("web.replay.lost_here", { move: moveLabel(player.fatal_move) }),
        player.continuation ? h("button", { class: "link", dataset: { action: "fatal-line" }, onclick: (event) => {
          event.stopPropagation();
          this.show(before);
          this.openLine({ slot: player.slot, actions: player.fatal_action, verdict: "solved", line: player.continuation, from: t("web.replay.from_analysis") });
        } }, t("web.replay.winning_instead")) : null);
    } else if (player.verdict === "lost_between") {
      const range = items.filter((item) => Number(item.dataset.seq) - 1 >= player.first_action && Number(item.dataset.seq) - 1 <= player.last_action);
      range.forEach((item) => item.classList.add("fatal-range"));
      if (range.length) note(range[0], said("web.replay.lost_between", { first: player.first_action + 1, last: player.last_action + 1 }));
    } else if (player.verdict === "still_winnable" && items.length) {
      note(items[items.length - 1], said("web.replay.still_winnable"));
      items[items.length - 1].classList.add("still-winnable");
    }
  }

  /** Whether the seat `slot` is the viewer's own. */
  isMine(slot) {
    const player = this.info.players.find((p) => p.slot === slot);
    return Boolean(player && this.conn.session && player.player === this.conn.session.player);
  }

  /** A player's name ("player 2" for a seat nobody took). */
  nameOf(slot) {
    const player = this.info.players.find((p) => p.slot === slot);
    const unnamed = t("web.replay.player_n", { number: slot + 1 });
    return playerText(player || { name: unnamed, account: unnamed });
  }

  /** "your position after 5 actions", "the position of Bob after 1 action", "the deal". */
  positionText(slot, actions) {
    if (!actions) return t("web.replay.the_deal");
    return tn(this.isMine(slot) ? "web.replay.your_position" : "web.replay.position_of", actions, { who: this.nameOf(slot) });
  }

  /** How many actions the player of `slot` had made after `position` moves of the race. */
  actionsAt(slot, position) {
    for (let i = position - 1; i >= 0; i--) if (this.moves[i].event.slot === slot) return this.moves[i].event.move_seq;
    return 0;
  }

  /** Ask the server's solver for a winning line from the player's position at the current point of the replay. */
  async solveFromHere(slot) {
    const actions = this.actionsAt(slot, this.position);
    const asked = this.position;
    this.line = null;
    fill(this.linePanel, h("p", { class: "pending", dataset: { state: "asking" } }, t("web.replay.asking", { where: this.positionText(slot, actions) })));
    try {
      const answer = await this.conn.solveFrom(this.race, slot, actions);
      if (this.position !== asked) return; // the viewer moved on meanwhile
      this.openLine({ slot, actions, verdict: answer.verdict, line: answer.line, from: t(answer.cached ? "web.replay.from_solver_cached" : "web.replay.from_solver"), budgetMs: answer.budget_ms });
    } catch (error) {
      fill(this.linePanel, h("p", { class: "error-text", role: "alert", dataset: { state: "refused" } }, errorText(error)));
    }
  }

  openLine(line) {
    this.line = { ...line, step: 0, at: this.position };
    this.renderLine();
  }

  closeLine() {
    this.line = null;
    fill(this.linePanel);
    this.show(this.position);
  }

  stepLine(step) {
    if (!this.line) return;
    this.line.step = Math.max(0, Math.min(this.line.line.length, step));
    this.renderLine();
  }

  /** The line panel, and the board of its player: the position it starts from plus the line's first `step` moves. */
  renderLine() {
    const line = this.line;
    const where = this.positionText(line.slot, line.actions);
    const verdictText = {
      solved: () => (line.line.length ? tn("web.replay.line_solved", line.line.length, { where, from: line.from }) : t("web.replay.line_won", { where })),
      unsolvable: () => t("web.replay.line_unsolvable", { where }),
      unknown: () => t("web.replay.line_unknown", { where, seconds: (line.budgetMs || 0) / 1000 }),
    }[line.verdict]?.() || line.verdict;
    const list = h("ol", { class: "solution-line" }, line.line.map((move, index) =>
      h("li", { class: index < line.step ? "played" : index === line.step ? "next" : "", dataset: { step: String(index + 1) }, onclick: () => this.stepLine(index + 1) }, h("span", { class: "step" }, `${index + 1}.`), moveLabel(move))));
    fill(this.linePanel,
      h("div", { class: "line-view", dataset: { slot: String(line.slot), verdict: line.verdict, step: String(line.step) } },
        h("p", { class: "line-verdict" }, verdictText),
        line.line.length ? h("div", { class: "transport" },
          h("button", { dataset: { action: "line-back" }, onclick: () => this.stepLine(line.step - 1), "aria-label": t("web.replay.line_back_label") }, t("web.replay.line_back")),
          h("button", { dataset: { action: "line-step" }, onclick: () => this.stepLine(line.step + 1), "aria-label": t("web.replay.line_step_label") }, t("web.replay.line_step")),
          h("button", { dataset: { action: "line-end" }, onclick: () => this.stepLine(line.line.length), "aria-label": t("web.replay.line_end_label") }, t("web.replay.line_end")),
          h("span", { class: "line-counter" }, `${line.step} / ${line.line.length}`)) : null,
        list,
        h("button", { dataset: { action: "line-close" }, onclick: () => this.closeLine() }, t("web.replay.back_to_race"))));
    const board = this.stateAt(line.at).boards[line.slot];
    for (const move of line.line.slice(0, line.step)) board.play(parseMove(move));
    this.boards[line.slot].render(board);
    this.tables[line.slot].classList.add("on-line");
  }

  /** The race after `position` moves (of both players, in the order they were played). */
  stateAt(position) {
    const state = new RaceState({ ...this.info, status: "waiting", seed: null, start_at: null, deadline: null, players: [], watchers: 0 }, null);
    const end = position < this.moves.length ? this.moves[position].index : this.events.length;
    for (let i = 0; i < end; i++) state.apply(this.events[i]);
    return state;
  }

  build() {
    document.title = `${t("web.replay.title", { race: this.race })} · Flower Garden Race`;
    this.header = h("div", { class: "race-header" },
      h("div", { class: "race-title" }, h("h1", {}, t("web.replay"), " ", h("code", {}, this.race))),
      h("div", { class: "race-settings" }, settingsText(this.info.settings), h("span", { class: "deal-text" }, dealText(this.info))));
    this.panels = [0, 1].map(() => h("div", { class: "player-slot" }));
    this.tables = [0, 1].map((slot) => h("div", { class: "table", dataset: { slot: String(slot) } }));
    this.boards = this.tables.map((table, slot) => new BoardView(table, { interactive: false, label: t("web.board.of_player", { number: slot + 1 }) }));
    this.slider = h("input", { type: "range", min: "0", max: String(this.moves.length), value: "0", "aria-label": t("web.replay.jump"), oninput: (e) => this.show(Number(e.target.value)) });
    this.counter = h("span", { class: "counter" });
    this.playButton = h("button", { dataset: { action: "play" }, onclick: () => (this.playing ? this.pause() : this.play()) }, t("web.replay.play"));
    const speed = h("select", { "aria-label": t("web.replay.speed"), onchange: (e) => (this.speed = Number(e.target.value)) }, SPEEDS.map((s) => h("option", { value: String(s) }, `${s}×`)));
    this.list = h("ol", { class: "move-list" });
    this.analysisPanel = h("section", { class: "analysis-panel" }, h("p", { class: "analysis pending" }, t("web.replay.loading_analysis")));
    this.linePanel = h("section", { class: "line-panel" });
    const names = (slot) => this.nameOf(slot);
    this.moves.forEach((item, position) => {
      const event = item.event;
      this.list.append(h("li", { dataset: { position: String(position + 1), slot: String(event.slot), seq: String(event.move_seq) }, onclick: () => this.show(position + 1) },
        h("span", { class: "when" }, clockText(event.at - this.startAt())), h("span", { class: "who" }, names(event.slot)), h("span", { class: "what" }, moveLabel(event.move))));
    });
    this.footer = h("div", { class: "watch-footer" });
    this.keys = (event) => {
      if (event.target.closest && event.target.closest("input, select")) return;
      if (event.key === "ArrowRight") this.show(this.position + 1);
      if (event.key === "ArrowLeft") this.show(this.position - 1);
    };
    window.addEventListener("keydown", this.keys);
    fill(this.root, h("div", { class: "replay-page", dataset: { race: this.race } }, this.header,
      h("div", { class: "transport" },
        h("button", { dataset: { action: "start" }, onclick: () => this.show(0), "aria-label": t("web.replay.to_start") }, t("web.replay.start")),
        h("button", { dataset: { action: "back" }, onclick: () => this.show(this.position - 1), "aria-label": t("web.replay.step_back") }, "◀"),
        this.playButton,
        h("button", { dataset: { action: "step" }, onclick: () => this.show(this.position + 1), "aria-label": t("web.replay.step_forward") }, "▶|"),
        h("button", { dataset: { action: "end" }, onclick: () => this.show(this.moves.length), "aria-label": t("web.replay.to_end") }, t("web.replay.end")),
        speed, this.slider, this.counter),
      h("div", { class: "replay-body" },
        h("div", { class: "replay-main" },
          h("div", { class: "duel" }, [0, 1].map((slot) => h("div", { class: "side", dataset: { slot: String(slot) } }, this.panels[slot], this.tables[slot],
            h("button", { class: "solve-from", dataset: { action: "solve-from", slot: String(slot) }, onclick: () => this.solveFromHere(slot) }, t("web.replay.solve_from"))))),
          this.linePanel),
        h("aside", { class: "moves-panel" }, this.analysisPanel, h("h2", {}, t("web.result.moves")), this.list)),
      this.footer));
  }

  startAt() {
    const countdown = this.events.find((event) => event.type === "countdown");
    return countdown ? countdown.start_at : this.events.length ? this.events[0].at : 0;
  }

  show(position) {
    this.position = Math.max(0, Math.min(this.moves.length, position));
    if (this.line && this.line.at !== this.position) {
      this.line = null; // a line belongs to the point it was asked at
      fill(this.linePanel);
    }
    const state = this.stateAt(this.position);
    if (!state.analysis) state.analysis = this.analysis;
    const at = this.position ? this.moves[this.position - 1].event.at : this.startAt();
    for (const slot of [0, 1]) {
      fill(this.panels[slot], playerPanel(state, slot, at, null));
      this.tables[slot].classList.remove("on-line");
      this.boards[slot].render(state.boards[slot]);
    }
    if (this.line) this.renderLine();
    this.slider.value = String(this.position);
    fill(this.counter, t("web.replay.counter", { position: this.position, total: this.moves.length }));
    this.counter.dataset.position = String(this.position);
    for (const item of this.list.children) item.classList.toggle("current", Number(item.dataset.position) === this.position);
    this.list.querySelector(".current")?.scrollIntoView({ block: "nearest" });
    fill(this.footer, state.result ? resultTable(state, { replayHint: false }) : null);
    if (this.position >= this.moves.length) this.pause();
  }

  play() {
    if (this.position >= this.moves.length) this.show(0);
    this.playButton.textContent = t("web.replay.pause");
    const next = () => {
      if (this.position >= this.moves.length) return this.pause();
      const previous = this.position ? this.moves[this.position - 1].event.at : this.startAt();
      const wait = Math.max(0, this.moves[this.position].event.at - previous) / this.speed;
      this.playing = setTimeout(() => {
        this.show(this.position + 1);
        if (this.playing) next();
      }, wait);
    };
    this.playing = true;
    next();
  }

  pause() {
    if (this.playing && this.playing !== true) clearTimeout(this.playing);
    this.playing = null;
    if (this.playButton) this.playButton.textContent = t("web.replay.play");
  }
}
