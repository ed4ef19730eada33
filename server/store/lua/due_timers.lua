-- KEYS[1]: the timer index (sorted set, score = due time in ms). ARGS: limit (how many).
-- Returns the members due by Redis' clock.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGS.limit)
