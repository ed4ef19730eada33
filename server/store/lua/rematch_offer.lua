-- A player of a finished race offers (or accepts) a rematch.
-- ARGV: 3 player
-- Returns {1, slot, agreed (0/1)} | {2, slot, new race id (already agreed and created)} | {0, code}
local status = get('status')
if status == false then return {0, 'unknown_race'} end
local slot
if get('p0_player') == ARGV[3] then slot = 0 elseif get('p1_player') == ARGV[3] then slot = 1 else return {0, 'not_seated'} end
if status == 'closed' then return {0, 'race_closed'} end
if status ~= 'finished' then return {0, 'not_finished'} end
local linked = get('rematch_race')
if linked then return {2, slot, linked} end
if get(pf(slot, 'rematch')) ~= '1' then
  redis.call('HSET', K_STATE, pf(slot, 'rematch'), 1)
  emit({type = 'rematch_offered', slot = slot}, now_ms())
end
return {1, slot, get(pf(1 - slot, 'rematch')) == '1' and 1 or 0}
