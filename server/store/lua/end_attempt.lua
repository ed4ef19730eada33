-- ARGS: slot, reason, expected_moves (the action count the attempt must have, or false for any: the dead check
--       passes the count it analysed), player (who must hold the seat, or false for the server's own checks)
-- Returns {1, finished, lifecycle events} | {0, code, expected or -1, lifecycle events}
if redis.call('EXISTS', K_STATE) == 0 then return {0, 'unknown_race'} end
local slot = ARGS.slot
if ARGS.player and get(pf(slot, 'player')) ~= ARGS.player then return {0, 'not_seated'} end
local now = now_ms()
local refusal = open_for_play(now)
if refusal then return {0, refusal, -1, LIFECYCLE} end  -- opening may have started or timed out the race
if get(pf(slot, 'state')) ~= 'playing' then return {0, 'attempt_over'} end
local length = redis.call('LLEN', K_MOVES[slot + 1])
if ARGS.expected_moves and length ~= ARGS.expected_moves then return {0, 'out_of_sequence', length} end
end_attempt(slot, ARGS.reason, now)
local finished = decide(now)
if not finished then expire_all(LIVE_TTL) end
return {1, finished and 1 or 0, LIFECYCLE}
