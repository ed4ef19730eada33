-- Book a finished race for its registered players, once: ratings, leaderboard, history, stats; release the
-- rated claim. Taking the race off the pending set is the claim, so two processes never book it twice.
-- KEYS: 1 pending, 2 leaderboard of the profile, then per booked seat 6 keys: rating, history, history items,
--       stats, rated_busy, rated opponents (a set of player ids).
-- A rated seat enters the leaderboard once its rating is not provisional and it played rated races against at
-- least min_opponents distinct opponents (docs/PLAYERS.md "Ladder rules").
-- ARGS: race (its id), finished_at, min_opponents, seats (one map per booked seat, in the order of the keys: player,
--       opponent (its player id), rate (0/1),
--       rating, deviation, volatility, last_at, provisional (0/1), handle, bot (0/1), item (the history item,
--       MessagePack), outcome (won/lost/draw), cleared (0/1), clear_ms, count).
if redis.call('ZREM', KEYS[1], ARGS.race) == 0 then return 0 end
local race, finished_at = ARGS.race, ARGS.finished_at
for index, seat in ipairs(ARGS.seats) do
  local k = 2 + (index - 1) * 6
  local player = seat.player
  if seat.rate == 1 then
    redis.call('HSET', KEYS[k + 1], 'rating', seat.rating, 'deviation', seat.deviation, 'volatility', seat.volatility,
      'last_at', seat.last_at, 'handle', seat.handle, 'bot', seat.bot)
    redis.call('HINCRBY', KEYS[k + 1], 'games', 1)
    redis.call('SADD', KEYS[k + 6], seat.opponent)
    if seat.provisional == 1 or redis.call('SCARD', KEYS[k + 6]) < ARGS.min_opponents then
      redis.call('ZREM', KEYS[2], player)
    else
      redis.call('ZADD', KEYS[2], seat.rating, player)
    end
  end
  redis.call('ZADD', KEYS[k + 2], finished_at, race)
  redis.call('HSET', KEYS[k + 3], race, seat.item)
  local stats = KEYS[k + 4]
  redis.call('HINCRBY', stats, 'races', 1)
  local outcome = seat.outcome
  redis.call('HINCRBY', stats, outcome == 'won' and 'wins' or (outcome == 'lost' and 'losses' or 'draws'), 1)
  redis.call('HINCRBY', stats, 'foundations', seat.count)
  if seat.cleared == 1 then
    redis.call('HINCRBY', stats, 'clears', 1)
    local best = tonumber(redis.call('HGET', stats, 'best_clear_ms') or '-1')
    if best < 0 or seat.clear_ms < best then redis.call('HSET', stats, 'best_clear_ms', seat.clear_ms) end
  end
  if redis.call('GET', KEYS[k + 5]) == race then redis.call('DEL', KEYS[k + 5]) end
end
return 1
