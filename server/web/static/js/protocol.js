// The wire format of protocol v1 (docs/PROTOCOL.md): one binary WebSocket frame = one MessagePack map.
// The one encoder and decoder of the page, like server/protocol.py is for Python.

import { Decoder, Encoder } from "../vendor/msgpack/index.mjs";

export const PROTOCOL_VERSION = 1;

const encoder = new Encoder({ useBigInt64: true, ignoreUndefined: true });
const decoder = new Decoder({ useBigInt64: true, maxArrayLength: 4096, maxMapLength: 256 });

/**
 * A request map → the bytes of one frame. Integers above 2^32 − 1 go as BigInt, so they travel as 64-bit
 * integers (with useBigInt64 the encoder would send such a Number as a float64, which the server refuses).
 */
export function encode(message) {
  return encoder.encode(widen(message));
}

function widen(value) {
  if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) > 0xffffffff) return BigInt(value);
  if (Array.isArray(value)) return value.map(widen);
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, widen(item)]));
  }
  return value;
}

/**
 * One frame → the server's map. With useBigInt64 every 64-bit integer arrives as a BigInt; those that fit in a
 * double exactly (times in ms, small seeds) become Numbers, so only values above 2^53 (large seeds) stay BigInt.
 */
export function decode(bytes) {
  const message = decoder.decode(new Uint8Array(bytes));
  if (message === null || typeof message !== "object" || Array.isArray(message) || typeof message.type !== "string") {
    throw new Error("not a protocol message");
  }
  return narrow(message);
}

function narrow(value) {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value;
  }
  if (Array.isArray(value)) return value.map(narrow);
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    for (const key of Object.keys(value)) value[key] = narrow(value[key]);
  }
  return value;
}

/** Race events carry race and seq; lobby events start with "lobby_"; everything else answers a request. */
export const RACE_EVENTS = new Set([
  "player_joined", "countdown", "started", "berserk", "move", "progress", "attempt_ended", "result", "disconnected", "back",
  "watchers", "player_left", "race_closed", "rematch_offered", "rematch", "analysis", "emote",
]);
export const LOBBY_EVENTS = new Set(["lobby_added", "lobby_changed", "lobby_removed", "lobby_reset"]);
/** Pushed to the connections that joined an arena tournament. */
export const ARENA_EVENTS = new Set(["arena_paired", "arena_standings"]);

/** A seed typed by a person ("123", "0x1f") → a Number or BigInt, or null when empty; throws when invalid. */
export function parseSeed(text) {
  const cleaned = text.trim();
  if (!cleaned) return null;
  if (!/^(\d{1,20}|0[xX][0-9a-fA-F]{1,16})$/.test(cleaned)) throw new Error("a seed is a whole number from 0 to 2^64-1");
  const value = BigInt(cleaned);
  if (value > (1n << 64n) - 1n) throw new Error("a seed is a whole number from 0 to 2^64-1");
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}
