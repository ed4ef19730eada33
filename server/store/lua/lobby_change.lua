-- A listed race changed (its second seat taken or freed).
-- KEYS: 1 open, 2 entries, 3 alive, 4 feed. ARGV: 1 race id, 2 entry (MessagePack map), 3 feed length
-- Returns 1, or 0 when the race is not listed (nothing written).
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[3], '*', 'op', 'lobby_changed', 'race', ARGV[1], 'entry', ARGV[2])
return 1
