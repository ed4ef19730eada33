-- Append one checked move to a daily attempt, or end the attempt (stop, or its deadline passed).
-- KEYS: 1 the attempt hash, 2 its moves list. ARGS: player (the session's), seq (moves made before; false: end it
-- now as ends says), entry ('<ms> <move>'), count (cards on the foundations after it), ends (the attempt's end state
-- after the move, or false), now (ms), ttl_ms (0: kept).
-- Returns {1, moves} when done, or {0, code, moves}.
local attempt = KEYS[1]
if redis.call('HGET', attempt, 'player') ~= ARGS.player then return {0, 'unknown_attempt', 0} end
local length = redis.call('LLEN', KEYS[2])
local state = redis.call('HGET', attempt, 'state')
if state ~= 'playing' then return {0, 'attempt_over', length} end
local deadline = tonumber(redis.call('HGET', attempt, 'deadline'))
if ARGS.now >= deadline then
  redis.call('HSET', attempt, 'state', 'time_limit', 'ended_at', deadline)
  return {0, 'attempt_over', length}
end
if ARGS.seq then
  if ARGS.seq ~= length then return {0, 'out_of_sequence', length} end
  length = redis.call('RPUSH', KEYS[2], ARGS.entry)
  if ARGS.ttl_ms > 0 then redis.call('PEXPIRE', KEYS[2], ARGS.ttl_ms) end
  redis.call('HSET', attempt, 'count', ARGS.count, 'moves', length)
end
if ARGS.ends then redis.call('HSET', attempt, 'state', ARGS.ends, 'ended_at', ARGS.now) end
return {1, length}
