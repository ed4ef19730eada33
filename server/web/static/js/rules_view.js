// The rules page (/rules): what Flower Garden is, a real deal with its parts named, the moves, the two rule
// profiles and their options, and how a race is decided. Facts from docs/NOTATION.md and docs/PROTOCOL.md.

import { BoardView } from "./board_view.js";
import { fill, h } from "./dom.js";
import { Board } from "./engine.js";
import { t } from "./i18n.js";

const PICTURE_SEED = 15n;

function section(title, ...body) {
  return h("section", { class: "panel rules-section" }, h("h2", {}, title), ...body);
}

/** A list item that starts with its term in bold: "**Six columns** of six cards each. …". */
function term(termKey, restKey) {
  return h("span", {}, h("strong", {}, t(termKey)), t(restKey));
}

function list(...items) {
  return h("ul", {}, items.map((item) => h("li", {}, item)));
}

/** The page's text: one function per section, in reading order. */
function sections() {
  return [
    section(t("web.rules.game"),
      h("p", {}, t("web.rules.game_1")),
      h("p", {}, t("web.rules.game_2")),
    ),
    section(t("web.rules.deal"),
      list(
        term("web.rules.deal_columns_term", "web.rules.deal_columns"),
        term("web.rules.deal_bouquet_term", "web.rules.deal_bouquet"),
        term("web.rules.deal_foundations_term", "web.rules.deal_foundations"),
      ),
    ),
    section(t("web.rules.move"),
      list(...["one_card", "foundation", "column", "empty", "nothing_back"].map((item) => t(`web.rules.move_${item}`))),
      h("p", {}, t("web.rules.move_example")),
    ),
    section(t("web.rules.winning"),
      list(...["first", "count", "stuck", "time_limit", "abandoned"].map((item) => t(`web.rules.winning_${item}`))),
    ),
    section(t("web.rules.profiles"),
      list(
        term("web.profile.classic", "web.rules.profiles_classic"),
        term("web.profile.foundation_only", "web.rules.profiles_foundation_only"),
        term("web.race.undo", "web.rules.profiles_undo"),
        term("web.rules.profiles_redeal_term", "web.rules.profiles_redeal"),
      ),
    ),
    section(t("web.rules.fair"),
      h("p", {}, t("web.rules.fair_text")),
    ),
  ];
}

export function mountRules(root) {
  document.title = `${t("web.nav.rules")} · Flower Garden Race`;
  const figure = h("figure", { class: "panel rules-figure" });
  const picture = h("div", { class: "table rules-table" });
  figure.append(picture, h("figcaption", {}, t("web.rules.figure")));
  fill(root, h("div", { class: "rules-page" },
    h("h1", {}, t("web.rules.title")),
    h("p", { class: "rules-lead" }, t("web.rules.lead"), " ",
      h("a", { href: "/", dataset: { link: "" } }, t("web.to_lobby")), " ", t("web.rules.when_ready")),
    figure,
    ...sections()));
  new BoardView(picture, { interactive: false, label: t("web.rules.example_deal") }).render(Board.deal(PICTURE_SEED, { profile: "classic" }));
  return { unmount() {} };
}
