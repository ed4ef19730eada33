// The race page (/race/<id>, /invite/<code>): the player's own table, the opponent's progress, the clock,
// watchers and presence, the buttons, keyboard entry, and the result with a rematch button.

import { BoardView } from "./board_view.js";
import { BUBBLE_MS, emoteBubble, emotePicker, isMuted } from "./emotes.js";
import { ServerError } from "./connection.js";
import { clockText, closedWhy, dealText, endingText, fill, h, settingsText, statusText, timeLimitText, worded } from "./dom.js";
import { cardLabel, moveLabel, moveText, parseCard, replayLayout } from "./engine.js";
import { abortedBadge, botLevelSelect, ghostSeat, playerLabel, playerText, ratingChangeCell } from "./players.js";
import { dealCheckLine } from "./fair_deal.js";
import { FULL, RaceState } from "./race_state.js";
import { typingInField } from "./keyboard_help.js";
import { errorText, refusalNotice } from "./refusals.js";
import { cardPlaces, celebrate, cueTitle, fly, notify, notifySwitch, play, soundSwitch } from "./feel.js";
import { t, tn } from "./i18n.js";

const MESSAGE_MS = 8000;
/** The opponent's progress that sounds a cue: each quarter of the pack on the foundations. */
const MILESTONE = 13;
/** The result table's columns (each `web.result.<column>`); on a phone each cell shows its column's name. */
const RESULT_COLUMNS = ["player", "cards", "time", "moves", "undos", "ended"];
/** The race page's cue words (one place, for the translations). */
const CUES = {
  joined: (name) => t("web.feel.joined", { name }),
  started: () => t("web.feel.started"),
};

/** A player's line: name, presence, a progress bar of cards on the foundations, how the attempt stands. */
export function playerPanel(state, slot, now, label, connection = "connected") {
  const player = state.players[slot];
  if (!player.name) return h("div", { class: "player empty", dataset: { slot: String(slot) } }, h("span", { class: "name" }, t("web.race.waiting_player")));
  const percent = Math.round((100 * player.count) / FULL);
  let presence = h("span", { class: "presence on", title: t("web.presence.connected_title") }, t("web.presence.online"));
  if (slot === state.mySlot && connection !== "connected") {
    presence = h("span", { class: "presence off", title: t("web.presence.own_title") }, t(`web.connection.${connection}`));
  } else if (slot !== state.mySlot && state.mySlot !== null && connection !== "connected") {
    // Offline, this page cannot know whether the opponent is there: it never says "online" then.
    presence = h("span", { class: "presence unknown", title: t("web.presence.unknown_title") }, t("web.presence.unknown"));
  } else if (slot !== state.mySlot && !player.connected) {
    const grace = player.grace_until ? ` · ${t("web.presence.to_come_back", { clock: clockText(player.grace_until - now) })}` : "";
    presence = h("span", { class: "presence off", title: t("web.presence.disconnected") }, `${t("web.presence.disconnected")}${grace}`);
  }
  return h(
    "div",
    { class: `player${slot === state.mySlot ? " me" : ""}`, dataset: { slot: String(slot) } },
    h("div", { class: "player-line" }, h("span", { class: "name" }, playerLabel(player, { ghost: ghostSeat(state.settings, slot) })), label ? h("span", { class: "tag" }, label) : null,
      player.berserk ? h("span", { class: "tag berserk", title: t("web.race.berserk_title") }, t("web.race.berserk_tag")) : null, presence),
    h("div", { class: "progress", role: "progressbar", "aria-label": t("web.race.progress_label", { name: playerText(player, { ghost: ghostSeat(state.settings, slot) }) }), "aria-valuemin": "0", "aria-valuemax": "52", "aria-valuenow": String(player.count) }, h("div", { class: "bar", style: `width:${percent}%` })),
    h(
      "div",
      { class: "player-stats" },
      h("span", { class: "count", dataset: { count: String(player.count) } }, t("web.race.on_foundations", { count: player.count })),
      h("span", {}, t("web.race.cards_left", { count: player.left })),
      h("span", { class: "state" }, endingText(player.state)),
    ),
  );
}

/** How long before a time limit's end the clock turns into a red countdown of the time left. */
export const LOW_TIME_MS = 30000;

/** The watchers line: a spectator's page counts its own viewer (its snapshot's count is one delay old). */
function watchersText(state, watchingHere) {
  if (!watchingHere) return tn("web.watching", state.watchers);
  const others = Math.max(0, state.watchers - 1);
  return others ? t("web.watch.you_and_more", { count: others }) : t("web.watch.you_watch");
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
  if (state.startAt && now < state.startAt) clock = t("web.clock.starts_in", { seconds: Math.ceil((state.startAt - now) / 1000) });
  else if (low) clock = t("web.clock.left", { clock: clockText(left) });
  else if (state.startAt) clock = clockText(until - state.startAt);
  const limitText = state.settings.time_limit ? timeLimitText(state.settings.time_limit) : t("web.clock.no_limit");
  const remaining = left !== null ? ` · ${t("web.clock.left", { clock: clockText(left) })}` : "";
  const limit = h("span", { class: "limit" }, limitText + remaining);
  return h(
    "div",
    { class: `clock-line${low ? " low-time" : ""}` },
    h("span", { class: "clock", "aria-label": t(low ? "web.clock.time_left" : "web.clock.race_clock") }, clock),
    limit,
    h("span", { class: "watchers", title: t("web.lobby.spectators") }, watchersText(state, watchingHere)),
  );
}

/**
 * The result: winner, reason, and per player count, time, moves and undos (and the rating change of a rated race),
 * then the deal check and the analysis (`replayHint`: say that the replay marks the moves; not on the replay itself).
 */
export function resultTable(state, { replayHint = true } = {}) {
  const result = state.result;
  const winner = result.winner === null || result.winner === undefined ? null : playerText(result.players.find((p) => p.slot === result.winner) || state.players[result.winner], { ghost: ghostSeat(state.settings, result.winner) });
  const headline = winner === null ? t("web.result.draw") : result.winner === state.mySlot ? t("web.result.you_win") : t("web.result.wins", { name: winner });
  const rated = result.players.some((player) => player.rating);
  return h(
    "div",
    { class: "result" },
    h("h2", { class: "headline" }, headline),
    h("p", { class: "reason" }, worded("reason", result.reason), rated ? ` · ${t("web.result.rated")}` : null),
    result.aborted ? h("p", { class: "aborted-line" }, abortedBadge(result.aborted), ` — ${t("web.result.aborted", { why: worded("aborted", result.aborted) })}`) : null,
    h(
      "table",
      { class: "result-table" },
      h("thead", {}, h("tr", {}, RESULT_COLUMNS.map((column) => h("th", {}, t(`web.result.${column}`))), rated ? h("th", {}, t("web.table.rating")) : null)),
      h(
        "tbody",
        {},
        result.players.map((player) =>
          h(
            "tr",
            { class: player.slot === result.winner ? "winner" : "", dataset: { slot: String(player.slot) } },
            [playerLabel(player, { ghost: ghostSeat(state.settings, player.slot) }), `${player.count}/52`, clockText(player.time_ms), String(player.moves), String(player.undos), endingText(player.ended)]
              .map((content, index) => h("td", { dataset: { label: t(`web.result.${RESULT_COLUMNS[index]}`) } }, content)),
            rated ? h("td", { dataset: { label: t("web.table.rating") } }, ratingChangeCell(player.rating)) : null,
          ),
        ),
      ),
    ),
    result.seed !== null && result.seed !== undefined ? h("p", { class: "reveal" }, t("web.result.reveal", { seed: result.seed })) : null,
    dealCheckLine(state),
    analysisLines(state, replayHint),
  );
}

/** One player's line in the post-race analysis, in words ("lost the win at move 10: 7♦ b→5"): the tables'
 * `verdict.*`, which the terminal says too (`client/race_view.py` `line_verdict_words`). */
export function verdictWords(player) {
  if (player.verdict === "lost_at") return t("verdict.lost_at", { number: player.fatal_action + 1, move: moveLabel(player.fatal_move) });
  if (player.verdict === "lost_between") return t("verdict.lost_between", { first: player.first_action + 1, last: player.last_action + 1 });
  return worded("verdict", player.verdict);
}

/** The post-race analysis (an `analysis` event after the result): where each player lost the win. */
function analysisLines(state, replayHint) {
  const analysis = state.analysis;
  if (!analysis) return state.result ? h("p", { class: "analysis pending" }, t("web.result.analysing")) : null;
  return [
    h(
      "ul",
      { class: "analysis" },
      analysis.players.map((p) => h("li", { dataset: { slot: String(p.slot), verdict: p.verdict } }, `${state.players[p.slot].name}: ${verdictWords(p)}`)),
    ),
    replayHint ? h("p", { class: "analysis-hint" }, h("a", { href: `/replay/${state.race}`, dataset: { link: "" } }, t("web.result.on_replay")), t("web.result.on_replay_text")) : null,
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
    fill(this.root, h("p", { class: "loading" }, t("web.race.loading")));
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
      this.say(t("web.race.no_bot", { why: errorText(error) }), true);
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
          h("h1", {}, t("web.race.not_seated")),
          h("p", {}, t("web.race.not_seated_text")),
          h("div", { class: "actions" },
            h("button", { class: "primary", onclick: () => this.joinHere(race) }, t("web.race.join_this")),
            h("a", { class: "button", href: `/watch/${race}`, dataset: { link: "" } }, t("web.lobby.watch")),
          ),
          h("p", { class: "error-text", role: "alert" }),
        ),
      );
      return;
    }
    const text = errorText(error);
    fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.race.cannot_open")), h("p", { class: "error-text", role: "alert" }, text), h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.to_lobby"))));
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
    if (event.type === "emote" && event.seq > this.caughtUpSeq) this.showEmote(event);
    this.render();
    if (event.seq > this.caughtUpSeq) this.cue(event);
    this.maybeAutoMove();
  }

  /** A quick emote as it comes: a bubble on its player's panel for a few seconds, unless that player is muted here. */
  showEmote(event) {
    const player = this.state.players[event.slot];
    if (event.slot !== this.state.mySlot && isMuted(player)) return;
    const shown = { phrase: event.phrase };
    this.emotes = { ...this.emotes, [event.slot]: shown };
    setTimeout(() => {
      if (this.unmounted || this.emotes[event.slot] !== shown) return;
      delete this.emotes[event.slot];
      this.render();
    }, BUBBLE_MS);
  }

  async sendEmote(phrase) {
    try {
      await this.conn.emote(this.state.race, phrase);
    } catch (error) {
      this.sayRefused(error, null, null);
    }
  }

  /** The emote menu while there is an opponent to talk to: from the countdown to after the result. */
  emoteMenu() {
    const state = this.state;
    const opponent = state.players[1 - state.mySlot];
    if (!opponent || !["countdown", "running", "finished"].includes(state.status)) return null;
    return emotePicker({
      opponent, name: playerText(opponent), send: (phrase) => this.sendEmote(phrase), onMute: () => this.render(),
      open: this.emoteMenuOpen, onToggle: (open) => { this.emoteMenuOpen = open; },
    });
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
      cueTitle(CUES.started(), this.plainTitle);
      notify(CUES.started());
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
    if (state.players[state.mySlot].state !== "playing") return this.say(t("web.race.attempt_ended"));
    if (!this.canPlay()) return this.say(t("web.race.wait_start"));
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

  /** Go berserk in this arena race during its countdown (the berserk event then marks the seat). */
  async berserk() {
    try {
      await this.conn.arenaBerserk(this.state.settings.arena, this.state.race);
    } catch (error) {
      this.say(refusalText(error));
    }
  }

  async action(kind) {
    const state = this.state;
    try {
      if (kind === "undo" || kind === "redeal") return this.playerMove({ special: kind });
      if (kind === "resign" && !confirm(t("web.race.resign_confirm"))) return;
      if (kind === "stuck" && !confirm(t("web.race.stuck_confirm"))) return;
      if (kind === "resign") await this.conn.resign(state.race);
      if (kind === "stuck") await this.conn.stuck(state.race);
      if (kind === "rematch") {
        const reply = await this.conn.rematch(state.race);
        if (this.unmounted) return;
        if (reply.type === "seated") return this.app.navigate(`/race/${reply.race.race}`, { seated: reply });
        this.say(t("web.race.rematch_offered"));
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
    if (!(error instanceof ServerError)) return this.say(t("web.race.not_sent", { why: errorText(error) }), true);
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
      if (!this.boardView.selected) this.say(t("web.race.not_available", { card: cardLabel(card) }), true);
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
    const panels = [playerPanel(state, state.mySlot, now, t("web.race.you"), mine), playerPanel(state, 1 - state.mySlot, now, t("web.race.opponent"), mine)];
    [state.mySlot, 1 - state.mySlot].forEach((slot, index) => {
      const shown = this.emotes?.[slot];
      if (shown && (slot === state.mySlot || !isMuted(state.players[slot]))) panels[index].append(emoteBubble(shown.phrase));
    });
    return panels;
  }

  render() {
    const state = this.state;
    if (!state) return;
    const now = this.conn.serverNow();
    this.plainTitle = `${t("web.race.title", { race: state.race })} · Flower Garden Race`;
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
      this.boardView = new BoardView(this.layout.table, { interactive: true, label: t("web.board.yours"), onMove: (move) => this.playerMove(move), onSelect: () => this.renderControls() });
    }
    const { header, players, notice, table } = this.layout;
    fill(header,
      h("div", { class: "race-title" }, h("h1", {}, t("web.race.heading"), " ", h("code", {}, state.race)), h("span", { class: `status status-${state.status}`, dataset: { status: state.status } }, statusText(state.status))),
      h("div", { class: "race-settings" }, settingsText(state.settings), h("span", { class: "deal-text" }, dealText(state)),
        state.commitment ? h("span", { class: "commitment", title: t("web.race.commitment_title", { commitment: state.commitment }) }, ` · ${t("web.race.commitment", { hash: String(state.commitment).slice(0, 12) })}`) : null),
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
        h("h2", {}, t(this.params.queued ? "web.race.looking" : "web.race.waiting")),
        h("p", {}, t(state.invite ? "web.race.send_private" : "web.race.send_link")),
        h("div", { class: "share" },
          h("input", { class: "share-link", readonly: true, value: link, "aria-label": t("web.race.invite_link"), onfocus: (e) => e.target.select() }),
          h("button", { onclick: (e) => this.copy(link, e.target) }, t("web.race.copy_link")),
        ),
        state.invite ? h("p", { class: "invite-code" }, t("web.race.code"), " ", h("code", {}, state.invite)) : null,
        notifySwitch(),
        this.botComing
          ? h("p", { class: "info bot-coming" }, t("web.race.bot_coming", { level: this.botComing }))
          : state.mySlot === 0 && !this.params.queued
            ? h("div", { class: "actions bot-call" }, h("span", {}, t("web.lobby.bot_offer")), this.botSelect, h("button", { dataset: { action: "call-bot" }, onclick: () => this.summonBot(Number(this.botSelect.value)) }, t("web.race.call_bot")))
            : null,
        this.params.queued
          ? h("button", { class: "ghost", onclick: () => this.action("cancel") }, t("web.race.stop_looking"))
          : state.mySlot === 0 ? h("button", { class: "ghost", onclick: () => this.action("leave") }, t("web.race.close")) : null,
      );
    }
    if (state.status === "countdown" && state.startAt && now < state.startAt) {
      const me = state.mySlot === null ? null : state.players[state.mySlot];
      const berserk = state.settings?.arena && me
        ? me.berserk ? h("p", { class: "berserk-chosen" }, t("web.race.berserk_chosen")) : h("button", { dataset: { action: "berserk" }, title: t("web.race.berserk_title"), onclick: () => this.berserk() }, t("web.race.berserk"))
        : null; // an arena race: half the time, a point more for a win (docs/COMMUNITY.md)
      return h("div", { class: "overlay countdown-overlay" }, h("p", {}, t("web.race.get_ready")), h("div", { class: "big" }, String(Math.ceil((state.startAt - now) / 1000))), berserk);
    }
    if (state.status === "closed") {
      return h("div", { class: "overlay" }, h("h2", {}, t("web.race.closed")), h("p", { class: "closed-reason" }, t("web.race.closed_reason", { why: closedWhy(state) })), h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.to_lobby")));
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
          h("button", { class: "primary rematch", onclick: () => this.action("rematch") }, t(theirs ? "web.race.accept_rematch" : mine ? "web.race.rematch_offered_button" : "web.race.rematch")),
          h("a", { class: "button", href: `/replay/${state.race}`, dataset: { link: "" } }, t("web.replay")),
          h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.race.lobby")),
          h("button", { class: "ghost", dataset: { action: "hide-result" }, onclick: () => this.showResult(false) }, t("web.race.show_board")),
        ),
        theirs ? h("p", { class: "info" }, t("web.race.wants_rematch", { name: playerText(state.players[1 - state.mySlot]) })) : null,
        state.newRace ? h("p", {}, h("a", { href: `/race/${state.newRace}`, dataset: { link: "" } }, t("web.race.go_to_rematch"))) : null,
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
        state.settings.undo ? h("button", { dataset: { action: "undo" }, disabled: !active || !board || board.check({ special: "undo" }) !== null, onclick: () => this.action("undo") }, t("web.race.undo")) : null,
        state.settings.redeal_once ? h("button", { dataset: { action: "redeal" }, disabled: !active || !board || board.redealUsed, onclick: () => this.action("redeal") }, t("web.race.redeal")) : null,
        state.result && this.resultHidden ? h("button", { class: "primary", dataset: { action: "show-result" }, onclick: () => this.showResult(true) }, t("web.race.show_result")) : null,
        h("button", { dataset: { action: "stuck" }, disabled: !active, onclick: () => this.action("stuck") }, t("web.race.stuck")),
        h("button", { dataset: { action: "resign" }, class: "danger", disabled: !active, onclick: () => this.action("resign") }, t("web.race.resign")),
        h("label", { class: "toggle" },
          h("input", { type: "checkbox", name: "automove", checked: this.autoMove, onchange: (e) => {
            this.autoMove = e.target.checked;
            localStorage.setItem("fg.automove", this.autoMove ? "1" : "0");
            this.maybeAutoMove();
          } }),
          " ", t("web.race.automove"),
        ),
        soundSwitch(),
        this.emoteMenu(),
      ),
      h("div", { class: "keyboard-hint" },
        selected ? t("web.race.selected", { card: cardLabel(selected) }) : this.typed ? t("web.race.typed", { typed: this.typed }) : t("web.race.keyboard_hint"),
      ),
    );
  }

  async copy(text, button) {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = t("web.race.copied");
    } catch {
      this.root.querySelector(".share-link")?.select();
      button.textContent = t("web.race.press_copy");
    }
  }
}
