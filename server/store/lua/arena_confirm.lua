-- The claiming process is about to create a claimed pair's race: confirm the claim unless it was released meanwhile
-- (the process was too slow, and the players may be paired anew), so a pair's race is created at most once.
-- KEYS: 1 the claimed set. ARGS: race. Returns 1 if confirmed, 0 if the claim is gone.
return redis.call('ZREM', KEYS[1], ARGS.race)
