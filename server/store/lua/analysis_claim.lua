-- Claim up to ARGS.limit races due for analysis: each is pushed back by a lease so that no other worker takes it
-- meanwhile (a worker that dies leaves it to be claimed again after the lease).
-- KEYS: 1 the analysis queue (sorted set, score = due ms). ARGS: now_ms, limit, lease_ms
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGS.now_ms, 'LIMIT', 0, ARGS.limit)
for _, race in ipairs(due) do redis.call('ZADD', KEYS[1], ARGS.now_ms + ARGS.lease_ms, race) end
return due
