-- Leave the quick-match queue. KEYS: 1 the queue, 2 players, 3 ratings of rated entries. ARGS: player, settings_key, member
-- Returns 1 when the entry was still waiting (removed), 0 when it was already paired or gone.
if redis.call('HGET', KEYS[2], ARGS.player) == ARGS.settings_key .. '|' .. ARGS.member then redis.call('HDEL', KEYS[2], ARGS.player) end
redis.call('HDEL', KEYS[3], ARGS.member)
return redis.call('ZREM', KEYS[1], ARGS.member)
