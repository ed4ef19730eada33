-- A player gives up its seat before the start.
-- ARGS: player, reason (the race closes with, when seat 0 leaves: 'left', 'abandoned', 'cancelled', 'lobby_full',
--       'paired'), only_waiting (true: refuse once the countdown runs), new_race (the race the player went on to,
--       with 'paired', or false), deal (the next deal, when seat 1 leaves a countdown: deal_fields in common.lua)
-- Returns {1, 'closed' | 'waiting'} | {0, code}
local status = get('status')
if status == false then return {0, 'unknown_race'} end
local slot
if get('p0_player') == ARGS.player then slot = 0 elseif get('p1_player') == ARGS.player then slot = 1 else return {0, 'not_seated'} end
if status == 'finished' then return {0, 'race_over'} end
if status == 'closed' then return {0, 'race_closed'} end
local now = now_ms()
if status == 'running' or (status == 'countdown' and now >= geti('start_at')) then return {0, 'already_started'} end
if ARGS.only_waiting and status ~= 'waiting' then return {0, 'already_started'} end
emit({type = 'player_left', slot = slot, player = ARGS.player}, now)
incr_state('epoch')  -- the seats (and maybe the deal) change: every cached view is stale
if slot == 0 then
  -- The creator leaves: nobody can join any more; the record is kept like a finished race's.
  set_state('status', 'closed', 'finished_at', now, 'result_reason', ARGS.reason)
  local closed = {type = 'race_closed', reason = ARGS.reason}
  if ARGS.new_race then closed['new_race'] = ARGS.new_race end
  emit(closed, now)
  redis.call('DEL', K_PRESENCE[1], K_PRESENCE[2], K_WATCHERS)
  expire_all(RECORD_TTL)
  return {1, 'closed'}
end
-- The second player leaves the countdown: its seat frees and the race waits again, with a new deal
-- (the revealed one stays only when the creator fixed it).
del_state(seat_names(1))
redis.call('DEL', K_PRESENCE[2])
-- A grace period the creator started in the countdown ends with it; the next countdown starts a fresh one.
set_state('status', 'waiting', 'start_at', 0, 'deadline', 0, 'p0_grace_until', 0, unpack(deal_fields(ARGS.deal)))
expire_all(LIVE_TTL)
return {1, 'waiting'}
