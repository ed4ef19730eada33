-- Enforce the race's deadlines (start of play, time limit) by Redis' clock; any process may run it,
-- any number of times. Returns the next deadline in ms, or 0 when none is left.
local status = get('status')
if status == false or status == 'finished' or status == 'waiting' then return 0 end
local now = now_ms()
if status == 'countdown' and now < geti('start_at') then return geti('start_at') end
local refusal = open_for_play(now)
if refusal then return 0 end
expire_all(LIVE_TTL)
return geti('deadline')
