-- ARGV: 3 slot, 4 reason, 5 expected action count (-1: any; the dead check passes the count it analysed),
--       6 the player who must hold the seat ('' for the server's own checks)
-- Returns {1, finished, lifecycle events} | {0, code, expected or -1, lifecycle events}
if redis.call('EXISTS', K_STATE) == 0 then return {0, 'unknown_race'} end
local slot = tonumber(ARGV[3])
if ARGV[6] ~= '' and get(pf(slot, 'player')) ~= ARGV[6] then return {0, 'not_seated'} end
local now = now_ms()
local refusal = open_for_play(now)
if refusal then return {0, refusal, -1, LIFECYCLE} end  -- opening may have started or timed out the race
if get(pf(slot, 'state')) ~= 'playing' then return {0, 'attempt_over'} end
local expected = tonumber(ARGV[5])
local length = redis.call('LLEN', K_MOVES[slot + 1])
if expected >= 0 and length ~= expected then return {0, 'out_of_sequence', length} end
end_attempt(slot, ARGV[4], now)
local finished = decide(now)
if not finished then expire_all(LIVE_TTL) end
return {1, finished and 1 or 0, LIFECYCLE}
