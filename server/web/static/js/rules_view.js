// The rules page (/rules): what Flower Garden is, a real deal with its parts named, the moves, the two rule
// profiles and their options, and how a race is decided. Facts from docs/NOTATION.md and docs/PROTOCOL.md.

import { BoardView } from "./board_view.js";
import { fill, h } from "./dom.js";
import { Board } from "./engine.js";

const PICTURE_SEED = 15n;

function section(title, ...body) {
  return h("section", { class: "panel rules-section" }, h("h2", {}, title), ...body);
}

function list(...items) {
  return h("ul", {}, items.map((item) => h("li", {}, item)));
}

/** The page's text: one function per section, in reading order. */
function sections() {
  return [
    section("The game",
      h("p", {}, "Flower Garden is a patience (solitaire) game with one pack of 52 cards, all face up from the start: nothing is hidden and nothing is left to luck once the cards are dealt. The goal is to move every card to four foundations, one per suit, built up from the ace to the king."),
      h("p", {}, "In a race two players get the same deal at the same moment, each on a board of their own. Both see how far the other has got, never the other's cards."),
    ),
    section("The deal",
      list(
        h("span", {}, h("strong", {}, "Six columns"), " of six cards each. Only the last card of a column — the one at the bottom, not covered by another — can be moved."),
        h("span", {}, h("strong", {}, "The bouquet"), ": the other 16 cards, spread out. ", h("em", {}, "Every"), " bouquet card can be moved at any time, in any order."),
        h("span", {}, h("strong", {}, "Four foundations"), ", empty at the start: one for each suit (♣ ♦ ♥ ♠)."),
      ),
    ),
    section("A move",
      list(
        "One card at a time: the last card of a column, or any card of the bouquet.",
        "To its foundation, when it is the next card of its suit there: the ace first, then the two, up to the king.",
        "Onto a column whose last card is exactly one rank higher, whatever its suit or colour: the 5♦ may go on the 6♣, the 6♥ or any six.",
        "Any card may go to an empty column.",
        "Nothing goes back to the bouquet and nothing leaves a foundation. There is no wrap from king to ace.",
      ),
      h("p", {}, "Example: the bouquet holds 4♦ and 5♦ and a column ends in 6♣. Move the 5♦ from the bouquet onto the 6♣; later the 4♦ may follow onto the 5♦."),
    ),
    section("Winning a race",
      list(
        "The first player to put all 52 cards on the foundations wins.",
        "If neither clears the board, the player with more cards on the foundations wins; with the same count, the one who reached it first; at the same moment, it is a draw.",
        "A player who sees no way on can declare themselves stuck, or resign: the attempt ends and its cards on the foundations still count.",
        "A race may have a time limit: when it runs out, the counts decide.",
        "A player who leaves and does not come back within the grace period has abandoned: the attempt ends there, its count still counts, and in a rated race the player still racing wins.",
      ),
    ),
    section("Two rule sets and two options",
      list(
        h("span", {}, h("strong", {}, "Classic"), " (the default): cards build down on the columns as above."),
        h("span", {}, h("strong", {}, "Foundation only"), ": cards go to the foundations and nowhere else — a stricter puzzle."),
        h("span", {}, h("strong", {}, "Undo"), " (optional, counted): take back your last move. Rated races have no undo."),
        h("span", {}, h("strong", {}, "One redeal"), " (optional): once per game, the cards still in the columns are gathered, shuffled and dealt back into the six columns; the bouquet and the foundations stay. A redeal is final: it cannot be undone."),
      ),
    ),
    section("Fair deals",
      h("p", {}, "Before a race starts the server publishes a commitment to the deal; the seed behind it is revealed with the result, so anyone can check that the deal was fixed before the first move and was the same for both players."),
    ),
  ];
}

export function mountRules(root) {
  document.title = "How to play · Flower Garden Race";
  const figure = h("figure", { class: "panel rules-figure" });
  const picture = h("div", { class: "table rules-table" });
  figure.append(picture, h("figcaption", {}, "A deal: the foundations (top left, empty at the start), the six columns (only each column's last card can move) and the bouquet of 16 cards (every one can move)."));
  fill(root, h("div", { class: "rules-page" },
    h("h1", {}, "How to play Flower Garden"),
    h("p", { class: "rules-lead" }, "All 52 cards face up: six columns of six, a bouquet of sixteen you may take from anywhere, and four foundations to fill from ace to king. ",
      h("a", { href: "/", dataset: { link: "" } }, "To the lobby"), " when you are ready to race."),
    figure,
    ...sections()));
  new BoardView(picture, { interactive: false, label: "an example deal" }).render(Board.deal(PICTURE_SEED, { profile: "classic" }));
  return { unmount() {} };
}
