-- Enforce the race's deadlines (start of play, time limit, grace periods, expired presence leases) by Redis'
-- clock; any process may run it, any number of times. Returns the next deadline in ms (0 when none is left),
-- with the lifecycle events it emitted: {due, events} (a bare 0 when there was nothing to do).
load_state(DEADLINE_FIELDS)
local status = get('status')
if status == false or status == 'finished' or status == 'closed' then return 0 end
local now = now_ms()
-- Between scripts the race's state only goes stale as time passes, and next_due() names every time at which it
-- does (start, time limit, grace, the first lease to expire, a held-back announcement): when none has come yet
-- (typically the entry of a lease that was renewed since), there is nothing to do but give the next one.
local due = next_due()
if due > now then return {due, LIFECYCLE} end
if status == 'running' or (status == 'countdown' and now >= geti('start_at')) then open_for_play(now) end
update_presence(now)
if get('status') == 'finished' then return {0, LIFECYCLE} end
expire_all(LIVE_TTL)
return {next_due(), LIFECYCLE}
