// Spectating (/watch/<id>): both boards drawn and updated move by move, after the race's spectator delay.
// A late joiner starts from the delayed snapshot (`watching`); later `move` events advance each board, the moved
// card sliding to where it went as it does for the player (feel.js; not under prefers-reduced-motion).

import { BoardView } from "./board_view.js";
import { ServerError } from "./connection.js";
import { errorText } from "./refusals.js";
import { closedWhy, dealText, fill, h, settingsText, watchedBoardEmptyText, watchedStatusColour, watchedStatusNote, watchedStatusText } from "./dom.js";
import { RaceState } from "./race_state.js";
import { parseMove } from "./engine.js";
import { cardPlaces, fly } from "./feel.js";
import { clockLine, playerPanel, resultTable } from "./race_view.js";
import { t } from "./i18n.js";

export function mountWatch(root, app, params) {
  const view = new WatchView(root, app, params.race);
  view.start();
  return view;
}

class WatchView {
  constructor(root, app, race) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.race = race;
    this.state = null;
    this.delay = 0;
    this.timer = setInterval(() => this.tick(), 500);
  }

  async start() {
    fill(this.root, h("p", { class: "loading" }, t("web.watch.joining")));
    let watching;
    try {
      watching = await this.conn.watch(this.race);
    } catch (error) {
      const text = errorText(error);
      const seated = error instanceof ServerError && error.code === "already_seated";
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.watch.cannot")), h("p", { class: "error-text", role: "alert" }, text),
        seated ? h("a", { class: "button", href: `/race/${this.race}`, dataset: { link: "" } }, t("web.watch.play_it")) : h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.to_lobby"))));
      return;
    }
    const state = RaceState.fromWatching(watching);
    this.statusNow = watching.status_now; // the snapshot is one delay old: the race may have started or ended since
    if (state.status === "finished") await this.readResult(state);
    this.app.track(state);
    this.show(state, watching.delay_ms);
  }

  /** A race that ended more than a delay ago: its snapshot has the final boards but not the result event (the
   * winner, the time it ended): read that last event from the replay, which is open once a race is over. */
  async readResult(state) {
    try {
      const page = await this.conn.replayPage(this.race, Math.max(0, state.lastSeq - 1));
      const result = page.events.find((event) => event.type === "result");
      if (result) state.on_result(result);
    } catch {
      // the page shows the final boards without the result
    }
  }

  show(state, delay) {
    this.state = state;
    this.delay = delay;
    this.offEvents = this.app.listen(this.race, (event) => this.seen(event));
    this.offResumed = this.conn.on("resumed", (resumed) => this.resumed(resumed.watching.get(this.race)));
    this.build();
    this.render();
  }

  /** An event of the race: the page drawn again, and a move's card sliding from where it was drawn before. */
  seen(event) {
    const move = event.type === "move" ? parseMove(event.move) : null;
    const board = move && move.card ? this.boards[event.slot] : null;
    const places = board ? cardPlaces(board.root) : null;
    this.render();
    if (board) fly(board.root, places, move.card);
  }

  unmount() {
    clearInterval(this.timer);
    if (this.state) {
      this.offEvents();
      this.offResumed();
      this.app.forget(this.race);
      this.conn.unwatch(this.race).catch(() => {});
    }
  }

  /** The connection came back and watched again: the new reply's `status_now` is how the race stands now (it may
   * have started or ended while the page was away), not the first reply's. */
  resumed(watching) {
    if (!watching) return;
    this.statusNow = watching.status_now;
    this.render();
  }

  /** What the spectators see is `delay` behind: their clock runs behind too. */
  now() {
    return this.conn.serverNow() - this.delay;
  }

  build() {
    document.title = `${t("web.watch.watching", { race: this.race })} · Flower Garden Race`;
    this.header = h("div", { class: "race-header" });
    this.panels = [0, 1].map(() => h("div", { class: "player-slot" }));
    this.tables = [0, 1].map((slot) => h("div", { class: "table", dataset: { slot: String(slot) } }));
    this.boards = this.tables.map((table, slot) => new BoardView(table, { interactive: false, label: t("web.board.of_player", { number: slot + 1 }), emptyText: () => watchedBoardEmptyText(this.state.status, this.statusNow, this.delay) }));
    this.footer = h("div", { class: "watch-footer" });
    fill(this.root, h("div", { class: "watch-page", dataset: { race: this.race } }, this.header,
      h("div", { class: "duel" }, [0, 1].map((slot) => h("div", { class: "side", dataset: { slot: String(slot) } }, this.panels[slot], this.tables[slot]))),
      this.footer));
  }

  tick() {
    if (!this.state || !this.header) return;
    this.header.querySelector(".clock-line")?.replaceWith(clockLine(this.state, this.now(), true));
  }

  render() {
    const state = this.state;
    const now = this.now();
    const note = watchedStatusNote(state.status, this.statusNow, this.delay);
    fill(this.header,
      h("div", { class: "race-title" }, h("h1", {}, t("web.watch.watching_title"), " ", h("code", {}, state.race)), h("span", { class: `status status-${watchedStatusColour(state.status, this.statusNow)}`, dataset: { status: state.status } }, watchedStatusText(state.status, this.statusNow, this.delay))),
      h("div", { class: "race-settings" }, settingsText(state.settings), h("span", { class: "deal-text" }, dealText(state)), h("span", { class: "delay" }, ` · ${t("web.watch.delay", { seconds: Math.round(this.delay / 1000) })}`)),
      clockLine(state, now, true),
    );
    for (const slot of [0, 1]) {
      // A race under way or over has both seats taken: one not seen yet is so only because of the delay.
      const unseen = note && !state.players[slot].name;
      fill(this.panels[slot], unseen ? h("div", { class: "player empty" }, h("span", { class: "name" }, t("web.watch.seated_late", { seconds: Math.round(this.delay / 1000) }))) : playerPanel(state, slot, now, null));
      this.boards[slot].render(state.boards[slot]);
    }
    const replayNow = this.statusNow === "finished" ? h("a", { class: "button", href: `/replay/${state.race}`, dataset: { link: "" } }, t("web.watch.replay_now")) : null;
    if (note) fill(this.footer, h("p", { class: "info lag-note" }, note), replayNow);
    else if (state.result) fill(this.footer, resultTable(state), h("a", { class: "button", href: `/replay/${state.race}`, dataset: { link: "" } }, t("web.watch.replay_this")));
    else if (state.status === "finished") fill(this.footer, h("p", {}, t("web.watch.over")), h("a", { class: "button", href: `/replay/${state.race}`, dataset: { link: "" } }, t("web.watch.replay_it")));
    else if (state.status === "closed") fill(this.footer, h("p", { class: "closed-reason" }, t("web.race.closed_why", { why: closedWhy(state) })));
    else fill(this.footer, !state.boards[0] ? h("p", { class: "info" }, t("web.watch.boards_at_start")) : null);
  }
}
