-- A race starts waiting for an opponent: into the heartbeat index and, when listed, into the lobby list.
-- KEYS: 1 open (zset), 2 entries (hash), 3 alive (zset), 4 feed (stream)
-- ARGV: 1 race id, 2 listed (0/1), 3 entry (MessagePack map), 4 created_at (ms), 5 most listed races, 6 feed length
-- Returns 1, or 0 when the list is full (nothing written).
local race = ARGV[1]
if ARGV[2] == '1' then
  if redis.call('ZSCORE', KEYS[1], race) == false and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 0 end
end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), race)
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[2], race, ARGV[3])
  redis.call('ZADD', KEYS[1], ARGV[4], race)
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[6], '*', 'op', 'lobby_added', 'race', race, 'entry', ARGV[3])
end
return 1
