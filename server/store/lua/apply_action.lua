-- One player action, checked by the engine before this script runs.
-- ARGV: 3 slot, 4 expected seq (the player's action count), 5 move id, 6 action text, 7 count, 8 left,
--       9 board status, 10 undos, 11 reason that ends the attempt ('' for none), 12 max actions, 13 player,
--       14 epoch of the seats and deal the engine checked against, 15 the columns a redeal dealt (JSON, '' for
--       other actions)
-- Returns {1, move_seq, finished, lifecycle events, the move event as published ("<seq> <msgpack>")}
-- | {2, move_seq, stored action (duplicate move id)}
-- | {0, code, expected or -1, lifecycle events}
-- ('stale_epoch' with the current epoch: the seats or the deal changed since the caller's view; reload and retry)
if redis.call('EXISTS', K_STATE) == 0 then return {0, 'unknown_race'} end
local slot = tonumber(ARGV[3])
local stale = seat_refusal(slot, ARGV[13], tonumber(ARGV[14]))
if stale then return stale end
local ids, moves = K_IDS[slot + 1], K_MOVES[slot + 1]
local duplicate = stored_action(slot, ARGV[5])
if duplicate then return duplicate end
local now = now_ms()
local refusal, expected = action_refusal(slot, tonumber(ARGV[4]), tonumber(ARGV[12]), now)
if refusal then return {0, refusal, expected or -1, LIFECYCLE} end  -- opening may have started or timed out the race
local move_seq = redis.call('LLEN', moves) + 1
redis.call('RPUSH', moves, ARGV[6])
redis.call('HSET', ids, ARGV[5], move_seq)
local count = tonumber(ARGV[7])
local count_changed = count ~= geti(pf(slot, 'count'))
redis.call('HSET', K_STATE, pf(slot, 'count'), count, pf(slot, 'left'), ARGV[8], pf(slot, 'status'), ARGV[9],
  pf(slot, 'undos'), ARGV[10], pf(slot, 'moves'), move_seq)
local event = {type = 'move', slot = slot, move = ARGV[6], move_seq = move_seq, count = count,
               left = tonumber(ARGV[8]), status = ARGV[9]}
if ARGV[15] ~= '' then event['columns'] = cjson.decode(ARGV[15]) end
local seq, published = emit(event, now)
if count_changed then redis.call('HSET', K_STATE, pf(slot, 'count_seq'), seq) end
if ARGV[11] ~= '' then end_attempt(slot, ARGV[11], now) end
local finished = decide(now)
if not finished then refresh_live_ttl(move_seq == 1) end
return {1, move_seq, finished and 1 or 0, LIFECYCLE, published}
