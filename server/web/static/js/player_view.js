// A player's page (/player/<handle>): stats per profile and the finished races, newest first, page by page,
// each with its opponent, outcome, rating change and a link to its replay.

import { ServerError } from "./connection.js";
import { errorText } from "./refusals.js";
import { ageText, clockText, endingText, fill, h, worded } from "./dom.js";
import { abortedBadge, profiles, playerLabel, ratingBadge, ratingChangeCell } from "./players.js";
import { t, tn } from "./i18n.js";
import { ratedLines, ratingGraphs } from "./rating_graph.js";

const PAGE = 20;

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
    fill(this.root, h("p", { class: "loading" }, t("web.player.loading")));
    let stats;
    let history;
    try {
      [stats, history] = await Promise.all([this.conn.stats(this.handle), this.conn.history(this.handle, this.offset, PAGE)]);
    } catch (error) {
      const unknown = error instanceof ServerError && error.code === "unknown_account";
      fill(this.root, h("div", { class: "panel entry" }, h("h1", {}, t(unknown ? "web.player.unknown" : "web.player.cannot_show")),
        h("p", { class: "error-text", role: "alert" }, unknown ? t("web.player.unknown_text", { handle: this.handle }) : errorText(error)),
        h("a", { class: "button", href: "/", dataset: { link: "" } }, t("web.to_lobby"))));
      return;
    }
    const graphs = h("div", { class: "rating-graphs" }, h("p", { class: "loading" }, t("web.player.loading")));
    fill(this.root, h("div", { class: "player-page", dataset: { handle: stats.handle } },
      h("section", { class: "panel" }, h("h1", {}, playerLabel({ account: stats.handle, bot: stats.bot }, { link: false })), this.statsTable(stats)),
      h("section", { class: "panel rating-panel" }, h("h2", {}, t("web.player.rating_graph")), graphs),
      h("section", { class: "panel" }, h("h2", {}, t("web.player.races")), this.historyList(history),
        h("p", {}, h("a", { href: `/ghost?handle=${encodeURIComponent(stats.handle)}`, dataset: { link: "", action: "ghost-picker" } }, t("web.player.ghosts", { handle: stats.handle }))))));
    ratedLines(this.conn, stats.handle).then((lines) => fill(graphs, ratingGraphs(lines)), (error) => fill(graphs, h("p", { class: "error-text" }, errorText(error))));
  }

  statsTable(stats) {
    if (!stats.profiles.length) return h("p", { class: "empty" }, t("web.player.no_race"));
    const label = (profile) => (profiles().find(([value]) => value === profile) || [profile, profile])[1];
    return h("table", { class: "stats" },
      h("thead", {}, h("tr", {}, ["profile", "rating", "races", "won", "lost", "drawn", "clears", "best_clear", "average_cards"].map((column) => h("th", {}, t(`web.stats.${column}`))))),
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
        h("span", {}, h("strong", { class: "outcome" }, worded("outcome", item.outcome)), ` ${t("web.versus")} `, playerLabel(item.opponent, { ghost: Boolean(item.ghost) })),
        h("span", { class: "settings-text" }, [item.ghost ? t("web.setting.ghost", { ghost: item.ghost }) : null, worded("profile", item.profile), item.rated ? t("setting.rated") : null, t("web.player.count_in", { count: item.count, clock: clockText(item.time_ms) }), tn("web.moves", item.moves), endingText(item.ended)].filter(Boolean).join(" · "))),
      h("div", { class: "meta" }, item.rating ? ratingChangeCell(item.rating) : item.aborted ? abortedBadge(item.aborted) : t("web.player.casual"), " · ", ageText(now - item.finished_at)),
      item.replay_available
        ? h("a", { class: "button", href: `/replay/${item.race}`, dataset: { link: "", action: "replay" } }, t("web.replay"))
        : h("span", { class: "hint", title: t("web.player.expired_title") }, t("web.player.expired"))));
    const pager = h("div", { class: "actions" },
      this.offset > 0 ? h("button", { onclick: () => this.page(-PAGE) }, t("web.player.newer")) : null,
      this.offset + PAGE < history.total ? h("button", { onclick: () => this.page(PAGE) }, t("web.player.older")) : null,
      h("span", { class: "hint" }, tn("web.races", history.total)));
    return [rows.length ? h("div", { class: "race-list", id: "history" }, rows) : h("p", { class: "empty" }, t("web.player.no_race")), pager];
  }

  page(step) {
    this.offset = Math.max(0, this.offset + step);
    this.start();
  }
}
