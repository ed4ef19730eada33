-- Claim both players of a rated race: a player plays one rated race at a time (its rating moves once per race).
-- KEYS: each player's rated_busy key.  ARGS: race (its id), ttl_ms.  Returns {1} (claimed, both) or {0, the race
-- that holds a player}.
for i = 1, #KEYS do
  local held = redis.call('GET', KEYS[i])
  if held and held ~= ARGS.race then return {0, held} end
end
for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGS.race, 'PX', ARGS.ttl_ms) end
return {1}
