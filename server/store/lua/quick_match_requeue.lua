-- Put a quick-match race whose second player left the countdown back into its queue, its creator waiting again.
-- KEYS: 1 the queue of its settings, 2 players, 3 ratings of rated entries.
-- ARGV: 1 the waiting player, 2 member '<race>:<player>', 3 settings key, 4 rating ('' = unrated),
--       5 when it first queued (ms): a rated wait keeps counting from the request
-- Returns 1 when queued again, 0 when the player already has another entry (it asked again meanwhile).
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. '|' .. ARGV[2])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], ARGV[2], ARGV[4] .. '|' .. ARGV[5]) end
return 1
