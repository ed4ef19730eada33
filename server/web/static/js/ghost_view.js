// The ghost picker (/ghost, /ghost?handle=Ann; docs/COMMUNITY.md "Ghost races"): a player's finished races, your
// own by default, best first (clears by time, then the most cards), each raced as a ghost at its recorded pace; the
// daily deal's and the tournaments' ghosts are offered on their own pages (a finished day's leaderboard, an arena's
// races), which this page links to.

import { errorText } from "./refusals.js";
import { clockText, field, fill, h, worded } from "./dom.js";
import { playerLabel } from "./players.js";
import { t, tn } from "./i18n.js";

const PAGE = 50;

export function mountGhost(root, app, params) {
  const view = new GhostView(root, app, params.handle);
  view.start();
  return view;
}

/** Best first: the clears by time, then the most cards on the foundations, then the fastest. */
export function bestFirst(items) {
  const cleared = (item) => (item.ended === "cleared" ? 0 : 1);
  return [...items].sort((a, b) => cleared(a) - cleared(b) || (cleared(a) ? b.count - a.count : 0) || a.time_ms - b.time_ms);
}

class GhostView {
  constructor(root, app, handle) {
    this.root = root;
    this.app = app;
    this.conn = app.conn;
    this.handle = handle || this.conn.session.account || "";
  }

  start() {
    document.title = `${t("web.ghost.title")} · Flower Garden Race`;
    const handle = h("input", { name: "handle", maxlength: "32", value: this.handle, placeholder: t("web.ghost.handle_hint") });
    this.list = h("div", { class: "ghost-races" });
    this.status = h("p", { class: "error-text", role: "alert" });
    const submit = (event) => {
      event.preventDefault();
      this.handle = handle.value.trim();
      history.replaceState({}, "", this.handle ? `/ghost?handle=${encodeURIComponent(this.handle)}` : "/ghost");
      this.races();
    };
    fill(this.root, h("section", { class: "panel ghost-page" },
      h("h1", {}, t("web.ghost.title")),
      h("p", {}, t("web.ghost.intro")),
      h("form", { dataset: { form: "ghost" }, onsubmit: submit }, field(t("web.ghost.handle"), handle), h("button", { type: "submit", class: "primary" }, t("web.ghost.show"))),
      this.status, this.list,
      h("h2", {}, t("web.ghost.elsewhere")),
      h("ul", {},
        h("li", {}, h("a", { href: "/daily", dataset: { link: "" } }, t("web.ghost.daily"))),
        h("li", {}, h("a", { href: "/arena", dataset: { link: "" } }, t("web.ghost.arena"))))));
    if (this.handle) this.races();
  }

  /** The handle's finished races that can still be replayed, best first, each with its button. */
  async races() {
    this.status.textContent = "";
    let page;
    try {
      page = await this.conn.history(this.handle, 0, PAGE);
    } catch (error) {
      fill(this.list);
      this.status.textContent = errorText(error);
      return;
    }
    const items = bestFirst(page.items.filter((item) => item.replay_available));
    const rows = items.map((item, index) => h("div", { class: "race-row ghost-row", dataset: { race: item.race, slot: String(item.slot) } },
      h("div", { class: "who" },
        h("span", {}, h("strong", {}, page.handle), index === 0 ? h("span", { class: "tag best" }, t("web.ghost.best")) : null, ` ${t("web.versus")} `, playerLabel(item.opponent, { ghost: Boolean(item.ghost) })),
        h("span", { class: "settings-text" }, [worded("profile", item.profile), t("web.player.count_in", { count: item.count, clock: clockText(item.time_ms) }), tn("web.moves", item.moves)].join(" · "))),
      h("button", { class: "primary", dataset: { action: "ghost-race" }, onclick: () => this.race(item) }, t("web.daily.ghost"))));
    fill(this.list, rows.length ? h("div", { class: "race-list" }, rows) : h("p", { class: "empty" }, t("web.ghost.none", { handle: page.handle })));
  }

  /** Race that seat of that race as a ghost: the race page, the ghost in the opponent's seat. */
  async race(item) {
    try {
      const seated = await this.conn.ghostRace("race", { race: item.race, slot: item.slot });
      this.app.navigate(`/race/${seated.race.race}`, { seated });
    } catch (error) {
      this.status.textContent = errorText(error);
    }
  }
}
