// The leaderboard (/leaderboard?profile=…): established (non-provisional) players of a profile, best rating
// first, page by page, with the viewer's own rank and rating. Bots are marked like everywhere else.

import { errorText } from "./refusals.js";
import { fill, h } from "./dom.js";
import { PROFILES, gamesText, playerLabel, ratingBadge } from "./players.js";

const PAGE = 50;

export function mountLeaderboard(root, app, params) {
  const view = new LeaderboardView(root, app, params.profile);
  view.start();
  return view;
}

class LeaderboardView {
  constructor(root, app, profile) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.profile = PROFILES.some(([value]) => value === profile) ? profile : "classic";
    this.offset = 0;
  }

  async start() {
    document.title = "Leaderboard · Flower Garden Race";
    fill(this.root, h("p", { class: "loading" }, "Loading the leaderboard…"));
    let board;
    try {
      board = await this.conn.leaderboard(this.profile, PAGE, this.offset);
    } catch (error) {
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, "No leaderboard"), h("p", { class: "error-text", role: "alert" }, errorText(error))));
      return;
    }
    const tabs = h("nav", { class: "tabs" }, PROFILES.map(([value, label]) =>
      h("a", { href: `/leaderboard?profile=${value}`, dataset: { link: "", profile: value }, class: value === this.profile ? "tab current" : "tab" }, label)));
    const rows = board.entries.map((entry) => this.row(entry, entry.player === this.conn.session.player));
    const table = h("table", { class: "leaderboard" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Player"), h("th", {}, "Rating"), h("th", {}, "±"), h("th", {}, "Games"))),
      h("tbody", {}, rows));
    const pager = h("div", { class: "actions" },
      this.offset > 0 ? h("button", { onclick: () => this.page(-PAGE) }, "« Better") : null,
      this.offset + PAGE < board.total ? h("button", { onclick: () => this.page(PAGE) }, "Next »") : null);
    fill(this.root, h("section", { class: "panel leaderboard-page", dataset: { profile: this.profile } },
      h("h1", {}, "Leaderboard"), tabs, this.own(board),
      board.entries.length ? table : h("p", { class: "empty" }, "Nobody is established in this profile yet: a rating counts here once its deviation is 110 or less (about 14 rated races)."),
      h("p", { class: "hint" }, `${board.total} established players. Provisional ratings (shown with ?) are not listed.`),
      pager));
  }

  row(entry, mine) {
    return h("tr", { class: mine ? "me" : "", dataset: { rank: String(entry.rank) } },
      h("td", {}, String(entry.rank)), h("td", {}, playerLabel({ account: entry.handle, bot: entry.bot })),
      h("td", { class: "rating" }, String(entry.rating)), h("td", {}, String(entry.deviation)), h("td", {}, String(entry.games)));
  }

  own(board) {
    if (!this.conn.session.account) return h("p", { class: "own-rank" }, h("a", { href: "/account", dataset: { link: "" } }, "Log in or register"), " to race rated and appear here.");
    const rating = board.own_rating;
    if (!rating) return h("p", { class: "own-rank" }, "You have no rated race in this profile yet.");
    const rank = board.own ? `You are #${board.own.rank} of ${board.total}` : "You are not listed yet (provisional rating)";
    return h("p", { class: "own-rank", dataset: { rank: board.own ? String(board.own.rank) : "" } }, `${rank} · your rating `, ratingBadge(rating), ` (±${rating.deviation}, ${gamesText(rating.games)})`);
  }

  page(step) {
    this.offset = Math.max(0, this.offset + step);
    this.start();
  }
}
