// The lobby's offer of the first-race tutorial (/tutorial) to a first-time visitor. Finishing the tutorial or saying
// "No thanks" is remembered (localStorage fg.tutorial = "done" / "dismissed"): the offer is not made again.

import { h } from "./dom.js";

export const TUTORIAL_KEY = "fg.tutorial";

/** The offer's words (one place, for the translations). */
const TEXT = {
  offer: "New to Flower Garden? Play a two-minute tutorial on a small deal before your first race.",
  play: "Play the tutorial",
  dismiss: "No thanks",
};

/** The offer as a panel, or null once the tutorial was done or dismissed. */
export function offerTutorial() {
  if (localStorage.getItem(TUTORIAL_KEY)) return null;
  const offer = h("section", { class: "panel tutorial-offer", "aria-label": "tutorial" },
    h("p", {}, TEXT.offer),
    h("div", { class: "actions" },
      h("a", { class: "button primary", href: "/tutorial", dataset: { link: "", action: "tutorial" } }, TEXT.play),
      h("button", { class: "ghost", type: "button", dataset: { action: "dismiss-tutorial" }, onclick: () => {
        localStorage.setItem(TUTORIAL_KEY, "dismissed");
        offer.remove();
      } }, TEXT.dismiss)));
  return offer;
}
