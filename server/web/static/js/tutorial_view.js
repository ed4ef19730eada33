// The first-race tutorial (/tutorial): a small fixed deal played on this page alone (the engine, no server), one
// step at a time: a legal move to a foundation, a refused move said in words, building on a column, a bouquet card,
// then clearing the board for a win. A first-time visitor is offered it in the lobby (tutorial_offer.js).

import { BoardView } from "./board_view.js";
import { fill, h } from "./dom.js";
import { Board, parseCard } from "./engine.js";
import { refusalWords } from "./refusals.js";
import { TUTORIAL_KEY } from "./tutorial_offer.js";
import { cardPlaces, celebrate, fly, play, soundSwitch } from "./feel.js";


/** The deal: every foundation already up to its ten, the jacks, queens and kings left (always winnable: a jack is
 * never covered, and once the jacks are up nothing covers a queen). */
export const TUTORIAL_LAYOUT = {
  columns: [["KC", "JD"], ["QS", "JC"], ["KD", "QD"], ["KH", "JH"], ["QC"], ["KS", "QH"]].map((column) => column.map(parseCard)),
  bouquet: ["JS"].map(parseCard),
  foundations: [10, 10, 10, 10],
};

/** The page's words (one place, for the translations). */
const TEXT = {
  title: "Your first race: a tutorial",
  intro: "A small deal, on this page only: the foundations already hold every card up to the tens. Nothing here is sent to the server.",
  restart: "Start over",
  lobby: "To the lobby",
  rules: "The rules in full",
  won: "You cleared the board: in a race, that wins at once. Ready for a real one?",
  refused: (words) => `Refused: ${words}. Nothing moved — in a race the server says the same and your board stays as it was.`,
  stepOf: (index, total) => `Step ${index} of ${total}`,
};

/** The steps: what to do, and when it is done (checked on the board after each move, or on a refusal). */
const STEPS = [
  {
    say: "Move the J♦ (column 1) to its foundation: click it, then the foundations — or double-click it. The foundations take each suit in order, ace to king, and hold ♦ up to the 10.",
    done: ({ board }) => board.foundations[1] >= 11,
  },
  {
    say: "Now try a move the rules refuse: put the Q♦ (column 3) on the Q♣ (column 5). A column takes only a card one rank lower than its last card.",
    done: ({ refused }) => refused,
  },
  {
    say: "That is how columns build: one rank down, any suit. Put the J♥ (column 4) on the Q♣ (column 5).",
    done: ({ board }) => board.columns[4].length === 2,
  },
  {
    say: "The bouquet's cards (below the columns) can all be moved at any time, in any order. Play the J♠ from the bouquet to its foundation.",
    done: ({ board }) => !board.bouquet.length,
  },
  {
    say: "Now clear the board: every card to the foundations. In a race, the first to clear wins.",
    done: ({ board }) => board.count === 52,
  },
];

export function mountTutorial(root, app) {
  const view = new TutorialView(root, app);
  view.start();
  return view;
}

class TutorialView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
  }

  start() {
    document.title = "Tutorial · Flower Garden Race";
    this.board = new Board(TUTORIAL_LAYOUT, { profile: "classic" });
    this.step = 0;
    this.refused = false;
    this.finished = false;
    this.notice = h("p", { class: "tutorial-notice", role: "status", "aria-live": "polite" });
    this.prompt = h("p", { class: "tutorial-step", "aria-live": "polite" });
    this.counter = h("p", { class: "hint tutorial-counter" });
    const table = h("div", { class: "table tutorial-table" });
    this.table = table;
    this.boardView = new BoardView(table, { interactive: true, label: "your board", onMove: (move) => this.move(move) });
    fill(this.root, h("div", { class: "tutorial-page" },
      h("section", { class: "panel" }, h("h1", {}, TEXT.title), h("p", {}, TEXT.intro), this.counter, this.prompt, this.notice,
        h("div", { class: "actions" },
          h("button", { dataset: { action: "restart-tutorial" }, onclick: () => this.start() }, TEXT.restart),
          h("a", { class: "button ghost", href: "/rules", dataset: { link: "" } }, TEXT.rules),
          h("a", { class: "button ghost", href: "/", dataset: { link: "" } }, TEXT.lobby),
          soundSwitch())),
      table));
    this.render();
  }

  move(move) {
    const refusal = this.board.check(move);
    const places = cardPlaces(this.boardView.root);
    if (refusal) {
      this.refused = true;
      play("refusal");
      this.say(TEXT.refused(refusalWords(refusal, move, this.board) || refusal), refusal);
    } else {
      this.board.play(move);
      play("move");
      this.say("");
    }
    this.advance();
    this.render();
    if (!refusal) fly(this.boardView.root, places, move.card);
  }

  /** Move on past every step whose goal is met (a player may do a later step first). */
  advance() {
    while (this.step < STEPS.length && STEPS[this.step].done({ board: this.board, refused: this.refused })) {
      this.step += 1;
      this.refused = false;
    }
    if (this.board.count === 52) this.finish();
  }

  finish() {
    if (this.finished) return;
    this.finished = true;
    localStorage.setItem(TUTORIAL_KEY, "done");
    play("win");
    celebrate(this.table);
  }

  say(text, code = null) {
    this.notice.textContent = text;
    this.notice.classList.toggle("refusal", Boolean(code));
    if (code) this.notice.dataset.code = code;
    else delete this.notice.dataset.code;
  }

  render() {
    const done = this.step >= STEPS.length;
    this.prompt.textContent = done ? TEXT.won : STEPS[this.step].say;
    this.prompt.dataset.step = done ? "done" : String(this.step + 1);
    this.counter.textContent = done ? "" : TEXT.stepOf(this.step + 1, STEPS.length);
    this.boardView.render(this.board, null, !done);
    const table = this.boardView.root.parentElement;
    this.boardView.fit({ width: table.clientWidth || 800, height: Math.max(320, window.innerHeight - table.getBoundingClientRect().top - 16) });
  }
}
