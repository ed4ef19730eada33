-- An operator closes a race that has no result yet, whatever its status: both players (and spectators) get
-- race_closed with reason 'operator' and the operator's message; nothing more can be played.
-- ARGS: message. Returns {1, status before} | {0, code}
local status = get('status')
if status == false then return {0, 'unknown_race'} end
if status == 'finished' then return {0, 'race_over'} end
if status == 'closed' then return {0, 'race_closed'} end
local now = now_ms()
set_state('status', 'closed', 'finished_at', now, 'result_reason', 'operator')
emit({type = 'race_closed', reason = 'operator', message = ARGS.message}, now)
redis.call('DEL', K_PRESENCE[1], K_PRESENCE[2], K_WATCHERS)
expire_all(RECORD_TTL)
return {1, status}
