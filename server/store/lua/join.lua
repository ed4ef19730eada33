-- ARGS: player, name, countdown_ms, account (the handle, '' = anonymous), bot (0/1), keep (a map of fields the
--       race keeps from now on: rated races' rating change per seat and outcome), both_expected (0/1: both seats
--       count as followed once, seen, and were last told of now, told_at), by_invite (0/1: joined by the race's invite
--       code, which is freed at the start: from then on, by the race's own clock, the code answers unknown_invite
--       although the lobby, in another hash slot, forgets it a tick later)
local status = get('status')
if status == false then return {0, 'unknown_race'} end
if ARGS.by_invite == 1 and (status == 'closed' or status == 'running' or status == 'finished'
                            or (status == 'countdown' and now_ms() >= geti('start_at'))) then
  return {0, 'unknown_invite'}
end
if get('p0_player') == ARGS.player or get('p1_player') == ARGS.player then return {0, 'already_seated'} end
if status == 'closed' then return {0, 'race_closed'} end
if status ~= 'waiting' then return {0, 'race_full'} end
local now = now_ms()
set_state(unpack(seat_fields(1, ARGS.player, ARGS.name)))
incr_state('epoch')  -- the seats changed: every cached view of the race is stale
set_state('p1_account', ARGS.account, 'p1_bot', ARGS.bot)
local keep = {}
for name, value in pairs(ARGS.keep) do keep[#keep + 1] = name; keep[#keep + 1] = value end
if #keep > 0 then set_state(unpack(keep)) end
if ARGS.both_expected == 1 then set_state('p0_seen', 1, 'p0_told_at', now, 'p1_seen', 1, 'p1_told_at', now) end
emit(joined_event(1), now)
local start_at = now + ARGS.countdown_ms
local limit = geti('time_limit')
local deadline = 0
if limit > 0 then deadline = start_at + limit * 1000 end
set_state('status', 'countdown', 'start_at', start_at, 'deadline', deadline)
-- The stored seed lets readers spell out the layout; it is never sent (revealed by the result).
local event = {type = 'countdown', seed = get('seed'), start_at = start_at, commitment = get('commitment') or '',
               seed_chosen = get('seed_fixed') == '1'}
if deadline > 0 then event['deadline'] = deadline end
local tier = get('difficulty')
if tier and tier ~= '' then event['difficulty'] = tier end
emit(event, now)
expire_all(LIVE_TTL)
return {1, start_at, deadline}
