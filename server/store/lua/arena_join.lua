-- Add a player to an arena (or bring a paused one back), atomically with its cap: a new player is refused once the
-- arena has its maximum of players; one who joined before always comes back. Free for pairing unless it is racing.
-- KEYS: 1 players (hash), 2 paused (set), 3 scores (sorted set), 4 busy (hash), 5 free (sorted set).
-- ARGS: player, entry (JSON), now, max_players (0: no cap). Returns {1, players} or {0, max_players} (full).
if redis.call('HEXISTS', KEYS[1], ARGS.player) == 0 then
  local count = redis.call('HLEN', KEYS[1])
  if ARGS.max_players > 0 and count >= ARGS.max_players then return {0, ARGS.max_players} end
end
redis.call('HSET', KEYS[1], ARGS.player, ARGS.entry)
redis.call('SREM', KEYS[2], ARGS.player)
redis.call('ZADD', KEYS[3], 'NX', 0, ARGS.player)
if redis.call('HEXISTS', KEYS[4], ARGS.player) == 0 then redis.call('ZADD', KEYS[5], 'NX', ARGS.now, ARGS.player) end
return {1, redis.call('HLEN', KEYS[1])}
