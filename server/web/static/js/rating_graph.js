// The rating graph of a player's page (docs/WEB.md "Players, ratings and bots"): per profile, the rating after each
// rated race of the player's history (the `history` request, so PostgreSQL's rated results or the Redis history,
// whichever the server keeps), drawn as a hand-made SVG line, with a table of the same points as its text
// alternative.

import { h } from "./dom.js";
import { worded } from "./dom.js";
import { playerText } from "./players.js";
import { numberText, t, tn } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
/** The history lines read for the graph at most (pages of the protocol's largest `history` page). */
export const GRAPH_LINES = 200;
const PAGE = 50;
const WIDTH = 640;
const HEIGHT = 180;
const PAD = { left: 44, right: 10, top: 12, bottom: 24 };

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  element.append(...children);
  return element;
}

/** The player's rated history lines, newest first: up to GRAPH_LINES of its finished races, page by page. */
export async function ratedLines(conn, handle) {
  const lines = [];
  for (let offset = 0; offset < GRAPH_LINES; offset += PAGE) {
    const page = await conn.history(handle, offset, PAGE);
    lines.push(...page.items);
    if (offset + PAGE >= page.total) break;
  }
  return lines.filter((item) => item.rating);
}

/** Per profile, the points oldest first: the rating before the first race, then after each. */
export function ratingSeries(lines) {
  const series = new Map();
  for (const item of [...lines].reverse()) {
    if (!series.has(item.profile)) series.set(item.profile, [{ at: null, rating: item.rating.before, item: null }]);
    series.get(item.profile).push({ at: item.finished_at, rating: item.rating.after, item });
  }
  return series;
}

function dateText(ms) {
  return new Date(ms).toLocaleDateString(document.documentElement.lang || undefined, { day: "numeric", month: "short" });
}

/** One profile's graph: the line of its ratings, its lowest and highest value and its first and last day. */
function graph(profile, points) {
  const ratings = points.map((point) => point.rating);
  const low = Math.min(...ratings);
  const high = Math.max(...ratings);
  const span = Math.max(high - low, 20);
  const x = (index) => PAD.left + ((WIDTH - PAD.left - PAD.right) * index) / Math.max(points.length - 1, 1);
  const y = (rating) => PAD.top + ((HEIGHT - PAD.top - PAD.bottom) * (high - rating)) / span;
  const path = points.map((point, index) => `${index ? "L" : "M"}${x(index).toFixed(1)},${y(point.rating).toFixed(1)}`).join(" ");
  const first = points[0].rating;
  const last = points[points.length - 1].rating;
  const races = points.length - 1;
  const summary = t("web.player.graph_summary", { profile: worded("profile", profile), first: numberText(first), last: numberText(last), races: tn("web.races", races) });
  const dated = points.filter((point) => point.at !== null);
  return svg("svg", { class: "rating-graph", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": summary, "data-profile": profile, "data-points": String(points.length) },
    svg("title", {}, summary),
    svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(high), y2: y(high), class: "grid" }),
    svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(low), y2: y(low), class: "grid" }),
    svg("text", { x: PAD.left - 6, y: y(high) + 4, "text-anchor": "end" }, String(high)),
    svg("text", { x: PAD.left - 6, y: y(low) + 4, "text-anchor": "end" }, String(low)),
    dated.length ? svg("text", { x: PAD.left, y: HEIGHT - 6 }, dateText(dated[0].at)) : "",
    dated.length ? svg("text", { x: WIDTH - PAD.right, y: HEIGHT - 6, "text-anchor": "end" }, dateText(dated[dated.length - 1].at)) : "",
    svg("path", { d: path, class: "line" }),
    ...points.map((point, index) => svg("circle", { cx: x(index).toFixed(1), cy: y(point.rating).toFixed(1), r: 3, class: "point" })));
}

/** The same points as a table (the graph's text alternative): date, opponent, rating after, change. */
function pointsTable(profile, points) {
  const rows = points.filter((point) => point.item).reverse();
  return h("details", { class: "rating-points" },
    h("summary", {}, t("web.player.graph_table", { profile: worded("profile", profile) })),
    h("table", { class: "rating-table", dataset: { profile } },
      h("thead", {}, h("tr", {}, ["date", "opponent", "rating", "change"].map((column) => h("th", {}, t(`web.player.graph_${column}`))))),
      h("tbody", {}, rows.map(({ at, rating, item }) => h("tr", {},
        h("td", {}, dateText(at)), h("td", {}, playerText(item.opponent)), h("td", {}, String(rating)),
        h("td", {}, item.rating.delta > 0 ? `+${item.rating.delta}` : String(item.rating.delta)))))));
}

/** The graph section of a player's page: one graph and table per profile it raced rated in, or why there is none. */
export function ratingGraphs(lines) {
  const series = ratingSeries(lines);
  if (!series.size) return h("p", { class: "empty" }, t("web.player.graph_none"));
  return [...series].map(([profile, points]) => h("figure", { class: "rating-figure" }, graph(profile, points), pointsTable(profile, points)));
}
