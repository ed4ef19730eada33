-- Connections entering or leaving a race, or renewing their leases (every process renews its own).
-- ARGS: lease_ms, leave (true: drop the leases; false: add or renew them), members ('<kind>|<player>|<connection id>', kind 0
-- or 1 (a seat: taken or renewed only while <player> holds it, so a player who left the seat, and its other
-- connections, never hold the next player's presence) or 'w' (a spectator). Returns {the race's next deadline (ms,
-- 0 for none), lifecycle events emitted}; a finished or unknown race is left alone (a bare 0).
load_state(DEADLINE_FIELDS)
local status = get('status')
if status == false or status == 'finished' or status == 'closed' then return 0 end
local now = now_ms()
local expiry = now + ARGS.lease_ms
local leases = {}  -- {set key, kind, player, connection id}
for _, member in ipairs(ARGS.members) do
  local kind, player, id = string.match(member, '^([01w])|([^|]*)|(.+)$')
  if kind then leases[#leases + 1] = {(kind == 'w') and K_WATCHERS or K_PRESENCE[tonumber(kind) + 1], kind, player, id} end
end
-- A renewal of leases that are all still in their sets (the periodic case) changes no one's presence: each lease
-- moves on (ZADD XX: only an existing member) and nothing else is looked at. A lease in a seat's set was taken for
-- the seat's current player (a seat that changes hands loses its leases, leave.lua); one that ran out but is still
-- there was seen by no script yet (a tick drops it), so renewing it is what a renewal in time would have done.
-- Only the next deadline is returned, which restores a lost timer entry. Else (a new or dropped lease, a leave):
-- the full path below.
local renewal = not ARGS.leave and #leases > 0
if renewal then
  for _, lease in ipairs(leases) do
    if redis.call('ZADD', lease[1], 'XX', 'CH', expiry, lease[4]) == 0 then renewal = false end
  end
end
if renewal then
  refresh_live_ttl(false)
  return {next_due(), LIFECYCLE}
end
for _, lease in ipairs(leases) do
  local key, kind, player, id = lease[1], lease[2], lease[3], lease[4]
  if ARGS.leave then
    redis.call('ZREM', key, id)
  elseif kind == 'w' or get(pf(tonumber(kind), 'player')) == player then
    redis.call('ZADD', key, expiry, id)
  end
end
update_presence(now)
if get('status') == 'finished' then return {0, LIFECYCLE} end
expire_all(LIVE_TTL)
return {next_due(), LIFECYCLE}
