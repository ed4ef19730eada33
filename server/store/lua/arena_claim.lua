-- Claim pairs of free players of one arena for their next races, atomically: a pair is taken only if both players
-- are still free (another process may have paired one of them since its snapshot), so nobody is in two races.
-- KEYS: 1 the free set (sorted set: player -> since), 2 the busy hash (player -> race id), 3 the claimed set (race id
-- -> when). ARGS: pairs (list of {a, b, race}), now (ms), end_at (ms: no pairing from then on). Returns the race ids
-- of the pairs claimed.
local claimed = {}
if ARGS.now >= ARGS.end_at then return claimed end
for _, pair in ipairs(ARGS.pairs) do
  local a, b, race = pair[1], pair[2], pair[3]
  if a ~= b and redis.call('ZSCORE', KEYS[1], a) and redis.call('ZSCORE', KEYS[1], b) then
    redis.call('ZREM', KEYS[1], a, b)
    redis.call('HSET', KEYS[2], a, race, b, race)
    redis.call('ZADD', KEYS[3], ARGS.now, race)
    claimed[#claimed + 1] = race
  end
end
return claimed
