// Draws one player's board as a solitaire table and, when interactive, turns clicks, drags, double-clicks
// and taps into moves. Highlights come from the engine's rules (display only); every move goes to the server.
// Markup: each card carries data-card="5D", each pile data-pile="b" (bouquet), "f" (foundations) or "1".."6".

import { FOUNDATION, SUIT_NAMES, SUIT_SYMBOLS, rankOf, suitOf } from "./engine.js";
import { h } from "./dom.js";
import { fitTable } from "./table_fit.js";
import { cardScale } from "./settings.js";
import { t } from "./i18n.js";

const RANK_WORDS = { 1: "web.card.ace", 11: "web.card.jack", 12: "web.card.queen", 13: "web.card.king" };

/** A card's name for assistive tools: "queen of hearts", "dama de copas". */
function cardName(card, suit) {
  const rank = rankOf(card);
  return t("web.card.name", { rank: RANK_WORDS[rank] ? t(RANK_WORDS[rank]) : String(rank), suit: t(`web.card.suit.${SUIT_NAMES[suit]}`) });
}

function cardElement(card, classes = "") {
  const suit = suitOf(card);
  const rank = card[0] === "T" ? "10" : card[0];
  return h(
    "button",
    {
      type: "button",
      class: `card suit-${"cdhs"[suit]} ${suit === 1 || suit === 2 ? "red" : "black"} ${classes}`,
      dataset: { card },
      draggable: "false",
      // Only a card that can be picked up is in the Tab order (Tab, Enter, then f or 1-6 plays it): not the covered
      // cards, the foundations' or a spectator's, which a click does nothing with.
      tabindex: /\bavailable\b/.test(classes) ? null : "-1",
    },
    // The card's name is its text for a screen reader ("jack of diamonds"); the corner and face it shows are drawings
    // of the same, hidden from it (an aria-label unlike the visible "J♦" failed axe's label-content-name-mismatch).
    h("span", { class: "sr-only" }, cardName(card, suit)),
    h("span", { class: "corner", "aria-hidden": "true" }, h("span", { class: "rank" }, rank), h("span", { class: "pip" }, SUIT_SYMBOLS[suit])),
    h("span", { class: "face", "aria-hidden": "true" }, SUIT_SYMBOLS[suit]),
  );
}

/** The bouquet as people sort a hand: by suit (clubs, diamonds, hearts, spades), then by rank. */
export function sortedBouquet(cards) {
  return [...cards].sort((a, b) => suitOf(a) - suitOf(b) || rankOf(a) - rankOf(b));
}

export class BoardView {
  /** options: interactive (bool), onMove({card, from, to}) for the player's own board, label (aria). */
  constructor(container, options = {}) {
    this.container = container;
    this.interactive = !!options.interactive;
    this.onMove = options.onMove || (() => {});
    this.onSelect = options.onSelect || (() => {});
    this.emptyText = options.emptyText || (() => t("web.watch.dealt_at_start"));
    this.board = null;
    this.selected = null;
    this.pending = null;
    this.drag = null;
    this.suppressClick = false;
    this.root = h("section", { class: `board${this.interactive ? " interactive" : ""}`, "aria-label": options.label || t("web.board.board") });
    container.append(this.root);
    if (this.interactive) this.listen();
  }

  /**
   * Draw `board` (an engine Board, or null before the deal). pending: the card of a move awaiting the server.
   * live: whether the player may move now (an interactive board's cards look playable only then: not during the
   * countdown, nor once the attempt or the race has ended).
   */
  render(board, pending = null, live = true) {
    const drawn = board ? `${board.actions}|${pending}|${live}` : `none|${this.emptyText()}`; // an undealt board's text may change
    if (board === this.board && drawn === this.drawn) return this.mark(); // unchanged: keep the elements (double-clicks)
    this.drawn = drawn;
    this.live = live;
    this.root.classList.toggle("interactive", this.interactive && live);
    this.board = board;
    this.pending = pending;
    if (this.selected && (!board || board.sourceOf(this.selected) === null)) this.selected = null;
    const focused = this.focusedPlace();
    this.root.replaceChildren();
    this.draw(board, pending);
    if (focused) this.refocus(focused);
  }

  /** Where keyboard focus is on this board before a redraw: the card, its pile, its place among the pile's and the
   * board's available cards; null when focus is elsewhere. */
  focusedPlace() {
    const active = document.activeElement;
    const pile = active && active.dataset && active.dataset.card && this.root.contains(active) ? active.closest("[data-pile]") : null;
    if (!pile) return null;
    const available = [...this.root.querySelectorAll(".card.available")];
    const inPile = available.filter((node) => node.closest("[data-pile]") === pile);
    return { card: active.dataset.card, pile: pile.dataset.pile, inPile: Math.max(0, inPile.indexOf(active)), overall: Math.max(0, available.indexOf(active)) };
  }

  /** After a redraw (a move played), keep the keyboard player on the board: the same card if it can still move,
   * else the card now at its place (a column's new last card, the bouquet's next card), else the next movable one. */
  refocus(place) {
    const available = [...this.root.querySelectorAll(".card.available")];
    if (!available.length) return;
    const inPile = available.filter((node) => node.closest("[data-pile]").dataset.pile === place.pile);
    const target =
      available.find((node) => node.dataset.card === place.card) ||
      inPile[Math.min(place.inPile, inPile.length - 1)] ||
      available[Math.min(place.overall, available.length - 1)];
    target.focus();
  }

  draw(board, pending) {
    if (!board) {
      this.root.append(h("p", { class: "board-empty" }, this.emptyText()));
      return;
    }
    const playing = this.interactive && this.live;
    const playable = new Set(playing ? board.playable() : []);
    const targets = new Set(this.selected ? board.destinations(this.selected) : []);
    const last = board.lastMove && board.lastMove.card;
    const classesOf = (card, available) =>
      [
        available && playing ? "available" : "",
        playable.has(card) ? "playable" : "",
        card === this.selected ? "selected" : "",
        card === pending ? "pending" : "",
        card === last ? "last-move" : "",
      ].join(" ");

    const tops = board.foundationTops();
    const foundations = h(
      "div",
      { class: `pile foundations${targets.has(FOUNDATION) ? " target" : ""}`, dataset: { pile: "f" }, "aria-label": t("web.board.foundations") },
      tops.map((top, suit) =>
        h(
          "div",
          { class: "foundation", dataset: { suit: "CDHS"[suit] }, "aria-label": t("web.board.suit_foundation", { suit: t(`web.card.suit.${SUIT_NAMES[suit]}`) }) },
          top ? cardElement(top, "on-foundation" + (top === last ? " last-move" : "")) : h("span", { class: `slot-mark suit-${"cdhs"[suit]}` }, SUIT_SYMBOLS[suit]),
        ),
      ),
    );
    const score = h("div", { class: "score", "aria-live": "polite" }, h("strong", {}, String(board.count)), " / 52");
    const columns = h(
      "div",
      { class: "columns" },
      board.columns.map((column, index) =>
        h(
          "div",
          { class: `pile column${targets.has(String(index + 1)) ? " target" : ""}`, dataset: { pile: String(index + 1) }, "aria-label": t("web.board.column", { number: index + 1 }) },
          column.length ? column.map((card, depth) => cardElement(card, classesOf(card, depth === column.length - 1))) : h("span", { class: "slot-mark" }, String(index + 1)),
        ),
      ),
    );
    const bouquet = h(
      "div",
      { class: "pile bouquet", dataset: { pile: "b" }, "aria-label": t("web.board.bouquet") },
      board.bouquet.length ? sortedBouquet(board.bouquet).map((card) => cardElement(card, classesOf(card, true))) : h("span", { class: "slot-mark" }, t("web.board.bouquet_empty")),
    );
    this.root.append(h("div", { class: "board-top" }, foundations, score), columns, h("div", { class: "bouquet-area" }, h("div", { class: "bouquet-label" }, t("web.board.bouquet_title")), bouquet));
  }

  /**
   * Size the cards so that the whole table fits `available` ({width, height} in px), scaled by the card-size
   * setting (settings.js): the longest column and the bouquet as they are now (table_fit.js). Sets the board's --card-w and --overlap, and `wide` when the bouquet goes
   * beside the columns.
   */
  fit(available) {
    if (!this.board) return;
    const longest = Math.max(...this.board.columns.map((column) => column.length));
    const [widthScale, heightScale] = cardScale(); // the card-size setting: smaller, or taller than the screen
    const scaled = { width: available.width * widthScale, height: available.height * heightScale };
    const { card, overlap, wide } = fitTable(scaled, longest, this.board.bouquet.length);
    this.root.style.setProperty("--card-w", `${card}px`);
    this.root.style.setProperty("--overlap", `${overlap}px`);
    this.root.classList.add("fitted");
    this.root.classList.toggle("wide", wide);
  }

  /** Select an available card (keyboard entry, clicks); null clears. */
  select(card) {
    this.selected = card && this.board && this.board.sourceOf(card) !== null ? card : null;
    this.mark();
    this.onSelect(this.selected);
  }

  /** Show the selection and its legal destinations without redrawing (a double-click needs the same element). */
  mark() {
    const targets = new Set(this.selected && this.board ? this.board.destinations(this.selected) : []);
    for (const node of this.root.querySelectorAll(".card.selected")) node.classList.remove("selected");
    if (this.selected) this.root.querySelector(`[data-pile]:not(.foundations) [data-card="${this.selected}"]`)?.classList.add("selected");
    for (const pile of this.root.querySelectorAll("[data-pile]")) pile.classList.toggle("target", targets.has(pile.dataset.pile));
  }

  sendTo(card, to) {
    const from = this.board.sourceOf(card);
    this.selected = null;
    if (from === null) return;
    this.onMove({ card, from, to });
  }

  listen() {
    this.root.addEventListener("click", (event) => {
      if (this.suppressClick) {
        this.suppressClick = false;
        return;
      }
      const cardNode = event.target.closest("[data-card]");
      const pileNode = event.target.closest("[data-pile]");
      if (!pileNode || !this.board) return;
      const card = cardNode && cardNode.dataset.card;
      const pile = pileNode.dataset.pile;
      const available = card && !cardNode.classList.contains("on-foundation") && this.board.sourceOf(card) !== null;
      if (this.selected) {
        if (card === this.selected) return this.select(null);
        if (pile !== "b") return this.sendTo(this.selected, pile);
      }
      if (available) this.select(card);
    });
    this.root.addEventListener("dblclick", (event) => {
      const cardNode = event.target.closest("[data-card]");
      if (!cardNode || !this.board || cardNode.classList.contains("on-foundation")) return;
      const card = cardNode.dataset.card;
      if (this.board.sourceOf(card) !== null) this.sendTo(card, FOUNDATION);
    });
    this.root.addEventListener("pointerdown", (event) => this.pointerDown(event));
  }

  pointerDown(event) {
    const cardNode = event.target.closest("[data-card]");
    // Touch screens scroll with a finger: there a card is tapped, then its destination (no drag).
    if (!cardNode || !this.board || event.button !== 0 || event.pointerType === "touch" || cardNode.classList.contains("on-foundation")) return;
    const card = cardNode.dataset.card;
    if (this.board.sourceOf(card) === null) return;
    const start = { x: event.clientX, y: event.clientY };
    let ghost = null;
    const move = (moving) => {
      if (!ghost && Math.hypot(moving.clientX - start.x, moving.clientY - start.y) < 8) return;
      if (!ghost) {
        this.select(card);
        ghost = cardElement(card, "ghost");
        document.body.append(ghost);
      }
      ghost.style.left = `${moving.clientX - 20}px`;
      ghost.style.top = `${moving.clientY - 20}px`;
      moving.preventDefault();
    };
    const up = (lifted) => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", up);
      if (!ghost) return;
      ghost.remove();
      this.suppressClick = true;
      setTimeout(() => (this.suppressClick = false), 0);
      const below = document.elementFromPoint(lifted.clientX, lifted.clientY);
      const pile = below && this.root.contains(below) ? below.closest("[data-pile]") : null;
      if (pile && pile.dataset.pile !== "b" && pile.dataset.pile !== this.board.sourceOf(card)) this.sendTo(card, pile.dataset.pile);
      else this.select(null);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", up);
  }
}
