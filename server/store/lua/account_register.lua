-- Register an account unless its handle (lower case: the key) is taken. Atomic, so two registrations of one handle
-- on two processes cannot both succeed.
-- KEYS: 1 account hash, 2 player id -> handle hash.  ARGV: 1 player id, 2 handle lower case, then field/value pairs.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
