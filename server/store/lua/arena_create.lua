-- Store a new arena once: a recurring arena's id is derived from its schedule and start, so every process may try to
-- open it and one does. KEYS: 1 meta (hash). ARGS: fields (a map). Returns 1 if created, 0 if it existed.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for name, value in pairs(ARGS.fields) do redis.call('HSET', KEYS[1], name, value) end
return 1
