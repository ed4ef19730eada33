-- ARGV: 3 player, 4 name, 5 countdown ms, 6 account handle ('' = anonymous), 7 bot (0/1), then field/value pairs
--       the race keeps from now on (rated races: each seat's rating change per outcome)
local status = get('status')
if status == false then return {0, 'unknown_race'} end
if get('p0_player') == ARGV[3] or get('p1_player') == ARGV[3] then return {0, 'already_seated'} end
if status == 'closed' then return {0, 'race_closed'} end
if status ~= 'waiting' then return {0, 'race_full'} end
local now = now_ms()
redis.call('HSET', K_STATE, unpack(seat_fields(1, ARGV[3], ARGV[4])))
redis.call('HINCRBY', K_STATE, 'epoch', 1)  -- the seats changed: every cached view of the race is stale
redis.call('HSET', K_STATE, 'p1_account', ARGV[6], 'p1_bot', ARGV[7])
if #ARGV > 7 then
  local extra = {}
  for i = 8, #ARGV do extra[#extra + 1] = ARGV[i] end
  redis.call('HSET', K_STATE, unpack(extra))
end
emit(joined_event(1), now)
local start_at = now + tonumber(ARGV[5])
local limit = geti('time_limit')
local deadline = 0
if limit > 0 then deadline = start_at + limit * 1000 end
redis.call('HSET', K_STATE, 'status', 'countdown', 'start_at', start_at, 'deadline', deadline)
-- The stored seed lets readers spell out the layout; it is never sent (revealed by the result).
local event = {type = 'countdown', seed = get('seed'), start_at = start_at, commitment = get('commitment') or '',
               seed_chosen = get('seed_fixed') == '1'}
if deadline > 0 then event['deadline'] = deadline end
local tier = get('difficulty')
if tier and tier ~= '' then event['difficulty'] = tier end
emit(event, now)
expire_all(LIVE_TTL)
return {1, start_at, deadline}
