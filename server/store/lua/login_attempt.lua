-- One login or registration, checked against every limit and counted in the same step, before its slow password hash
-- runs: a login is counted as a failure here and login_refund.lua gives the failure back when the password was right,
-- so the limits hold exactly however many requests run at once on however many processes.
-- KEYS: 1 the address's attempts, 2 everybody's attempts, 3 the address's failed logins; a login: 4 the failed logins
--       to the handle from this address, 5 those to the handle from anywhere; a registration: 4 the accounts
--       registered from the address
-- ARGS: login (true: a login, false: a registration), per_address, overall, attempt_window_ms, failure_window_ms,
--       per_handle_address, per_handle, free_failures, first_delay_ms, longest_delay_ms, registrations,
--       registration_window_ms (a limit of 0 is no limit)
-- Returns {1, ms to wait before hashing} | {0, 'rate_limited', the limit reached: 'address' | 'global' | 'handle' | 'registrations',
-- ms until it allows again}
local function count(key) return tonumber(redis.call('GET', key) or '0') end
local function wait(key) return math.max(redis.call('PTTL', key), 0) end
local function spent(key, limit) return tonumber(limit) > 0 and count(key) >= tonumber(limit) end
local function bump(key, window_ms)
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window_ms) end
end
-- The delay of the n-th failure past the free ones: the first delay, doubled each time, up to the longest (none when
-- the free ones are 0: that delay is off).
local function delay(failures, free)
  if tonumber(free) == 0 then return 0 end
  local over = failures - tonumber(free)
  if over < 1 then return 0 end
  return math.floor(math.min(ARGS.first_delay_ms * 2 ^ math.min(over - 1, 30), ARGS.longest_delay_ms))
end
local address_failures = count(KEYS[3])
if spent(KEYS[1], ARGS.per_address) then return {0, 'rate_limited', 'address', wait(KEYS[1])} end
-- The global budget refuses only addresses that failed lately: a flood cannot keep everybody else out.
if address_failures > 0 and spent(KEYS[2], ARGS.overall) then return {0, 'rate_limited', 'global', wait(KEYS[2])} end
if ARGS.login then
  if spent(KEYS[4], ARGS.per_handle_address) then return {0, 'rate_limited', 'handle', wait(KEYS[4])} end
elseif spent(KEYS[4], ARGS.registrations) then
  return {0, 'rate_limited', 'registrations', wait(KEYS[4])}
end
bump(KEYS[1], ARGS.attempt_window_ms)
bump(KEYS[2], ARGS.attempt_window_ms)
if not ARGS.login then
  bump(KEYS[4], ARGS.registration_window_ms)
  return {1, delay(address_failures, ARGS.free_failures)}
end
-- The handle's own ceiling (failures from anywhere) delays, never refuses: the owner's right password still logs in.
local wait_ms = math.max(delay(address_failures, ARGS.free_failures), delay(count(KEYS[5]), ARGS.per_handle))
for _, key in ipairs({KEYS[3], KEYS[4], KEYS[5]}) do bump(key, ARGS.failure_window_ms) end
return {1, wait_ms}
