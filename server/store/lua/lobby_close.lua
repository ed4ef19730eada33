-- A race stops being open (started, closed, abandoned): out of every lobby index, its invite code freed.
-- KEYS: 1 open, 2 entries, 3 alive, 4 feed, [5 invite code key]. ARGS: race (its id), feed_length
-- Idempotent; returns 1 when the race was listed (a 'removed' change was written), else 0.
local race = ARGS.race
redis.call('ZREM', KEYS[3], race)
if KEYS[5] and redis.call('GET', KEYS[5]) == race then redis.call('DEL', KEYS[5]) end
if redis.call('HDEL', KEYS[2], race) == 0 then return 0 end
redis.call('ZREM', KEYS[1], race)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGS.feed_length, '*', 'op', 'lobby_removed', 'race', race)
return 1
