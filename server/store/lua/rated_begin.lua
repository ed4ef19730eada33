-- Claim both players of a rated race: a player plays one rated race at a time (its rating moves once per race),
-- two accounts seen on one client address within the window never play rated against each other, and a pair plays
-- at most pair_limit rated races per pair window (docs/PLAYERS.md "Ladder rules"). What the operators should see
-- (a refusal of the same address, a pair at its limit) goes to the pair's signals (``flowergarden admin pairs``).
-- KEYS: 1-2 each player's rated_busy key, 3-4 each player's sightings (address -> last seen ms), 5 the pair's rated
--       races in the pair window, 6 the pair's signals hash, 7 the suspicious pairs (pair -> last signal ms).
-- ARGS: race (its id), ttl_ms, address_window_ms (0: no address rule), pair_limit (0: none), pair_window_ms,
--       pair (its name in KEYS[7]), handles (both, for the signals), signals_ttl_ms.
-- Every claim counts in the pair's signals hash ('rated'), which the operators' list shows beside the signals.
-- Returns {1} (claimed, both), {0, 'rated_busy', the race that holds a player}, {0, 'rated_same_network'} or
-- {0, 'rated_pair_limit', the limit}.
for i = 1, 2 do
  local held = redis.call('GET', KEYS[i])
  if held and held ~= ARGS.race then return {0, 'rated_busy', held} end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function signal(field)
  redis.call('HINCRBY', KEYS[6], field, 1)
  redis.call('HSET', KEYS[6], 'handles', ARGS.handles, 'last_at', now)
  redis.call('PEXPIRE', KEYS[6], ARGS.signals_ttl_ms)
  redis.call('ZADD', KEYS[7], now, ARGS.pair)
end

if ARGS.address_window_ms > 0 then
  local since = now - ARGS.address_window_ms
  local seen = redis.call('ZRANGEBYSCORE', KEYS[3], since, '+inf')
  for _, address in ipairs(seen) do
    local other = redis.call('ZSCORE', KEYS[4], address)
    if other and tonumber(other) >= since then
      signal('same_address')
      return {0, 'rated_same_network'}
    end
  end
end
if ARGS.pair_limit > 0 and tonumber(redis.call('GET', KEYS[5]) or '0') >= ARGS.pair_limit then
  signal('over_limit')
  return {0, 'rated_pair_limit', ARGS.pair_limit}
end
local again = redis.call('GET', KEYS[1]) == ARGS.race and redis.call('GET', KEYS[2]) == ARGS.race  -- a retried claim
for i = 1, 2 do redis.call('SET', KEYS[i], ARGS.race, 'PX', ARGS.ttl_ms) end
if not again then
  if redis.call('INCR', KEYS[5]) == 1 then redis.call('PEXPIRE', KEYS[5], ARGS.pair_window_ms) end
  redis.call('HINCRBY', KEYS[6], 'rated', 1)
  redis.call('HSET', KEYS[6], 'handles', ARGS.handles, 'last_at', now)
  redis.call('PEXPIRE', KEYS[6], ARGS.signals_ttl_ms)
end
return {1}
