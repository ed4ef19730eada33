// How large the cards of a player's table can be so that the whole table — foundations, six columns at their
// current length, the bouquet — fits the space the page has for it, without scrolling (docs/WEB.md "Fits the
// screen"). Pure arithmetic, no DOM: board_view.js applies the answer as CSS variables.
//
// Every length is in card widths (cw); a card is 1.4 cw high. A covered card in a column shows a strip of the
// overlap: 0.42 cw when there is room, never less than 0.3 cw (the corner's rank stays readable).

const CARD_HEIGHT = 1.4;
const MIN_OVERLAP = 0.3;
const MAX_OVERLAP = 0.42;
const LARGEST_CARD = 96;
const SMALLEST_CARD = 30;
const TOP_ROW = CARD_HEIGHT + 0.15; // foundations and the score, and the gap under them
const COLUMN_GAP_WIDE = 0.25;
const COLUMN_GAP_NARROW = 0.1;
const GUTTER = 0.5; // between the columns and the bouquet beside them
const BOUQUET_GAP = 0.08;
const BOUQUET_LABEL = 0.3;
const WIDE_BOUQUET_ROW = 8; // beside the columns: two rows of eight for a full bouquet

function bouquetRows(count, perRow) {
  return Math.max(1, Math.ceil(count / perRow));
}

function bouquetHeight(rows) {
  return BOUQUET_LABEL + rows * CARD_HEIGHT + (rows - 1) * BOUQUET_GAP;
}

/** Width and height (in cw) of the table laid out `wide` (bouquet beside the columns) or narrow (under them). */
function tableSize(wide, longest, bouquetCount, overlap, perRow) {
  const columnsHeight = CARD_HEIGHT + (longest - 1) * overlap;
  if (wide) {
    const bouquetWidth = WIDE_BOUQUET_ROW + (WIDE_BOUQUET_ROW - 1) * BOUQUET_GAP;
    const width = 6 + 5 * COLUMN_GAP_WIDE + GUTTER + bouquetWidth;
    return { width, height: TOP_ROW + Math.max(columnsHeight, bouquetHeight(bouquetRows(bouquetCount, WIDE_BOUQUET_ROW))) };
  }
  const width = 6 + 5 * COLUMN_GAP_NARROW;
  return { width, height: TOP_ROW + columnsHeight + 0.15 + bouquetHeight(bouquetRows(bouquetCount, perRow)) };
}

/** The bouquet's cards per row in the narrow layout: as many as the width takes. */
function narrowPerRow(availableWidth, cardWidth) {
  return Math.max(1, Math.floor((availableWidth + BOUQUET_GAP * cardWidth) / ((1 + BOUQUET_GAP) * cardWidth)));
}

function largestFit(wide, available, longest, bouquetCount) {
  for (let card = LARGEST_CARD; card >= SMALLEST_CARD; card--) {
    const perRow = wide ? WIDE_BOUQUET_ROW : narrowPerRow(available.width, card);
    const size = tableSize(wide, longest, bouquetCount, MIN_OVERLAP, perRow);
    if (size.width * card <= available.width && size.height * card <= available.height) return { card, perRow };
  }
  return null;
}

/**
 * The table's card width (px), the overlap of a column's cards (px), and whether the bouquet goes beside the columns
 * (`wide`), for `available` = {width, height} in px, the longest column's length and the bouquet's card count.
 * Cards as large as the space allows, up to LARGEST_CARD; when nothing fits even at SMALLEST_CARD, the smallest.
 */
export function fitTable(available, longest, bouquetCount) {
  const cards = Math.max(longest, 6);
  const wide = largestFit(true, available, cards, bouquetCount);
  const narrow = largestFit(false, available, cards, bouquetCount);
  const useWide = wide !== null && (narrow === null || wide.card >= narrow.card);
  const chosen = useWide ? wide : narrow || { card: SMALLEST_CARD, perRow: narrowPerRow(available.width, SMALLEST_CARD) };
  const card = chosen.card;
  // The height the covered cards may share: beside the bouquet, all under the top row; above it, what it leaves.
  const fixed = TOP_ROW + CARD_HEIGHT + (useWide ? 0 : 0.15 + bouquetHeight(bouquetRows(bouquetCount, chosen.perRow)));
  const room = (available.height - fixed * card) / (cards - 1);
  const overlap = Math.min(MAX_OVERLAP * card, Math.max(MIN_OVERLAP * card, room));
  return { card, overlap: Math.floor(overlap), wide: useWide };
}
