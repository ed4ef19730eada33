-- A listed race changed (its second seat taken or freed).
-- KEYS: 1 open, 2 entries, 3 alive, 4 feed. ARGS: race (its id), entry (MessagePack map), feed_length
-- Returns 1, or 0 when the race is not listed (nothing written).
if redis.call('HEXISTS', KEYS[2], ARGS.race) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGS.race, ARGS.entry)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGS.feed_length, '*', 'op', 'lobby_changed', 'race', ARGS.race, 'entry', ARGS.entry)
return 1
