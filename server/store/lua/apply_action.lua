-- One player action, checked by the engine before this script runs: the full script, for any action (the store sends
-- an ordinary move to apply_move.lua first, which hands it here, before writing anything, when it may end an attempt
-- or the race).
-- ARGS: slot, seq (expected: the player's action count), move_id, action (text), count, left, status (the board's),
--       undos, ends (the reason that ends the attempt, or false), max_actions, player, epoch (of the seats and deal
--       the engine checked against), columns (what a redeal dealt, or false)
-- Returns {1, move_seq, finished, lifecycle events, the move event as published ("<seq> <msgpack>")}
-- | {2, move_seq, stored action (duplicate move id)}
-- | {0, code, expected or -1, lifecycle events}
-- ('stale_epoch' with the current epoch: the seats or the deal changed since the caller's view; reload and retry)
local slot = ARGS.slot
local checked = move_checks(slot)
if checked then return checked end
local now = now_ms()
local refusal, expected = action_refusal(slot, ARGS.seq, ARGS.max_actions, now)
if refusal then return {0, refusal, expected or -1, LIFECYCLE} end  -- opening may have started or timed out the race
local move_seq, published = store_move(slot, now)
if ARGS.ends then end_attempt(slot, ARGS.ends, now) end
local finished = decide(now)
if not finished then refresh_live_ttl(move_seq == 1) end
return {1, move_seq, finished and 1 or 0, LIFECYCLE, published}
