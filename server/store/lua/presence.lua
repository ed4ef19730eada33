-- Connections entering or leaving a race, or renewing their leases (every process renews its own).
-- ARGS: lease_ms, leave (true: drop the leases; false: add or renew them), members ('<kind>|<player>|<connection id>', kind 0
-- or 1 (a seat: taken or renewed only while <player> holds it, so a player who left the seat, and its other
-- connections, never hold the next player's presence) or 'w' (a spectator). Returns {the race's next deadline (ms,
-- 0 for none), lifecycle events emitted}; a finished or unknown race is left alone (a bare 0).
local status = get('status')
if status == false or status == 'finished' or status == 'closed' then return 0 end
local now = now_ms()
local expiry = now + ARGS.lease_ms
for _, member in ipairs(ARGS.members) do
  local kind, player, id = string.match(member, '^([01w])|([^|]*)|(.+)$')
  if kind then
    local key = (kind == 'w') and K_WATCHERS or K_PRESENCE[tonumber(kind) + 1]
    if ARGS.leave then
      redis.call('ZREM', key, id)
    elseif kind == 'w' or get(pf(tonumber(kind), 'player')) == player then
      redis.call('ZADD', key, expiry, id)
    end
  end
end
update_presence(now)
if get('status') == 'finished' then return {0, LIFECYCLE} end
expire_all(LIVE_TTL)
return {next_due(), LIFECYCLE}
