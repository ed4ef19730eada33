-- A finished race is in PostgreSQL: each of its keys gets the archive's cache TTL, unless its own is shorter
-- (a key without a TTL, a rated record's, gets it too; a key that is gone stays gone). One call per race.
-- KEYS: the race's keys (keys.race_keys).  ARGS: ttl_ms.
for _, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or ttl > ARGS.ttl_ms then redis.call('PEXPIRE', key, ARGS.ttl_ms) end
end
return 1
