-- Pair with a waiting player of the same settings, or wait for one. Atomic: an entry is handed to one pairer only.
-- KEYS: 1 the queue of these settings (zset member '<race>:<player>' -> heartbeat ms), 2 players (hash),
--       3 ratings of rated entries (hash member -> '<rating>|<queued at ms>'), 4 last opponents (hash player -> player)
-- ARGS: player, race (its own race to wait in, or false: pair only, never wait), settings_key, stale_ms,
--       rating (the caller's, or false: an unrated queue, first come, first paired),
--       waiting (true when the caller already waits in this queue in its race: a later pairing attempt, its wait
--         counts, and its own entry is taken off too when it is paired),
--       the widening of a rated window: window_base (points), window_points (added per step), window_step_ms,
--       window_any_ms (the wait after which any rating pairs)
-- Returns {1, partner race, partner player} | {2} (now waiting) | {0} (nobody waiting, not queued)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function forget(member)
  local player = string.match(member, ':(.+)$')
  redis.call('ZREM', KEYS[1], member)
  redis.call('HDEL', KEYS[3], member)
  if redis.call('HGET', KEYS[2], player) == ARGS.settings_key .. '|' .. member then redis.call('HDEL', KEYS[2], player) end
  return player
end
-- Entries whose owner's process stopped refreshing them are dropped.
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - ARGS.stale_ms))) do forget(member) end
local own = (ARGS.race or '') .. ':' .. ARGS.player
local rated = ARGS.rating ~= false
if not rated then
  if ARGS.waiting and not redis.call('ZSCORE', KEYS[1], own) then return {0} end  -- paired (or dropped) meanwhile
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, 15)) do
    local race, player = string.match(member, '^([^:]+):(.+)$')
    if player ~= ARGS.player then
      forget(member)
      if ARGS.waiting then forget(own) end
      return {1, race, player}
    end
  end
  if ARGS.waiting then return {0} end
else
  -- Rated: the closest rating within the window of the longer wait; a repeat of one's last pairing only when no
  -- one else fits.
  local rating = tonumber(ARGS.rating)
  local since = now
  if ARGS.waiting then
    local mine = redis.call('HGET', KEYS[3], own)
    if not mine then return {0} end  -- paired (or dropped) meanwhile
    since = tonumber(string.match(mine, '|(.+)$'))
  end
  local last = redis.call('HGET', KEYS[4], ARGS.player)
  local function window(waited)
    if waited >= ARGS.window_any_ms then return math.huge end
    return ARGS.window_base + ARGS.window_points * math.floor(waited / ARGS.window_step_ms)
  end
  local best, best_key = nil, nil
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, 63)) do
    local race, player = string.match(member, '^([^:]+):(.+)$')
    local meta = redis.call('HGET', KEYS[3], member)
    if player ~= ARGS.player and meta then
      local their_rating, queued = string.match(meta, '^(.+)|(.+)$')
      local gap = math.abs(tonumber(their_rating) - rating)
      local waited = now - math.min(since, tonumber(queued))
      if gap <= window(waited) then
        local repeat_pair = (player == last) or (redis.call('HGET', KEYS[4], player) == ARGS.player)
        local key = (repeat_pair and 1e9 or 0) + gap
        if best_key == nil or key < best_key then best, best_key = {member, race, player}, key end
      end
    end
  end
  if best then
    forget(best[1])
    if ARGS.waiting then forget(own) end
    redis.call('HSET', KEYS[4], ARGS.player, best[3], best[3], ARGS.player)
    return {1, best[2], best[3]}
  end
  if ARGS.waiting then return {0} end
end
if not ARGS.race then return {0} end
redis.call('ZADD', KEYS[1], now, own)
redis.call('HSET', KEYS[2], ARGS.player, ARGS.settings_key .. '|' .. own)
if rated then redis.call('HSET', KEYS[3], own, ARGS.rating .. '|' .. now) end
return {2}
