// The lobby's offer of the first-race tutorial (/tutorial) to a first-time visitor. Finishing the tutorial or saying
// "No thanks" is remembered (localStorage fg.tutorial = "done" / "dismissed"): the offer is not made again.

import { h } from "./dom.js";
import { t } from "./i18n.js";

export const TUTORIAL_KEY = "fg.tutorial";

/** The offer as a panel, or null once the tutorial was done or dismissed. */
export function offerTutorial() {
  if (localStorage.getItem(TUTORIAL_KEY)) return null;
  const offer = h("section", { class: "panel tutorial-offer", "aria-label": t("web.tutorial.label") },
    h("p", {}, t("web.tutorial.offer")),
    h("div", { class: "actions" },
      h("a", { class: "button primary", href: "/tutorial", dataset: { link: "", action: "tutorial" } }, t("web.tutorial.play")),
      h("button", { class: "ghost", type: "button", dataset: { action: "dismiss-tutorial" }, onclick: () => {
        localStorage.setItem(TUTORIAL_KEY, "dismissed");
        offer.remove();
      } }, t("web.tutorial.dismiss"))));
  return offer;
}
