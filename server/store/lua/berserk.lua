-- An arena player goes berserk before its race starts: its own attempt ends half the race's time limit after the
-- start (the seat's deadline, enforced as the race's), and the arena counts one point more for its win with at least
-- 7 moves (server/services/arena.py). Asked again, it answers the deadline already set.
-- ARGS: player. Returns {1, the seat's deadline} | {0, code}
local status = get('status')
if status == false then return {0, 'unknown_race'} end
local slot = nil
for seat = 0, 1 do
  if get(pf(seat, 'player')) == ARGS.player then slot = seat end
end
if slot == nil then return {0, 'not_seated'} end
local own = geti(pf(slot, 'deadline'))
if own > 0 then return {1, own} end
local now = now_ms()
if status ~= 'countdown' or now >= geti('start_at') then return {0, 'berserk_too_late'} end
local limit = geti('time_limit')
if limit <= 0 then return {0, 'bad_field'} end
local deadline = geti('start_at') + math.floor(limit * 1000 / 2)
set_state(pf(slot, 'deadline'), deadline, pf(slot, 'berserk'), 1)
emit({type = 'berserk', slot = slot, deadline = deadline}, now)
return {1, deadline}
