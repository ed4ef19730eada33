-- Free the players of pairs whose race will not be played by the process that took them: pairs claimed before a
-- cutoff and never confirmed (their process died between the claim and the race's creation), or the races named
-- (a race whose second seat was refused, e.g. by a rated arena's ladder rules). They are free again unless they
-- paused or the clock ran out. KEYS: 1 the claimed set, 2 the busy hash, 3 the free set, 4 the paused set, 5 the
-- starting hash. ARGS: cutoff (ms; with no races named), races (a list, may be empty), now, end_at (ms).
-- Returns how many players were freed.
local races = {}
local named = 0
for _, race in ipairs(ARGS.races) do
  races[race] = true
  named = named + 1
  redis.call('HDEL', KEYS[5], race)
end
if named == 0 then
  local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGS.cutoff)
  if #stale == 0 then return 0 end
  for _, race in ipairs(stale) do
    races[race] = true
    redis.call('ZREM', KEYS[1], race)
  end
end
local freed = 0
local busy = redis.call('HGETALL', KEYS[2])
for index = 1, #busy, 2 do
  local player, race = busy[index], busy[index + 1]
  if races[race] then
    redis.call('HDEL', KEYS[2], player)
    if ARGS.now < ARGS.end_at and redis.call('SISMEMBER', KEYS[4], player) == 0 then
      redis.call('ZADD', KEYS[3], ARGS.now, player)
    end
    freed = freed + 1
  end
end
return freed
