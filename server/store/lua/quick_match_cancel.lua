-- Leave the quick-match queue. KEYS: 1 the queue, 2 players, 3 ratings of rated entries. ARGV: 1 player, 2 settings key, 3 member
-- Returns 1 when the entry was still waiting (removed), 0 when it was already paired or gone.
if redis.call('HGET', KEYS[2], ARGV[1]) == ARGV[2] .. '|' .. ARGV[3] then redis.call('HDEL', KEYS[2], ARGV[1]) end
redis.call('HDEL', KEYS[3], ARGV[3])
return redis.call('ZREM', KEYS[1], ARGV[3])
