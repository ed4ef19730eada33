-- Connections entering or leaving a race, or renewing their leases (every process renews its own).
-- ARGV: 3 lease ms, 4 'enter' (add or renew) or 'leave', 5.. members '<kind>|<player>|<connection id>' with kind 0
-- or 1 (a seat: taken or renewed only while <player> holds it, so a player who left the seat, and its other
-- connections, never hold the next player's presence) or 'w' (a spectator). Returns {the race's next deadline (ms,
-- 0 for none), lifecycle events emitted}; a finished or unknown race is left alone (a bare 0).
local status = get('status')
if status == false or status == 'finished' or status == 'closed' then return 0 end
local now = now_ms()
local expiry = now + tonumber(ARGV[3])
for i = 5, #ARGV do
  local kind, player, id = string.match(ARGV[i], '^([01w])|([^|]*)|(.+)$')
  if kind then
    local key = (kind == 'w') and K_WATCHERS or K_PRESENCE[tonumber(kind) + 1]
    if ARGV[4] == 'leave' then
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
