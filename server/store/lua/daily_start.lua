-- Open an attempt at a day's deal unless it exists (a registered player's one counted attempt of the day).
-- KEYS: 1 the attempt hash, 2 the day's counted hash. ARGS: fields (map), handle (counted: the player's handle,
-- else false), ttl_ms (0: kept). Returns 1 if this call opened it, 0 if it existed already.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for name, value in pairs(ARGS.fields) do redis.call('HSET', KEYS[1], name, value) end
if ARGS.handle then redis.call('HSET', KEYS[2], ARGS.handle, ARGS.fields.id) end
if ARGS.ttl_ms > 0 then redis.call('PEXPIRE', KEYS[1], ARGS.ttl_ms) end
return 1
