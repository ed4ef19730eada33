// Runs the browser's race fold (race_state.js) and engine (engine.js) on cases read from stdin, one JSON object a
// line, and writes one JSON answer a line, so that tests/test_race_rules_differential.py can compare them with the
// Python specification and the Lua scripts in one Node process for many cases.
//   {"kind": "race", "info": RaceInfo, "events": [event maps in seq order]}
//     -> {"status", "players": [{state, count, left, connected, grace_until}], "winner", "reason", "aborted", "boards": [count]}
//   {"kind": "moves", "seed": "<decimal>", "rules": {profile, undo, redeal_once}, "moves": ["5D b>f", ...]}
//     -> {"codes": [null or the refusal of each move in turn], "position": {columns, bouquet, foundations}}
import { createInterface } from "node:readline";
import { Board, parseMove } from "../../server/web/static/js/engine.js";
import { RaceState } from "../../server/web/static/js/race_state.js";

function race(info, events) {
  // As the replay page starts (replay_view.js): the race info, then every event from seq 1.
  const state = new RaceState({ ...info, status: "waiting", seed: null, start_at: null, deadline: null, players: [], watchers: 0 }, null);
  for (const event of events) state.apply(event);
  return {
    status: state.status,
    players: state.players.map((p) => ({ state: p.state, count: p.count, left: p.left, connected: p.connected, grace_until: p.grace_until })),
    winner: state.result ? state.result.winner ?? null : null,
    reason: state.result ? state.result.reason : null,
    aborted: state.result ? state.result.aborted ?? null : null,
    boards: state.boards.map((board) => (board ? board.count : null)),
    gaps: state.gaps,
  };
}

function moves(seed, rules, texts) {
  const board = Board.deal(BigInt(seed), rules);
  const codes = [];
  for (const text of texts) {
    const move = parseMove(text);
    const code = move === null ? "unreadable" : board.check(move);
    if (code === null) board.play(move);
    codes.push(code);
  }
  return { codes, position: { columns: board.columns, bouquet: board.bouquet, foundations: board.foundations } };
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let answer;
  try {
    const request = JSON.parse(line);
    answer = request.kind === "race" ? race(request.info, request.events) : moves(request.seed, request.rules, request.moves);
  } catch (error) {
    answer = { error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
