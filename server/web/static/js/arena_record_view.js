// An arena's races and its record on the arena page (docs/COMMUNITY.md "Results are kept"): every race of the
// arena once, with its players and outcome, a replay once it is over and a ghost of its winner; and the record as a
// JSON file that `flowergarden verify` checks (docs/FAIRPLAY.md "An arena's record").

import { errorText } from "./refusals.js";
import { fill, h } from "./dom.js";
import { t } from "./i18n.js";

/** The races panel of arena `arena`, filled once its record arrives. */
export function arenaRecordPanel(app, arena) {
  const panel = h("div", { class: "arena-record" });
  showRecord(app, arena, panel);
  return panel;
}

/** Each race once, newest first: [race, [handle, outcome from that side], [handle, …], the winner's player id]. */
export function racesOf(record) {
  const handles = Object.fromEntries(record.players.map((player) => [player.player, player.handle]));
  const seen = new Map();
  for (const player of record.players) {
    for (const game of player.games) {
      if (seen.has(game.race)) continue;
      const winner = game.outcome === "won" ? player.player : game.outcome === "lost" ? game.opponent : null;
      seen.set(game.race, { race: game.race, a: player.handle, b: handles[game.opponent], outcome: game.outcome, winner, winnerHandle: winner && handles[winner] });
    }
  }
  return [...seen.values()].reverse();
}

async function showRecord(app, arena, panel) {
  let record;
  try {
    record = await app.conn.arenaRecord(arena);
  } catch (error) {
    fill(panel, h("p", { class: "error-text", role: "alert" }, errorText(error)));
    return;
  }
  const status = h("p", { class: "error-text", role: "alert" });
  const rows = racesOf(record).map((line) => h("tr", { dataset: { race: line.race } },
    h("td", {}, line.a, ` ${t("web.versus")} `, line.b),
    h("td", {}, line.winnerHandle ? t("web.arena.won_by", { handle: line.winnerHandle }) : t("web.arena.drawn")),
    h("td", {}, h("a", { href: `/replay/${line.race}`, dataset: { link: "", action: "replay" } }, t("web.replay"))),
    h("td", {}, line.winner ? h("button", { dataset: { action: "arena-ghost" }, onclick: () => raceWinner(app, line, status) }, t("web.arena.ghost")) : null)));
  fill(panel,
    h("h2", {}, t("web.arena.finished_races")),
    rows.length ? h("table", { class: "arena-race-list" }, h("tbody", {}, rows)) : h("p", { class: "empty" }, t("web.arena.no_races")),
    status,
    h("p", {}, h("button", { dataset: { action: "arena-record" }, onclick: () => download(arena, record) }, t(record.final ? "web.arena.record" : "web.arena.record_so_far")),
      " ", h("span", { class: "hint" }, t("web.arena.record_hint"))));
}

/** Race the winner of a finished race of the arena as a ghost: its seat comes from the race's own record. */
async function raceWinner(app, line, status) {
  try {
    const page = await app.conn.replayPage(line.race, 0);
    const seat = page.race.players.find((player) => player.player === line.winner);
    const seated = await app.conn.ghostRace("race", { race: line.race, slot: seat ? seat.slot : 0 });
    app.navigate(`/race/${seated.race.race}`, { seated });
  } catch (error) {
    status.textContent = errorText(error);
  }
}

/** The record as `flowergarden export --arena` writes it. */
function download(arena, record) {
  const fields = { format: "flowergarden-arena-record", version: 1, ...record };
  delete fields.type;
  delete fields.id;
  const text = JSON.stringify(fields, null, 1);
  const link = h("a", { href: URL.createObjectURL(new Blob([text + "\n"], { type: "application/json" })), download: `arena-${arena}.json` });
  document.body.append(link);
  link.click();
  link.remove();
}
