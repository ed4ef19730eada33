-- Release the players of a rated race (only claims that are still this race's).
-- KEYS: each player's rated_busy key.  ARGV: 1 race id.
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 1
