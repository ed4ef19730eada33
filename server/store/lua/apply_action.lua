-- One player action, checked by the engine before this script runs.
-- ARGS: slot, seq (expected: the player's action count), move_id, action (text), count, left, status (the board's),
--       undos, ends (the reason that ends the attempt, or false), max_actions, player, epoch (of the seats and deal
--       the engine checked against), columns (what a redeal dealt, or false)
-- Returns {1, move_seq, finished, lifecycle events, the move event as published ("<seq> <msgpack>")}
-- | {2, move_seq, stored action (duplicate move id)}
-- | {0, code, expected or -1, lifecycle events}
-- ('stale_epoch' with the current epoch: the seats or the deal changed since the caller's view; reload and retry)
if redis.call('EXISTS', K_STATE) == 0 then return {0, 'unknown_race'} end
local slot = ARGS.slot
local stale = seat_refusal(slot, ARGS.player, ARGS.epoch)
if stale then return stale end
local ids, moves = K_IDS[slot + 1], K_MOVES[slot + 1]
local duplicate = stored_action(slot, ARGS.move_id)
if duplicate then return duplicate end
local now = now_ms()
local refusal, expected = action_refusal(slot, ARGS.seq, ARGS.max_actions, now)
if refusal then return {0, refusal, expected or -1, LIFECYCLE} end  -- opening may have started or timed out the race
local move_seq = redis.call('LLEN', moves) + 1
redis.call('RPUSH', moves, ARGS.action)
redis.call('HSET', ids, ARGS.move_id, move_seq)
local count = ARGS.count
local count_changed = count ~= geti(pf(slot, 'count'))
redis.call('HSET', K_STATE, pf(slot, 'count'), count, pf(slot, 'left'), ARGS.left, pf(slot, 'status'), ARGS.status,
  pf(slot, 'undos'), ARGS.undos, pf(slot, 'moves'), move_seq)
local event = {type = 'move', slot = slot, move = ARGS.action, move_seq = move_seq, count = count,
               left = ARGS.left, status = ARGS.status}
if ARGS.columns then event['columns'] = ARGS.columns end
local seq, published = emit(event, now)
if count_changed then redis.call('HSET', K_STATE, pf(slot, 'count_seq'), seq) end
if ARGS.ends then end_attempt(slot, ARGS.ends, now) end
local finished = decide(now)
if not finished then refresh_live_ttl(move_seq == 1) end
return {1, move_seq, finished and 1 or 0, LIFECYCLE, published}
