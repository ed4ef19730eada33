-- One join_invite guess, counted as a miss before its code is looked up (invite_refund.lua gives it back when the code
-- was right), so the limits hold exactly however many guesses run at once on however many processes.
-- KEYS: 1 the player's misses, 2 the source's misses, 3 the source's lock, 4 the source's strikes, 5 everybody's misses
-- ARGS: window_ms, per_player, per_source, overall (the limits), first_lockout_ms, longest_lockout_ms,
--       strikes_kept_ms (how long strikes are remembered), overall_delay_ms (the wait of a guess past the overall limit)
-- Returns {1, ms to wait before looking the code up} | {0, 'rate_limited', the limit reached: 'player' | 'source', ms
-- until the next guess may be made}
local locked = redis.call('PTTL', KEYS[3])
if locked > 0 then return {0, 'rate_limited', 'source', locked} end
local function spent(key, limit) return tonumber(redis.call('GET', key) or '0') >= tonumber(limit) end
local function wait(key) return math.max(redis.call('PTTL', key), 0) end
if spent(KEYS[1], ARGS.per_player) then return {0, 'rate_limited', 'player', wait(KEYS[1])} end
if spent(KEYS[2], ARGS.per_source) then
  -- Back-off: each lockout of a source within the strikes' memory lasts twice the one before, up to the longest.
  local strikes = redis.call('INCR', KEYS[4])
  redis.call('PEXPIRE', KEYS[4], ARGS.strikes_kept_ms)
  local lockout = math.floor(math.min(ARGS.first_lockout_ms * 2 ^ math.min(strikes - 1, 30), ARGS.longest_lockout_ms))
  redis.call('SET', KEYS[3], strikes, 'PX', lockout)
  redis.call('DEL', KEYS[2])
  return {0, 'rate_limited', 'source', lockout}
end
-- Everybody's misses past the overall limit slow each guess down (the caller waits before looking the code up), never
-- refuse it: someone else's misses must not keep a right code out.
local slow_ms = 0
if spent(KEYS[5], ARGS.overall) then slow_ms = ARGS.overall_delay_ms end
for _, key in ipairs({KEYS[1], KEYS[2], KEYS[5]}) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGS.window_ms) end
end
return {1, slow_ms}
