-- Pair with a waiting player of the same settings, or wait for one. Atomic: an entry is handed to one pairer only.
-- KEYS: 1 the queue of these settings (zset member '<race>:<player>' -> heartbeat ms), 2 players (hash),
--       3 ratings of rated entries (hash member -> '<rating>|<queued at ms>'), 4 last opponents (hash player -> player)
-- ARGV: 1 player, 2 own race to wait in ('' = pair only, never wait), 3 settings key, 4 staleness (ms),
--       5 the caller's rating ('' = an unrated queue: first come, first paired),
--       6 '1' when the caller already waits in this queue in race ARGV[2] (a later pairing attempt: its wait counts,
--         and its own entry is taken off too when it is paired),
--       7 widening: base window, 8 points added per step, 9 step (ms), 10 wait (ms) after which any rating pairs
-- Returns {1, partner race, partner player} | {2} (now waiting) | {0} (nobody waiting, not queued)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function forget(member)
  local player = string.match(member, ':(.+)$')
  redis.call('ZREM', KEYS[1], member)
  redis.call('HDEL', KEYS[3], member)
  if redis.call('HGET', KEYS[2], player) == ARGV[3] .. '|' .. member then redis.call('HDEL', KEYS[2], player) end
  return player
end
-- Entries whose owner's process stopped refreshing them are dropped.
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[4])))) do forget(member) end
local own = ARGV[2] .. ':' .. ARGV[1]
local rated = ARGV[5] ~= ''
if not rated then
  if ARGV[6] == '1' and not redis.call('ZSCORE', KEYS[1], own) then return {0} end  -- paired (or dropped) meanwhile
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, 15)) do
    local race, player = string.match(member, '^([^:]+):(.+)$')
    if player ~= ARGV[1] then
      forget(member)
      if ARGV[6] == '1' then forget(own) end
      return {1, race, player}
    end
  end
  if ARGV[6] == '1' then return {0} end
else
  -- Rated: the closest rating within the window of the longer wait; a repeat of one's last pairing only when no
  -- one else fits.
  local rating = tonumber(ARGV[5])
  local since = now
  if ARGV[6] == '1' then
    local mine = redis.call('HGET', KEYS[3], own)
    if not mine then return {0} end  -- paired (or dropped) meanwhile
    since = tonumber(string.match(mine, '|(.+)$'))
  end
  local last = redis.call('HGET', KEYS[4], ARGV[1])
  local function window(waited)
    if waited >= tonumber(ARGV[10]) then return math.huge end
    return tonumber(ARGV[7]) + tonumber(ARGV[8]) * math.floor(waited / tonumber(ARGV[9]))
  end
  local best, best_key = nil, nil
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, 63)) do
    local race, player = string.match(member, '^([^:]+):(.+)$')
    local meta = redis.call('HGET', KEYS[3], member)
    if player ~= ARGV[1] and meta then
      local their_rating, queued = string.match(meta, '^(.+)|(.+)$')
      local gap = math.abs(tonumber(their_rating) - rating)
      local waited = now - math.min(since, tonumber(queued))
      if gap <= window(waited) then
        local repeat_pair = (player == last) or (redis.call('HGET', KEYS[4], player) == ARGV[1])
        local key = (repeat_pair and 1e9 or 0) + gap
        if best_key == nil or key < best_key then best, best_key = {member, race, player}, key end
      end
    end
  end
  if best then
    forget(best[1])
    if ARGV[6] == '1' then forget(own) end
    redis.call('HSET', KEYS[4], ARGV[1], best[3], best[3], ARGV[1])
    return {1, best[2], best[3]}
  end
  if ARGV[6] == '1' then return {0} end
end
if ARGV[2] == '' then return {0} end
redis.call('ZADD', KEYS[1], now, own)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. '|' .. own)
if rated then redis.call('HSET', KEYS[3], own, ARGV[5] .. '|' .. now) end
return {2}
