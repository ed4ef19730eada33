// One session on the race server over one WebSocket at a time, like client/race_client.py: requests with ids
// and their replies, race and lobby events in order, per-race next action numbers and move ids, and a
// reconnect that says hello with the same token, syncs the races played and re-watches the races watched
// from the last event received, and resends a move whose reply never came (same move_id: applied once).

import { ARENA_EVENTS, LOBBY_EVENTS, PROTOCOL_VERSION, RACE_EVENTS, decode, encode } from "./protocol.js";
import { t } from "./i18n.js";

/** The server refused a request: its code (switch on it), message for people, field and expected seq. */
/**
 * Run a join (`attempt(accept_delay)`); when the server answers `delay_not_accepted` (a private race whose spectators
 * lag less than the server's minimum, docs/FAIRPLAY.md) ask the player, and join again accepting that delay.
 */
export async function withDelayConsent(attempt) {
  try {
    return await attempt(null);
  } catch (error) {
    if (!(error instanceof ServerError) || error.code !== "delay_not_accepted") throw error;
    const seconds = error.expected ?? 0;
    const question = t("web.join.delay_question", { seconds });
    if (!window.confirm(question)) throw error;
    return attempt(seconds);
  }
}

export class ServerError extends Error {
  constructor(reply) {
    super(reply.message);
    this.code = reply.code;
    this.field = reply.field ?? null;
    this.expected = reply.expected ?? null;
  }
}

/** The connection closed before the reply came. */
export class ConnectionLost extends Error {
  constructor(code, reason) {
    super(`connection closed (${code}) ${reason || ""}`.trim());
    this.code = code;
  }
}

const OUTCOME_RETRIES = 3;

function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class Connection {
  /** url: ws://host:port/ (default: this page's host). Listeners: onEvent(event), onStatus(text), onResumed(result). */
  constructor(url = Connection.pageUrl()) {
    this.url = url;
    this.socket = null;
    this.session = null;
    this.clockOffset = 0;
    this.nextId = 1;
    this.waiting = new Map();
    this.nextSeq = new Map();
    this.lastSeq = new Map();
    this.playing = new Set();
    this.watching = new Set();
    this.watchingLobby = false;
    this.unacknowledged = new Map();
    this.listeners = { event: [], status: [], resumed: [] };
    this.closedHere = false;
    this.reconnecting = false;
    this.status = "connecting";
    this.ahead = null;
  }

  static pageUrl() {
    return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
  }

  on(kind, listener) {
    this.listeners[kind].push(listener);
    return () => {
      this.listeners[kind] = this.listeners[kind].filter((item) => item !== listener);
    };
  }

  emit(kind, value) {
    for (const listener of [...this.listeners[kind]]) listener(value);
  }

  setStatus(status) {
    this.status = status;
    this.emit("status", status);
  }

  /** Server time now (ms since the epoch on the server's clock), from welcome.server_time. */
  serverNow() {
    return Date.now() + this.clockOffset;
  }

  /**
   * The socket the page shell opened before the client's script was even read (app.html), taken once by the first
   * connection to its URL while it is still opening or open: the handshake's round trip overlaps the script's start.
   */
  static earlySocket(url) {
    const socket = window.fgEarlySocket;
    window.fgEarlySocket = null;
    return socket && socket.url === url && socket.readyState <= WebSocket.OPEN ? socket : null;
  }

  open() {
    return new Promise((resolve, reject) => {
      const socket = Connection.earlySocket(this.url) ?? new WebSocket(this.url);
      socket.binaryType = "arraybuffer";
      socket.onopen = () => {
        this.socket = socket;
        resolve();
      };
      if (socket.readyState === WebSocket.OPEN) socket.onopen();
      socket.onerror = () => reject(new ConnectionLost(null, "could not connect"));
      socket.onmessage = (message) => this.receive(message.data);
      socket.onclose = (closing) => this.closed(socket, closing);
    });
  }

  /**
   * Connect and say hello; with a token, resume that session (bad_token if it expired: start a new one).
   * `ahead`, the fields of the page's first request, is sent right behind a hello that resumes a token, without
   * waiting for its reply (the server answers a connection's requests in order): one round trip less before the page
   * is drawn. The view takes its reply with takeAhead(type); refused (the hello started a new session), it asks again.
   */
  async start(name, token, ahead = null) {
    this.setStatus("connecting");
    // A refused hello leaves the connection open without a session: say hello again on it (or on a new one if the
    // server closed it meanwhile, e.g. after 10 s without a hello).
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) await this.open();
    try {
      const hello = this.hello(name, token);
      if (ahead && token) {
        const reply = this.request({ ...ahead, token }, false);
        reply.catch(() => {}); // taken by the view, which asks again after a refusal
        this.ahead = { type: ahead.type, reply };
      }
      await hello;
    } catch (error) {
      if (!(error instanceof ServerError) || error.code !== "bad_token" || !token) throw error;
      await this.hello(name, null);
    }
    this.setStatus("connected");
    return this.session;
  }

  async hello(name, token) {
    const sentAt = Date.now();
    this.session = await this.request({ type: "hello", protocol: PROTOCOL_VERSION, name, token: token ?? null }, false);
    this.clockOffset = this.session.server_time - Math.round((sentAt + Date.now()) / 2);
    return this.session;
  }

  close() {
    this.closedHere = true;
    if (this.socket) this.socket.close(1000);
  }

  // --- requests ---------------------------------------------------------------------------------

  /** Send a request (id and token added) and wait for its reply; ServerError on an error reply. */
  request(fields, withToken = true) {
    const id = this.nextId++;
    const message = { ...fields, id };
    if (withToken) message.token = this.session.token;
    return new Promise((resolve, reject) => {
      const open = this.socket && this.socket.readyState === WebSocket.OPEN;
      if (!open && message.type !== "move") return reject(new ConnectionLost(null, "not connected: try again in a moment"));
      this.waiting.set(id, { resolve, reject, message });
      if (open) this.send(message); // a move waits for the reconnect, which resends it
    });
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(encode(message));
  }

  // --- accounts, ratings, histories (docs/PROTOCOL.md "Accounts and ratings") ---------------------

  /** Register a handle and log this session in to it (a bot: password null, the reply's key is its secret). */
  async register(handle, password, bot = false) {
    return this.loggedIn(await this.request({ type: "register", handle, password, bot }));
  }

  /** Log this session in to a registered account: its seats from now on belong to the account. */
  async login(handle, password) {
    return this.loggedIn(await this.request({ type: "login", handle, password }));
  }

  /** The session plays as the account from now on, under the fresh token the reply carries (the old one ended). */
  loggedIn(account) {
    Object.assign(this.session, { token: account.token, account: account.handle, name: account.name, player: account.player, bot: account.bot });
    return account;
  }

  /** End this session on the server: its token stops working everywhere. */
  logout() {
    return this.request({ type: "logout" });
  }

  // Arena tournaments (docs/COMMUNITY.md): arena_paired and arena_standings then come as events.
  arenaCreate(name, minutes = 20, timeLimit = 300) {
    return this.request({ type: "arena_create", name, minutes, time_limit: timeLimit });
  }

  arenaJoin(arena) {
    return this.request({ type: "arena_join", arena });
  }

  arenaPause(arena) {
    return this.request({ type: "arena_pause", arena });
  }

  arenaStandings(arena) {
    return this.request({ type: "arena_standings_request", arena });
  }

  arenaBerserk(arena, race) {
    return this.request({ type: "arena_berserk", arena, race });
  }

  arenaWatch(arena) {
    return this.request({ type: "arena_watch", arena });
  }

  arenaUnwatch(arena) {
    return this.request({ type: "arena_unwatch", arena });
  }

  arenaList() {
    return this.request({ type: "arena_list" });
  }

  /** An arena's signed record: its table and each player's races (docs/PROTOCOL.md "arena_record"). */
  arenaRecord(arena) {
    return this.request({ type: "arena_record", arena });
  }

  /** Race a ghost (docs/COMMUNITY.md "Ghost races"): source "daily" (day, handle) or "race" (race, slot). */
  ghostRace(source, { day = null, handle = null, race = null, slot = 0 } = {}) {
    return this.request({ type: "ghost_race", source, day, handle, race, slot });
  }

  // The daily deal (docs/COMMUNITY.md): day null is today.
  daily(day = null) {
    return this.request({ type: "daily", day });
  }

  dailyStart(day = null) {
    return this.request({ type: "daily_start", day });
  }

  dailyMove(attempt, seq, move) {
    return this.request({ type: "daily_move", attempt, seq, move });
  }

  dailyStop(attempt) {
    return this.request({ type: "daily_stop", attempt });
  }

  dailyBoard(day, limit = 20, offset = 0) {
    return this.request({ type: "daily_board", day, offset, limit });
  }

  dailyReplay(day, handle = null) {
    return this.request({ type: "daily_replay", day, handle });
  }

  dailyArchive(limit = 31, offset = 0) {
    return this.request({ type: "daily_archive", offset, limit });
  }

  leaderboard(profile = "classic", limit = 20, offset = 0) {
    return this.request({ type: "leaderboard", profile, limit, offset });
  }

  /** A registered player's finished races, newest first (handle null: this session's own account). */
  history(handle = null, offset = 0, limit = 20) {
    return this.request({ type: "history", handle, offset, limit });
  }

  stats(handle = null) {
    return this.request({ type: "stats", handle });
  }

  /** Ask the server to seat a practice bot of `level` (1–5) in this session's waiting race. */
  summonBot(race, level) {
    return this.request({ type: "summon_bot", race, level });
  }

  async create(settings) {
    const seated = await this.request({ type: "create", settings });
    this.follow(seated.race.race, true);
    return seated;
  }

  /** Take seat 1; a private race whose spectator delay is below the server's minimum asks the player first. */
  async join(race) {
    const seated = await withDelayConsent((accept_delay) => this.request({ type: "join", race, accept_delay }));
    this.follow(race, true);
    return seated;
  }

  async joinInvite(code) {
    const seated = await withDelayConsent((accept_delay) => this.request({ type: "join_invite", code, accept_delay }));
    this.follow(seated.race.race, true);
    return seated;
  }

  async quickMatch(settings) {
    const reply = await this.request({ type: "quick_match", settings });
    this.follow(reply.race.race, true);
    return reply;
  }

  cancelQuickMatch() {
    return this.request({ type: "cancel_quick_match" });
  }

  async leave(race) {
    const reply = await this.request({ type: "leave", race });
    this.playing.delete(race);
    return reply;
  }

  /** The race and own actions; its events after `after` follow (all of them again from 0: a view rebuilding). */
  async sync(race, after = 0) {
    const reply = await this.request({ type: "sync", race, after });
    this.nextSeq.set(race, reply.moves.length);
    this.follow(race, true);
    this.lastSeq.set(race, after); // the server resends everything after `after`: none of it may be dropped
    return reply;
  }

  async watch(race, after = null) {
    const reply = await this.request({ type: "watch", race, after });
    this.follow(race, false, after ?? reply.race.event_seq);
    return reply;
  }

  async unwatch(race) {
    this.watching.delete(race);
    return this.request({ type: "unwatch", race });
  }

  /** The reply of the request sent ahead of the hello when it was of `type` (once), else null. */
  takeAhead(type) {
    const ahead = this.ahead;
    if (!ahead || ahead.type !== type) return null;
    this.ahead = null;
    return ahead.reply;
  }

  async watchLobby() {
    const ask = () => this.request({ type: "watch_lobby" });
    const early = this.takeAhead("watch_lobby");
    const reply = await (early ? early.catch(ask) : ask());
    this.watchingLobby = true;
    return reply;
  }

  async unwatchLobby() {
    this.watchingLobby = false;
    return this.request({ type: "unwatch_lobby" });
  }

  /** How many players are online and racing, over every server process. */
  online() {
    return this.request({ type: "online" });
  }

  liveRaces(limit = 50) {
    return this.request({ type: "live_races", limit });
  }

  replayPage(race, after = 0) {
    return this.request({ type: "replay", race, after, limit: 256 });
  }

  /** The post-race analysis of a finished race (`analysis` null while the server computes it). */
  analysis(race) {
    return this.request({ type: "get_analysis", race });
  }

  /** The server's solver on a finished race: a winning line from seat `slot`'s position after `actions` actions. */
  solveFrom(race, slot, actions) {
    return this.request({ type: "solve_from", race, slot, actions });
  }

  async rematch(race) {
    const reply = await this.request({ type: "rematch", race });
    if (reply.type === "seated") this.follow(reply.race.race, true);
    return reply;
  }

  /** Send the opponent a quick emote, one of the fixed phrases (`emotes.js` PHRASES). */
  emote(race, phrase) {
    return this.request({ type: "emote", race, phrase });
  }

  resign(race) {
    return this.request({ type: "resign", race });
  }

  stuck(race) {
    return this.request({ type: "stuck", race });
  }

  /**
   * Play an action ("5D b>3", "undo", "redeal") with the race's next action number and a fresh move_id.
   * If the connection drops before the reply, the same request is resent after the reconnect and this
   * promise settles with that reply (the server applies a move_id at most once).
   */
  async move(race, text) {
    const request = { type: "move", race, seq: this.nextSeq.get(race) ?? 0, move_id: randomId(), move: text };
    this.unacknowledged.set(race, request);
    try {
      const reply = await this.requestUntilKnown(request);
      this.nextSeq.set(race, reply.seq);
      return reply;
    } catch (error) {
      if (error instanceof ServerError && error.code === "out_of_sequence" && error.expected !== null) {
        this.nextSeq.set(race, error.expected);
      }
      throw error;
    } finally {
      if (this.unacknowledged.get(race) === request) this.unacknowledged.delete(race);
    }
  }

  /**
   * `unavailable` and `internal_error` leave the outcome unknown (the move may have been stored): send the same
   * move (same move_id and seq) again after a growing pause, a few times; the server applies it at most once.
   */
  async requestUntilKnown(request) {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.request(request);
      } catch (error) {
        const unknown = error instanceof ServerError && (error.code === "unavailable" || error.code === "internal_error");
        if (!unknown || attempt >= OUTCOME_RETRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
      }
    }
  }

  follow(race, playing, after = 0) {
    (playing ? this.playing : this.watching).add(race);
    (playing ? this.watching : this.playing).delete(race);
    this.lastSeq.set(race, Math.max(this.lastSeq.get(race) ?? 0, after));
  }

  // --- incoming ---------------------------------------------------------------------------------

  receive(data) {
    let message;
    try {
      message = decode(data);
    } catch {
      return; // a newer server's message this client cannot read
    }
    const pending = typeof message.id === "number" ? this.waiting.get(message.id) : undefined;
    if (pending) {
      this.waiting.delete(message.id);
      if (message.type === "error") pending.reject(new ServerError(message));
      else pending.resolve(message);
      return;
    }
    if (RACE_EVENTS.has(message.type) && typeof message.race === "string") {
      const last = this.lastSeq.get(message.race) ?? 0;
      if (message.seq <= last) return; // already received: never twice
      this.lastSeq.set(message.race, Math.max(last, message.seq));
    } else if (!LOBBY_EVENTS.has(message.type) && !ARENA_EVENTS.has(message.type) && message.type !== "error" && message.type !== "server_shutdown") {
      return;
    }
    this.emit("event", message);
  }

  closed(socket, closing) {
    if (socket !== this.socket) return;
    this.socket = null;
    const lost = new ConnectionLost(closing.code, closing.reason);
    for (const [id, pending] of this.waiting) {
      if (pending.message.type === "move") continue; // resent after the reconnect
      this.waiting.delete(id);
      pending.reject(lost);
    }
    if (this.reconnecting) return;
    if (this.closedHere || !this.session) {
      this.setStatus("closed");
      return;
    }
    this.reconnect();
  }

  /** Reconnect with growing pauses until it works; then resume every race and the lobby. */
  async reconnect() {
    this.setStatus("reconnecting");
    this.reconnecting = true;
    try {
      await this.reconnectLoop();
    } finally {
      this.reconnecting = false;
    }
  }

  async reconnectLoop() {
    for (let attempt = 0; !this.closedHere; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 5000)));
      try {
        await this.open();
        await this.hello(this.session.name, this.session.token);
        const resumed = { synced: new Map(), watching: new Map() };
        for (const race of [...this.playing]) resumed.synced.set(race, await this.sync(race, this.lastSeq.get(race) ?? 0));
        for (const race of [...this.watching]) resumed.watching.set(race, await this.watch(race, this.lastSeq.get(race) ?? 0));
        for (const pending of this.waiting.values()) if (pending.message.type === "move") this.send(pending.message);
        if (this.watchingLobby) resumed.lobby = await this.watchLobby();
        this.setStatus("connected");
        this.emit("resumed", resumed);
        return;
      } catch (error) {
        if (this.socket) this.socket.close();
        if (error instanceof ServerError && error.code === "bad_token") {
          this.setStatus("closed");
          return;
        }
      }
    }
  }
}
