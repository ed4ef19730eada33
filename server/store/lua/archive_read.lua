-- Read one finished race for the archive: {record, finished_at ms, profile, rated ('1' or '0')}, where record is
-- the finished_races.record column as it is stored (one MessagePack map {state, moves, events}, each event as
-- {seq, stored event}); false when the race is gone or not finished. The archiver copies the record to PostgreSQL
-- without unpacking it: decoding and packing it again in the server process was the archive's main CPU cost.
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
local record = cmsgpack.pack({state = state, moves = {redis.call('LRANGE', KEYS[3], 0, -1), redis.call('LRANGE', KEYS[4], 0, -1)},
  events = events})
return {record, state.finished_at or state.created_at or '0', state.profile or '', state.rated == '1' and '1' or '0'}
