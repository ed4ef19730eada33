-- Book one finished race of an arena once (whichever processes report it): each player's game is appended, its
-- score set, and it is free again unless it paused or the arena's clock ran out.
-- KEYS: 1 the booked hash (race id -> 1), 2 the busy hash, 3 the free set, 4 the scores (sorted set), 5 the paused
-- set, 6 player a's games (list), 7 player b's games. ARGS: race, a, b, game_a, game_b (JSON), score_a, score_b, now,
-- end_at. Returns 1 if this call booked it, 0 if it was booked already.
if redis.call('HSETNX', KEYS[1], ARGS.race, 1) == 0 then return 0 end
redis.call('RPUSH', KEYS[6], ARGS.game_a)
redis.call('RPUSH', KEYS[7], ARGS.game_b)
redis.call('ZADD', KEYS[4], ARGS.score_a, ARGS.a, ARGS.score_b, ARGS.b)
for _, player in ipairs({ARGS.a, ARGS.b}) do
  if redis.call('HGET', KEYS[2], player) == ARGS.race then
    redis.call('HDEL', KEYS[2], player)
    if ARGS.now < ARGS.end_at and redis.call('SISMEMBER', KEYS[5], player) == 0 then
      redis.call('ZADD', KEYS[3], ARGS.now, player)
    end
  end
end
return 1
