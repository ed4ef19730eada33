// The leaderboard (/leaderboard?profile=…): established (non-provisional) players of a profile, best rating
// first, page by page, with the viewer's own rank and rating. Bots are marked like everywhere else.

import { errorText } from "./refusals.js";
import { fill, h } from "./dom.js";
import { gamesText, playerLabel, profiles, ratingBadge } from "./players.js";
import { t, tn } from "./i18n.js";

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
    this.profile = profiles().some(([value]) => value === profile) ? profile : "classic";
    this.offset = 0;
  }

  async start() {
    document.title = `${t("web.nav.leaderboard")} · Flower Garden Race`;
    fill(this.root, h("p", { class: "loading" }, t("web.leaderboard.loading")));
    let board;
    try {
      board = await this.conn.leaderboard(this.profile, PAGE, this.offset);
    } catch (error) {
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t("web.leaderboard.none")), h("p", { class: "error-text", role: "alert" }, errorText(error))));
      return;
    }
    const tabs = h("nav", { class: "tabs", "aria-label": t("web.leaderboard.profiles") }, profiles().map(([value, label]) =>
      h("a", { href: `/leaderboard?profile=${value}`, dataset: { link: "", profile: value }, class: value === this.profile ? "tab current" : "tab" }, label)));
    const rows = board.entries.map((entry) => this.row(entry, entry.player === this.conn.session.player));
    const table = h("table", { class: "leaderboard" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, t("web.table.player")), h("th", {}, t("web.table.rating")), h("th", {}, "±"), h("th", {}, t("web.table.games")))),
      h("tbody", {}, rows));
    const pager = h("div", { class: "actions" },
      this.offset > 0 ? h("button", { onclick: () => this.page(-PAGE) }, t("web.leaderboard.better")) : null,
      this.offset + PAGE < board.total ? h("button", { onclick: () => this.page(PAGE) }, t("web.leaderboard.next")) : null);
    fill(this.root, h("section", { class: "panel leaderboard-page", dataset: { profile: this.profile } },
      h("h1", {}, t("web.nav.leaderboard")), tabs, this.own(board),
      board.entries.length ? table : h("p", { class: "empty" }, t("web.leaderboard.empty")),
      h("p", { class: "hint" }, tn("web.leaderboard.total", board.total)),
      pager));
  }

  row(entry, mine) {
    return h("tr", { class: mine ? "me" : "", dataset: { rank: String(entry.rank) } },
      h("td", {}, String(entry.rank)), h("td", {}, playerLabel({ account: entry.handle, bot: entry.bot })),
      h("td", { class: "rating" }, String(entry.rating)), h("td", {}, String(entry.deviation)), h("td", {}, String(entry.games)));
  }

  own(board) {
    if (!this.conn.session.account) return h("p", { class: "own-rank" }, h("a", { href: "/account", dataset: { link: "" } }, t("web.account.title")), " ", t("web.leaderboard.login_to_appear"));
    const rating = board.own_rating;
    if (!rating) return h("p", { class: "own-rank" }, t("web.leaderboard.no_rating"));
    const rank = board.own ? t("web.leaderboard.rank", { rank: board.own.rank, total: board.total }) : t("web.leaderboard.not_listed");
    return h("p", { class: "own-rank", dataset: { rank: board.own ? String(board.own.rank) : "" } }, `${rank} · ${t("web.leaderboard.your_rating")} `, ratingBadge(rating), ` (±${rating.deviation}, ${gamesText(rating.games)})`);
  }

  page(step) {
    this.offset = Math.max(0, this.offset + step);
    this.start();
  }
}
