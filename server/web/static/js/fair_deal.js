// Checking a race's deal at its result (docs/PROTOCOL.md "Fair deals"): the countdown published a commitment,
// SHA-256 over the seed, profile, deal-algorithm version, a salt and the proving line; the result reveals seed,
// salt and line. The page recomputes the hash with WebCrypto and checks that the layout it played is the deal
// of the revealed seed, so a player need not trust the server about either.

import { fill, h } from "./dom.js";
import { deal } from "./engine.js";
import { t } from "./i18n.js";

const TAG = "FGR-DEAL-COMMIT1";
const DEAL_ALGORITHM_VERSION = 1;

function ascii(text) {
  return new TextEncoder().encode(text);
}

function hexBytes(hex) {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new Error("not hex");
  return Uint8Array.from(hex.match(/../g) || [], (pair) => parseInt(pair, 16));
}

function hexOf(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/** The bytes the commitment hashes: tag, version, seed (u64 big-endian), profile (length + ASCII), salt, line digest. */
export async function commitmentPreimage(seed, profile, saltHex, provingLine) {
  const salt = hexBytes(saltHex);
  if (salt.length !== 16) throw new Error("the salt is 16 bytes");
  const name = ascii(profile);
  const line = provingLine ? await sha256(ascii(provingLine.map((move) => `${move}\n`).join(""))) : new Uint8Array(32);
  const seedBytes = new Uint8Array(8);
  new DataView(seedBytes.buffer).setBigUint64(0, BigInt(seed));
  const parts = [ascii(TAG), Uint8Array.of(DEAL_ALGORITHM_VERSION), seedBytes, Uint8Array.of(name.length), name, salt, line];
  const bytes = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}

/** The commitment of a revealed deal: 64 lower-case hex digits. */
export async function dealCommitment(seed, profile, saltHex, provingLine = null) {
  return hexOf(await sha256(await commitmentPreimage(seed, profile, saltHex, provingLine)));
}

function sameLayout(a, b) {
  return JSON.stringify([a.columns, a.bouquet]) === JSON.stringify([b.columns, b.bouquet]);
}

/**
 * Check a result's reveal against what the countdown showed: { status: "verified" | "mismatch" | "unavailable",
 * text }. "unavailable": nothing to check (no commitment or reveal), or no WebCrypto (pages not served over
 * https or from localhost).
 */
export async function verifyReveal({ commitment, seed, salt, profile, provingLine, layout }) {
  if (!commitment || seed === null || seed === undefined || !salt) return { status: "unavailable", text: t("web.fair.no_commitment") };
  if (!globalThis.crypto || !crypto.subtle) return { status: "unavailable", text: t("web.fair.no_webcrypto") };
  let computed;
  try {
    computed = await dealCommitment(seed, profile, salt, provingLine);
  } catch (error) {
    return { status: "mismatch", text: t("web.fair.malformed", { why: error.message }) };
  }
  if (computed !== String(commitment).toLowerCase()) return { status: "mismatch", text: t("web.fair.mismatch") };
  if (layout && !sameLayout(deal(seed), layout)) return { status: "mismatch", text: t("web.fair.layout_mismatch") };
  return { status: "verified", text: t("web.fair.verified") };
}

/**
 * The result's line about the deal: "Deal commitment 9f2c…: verified …" (or why not), checked once per race state
 * (the check is kept on the state, so a page drawn again shows it at once).
 */
export function dealCheckLine(state) {
  const result = state.result;
  if (!result || !state.commitment) return null;
  const line = h("p", { class: "deal-check", dataset: { check: state.dealCheck ? state.dealCheck.status : "pending" }, title: `commitment ${state.commitment}` });
  const show = (check) => {
    line.dataset.check = check.status;
    fill(line, t("web.fair.line", { hash: String(state.commitment).slice(0, 12) }), " ", h("strong", {}, check.text));
  };
  if (state.dealCheck) {
    show(state.dealCheck);
    return line;
  }
  fill(line, t("web.fair.checking"));
  state.dealCheckPending ??= verifyReveal({
    commitment: state.commitment, seed: result.seed, salt: result.salt, profile: state.settings.profile,
    provingLine: result.proving_line ?? null, layout: state.layout,
  }).then((check) => (state.dealCheck = check));
  state.dealCheckPending.then(show);
  return line;
}
