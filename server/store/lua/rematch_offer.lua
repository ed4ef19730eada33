-- A player of a finished race offers (or accepts) a rematch. An offer stands until its time (ms) stored in
-- p<slot>_rematch; a later `rematch` from the same player after that is a new offer.
-- ARGS: player, stands_ms (how long an offer stands)
-- Returns {1, slot, agreed (0/1)} | {2, slot, new race id (already agreed and created)} | {0, code}
local status = get('status')
if status == false then return {0, 'unknown_race'} end
local slot
if get('p0_player') == ARGS.player then slot = 0 elseif get('p1_player') == ARGS.player then slot = 1 else return {0, 'not_seated'} end
if status == 'closed' then return {0, 'race_closed'} end
if status ~= 'finished' then return {0, 'not_finished'} end
local linked = get('rematch_race')
if linked then return {2, slot, linked} end
local now = now_ms()
if geti(pf(slot, 'rematch')) <= now then
  local offer_until = now + ARGS.stands_ms
  set_state(pf(slot, 'rematch'), offer_until)
  emit({type = 'rematch_offered', slot = slot, ['until'] = offer_until}, now)
end
return {1, slot, geti(pf(1 - slot, 'rematch')) > now and 1 or 0}
