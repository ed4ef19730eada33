-- Register an account unless its handle (lower case: the key) is taken. Atomic, so two registrations of one handle
-- on two processes cannot both succeed.
-- KEYS: 1 account hash, 2 player id -> handle hash.  ARGS: player (id), handle (lower case), fields (the account's).
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fields = {}
for name, value in pairs(ARGS.fields) do
  fields[#fields + 1] = name
  fields[#fields + 1] = value
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('HSET', KEYS[2], ARGS.player, ARGS.handle)
return 1
