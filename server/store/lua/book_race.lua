-- Book a finished race for its registered players, once: ratings, leaderboard, history, stats; release the
-- rated claim. Taking the race off the pending set is the claim, so two processes never book it twice.
-- KEYS: 1 pending, 2 leaderboard of the profile, then per booked seat 5 keys: rating, history, history items,
--       stats, rated_busy.
-- ARGV: 1 race id, 2 finished_at, 3 seats booked; then per seat 14 values:
--       player, rate (0/1), rating, deviation, volatility, last_at, provisional (0/1), handle, bot (0/1),
--       history item (MessagePack), outcome (won/lost/draw), cleared (0/1), clear ms, count.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
local race, finished_at = ARGV[1], ARGV[2]
for seat = 0, tonumber(ARGV[3]) - 1 do
  local k = 2 + seat * 5
  local a = 3 + seat * 14
  local player = ARGV[a + 1]
  if ARGV[a + 2] == '1' then
    redis.call('HSET', KEYS[k + 1], 'rating', ARGV[a + 3], 'deviation', ARGV[a + 4], 'volatility', ARGV[a + 5],
      'last_at', ARGV[a + 6], 'handle', ARGV[a + 8], 'bot', ARGV[a + 9])
    redis.call('HINCRBY', KEYS[k + 1], 'games', 1)
    if ARGV[a + 7] == '1' then
      redis.call('ZREM', KEYS[2], player)
    else
      redis.call('ZADD', KEYS[2], ARGV[a + 3], player)
    end
  end
  redis.call('ZADD', KEYS[k + 2], finished_at, race)
  redis.call('HSET', KEYS[k + 3], race, ARGV[a + 10])
  local stats = KEYS[k + 4]
  redis.call('HINCRBY', stats, 'races', 1)
  local outcome = ARGV[a + 11]
  redis.call('HINCRBY', stats, outcome == 'won' and 'wins' or (outcome == 'lost' and 'losses' or 'draws'), 1)
  redis.call('HINCRBY', stats, 'foundations', ARGV[a + 14])
  if ARGV[a + 12] == '1' then
    redis.call('HINCRBY', stats, 'clears', 1)
    local best = tonumber(redis.call('HGET', stats, 'best_clear_ms') or '-1')
    if best < 0 or tonumber(ARGV[a + 13]) < best then redis.call('HSET', stats, 'best_clear_ms', ARGV[a + 13]) end
  end
  if redis.call('GET', KEYS[k + 5]) == race then redis.call('DEL', KEYS[k + 5]) end
end
return 1
