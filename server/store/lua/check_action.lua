-- Why an action refused before it reached Redis (the engine refused it, or its seq is not the player's count) is
-- refused, in the documented order: a move id already stored is a resend (answered as such), then the race's state,
-- the attempt and the sequence come before the engine's verdict. Runs only on that error path.
-- ARGS: slot, seq (of the request), move_id, max_actions, player, epoch (the engine checked against)
-- Returns {2, move_seq, stored action} | {0, code, expected or -1, lifecycle events} | {1, lifecycle events} (nothing
-- but the engine refuses it); opening the race for play may have started it or ended it on its time limit
-- ('stale_epoch' with the current epoch: the engine checked another deal or seat; reload and check again)
if redis.call('EXISTS', K_STATE) == 0 then return {0, 'unknown_race'} end
local slot = ARGS.slot
local stale = seat_refusal(slot, ARGS.player, ARGS.epoch)
if stale then return stale end
local duplicate = stored_action(slot, ARGS.move_id)
if duplicate then return duplicate end
local refusal, expected = action_refusal(slot, ARGS.seq, ARGS.max_actions, now_ms())
if refusal then return {0, refusal, expected or -1, LIFECYCLE} end
return {1, LIFECYCLE}
