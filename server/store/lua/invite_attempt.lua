-- One join_invite guess, counted as a miss before its code is looked up (invite_refund.lua gives it back when the code
-- was right), so the limits hold exactly however many guesses run at once on however many processes.
-- KEYS: 1 the player's misses, 2 the source's misses, 3 the source's lock, 4 the source's strikes, 5 everybody's misses
-- ARGV: 1 window ms, 2 per-player limit, 3 per-source limit, 4 global limit, 5 first lockout ms, 6 longest lockout ms,
--       7 how long strikes are remembered (ms)
-- Returns {1} (look the code up) | {0, 'rate_limited', the limit reached: 'player' | 'source' | 'global', ms until the next
-- guess may be made}
local window = tonumber(ARGV[1])
local locked = redis.call('PTTL', KEYS[3])
if locked > 0 then return {0, 'rate_limited', 'source', locked} end
local function spent(key, limit) return tonumber(redis.call('GET', key) or '0') >= tonumber(limit) end
local function wait(key) return math.max(redis.call('PTTL', key), 0) end
if spent(KEYS[1], ARGV[2]) then return {0, 'rate_limited', 'player', wait(KEYS[1])} end
if spent(KEYS[2], ARGV[3]) then
  -- Back-off: each lockout of a source within the strikes' memory lasts twice the one before, up to the longest.
  local strikes = redis.call('INCR', KEYS[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[7])
  local lockout = math.floor(math.min(tonumber(ARGV[5]) * 2 ^ math.min(strikes - 1, 30), tonumber(ARGV[6])))
  redis.call('SET', KEYS[3], strikes, 'PX', lockout)
  redis.call('DEL', KEYS[2])
  return {0, 'rate_limited', 'source', lockout}
end
if spent(KEYS[5], ARGV[4]) then return {0, 'rate_limited', 'global', wait(KEYS[5])} end
for _, key in ipairs({KEYS[1], KEYS[2], KEYS[5]}) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
end
return {1}
