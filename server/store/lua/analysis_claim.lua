-- Claim up to ARGV[2] races due for analysis: each is pushed back by a lease so that no other worker takes it
-- meanwhile (a worker that dies leaves it to be claimed again after the lease).
-- KEYS: 1 the analysis queue (sorted set, score = due ms). ARGV: 1 now (ms), 2 limit, 3 lease (ms)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, race in ipairs(due) do redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[3]), race) end
return due
