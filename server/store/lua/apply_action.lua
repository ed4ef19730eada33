-- One player action, checked by the engine before this script runs.
-- ARGS: slot, seq (expected: the player's action count), move_id, action (text), count, left, status (the board's),
--       undos, ends (the reason that ends the attempt, or false), max_actions, player, epoch (of the seats and deal
--       the engine checked against), columns (what a redeal dealt, or false)
-- Returns {1, move_seq, finished, lifecycle events, the move event as published ("<seq> <msgpack>")}
-- | {2, move_seq, stored action, finished (duplicate move id)}
-- | {0, code, expected or -1, lifecycle events}
-- ('stale_epoch' with the current epoch: the seats or the deal changed since the caller's view; reload and retry)
local slot = ARGS.slot
-- One HMGET for what an ordinary move of a running race reads (the checks, its counter, whether an attempt is
-- over); what only the rarer paths read (the countdown's end, a result) is read by get() when needed (common.lua STATE).
load_state({'status', 'epoch', 'deadline', 'event_seq', pf(slot, 'player'), pf(slot, 'count'), 'p0_state', 'p1_state'})
if get('status') == false then return {0, 'unknown_race'} end
local stale = seat_refusal(slot, ARGS.player, ARGS.epoch)
if stale then return stale end
local ids, moves = K_IDS[slot + 1], K_MOVES[slot + 1]
local duplicate = stored_action(slot, ARGS.move_id)
if duplicate then return duplicate end
local now = now_ms()
local refusal, expected = action_refusal(slot, ARGS.seq, ARGS.max_actions, now)
if refusal then return {0, refusal, expected or -1, LIFECYCLE} end  -- opening may have started or timed out the race
local move_seq = redis.call('RPUSH', moves, ARGS.action)
redis.call('HSET', ids, ARGS.move_id, move_seq)
local count = ARGS.count
local seq = geti('event_seq') + 1  -- the move event's: written with the counters, in one HSET, and given to emit()
local fields = {pf(slot, 'count'), count, pf(slot, 'left'), ARGS.left, pf(slot, 'status'), ARGS.status,
                pf(slot, 'undos'), ARGS.undos, pf(slot, 'moves'), move_seq, 'event_seq', seq}
if count ~= geti(pf(slot, 'count')) then
  fields[#fields + 1] = pf(slot, 'count_seq')
  fields[#fields + 1] = seq
end
set_state(unpack(fields))
local event = {type = 'move', slot = slot, move = ARGS.action, move_seq = move_seq, count = count,
               left = ARGS.left, status = ARGS.status}
if ARGS.columns then event['columns'] = ARGS.columns end
local _, published = emit(event, now, seq)
if ARGS.ends then end_attempt(slot, ARGS.ends, now) end
local finished = decide(now)
if not finished then refresh_live_ttl(move_seq == 1) end
return {1, move_seq, finished and 1 or 0, LIFECYCLE, published}
