-- A server process reports how many players it serves (online, and of them racing) and reads everyone's totals,
-- in one step: its own line is written, every line older than ARGS.stale_ms (a process that stopped or died) is
-- dropped, the fresh ones are summed. Redis' clock dates every line, so the processes' clocks need not agree.
-- KEYS[1]: the hash of process lines (keys.ONLINE). ARGS: process, online, racing, stale_ms
-- Returns {online, racing} over every fresh process, this one included.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], ARGS.process, ARGS.online .. ' ' .. ARGS.racing .. ' ' .. now)
local lines = redis.call('HGETALL', KEYS[1])
local online, racing = 0, 0
for i = 1, #lines, 2 do
  local o, r, at = string.match(lines[i + 1], '^(%d+) (%d+) (%d+)$')
  if o == nil or now - tonumber(at) > ARGS.stale_ms then
    redis.call('HDEL', KEYS[1], lines[i])
  else
    online, racing = online + tonumber(o), racing + tonumber(r)
  end
end
redis.call('PEXPIRE', KEYS[1], ARGS.stale_ms * 10)
return {online, racing}
