-- Put a quick-match race whose second player left the countdown back into its queue, its creator waiting again.
-- KEYS: 1 the queue of its settings, 2 players, 3 ratings of rated entries.
-- ARGS: player (the waiting one), member ('<race>:<player>'), settings_key, rating (false = unrated),
--       queued_at (ms, when it first queued: a rated wait keeps counting from the request)
-- Returns 1 when queued again, 0 when the player already has another entry (it asked again meanwhile).
if redis.call('HEXISTS', KEYS[2], ARGS.player) == 1 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGS.member)
redis.call('HSET', KEYS[2], ARGS.player, ARGS.settings_key .. '|' .. ARGS.member)
if ARGS.rating then redis.call('HSET', KEYS[3], ARGS.member, ARGS.rating .. '|' .. ARGS.queued_at) end
return 1
