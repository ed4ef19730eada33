// A player's page (/player/<handle>): stats per profile and the finished races, newest first, page by page,
// each with its opponent, outcome, rating change and a link to its replay.

import { ServerError } from "./connection.js";
import { errorText } from "./refusals.js";
import { ageText, endingText, clockText, fill, h } from "./dom.js";
import { PROFILES, abortedBadge, playerLabel, ratingBadge, ratingChangeCell } from "./players.js";

const PAGE = 20;
const OUTCOMES = { won: "won", lost: "lost", draw: "draw" };

export function mountPlayer(root, app, params) {
  const view = new PlayerView(root, app, params.handle);
  view.start();
  return view;
}

class PlayerView {
  constructor(root, app, handle) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.handle = handle;
    this.offset = 0;
  }

  async start() {
    document.title = `${this.handle} · Flower Garden Race`;
    fill(this.root, h("p", { class: "loading" }, "Loading the player…"));
    let stats;
    let history;
    try {
      [stats, history] = await Promise.all([this.conn.stats(this.handle), this.conn.history(this.handle, this.offset, PAGE)]);
    } catch (error) {
      const unknown = error instanceof ServerError && error.code === "unknown_account";
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, unknown ? "No such player" : "Cannot show this player"),
        h("p", { class: "error-text", role: "alert" }, unknown ? `Nobody registered the handle ${this.handle}.` : errorText(error)),
        h("a", { class: "button", href: "/", dataset: { link: "" } }, "To the lobby")));
      return;
    }
    fill(this.root, h("div", { class: "player-page", dataset: { handle: stats.handle } },
      h("section", { class: "panel" }, h("h1", {}, playerLabel({ account: stats.handle, bot: stats.bot }, { link: false })), this.statsTable(stats)),
      h("section", { class: "panel" }, h("h2", {}, "Races"), this.historyList(history))));
  }

  statsTable(stats) {
    if (!stats.profiles.length) return h("p", { class: "empty" }, "No finished race yet.");
    const label = (profile) => (PROFILES.find(([value]) => value === profile) || [profile, profile])[1];
    return h("table", { class: "stats" },
      h("thead", {}, h("tr", {}, ["Profile", "Rating", "Races", "Won", "Lost", "Drawn", "Clears", "Best clear", "Average cards"].map((title) => h("th", {}, title)))),
      h("tbody", {}, stats.profiles.map((profile) => h("tr", { dataset: { profile: profile.profile } },
        h("td", {}, label(profile.profile)), h("td", {}, ratingBadge(profile.rating)), h("td", {}, String(profile.races)), h("td", {}, String(profile.wins)),
        h("td", {}, String(profile.losses)), h("td", {}, String(profile.draws)), h("td", {}, String(profile.clears)),
        h("td", {}, profile.best_clear_ms === null || profile.best_clear_ms === undefined ? "—" : clockText(profile.best_clear_ms)),
        h("td", {}, profile.average_count.toFixed(1))))));
  }

  historyList(history) {
    const now = this.conn.serverNow();
    const rows = history.items.map((item) => h("div", { class: `race-row history-row ${item.outcome}`, dataset: { race: item.race } },
      h("div", { class: "who" },
        h("span", {}, h("strong", { class: "outcome" }, OUTCOMES[item.outcome] || item.outcome), " vs ", playerLabel(item.opponent)),
        h("span", { class: "settings-text" }, `${item.profile}${item.rated ? " · rated" : ""} · ${item.count}/52 in ${clockText(item.time_ms)} · ${item.moves} move${item.moves === 1 ? "" : "s"} · ${endingText(item.ended)}`)),
      h("div", { class: "meta" }, item.rating ? ratingChangeCell(item.rating) : item.aborted ? abortedBadge(item.aborted) : "casual", " · ", ageText(now - item.finished_at)),
      item.replay_available
        ? h("a", { class: "button", href: `/replay/${item.race}`, dataset: { link: "", action: "replay" } }, "Replay")
        : h("span", { class: "hint", title: "casual race records expire after the server's record time" }, "replay expired")));
    const pager = h("div", { class: "actions" },
      this.offset > 0 ? h("button", { onclick: () => this.page(-PAGE) }, "« Newer") : null,
      this.offset + PAGE < history.total ? h("button", { onclick: () => this.page(PAGE) }, "Older »") : null,
      h("span", { class: "hint" }, `${history.total} race${history.total === 1 ? "" : "s"}`));
    return [rows.length ? h("div", { class: "race-list", id: "history" }, rows) : h("p", { class: "empty" }, "No finished race yet."), pager];
  }

  page(step) {
    this.offset = Math.max(0, this.offset + step);
    this.start();
  }
}
