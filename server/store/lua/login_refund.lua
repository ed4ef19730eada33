-- A login counted as a failure by login_attempt.lua had the right password (or its hash never ran): it was no failure.
-- KEYS as for a login in login_attempt.lua; 3 to 5 are given back (1 and 2, the attempts, stay counted).
for _, key in ipairs({KEYS[3], KEYS[4], KEYS[5]}) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 1
