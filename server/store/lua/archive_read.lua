-- Read one finished race for the archive, packed as one MessagePack map {state, moves, events} (the shape of
-- finished_races.record, with each event as {seq, stored event}); false when the race is gone or not finished.
-- One string to unpack instead of four replies to parse: reading 500 races this way is the archiver's main cost.
-- KEYS: 1 state, 2 events, 3 moves of seat 0, 4 moves of seat 1.  ARGS: none.
local flat = redis.call('HGETALL', KEYS[1])
local state = {}
for index = 1, #flat, 2 do state[flat[index]] = flat[index + 1] end
if state.status ~= 'finished' then return false end
local events = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '-', '+')) do
  local fields, event = entry[2], nil
  for index = 1, #fields, 2 do
    if fields[index] == 'e' then event = fields[index + 1] end
  end
  events[#events + 1] = {tonumber(string.match(entry[1], '%-(%d+)$')), event}
end
return cmsgpack.pack({state = state, moves = {redis.call('LRANGE', KEYS[3], 0, -1), redis.call('LRANGE', KEYS[4], 0, -1)},
  events = events})
