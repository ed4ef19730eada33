-- The claiming process is about to create a claimed pair's race: confirm the claim unless it was released meanwhile
-- (the process was too slow, and the players may be paired anew), so a pair's race is created at most once. The
-- pair is then "starting" until its process has created the race and noted the pairing (ArenaStore.started); a
-- starting pair older than the lease is taken over by any process (its process died in between).
-- KEYS: 1 the claimed set, 2 the starting hash (race id -> JSON {a, b, at}). ARGS: race, a, b, now.
-- Returns 1 if confirmed, 0 if the claim is gone.
if redis.call('ZREM', KEYS[1], ARGS.race) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGS.race, cjson.encode({a = ARGS.a, b = ARGS.b, at = ARGS.now}))
return 1
