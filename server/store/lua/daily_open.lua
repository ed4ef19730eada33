-- Fix a day's deal once (several processes may try at the day's start: the first one wins, the others read it).
-- KEYS: 1 the day's deal hash. ARGS: fields (map of the deal's fields). Returns 1 if this call stored it, else 0.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for name, value in pairs(ARGS.fields) do redis.call('HSET', KEYS[1], name, value) end
return 1
