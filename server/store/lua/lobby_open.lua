-- A race starts waiting for an opponent: into the heartbeat index and, when listed, into the lobby list.
-- KEYS: 1 open (zset), 2 entries (hash), 3 alive (zset), 4 feed (stream)
-- ARGS: race (its id), listed (true: into the lobby list), entry (MessagePack map), created_at (ms), max_listed, feed_length
-- Returns 1, or 0 when the list is full (nothing written).
local race = ARGS.race
if ARGS.listed then
  if redis.call('ZSCORE', KEYS[1], race) == false and redis.call('ZCARD', KEYS[1]) >= ARGS.max_listed then return 0 end
end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), race)
if ARGS.listed then
  redis.call('HSET', KEYS[2], race, ARGS.entry)
  redis.call('ZADD', KEYS[1], ARGS.created_at, race)
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGS.feed_length, '*', 'op', 'lobby_added', 'race', race, 'entry', ARGS.entry)
end
return 1
