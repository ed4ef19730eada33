// A finished race (/replay/<id>): both boards, step forward and back, play at the race's own pace or faster,
// jump to any move; the move list beside. Each position is rebuilt from the race's event log.

import { BoardView } from "./board_view.js";
import { ServerError, errorText } from "./connection.js";
import { clockText, dealText, fill, h, settingsText } from "./dom.js";
import { cardLabel, parseMove } from "./engine.js";
import { playerText } from "./players.js";
import { RaceState } from "./race_state.js";
import { playerPanel, resultTable } from "./race_view.js";

const SPEEDS = [1, 2, 4, 8, 16];

export function mountReplay(root, app, params) {
  const view = new ReplayView(root, app, params.race);
  view.start();
  return view;
}

function moveLabel(text) {
  const move = parseMove(text);
  return move && move.card ? `${cardLabel(move.card)} ${move.from}→${move.to}` : text;
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
  }

  async start() {
    fill(this.root, h("p", { class: "loading" }, "Loading the replay…"));
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
      fill(this.root, h("div", { class: "panel entry" }, h("h2", {}, "No replay"), h("p", { class: "error-text", role: "alert" }, text),
        live ? h("a", { class: "button", href: `/watch/${this.race}`, dataset: { link: "" } }, "Watch it live") : h("a", { class: "button", href: "/", dataset: { link: "" } }, "Back to the lobby")));
      return;
    }
    this.moves = this.events.map((event, index) => ({ event, index })).filter((item) => item.event.type === "move");
    this.build();
    this.show(0);
  }

  unmount() {
    this.pause();
    window.removeEventListener("keydown", this.keys);
  }

  /** The race after `position` moves (of both players, in the order they were played). */
  stateAt(position) {
    const state = new RaceState({ ...this.info, status: "waiting", seed: null, start_at: null, deadline: null, players: [], watchers: 0 }, null);
    const end = position < this.moves.length ? this.moves[position].index : this.events.length;
    for (let i = 0; i < end; i++) state.apply(this.events[i]);
    return state;
  }

  build() {
    document.title = `Replay ${this.race} · Flower Garden Race`;
    this.header = h("div", { class: "race-header" },
      h("div", { class: "race-title" }, h("h1", {}, "Replay ", h("code", {}, this.race))),
      h("div", { class: "race-settings" }, settingsText(this.info.settings), h("span", { class: "deal-text" }, dealText(this.info))));
    this.panels = [0, 1].map(() => h("div", { class: "player-slot" }));
    this.tables = [0, 1].map((slot) => h("div", { class: "table", dataset: { slot: String(slot) } }));
    this.boards = this.tables.map((table, slot) => new BoardView(table, { interactive: false, label: `board of player ${slot + 1}` }));
    this.slider = h("input", { type: "range", min: "0", max: String(this.moves.length), value: "0", "aria-label": "jump to move", oninput: (e) => this.show(Number(e.target.value)) });
    this.counter = h("span", { class: "counter" });
    this.playButton = h("button", { dataset: { action: "play" }, onclick: () => (this.playing ? this.pause() : this.play()) }, "▶ Play");
    const speed = h("select", { "aria-label": "speed", onchange: (e) => (this.speed = Number(e.target.value)) }, SPEEDS.map((s) => h("option", { value: String(s) }, `${s}×`)));
    this.list = h("ol", { class: "move-list" });
    const names = (slot) => playerText(this.info.players.find((p) => p.slot === slot) || { name: `player ${slot + 1}`, account: `player ${slot + 1}` });
    this.moves.forEach((item, position) => {
      const event = item.event;
      this.list.append(h("li", { dataset: { position: String(position + 1), slot: String(event.slot) }, onclick: () => this.show(position + 1) },
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
        h("button", { dataset: { action: "start" }, onclick: () => this.show(0), "aria-label": "to the start" }, "« Start"),
        h("button", { dataset: { action: "back" }, onclick: () => this.show(this.position - 1), "aria-label": "step back" }, "◀"),
        this.playButton,
        h("button", { dataset: { action: "step" }, onclick: () => this.show(this.position + 1), "aria-label": "step forward" }, "▶|"),
        h("button", { dataset: { action: "end" }, onclick: () => this.show(this.moves.length), "aria-label": "to the end" }, "End »"),
        speed, this.slider, this.counter),
      h("div", { class: "replay-body" },
        h("div", { class: "duel" }, [0, 1].map((slot) => h("div", { class: "side", dataset: { slot: String(slot) } }, this.panels[slot], this.tables[slot]))),
        h("aside", { class: "moves-panel" }, h("h2", {}, "Moves"), this.list)),
      this.footer));
  }

  startAt() {
    const countdown = this.events.find((event) => event.type === "countdown");
    return countdown ? countdown.start_at : this.events.length ? this.events[0].at : 0;
  }

  show(position) {
    this.position = Math.max(0, Math.min(this.moves.length, position));
    const state = this.stateAt(this.position);
    const at = this.position ? this.moves[this.position - 1].event.at : this.startAt();
    for (const slot of [0, 1]) {
      fill(this.panels[slot], playerPanel(state, slot, at, null));
      this.boards[slot].render(state.boards[slot]);
    }
    this.slider.value = String(this.position);
    fill(this.counter, `move ${this.position} / ${this.moves.length}`);
    this.counter.dataset.position = String(this.position);
    for (const item of this.list.children) item.classList.toggle("current", Number(item.dataset.position) === this.position);
    this.list.querySelector(".current")?.scrollIntoView({ block: "nearest" });
    fill(this.footer, state.result ? resultTable(state) : null);
    if (this.position >= this.moves.length) this.pause();
  }

  play() {
    if (this.position >= this.moves.length) this.show(0);
    this.playButton.textContent = "⏸ Pause";
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
    if (this.playButton) this.playButton.textContent = "▶ Play";
  }
}
