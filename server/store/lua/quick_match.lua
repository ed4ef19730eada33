-- Pair with a waiting player of the same settings, or wait for one. Atomic: an entry is handed to one pairer only.
-- KEYS: 1 the queue of these settings (zset member '<race>:<player>' -> heartbeat ms), 2 players (hash)
-- ARGV: 1 player, 2 own race to wait in ('' = pair only, never wait), 3 settings key, 4 staleness (ms)
-- Returns {1, partner race, partner player} | {2} (now waiting) | {0} (nobody waiting, not queued)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function forget(member)
  local player = string.match(member, ':(.+)$')
  redis.call('ZREM', KEYS[1], member)
  if redis.call('HGET', KEYS[2], player) == ARGV[3] .. '|' .. member then redis.call('HDEL', KEYS[2], player) end
  return player
end
-- Entries whose owner's process stopped refreshing them are dropped.
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[4])))) do forget(member) end
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, 15)) do
  local race, player = string.match(member, '^([^:]+):(.+)$')
  if player ~= ARGV[1] then
    forget(member)
    return {1, race, player}
  end
end
if ARGV[2] == '' then return {0} end
local member = ARGV[2] .. ':' .. ARGV[1]
redis.call('ZADD', KEYS[1], now, member)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. '|' .. member)
return {2}
