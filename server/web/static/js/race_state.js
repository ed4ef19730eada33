// A race as this page knows it, built only from what the server acknowledged: race events in seq order and
// `moved` replies. Each board advances only by its player's next action number (move_seq), so an action
// reported twice (the `moved` reply and the player's own `move` event, or events re-sent after a reconnect)
// is applied once, and a refused move changes nothing. Used by the race, watch and replay pages alike.

import { Board, parseMove, replayLayout } from "./engine.js";

export const FULL = 52;

function blankPlayer(slot) {
  return { slot, player: null, name: null, account: null, bot: false, count: 0, left: FULL, state: "playing", connected: true, grace_until: null };
}

export class RaceState {
  /**
   * info: a RaceInfo (settings, players). mySlot: the seat this page plays, or null for a spectator / replay
   * (then both boards are kept). The state starts from info's settings and players; events move it on.
   */
  constructor(info, mySlot = null) {
    this.race = info.race;
    this.settings = info.settings;
    this.mySlot = mySlot;
    this.status = info.status;
    this.players = [blankPlayer(0), blankPlayer(1)];
    for (const player of info.players || []) this.players[player.slot] = { ...blankPlayer(player.slot), ...player };
    this.seed = info.seed ?? null; // revealed with the result only
    this.commitment = info.commitment ?? null;
    this.seedChosen = !!info.seed_chosen;
    this.difficulty = info.difficulty ?? null;
    this.startAt = info.start_at ?? null;
    this.deadline = info.deadline ?? null;
    this.watchers = info.watchers ?? 0;
    this.invite = info.invite ?? null;
    this.lastSeq = 0;
    this.boards = [null, null];
    this.layout = null;
    this.result = null;
    this.analysis = null;
    this.rematchOffers = [null, null];
    this.newRace = null;
    this.closedReason = null;
    this.closedMessage = null;
    this.gaps = 0;
  }

  /** For a player: start from nothing but the seat, then apply the race's events from seq 1 (sync after 0). */
  static forPlayer(info, slot) {
    return new RaceState({ ...info, status: "waiting", seed: null, start_at: null, deadline: null, players: [] }, slot);
  }

  /** For a spectator: the delayed snapshot of `watching` (boards rebuilt from the layout and each player's actions). */
  static fromWatching(watching) {
    const state = new RaceState(watching.race, null);
    state.lastSeq = watching.race.event_seq;
    if (watching.deal) state.layout = watching.deal;
    for (const view of watching.boards || []) {
      if (watching.deal) state.boards[view.slot] = replayLayout(watching.deal, state.settings, view.moves, view.redeal_columns);
    }
    return state;
  }

  get myBoard() {
    return this.mySlot === null ? null : this.boards[this.mySlot];
  }

  get opponentSlot() {
    return this.mySlot === null ? null : 1 - this.mySlot;
  }

  tracksBoard(slot) {
    return this.mySlot === null || slot === this.mySlot;
  }

  /** Apply one race event; events at or below the last seq applied are ignored. Returns whether it applied. */
  apply(event) {
    if (event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    const handler = this[`on_${event.type}`];
    if (handler) handler.call(this, event);
    return true;
  }

  on_player_joined(event) {
    this.players[event.slot] = { ...blankPlayer(event.slot), player: event.player, name: event.name, account: event.account ?? null, bot: Boolean(event.bot) };
  }

  on_countdown(event) {
    this.status = "countdown";
    this.commitment = event.commitment;
    this.seedChosen = !!event.seed_chosen;
    this.difficulty = event.difficulty ?? null;
    this.startAt = event.start_at;
    this.deadline = event.deadline ?? null;
    this.invite = null;
    this.layout = { columns: event.columns, bouquet: event.bouquet };
    for (const slot of [0, 1]) {
      if (this.tracksBoard(slot) && !(this.boards[slot] && this.boards[slot].actions > 0)) {
        this.boards[slot] = new Board(this.layout, this.settings, null);
      }
    }
  }

  on_started() {
    this.status = "running";
  }

  on_move(event) {
    this.applyAction(event.slot, event.move_seq, event.move, event.columns);
    this.setProgress(event.slot, event);
  }

  on_progress(event) {
    this.setProgress(event.slot, event);
  }

  on_attempt_ended(event) {
    Object.assign(this.players[event.slot], { state: event.reason, count: event.count, left: event.left });
  }

  on_result(event) {
    this.status = "finished";
    this.result = event;
    if (event.seed !== undefined && event.seed !== null) this.seed = event.seed; // the reveal
    for (const player of event.players) Object.assign(this.players[player.slot], { count: player.count, left: player.left, state: player.ended });
  }

  on_berserk(event) {
    Object.assign(this.players[event.slot], { berserk: true, deadline: event.deadline });
  }

  on_disconnected(event) {
    Object.assign(this.players[event.slot], { connected: false, grace_until: event.grace_until ?? null });
  }

  on_back(event) {
    Object.assign(this.players[event.slot], { connected: true, grace_until: null });
  }

  on_watchers(event) {
    this.watchers = event.count;
  }

  on_player_left(event) {
    this.players[event.slot] = blankPlayer(event.slot);
    this.status = "waiting";
    this.commitment = null;
    this.startAt = null;
    this.boards = [null, null];
  }

  on_race_closed(event) {
    this.status = "closed";
    this.closedReason = event.reason;
    this.closedMessage = event.message ?? null;
  }

  on_rematch_offered(event) {
    this.rematchOffers[event.slot] = event.until;
  }

  on_analysis(event) {
    this.analysis = event.analysis;
  }

  on_rematch(event) {
    this.newRace = event.new_race;
  }

  setProgress(slot, event) {
    Object.assign(this.players[slot], { count: event.count, left: event.left });
  }

  /**
   * The player's action number `moveSeq` (1, 2, …) in notation: applied when it is the board's next one,
   * ignored when already applied; a gap (an action never seen) is counted: the page then rebuilds from a sync.
   */
  applyAction(slot, moveSeq, text, dealt = null) {
    const board = this.boards[slot];
    if (!board || moveSeq <= board.actions) return false;
    if (moveSeq !== board.actions + 1) {
      this.gaps += 1;
      return false;
    }
    board.play(parseMove(text), dealt);
    return true;
  }

  /** The `moved` reply to this page's own move. */
  applyMoved(reply) {
    this.applyAction(this.mySlot, reply.seq, reply.move, reply.columns);
    this.setProgress(this.mySlot, reply);
  }
}
