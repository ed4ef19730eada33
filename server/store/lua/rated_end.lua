-- Release the players of a rated race (only claims that are still this race's).
-- KEYS: each player's rated_busy key.  ARGS: race (its id).
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGS.race then redis.call('DEL', KEYS[i]) end
end
return 1
