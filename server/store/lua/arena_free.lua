-- Free the players of one race of an arena that will not be played (its second seat was refused, e.g. by the ladder
-- rules of a rated arena): they are free again unless they paused or the clock ran out, and it is no longer starting.
-- KEYS: 1 the busy hash, 2 the free set, 3 the paused set, 4 the starting hash. ARGS: race, now, end_at.
-- Returns how many players were freed.
redis.call('HDEL', KEYS[4], ARGS.race)
local freed = 0
local busy = redis.call('HGETALL', KEYS[1])
for index = 1, #busy, 2 do
  local player, race = busy[index], busy[index + 1]
  if race == ARGS.race then
    redis.call('HDEL', KEYS[1], player)
    if ARGS.now < ARGS.end_at and redis.call('SISMEMBER', KEYS[3], player) == 0 then
      redis.call('ZADD', KEYS[2], ARGS.now, player)
    end
    freed = freed + 1
  end
end
return freed
