// The race page (/race/<id>, /invite/<code>): the player's own table, the opponent's progress, the clock,
// watchers and presence, the buttons, keyboard entry, and the result with a rematch button.

import { BoardView } from "./board_view.js";
import { ServerError } from "./connection.js";
import { clockText, closedWhy, dealText, fill, h, endingText, settingsText, statusText, timeLimitText } from "./dom.js";
import { cardLabel, moveLabel, moveText, parseCard, replayLayout } from "./engine.js";
import { ABORT_REASONS, abortedBadge, botLevelSelect, playerLabel, playerText, ratingChangeCell } from "./players.js";
import { dealCheckLine } from "./fair_deal.js";
import { FULL, RaceState } from "./race_state.js";
import { typingInField } from "./keyboard_help.js";
import { errorText, refusalNotice } from "./refusals.js";
import { cardPlaces, celebrate, cueTitle, fly, notify, notifySwitch, play, soundSwitch } from "./feel.js";

const RESULT_REASONS = {
  cleared: "cleared the board first",
  count: "more cards on the foundations",
  reached_first: "same count, reached first",
  abandoned: "the opponent abandoned the rated race",
  draw: "same count at the same moment",
};
const MESSAGE_MS = 8000;
/** The opponent's progress that sounds a cue: each quarter of the pack on the foundations. */
const MILESTONE = 13;
/** The race page's cue words (one place, for the translations). */
const CUES = {
  joined: (name) => `${name} joined`,
  started: "The race started",
};

/** A player's line: name, presence, a progress bar of cards on the foundations, how the attempt stands. */
export function playerPanel(state, slot, now, label, connection = "connected") {
  const player = state.players[slot];
  if (!player.name) return h("div", { class: "player empty", dataset: { slot: String(slot) } }, h("span", { class: "name" }, "waiting for a player…"));
  const percent = Math.round((100 * player.count) / FULL);
  let presence = h("span", { class: "presence on", title: "connected" }, "online");
  if (slot === state.mySlot && connection !== "connected") {
    presence = h("span", { class: "presence off", title: "this page's connection" }, connection);
  } else if (slot !== state.mySlot && state.mySlot !== null && connection !== "connected") {
    // Offline, this page cannot know whether the opponent is there: it never says "online" then.
    presence = h("span", { class: "presence unknown", title: "this page is not connected: the opponent's presence is not known" }, "not known");
  } else if (slot !== state.mySlot && !player.connected) {
    const grace = player.grace_until ? ` · ${clockText(player.grace_until - now)} to come back` : "";
    presence = h("span", { class: "presence off", title: "disconnected" }, `disconnected${grace}`);
  }
  return h(
    "div",
    { class: `player${slot === state.mySlot ? " me" : ""}`, dataset: { slot: String(slot) } },
    h("div", { class: "player-line" }, h("span", { class: "name" }, playerLabel(player)), label ? h("span", { class: "tag" }, label) : null, presence),
    h("div", { class: "progress", role: "progressbar", "aria-label": `${playerText(player)}: cards on the foundations`, "aria-valuemin": "0", "aria-valuemax": "52", "aria-valuenow": String(player.count) }, h("div", { class: "bar", style: `width:${percent}%` })),
    h(
      "div",
      { class: "player-stats" },
      h("span", { class: "count", dataset: { count: String(player.count) } }, `${player.count} on foundations`),
      h("span", {}, `${player.left} left`),
      h("span", { class: "state" }, endingText(player.state)),
    ),
  );
}

/** How long before a time limit's end the clock turns into a red countdown of the time left. */
export const LOW_TIME_MS = 30000;

/** The watchers line: a spectator's page counts its own viewer (its snapshot's count is one delay old). */
function watchersText(state, watchingHere) {
  if (!watchingHere) return `${state.watchers} watching`;
  const others = Math.max(0, state.watchers - 1);
  return others ? `you and ${others} more watching` : "you are watching";
}

/**
 * The clock line: time since the start (or to the start), the time limit, the watcher count. In the last
 * LOW_TIME_MS of a running race's time limit the clock counts down the time left, in red (`low-time`).
 * `watchingHere`: this page is a spectator's.
 */
export function clockLine(state, now, watchingHere = false) {
  let clock = "–:––";
  const until = state.result ? state.result.at : now;
  const left = state.deadline ? Math.max(0, state.deadline - Math.max(until, state.startAt || until)) : null;
  const low = left !== null && !state.result && state.status === "running" && state.startAt && now >= state.startAt && left <= LOW_TIME_MS;
  if (state.startAt && now < state.startAt) clock = `starts in ${Math.ceil((state.startAt - now) / 1000)}`;
  else if (low) clock = `${clockText(left)} left`;
  else if (state.startAt) clock = clockText(until - state.startAt);
  const limitText = state.settings.time_limit ? timeLimitText(state.settings.time_limit) : "no time limit";
  const remaining = left !== null ? ` · ${clockText(left)} left` : "";
  const limit = h("span", { class: "limit" }, limitText + remaining);
  return h(
    "div",
    { class: `clock-line${low ? " low-time" : ""}` },
    h("span", { class: "clock", "aria-label": low ? "time left" : "race clock" }, clock),
    limit,
    h("span", { class: "watchers", title: "spectators" }, watchersText(state, watchingHere)),
  );
}

/**
 * The result: winner, reason, and per player count, time, moves and undos (and the rating change of a rated race),
 * then the deal check and the analysis (`replayHint`: say that the replay marks the moves; not on the replay itself).
 */
export function resultTable(state, { replayHint = true } = {}) {
  const result = state.result;
  const winner = result.winner === null || result.winner === undefined ? null : playerText(result.players.find((p) => p.slot === result.winner) || state.players[result.winner]);
  const headline = winner === null ? "Draw" : state.mySlot === null ? `${winner} wins` : result.winner === state.mySlot ? "You win!" : `${winner} wins`;
  const rated = result.players.some((player) => player.rating);
  return h(
    "div",
    { class: "result" },
    h("h2", { class: "headline" }, headline),
    h("p", { class: "reason" }, RESULT_REASONS[result.reason] || result.reason, rated ? " · rated race" : null),
    result.aborted ? h("p", { class: "aborted-line" }, abortedBadge(result.aborted), ` — ${ABORT_REASONS[result.aborted] || result.aborted}; no rating changed.`) : null,
    h(
      "table",
      { class: "result-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "Player"), h("th", {}, "Cards"), h("th", {}, "Time"), h("th", {}, "Moves"), h("th", {}, "Undos"), h("th", {}, "Ended"), rated ? h("th", {}, "Rating") : null)),
      h(
        "tbody",
        {},
        result.players.map((player) =>
          h(
            "tr",
            { class: player.slot === result.winner ? "winner" : "", dataset: { slot: String(player.slot) } },
            h("td", {}, playerLabel(player)),
            h("td", {}, `${player.count}/52`),
            h("td", {}, clockText(player.time_ms)),
            h("td", {}, String(player.moves)),
            h("td", {}, String(player.undos)),
            h("td", {}, endingText(player.ended)),
            rated ? h("td", {}, ratingChangeCell(player.rating)) : null,
          ),
        ),
      ),
    ),
    result.seed !== null && result.seed !== undefined ? h("p", { class: "reveal" }, `The deal was seed ${result.seed} (revealed with the result).`) : null,
    dealCheckLine(state),
    analysisLines(state, replayHint),
  );
}

const ANALYSIS_VERDICTS = {
  won: () => "cleared the board",
  still_winnable: () => "was still winnable when the attempt ended",
  deal_not_winnable: () => "the deal could not be won",
  unknown: () => "undecided within the analysis budget",
  lost_at: (p) => `lost the win at move ${p.fatal_action + 1}: ${moveLabel(p.fatal_move)}`,
  lost_between: (p) => `lost the win between moves ${p.first_action + 1} and ${p.last_action + 1}`,
};

/** One player's line in the post-race analysis, in words ("lost the win at move 10: 7♦ b→5"). */
export function verdictWords(player) {
  return (ANALYSIS_VERDICTS[player.verdict] || (() => player.verdict))(player);
}

/** The post-race analysis (an `analysis` event after the result): where each player lost the win. */
function analysisLines(state, replayHint) {
  const analysis = state.analysis;
  if (!analysis) return state.result ? h("p", { class: "analysis pending" }, "Analysing where the win slipped away …") : null;
  return [
    h(
      "ul",
      { class: "analysis" },
      analysis.players.map((p) => h("li", { dataset: { slot: String(p.slot), verdict: p.verdict } }, `${state.players[p.slot].name}: ${verdictWords(p)}`)),
    ),
    replayHint ? h("p", { class: "analysis-hint" }, h("a", { href: `/replay/${state.race}`, dataset: { link: "" } }, "On the replay"), ": these moves marked, and a winning line from any point.") : null,
  ];
}

export function mountRace(root, app, params) {
  const view = new RaceView(root, app, params);
  view.start();
  return view;
}

class RaceView {
  constructor(root, app, params) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.params = params;
    this.state = null;
    this.pending = null;
    this.queue = [];
    this.typed = "";
    this.message = null;
    this.autoMove = localStorage.getItem("fg.automove") === "1";
    this.caughtUpSeq = 0;
    this.botSelect = botLevelSelect();
    this.timer = setInterval(() => this.tick(), 250);
    this.keys = (event) => this.keyDown(event);
    window.addEventListener("keydown", this.keys);
    this.offStatus = this.conn.on("status", () => this.render());
    this.resized = () => this.fitTable();
    window.addEventListener("resize", this.resized);
  }

  async start() {
    fill(this.root, h("p", { class: "loading" }, "Loading the race…"));
    const { race, code, seated, botLevel } = this.params;
    try {
      const known = race && this.app.stateOf(race);
      if (seated) {
        this.adopt(seated);
        if (botLevel) await this.summonBot(botLevel);
      } else if (code) this.adopt(await this.conn.joinInvite(code), true);
      else if (known && known.mySlot !== null) this.show(known); // opened again in this tab: already followed
      else await this.resume(race);
    } catch (error) {
      this.showEntryError(error, race);
    }
  }

  /**
   * A reply that seated this page (seated / queued): the state from its RaceInfo. A race already dealt (the
   * joiner's countdown) folds its events from the first: the countdown event carries the layout (the seed is
   * hidden until the result).
   */
  adopt(reply, replaceUrl = false) {
    const info = reply.race;
    const dealt = info.status !== "waiting" && info.status !== "closed";
    const state = dealt ? RaceState.forPlayer(info, reply.slot ?? 0) : new RaceState(info, reply.slot ?? 0);
    if (!dealt) state.lastSeq = info.event_seq;
    if (replaceUrl) history.replaceState({}, "", `/race/${info.race}`);
    this.show(state);
  }

  /** Opening a race page on a fresh connection (reload, closed tab, rematch): sync from event 1, fold the events. */
  async resume(race) {
    const synced = await this.conn.sync(race, 0);
    this.caughtUpSeq = synced.race.event_seq;
    this.show(RaceState.forPlayer(synced.race, synced.slot));
  }

  /**
   * After a missed action: a sync on this connection does not resend past events, so the state is rebuilt from
   * the reply (the race as it is, the board from the seed and the player's actions), keeping the result seen.
   */
  async rebuild() {
    const old = this.state;
    const synced = await this.conn.sync(old.race, old.lastSeq);
    const state = new RaceState(synced.race, synced.slot);
    state.lastSeq = synced.race.event_seq;
    if (synced.deal) {
      state.layout = synced.deal;
      state.boards[state.mySlot] = replayLayout(synced.deal, state.settings, synced.moves, synced.redeal_columns);
    }
    Object.assign(state, { result: old.result, analysis: old.analysis, rematchOffers: old.rematchOffers, newRace: old.newRace });
    this.show(state);
  }

  /**
   * Draw ``state``; with auto-move on, a race already under way plays its safe cards now: its `started` may have
   * been folded in from the events that arrived before the page (app.track), and no other event need follow.
   */
  show(state) {
    this.setState(state);
    this.render();
    this.maybeAutoMove();
  }

  setState(state) {
    this.offEvents?.();
    this.state = state;
    this.app.track(state);
    this.offEvents = this.app.listen(state.race, (event) => this.onEvent(event));
    this.app.remember(state);
  }

  /** Have the server seat a practice bot in this waiting race (the creator's; docs/PROTOCOL.md `summon_bot`). */
  async summonBot(level) {
    this.botComing = level;
    this.render();
    try {
      await this.conn.summonBot(this.state.race, level);
    } catch (error) {
      this.say(`No bot: ${errorText(error)}`, true);
    } finally {
      this.botComing = null;
      if (!this.unmounted) this.render();
    }
  }

  showEntryError(error, race) {
    if (error instanceof ServerError && error.code === "not_seated") {
      fill(
        this.root,
        h(
          "div",
          { class: "panel entry" },
          h("h2", {}, "You are not seated in this race"),
          h("p", {}, "Take the free seat if it is still open, or watch it."),
          h("div", { class: "actions" },
            h("button", { class: "primary", onclick: () => this.joinHere(race) }, "Join this race"),
            h("a", { class: "button", href: `/watch/${race}`, dataset: { link: "" } }, "Watch"),
          ),
          h("p", { class: "error-text", role: "alert" }),
        ),
      );
      return;
    }
    const text = errorText(error);
    fill(this.root, h("div", { class: "panel entry" }, h("h2", {}, "This race cannot be opened"), h("p", { class: "error-text", role: "alert" }, text), h("a", { class: "button", href: "/", dataset: { link: "" } }, "Back to the lobby")));
  }

  async joinHere(race) {
    try {
      this.adopt(await this.conn.join(race));
    } catch (error) {
      const slot = this.root.querySelector(".error-text");
      if (slot) slot.textContent = errorText(error);
    }
  }

  onEvent(event) {
    if (this.state.gaps) {
      this.rebuild().catch((error) => this.say(errorText(error), true)); // an action was missed
      return;
    }
    if (event.type === "race_closed" && event.reason === "paired" && event.new_race) {
      // Rated quick match seated this waiting player in another player's race: the server already sends its events.
      this.conn.follow(event.new_race, true);
      this.conn.playing.delete(this.state.race);
      this.app.forget(this.state.race);
      this.app.navigate(`/race/${event.new_race}`);
      return;
    }
    if (event.type === "rematch" && event.seq > this.caughtUpSeq) {
      this.app.navigate(`/race/${event.new_race}`);
      return;
    }
    if (event.type === "result") this.message = null;
    this.render();
    if (event.seq > this.caughtUpSeq) this.cue(event);
    this.maybeAutoMove();
  }

  /** The sound, title and notification of a race event as it happens (not of one replayed from the race's past). */
  cue(event) {
    const state = this.state;
    const mine = state.mySlot;
    if (event.type === "player_joined" && event.slot !== mine) {
      const text = CUES.joined(playerText(state.players[event.slot]));
      play("joined");
      cueTitle(text, this.plainTitle);
      notify(text);
    } else if (event.type === "started") {
      play("start");
      cueTitle(CUES.started, this.plainTitle);
      notify(CUES.started);
    } else if (event.type === "progress" && event.slot !== mine) {
      const reached = Math.floor(event.count / MILESTONE);
      if (reached > (this.milestone || 0)) play("milestone");
      this.milestone = Math.max(this.milestone || 0, reached);
    } else if (event.type === "result") {
      const won = mine !== null && event.winner === mine;
      play(won ? "win" : "result");
      if (won && !this.resultHidden) celebrate(this.layout.table);
    }
  }

  unmount() {
    this.unmounted = true;
    clearInterval(this.timer);
    this.offStatus();
    window.removeEventListener("resize", this.resized);
    window.removeEventListener("keydown", this.keys);
    const state = this.state;
    this.offEvents?.();
    if (state && state.status === "waiting" && state.mySlot === 0) {
      (this.params.queued ? this.conn.cancelQuickMatch() : this.conn.leave(state.race)).catch(() => {});
      this.app.forget(state.race);
    }
  }

  // --- playing ----------------------------------------------------------------------------------

  /** Whether this player can act now: the race is under way (the countdown over) and the attempt still on. */
  canPlayNow() {
    const state = this.state;
    return !!state && this.canPlay() && state.mySlot !== null && state.players[state.mySlot].state === "playing";
  }

  canPlay() {
    const state = this.state;
    return state && state.status === "running" || (state && state.status === "countdown" && this.conn.serverNow() >= state.startAt);
  }

  /** A move the player asked for (not auto-move): it also ends the pause of auto-move that an undo starts. */
  playerMove(move) {
    this.autoPaused = move.special === "undo";
    this.sendMove(move);
  }

  sendMove(move) {
    const state = this.state;
    if (!state || !state.myBoard) return;
    if (state.players[state.mySlot].state !== "playing") return this.say("Your attempt has ended.");
    if (!this.canPlay()) return this.say("Wait for the start.");
    this.queue.push(move);
    this.pump();
  }

  async pump() {
    if (this.pending || !this.queue.length) return;
    const move = this.queue.shift();
    const state = this.state;
    this.pending = move;
    this.render();
    const places = cardPlaces(this.boardView.root);
    try {
      const reply = await this.conn.move(state.race, moveText(move));
      state.applyMoved(reply);
      this.message = null;
      this.flight = move.card ? { card: move.card, places } : null;
      play("move");
      if (state.gaps) await this.rebuild();
    } catch (error) {
      this.queue = [];
      if (!this.overtaken(error)) {
        play("refusal");
        this.sayRefused(error, move, state.myBoard);
      }
    } finally {
      this.pending = null;
    }
    this.render();
    if (this.queue.length) this.pump();
    else this.maybeAutoMove();
  }

  maybeAutoMove() {
    const state = this.state;
    if (!this.autoMove || this.autoPaused || this.pending || this.queue.length || !state || !state.myBoard || !this.canPlay()) return;
    if (state.players[state.mySlot].state !== "playing" || state.result) return;
    const safe = state.myBoard.safeFoundationMove();
    if (safe) this.sendMove(safe);
  }

  async action(kind) {
    const state = this.state;
    try {
      if (kind === "undo" || kind === "redeal") return this.playerMove({ special: kind });
      if (kind === "resign" && !confirm("Resign this race? Your cards on the foundations still count.")) return;
      if (kind === "stuck" && !confirm("Declare yourself stuck? Your attempt ends now; your cards on the foundations still count.")) return;
      if (kind === "resign") await this.conn.resign(state.race);
      if (kind === "stuck") await this.conn.stuck(state.race);
      if (kind === "rematch") {
        const reply = await this.conn.rematch(state.race);
        if (this.unmounted) return;
        if (reply.type === "seated") return this.app.navigate(`/race/${reply.race.race}`, { seated: reply });
        this.say("Rematch offered: waiting for your opponent.");
      }
      if (kind === "leave") {
        await this.conn.leave(state.race);
        this.app.forget(state.race);
        return this.app.navigate("/");
      }
      if (kind === "cancel") {
        await this.conn.cancelQuickMatch();
        this.app.forget(state.race);
        return this.app.navigate("/");
      }
    } catch (error) {
      if (!this.overtaken(error)) this.sayRefused(error, null, null);
    }
  }

  /** A move or other action (`move` null: resign, stuck, rematch, leave, cancel) the server refused (in words, its
   * code in the notice's title and data-code) or that never reached it. */
  sayRefused(error, move, board) {
    if (!(error instanceof ServerError)) return this.say(`Not sent: ${errorText(error)}`, true);
    const refused = refusalNotice(error, move, board);
    this.say(refused.text, true, refused);
  }

  /** A move or resign refused with race_over once the result is shown: the result already says so. */
  overtaken(error) {
    return error instanceof ServerError && error.code === "race_over" && Boolean(this.state && this.state.result);
  }

  /** A message over the table for MESSAGE_MS; `refusal`: a refused move's code and detail (data-code, title). */
  say(text, isError = false, refusal = null) {
    const message = { text, isError, refusal };
    this.message = message;
    this.render();
    setTimeout(() => {
      if (this.message === message && !this.unmounted) {
        this.message = null;
        this.render();
      }
    }, MESSAGE_MS);
  }

  keyDown(event) {
    if (typingInField(event) || document.querySelector("dialog[open]")) return;
    if (event.ctrlKey || event.metaKey || event.altKey || !this.boardView) return;
    const key = event.key;
    if (key === "?") return; // the keyboard help (main.js)
    if (key === "Escape") {
      this.typed = "";
      this.boardView.select(null);
      return this.render();
    }
    if (key === "Backspace") {
      this.typed = this.typed.slice(0, -1);
      return this.render();
    }
    if (key.length !== 1 || key === " ") return;
    const selected = this.boardView.selected;
    const lower = key.toLowerCase();
    if (selected && /^[f1-6]$/.test(lower)) {
      this.typed = "";
      this.boardView.sendTo(selected, lower);
      return this.render();
    }
    this.typed = (this.typed + key).slice(-3);
    const card = parseCard(this.typed) || parseCard(this.typed.slice(-2));
    if (card) {
      this.typed = "";
      this.boardView.select(card);
      if (!this.boardView.selected) this.say(`${cardLabel(card)} is not available`, true);
    }
    event.preventDefault();
    this.render();
  }

  // --- drawing ----------------------------------------------------------------------------------

  tick() {
    if (!this.state) return;
    const now = this.conn.serverNow();
    const clock = this.root.querySelector(".clock-line");
    if (clock) clock.replaceWith(clockLine(this.state, now));
    if (!this.lowTimeSounded && this.root.querySelector(".clock-line.low-time")) {
      this.lowTimeSounded = true;
      if (this.state.mySlot !== null && this.state.players[this.state.mySlot].state === "playing") play("low_time");
    }
    const players = this.root.querySelector(".players");
    if (players && this.state.players.some((p) => !p.connected)) fill(players, this.playersOf(now));
    const countdown = this.root.querySelector(".countdown-overlay");
    if (countdown) {
      if (now >= this.state.startAt) this.render();
      else countdown.querySelector(".big").textContent = String(Math.ceil((this.state.startAt - now) / 1000));
    }
    if (this.state.status === "countdown" && now >= this.state.startAt && !this.started) {
      this.started = true;
      this.maybeAutoMove();
    }
  }

  playersOf(now) {
    const state = this.state;
    const mine = this.conn.status;
    return [playerPanel(state, state.mySlot, now, "you", mine), playerPanel(state, 1 - state.mySlot, now, "opponent", mine)];
  }

  render() {
    const state = this.state;
    if (!state) return;
    const now = this.conn.serverNow();
    this.plainTitle = `Race ${state.race} · Flower Garden Race`;
    if (!document.title.startsWith("▶ ")) document.title = this.plainTitle; // a cue stays until it is seen
    if (!this.layout) {
      this.layout = {
        header: h("div", { class: "race-header" }),
        players: h("div", { class: "players" }),
        notice: h("div", { class: "notice", role: "status", "aria-live": "polite" }),
        table: h("div", { class: "table" }),
        controls: h("div", { class: "controls" }),
      };
      fill(this.root, h("div", { class: "race-page", dataset: { race: state.race } }, Object.values(this.layout)));
      this.boardView = new BoardView(this.layout.table, { interactive: true, label: "your board", onMove: (move) => this.playerMove(move), onSelect: () => this.renderControls() });
    }
    const { header, players, notice, table } = this.layout;
    fill(header,
      h("div", { class: "race-title" }, h("h1", {}, "Race ", h("code", {}, state.race)), h("span", { class: `status status-${state.status}`, dataset: { status: state.status } }, statusText(state.status))),
      h("div", { class: "race-settings" }, settingsText(state.settings), h("span", { class: "deal-text" }, dealText(state)),
        state.commitment ? h("span", { class: "commitment", title: `SHA-256 commitment to the deal, published before the start: ${state.commitment}` }, ` · deal committed ${String(state.commitment).slice(0, 12)}…`) : null),
      clockLine(state, now),
    );
    fill(players, this.playersOf(now));
    this.boardView.render(state.myBoard, this.pending && this.pending.card, this.canPlayNow());
    if (this.flight) fly(this.boardView.root, this.flight.places, this.flight.card);
    this.flight = null;
    table.querySelector(".overlay")?.remove();
    const overlay = this.overlay(now);
    if (overlay) table.append(overlay);
    const refusal = this.message && this.message.refusal;
    fill(notice, this.message ? h("p", { class: this.message.isError ? "refusal" : "info", dataset: refusal ? { code: refusal.code } : {}, title: refusal ? refusal.title : null }, this.message.text) : null);
    this.renderControls();
    this.fitTable();
  }

  /** Size the table's cards to the screen: what is left of the window's height under the table's top, once the
   * controls below it and the page's padding are kept (docs/WEB.md "Fits the screen"). */
  fitTable() {
    if (!this.layout || !this.boardView) return;
    const { table, controls } = this.layout;
    const box = getComputedStyle(table);
    const main = getComputedStyle(this.root);
    const top = table.getBoundingClientRect().top + window.scrollY;
    const below = controls.offsetHeight + parseFloat(getComputedStyle(controls).marginTop) + parseFloat(main.paddingBottom);
    this.boardView.fit({
      width: table.clientWidth - parseFloat(box.paddingLeft) - parseFloat(box.paddingRight),
      height: window.innerHeight - top - below - parseFloat(box.paddingTop) - parseFloat(box.paddingBottom) - 4,
    });
  }

  overlay(now) {
    const state = this.state;
    if (state.status === "waiting") {
      const link = state.invite ? `${location.origin}/invite/${state.invite}` : `${location.origin}/race/${state.race}`;
      return h(
        "div",
        { class: "overlay waiting" },
        h("h2", {}, this.params.queued ? "Looking for an opponent…" : "Waiting for an opponent"),
        state.invite ? h("p", {}, "A private race: send this link to your opponent.") : h("p", {}, "Send this link, or wait for someone from the lobby."),
        h("div", { class: "share" },
          h("input", { class: "share-link", readonly: true, value: link, "aria-label": "invite link", onfocus: (e) => e.target.select() }),
          h("button", { onclick: (e) => this.copy(link, e.target) }, "Copy link"),
        ),
        state.invite ? h("p", { class: "invite-code" }, "Code ", h("code", {}, state.invite)) : null,
        notifySwitch(),
        this.botComing
          ? h("p", { class: "info bot-coming" }, `A level ${this.botComing} practice bot is taking the seat…`)
          : state.mySlot === 0 && !this.params.queued
            ? h("div", { class: "actions bot-call" }, h("span", {}, "Or race a practice bot:"), this.botSelect, h("button", { dataset: { action: "call-bot" }, onclick: () => this.summonBot(Number(this.botSelect.value)) }, "Call a bot"))
            : null,
        this.params.queued
          ? h("button", { class: "ghost", onclick: () => this.action("cancel") }, "Stop looking")
          : state.mySlot === 0 ? h("button", { class: "ghost", onclick: () => this.action("leave") }, "Close this race") : null,
      );
    }
    if (state.status === "countdown" && state.startAt && now < state.startAt) {
      return h("div", { class: "overlay countdown-overlay" }, h("p", {}, "Get ready"), h("div", { class: "big" }, String(Math.ceil((state.startAt - now) / 1000))));
    }
    if (state.status === "closed") {
      return h("div", { class: "overlay" }, h("h2", {}, "This race was closed"), h("p", { class: "closed-reason" }, `Why: ${closedWhy(state)}.`), h("a", { class: "button", href: "/", dataset: { link: "" } }, "Back to the lobby"));
    }
    if (state.result && !this.resultHidden) {
      const offered = state.rematchOffers.map((until) => until && until > now);
      const mine = offered[state.mySlot];
      const theirs = offered[1 - state.mySlot];
      return h(
        "div",
        { class: "overlay result-overlay" },
        resultTable(state),
        h("div", { class: "actions" },
          h("button", { class: "primary rematch", onclick: () => this.action("rematch") }, theirs ? "Accept rematch" : mine ? "Rematch offered…" : "Rematch"),
          h("a", { class: "button", href: `/replay/${state.race}`, dataset: { link: "" } }, "Replay"),
          h("a", { class: "button", href: "/", dataset: { link: "" } }, "Lobby"),
          h("button", { class: "ghost", dataset: { action: "hide-result" }, onclick: () => this.showResult(false) }, "Show the board"),
        ),
        theirs ? h("p", { class: "info" }, `${playerText(state.players[1 - state.mySlot])} wants a rematch.`) : null,
        state.newRace ? h("p", {}, h("a", { href: `/race/${state.newRace}`, dataset: { link: "" } }, "Go to the rematch")) : null,
      );
    }
    return null;
  }

  /** Put the result panel over the table (true) or take it away to see the final board (false). */
  showResult(shown) {
    this.resultHidden = !shown;
    this.render();
  }

  renderControls() {
    const state = this.state;
    const controls = this.layout.controls;
    const me = state.players[state.mySlot];
    const active = this.canPlayNow();
    const board = state.myBoard;
    const selected = this.boardView.selected;
    fill(
      controls,
      h("div", { class: "buttons" },
        state.settings.undo ? h("button", { dataset: { action: "undo" }, disabled: !active || !board || board.check({ special: "undo" }) !== null, onclick: () => this.action("undo") }, "Undo") : null,
        state.settings.redeal_once ? h("button", { dataset: { action: "redeal" }, disabled: !active || !board || board.redealUsed, onclick: () => this.action("redeal") }, "Redeal") : null,
        state.result && this.resultHidden ? h("button", { class: "primary", dataset: { action: "show-result" }, onclick: () => this.showResult(true) }, "Show the result") : null,
        h("button", { dataset: { action: "stuck" }, disabled: !active, onclick: () => this.action("stuck") }, "Stuck"),
        h("button", { dataset: { action: "resign" }, class: "danger", disabled: !active, onclick: () => this.action("resign") }, "Resign"),
        h("label", { class: "toggle" },
          h("input", { type: "checkbox", name: "automove", checked: this.autoMove, onchange: (e) => {
            this.autoMove = e.target.checked;
            localStorage.setItem("fg.automove", this.autoMove ? "1" : "0");
            this.maybeAutoMove();
          } }),
          " auto-move safe cards",
        ),
        soundSwitch(),
      ),
      h("div", { class: "keyboard-hint" },
        selected ? `${cardLabel(selected)} selected: press f or 1–6 (Esc cancels)` : this.typed ? `typed: ${this.typed}` : "Keyboard: type a card (5d) or Tab to it and press Enter, then f or a column 1–6 (? for all keys). Double-click sends a card home.",
      ),
    );
  }

  async copy(text, button) {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      this.root.querySelector(".share-link")?.select();
      button.textContent = "Press Ctrl+C";
    }
  }
}
