-- The lobby list and the id of the latest change, read at one instant (a watcher continues after that id).
-- KEYS: 1 open, 2 entries, 3 alive, 4 feed. ARGS: max_entries
-- Returns {last feed id ('0-0' when empty), entry, entry, ...} oldest race first.
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)
local result = {#last > 0 and last[1][1] or '0-0'}
local races = redis.call('ZRANGE', KEYS[1], 0, ARGS.max_entries - 1)
if #races > 0 then
  local entries = redis.call('HMGET', KEYS[2], unpack(races))
  for i = 1, #races do
    if entries[i] then result[#result + 1] = entries[i] end
  end
end
return result
