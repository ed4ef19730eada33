-- ARGV: 3 race id, 4 player, 5 name, 6 profile, 7 undo (0/1), 8 redeal_once (0/1), 9 time limit s (0 = none), 10 seed,
--       11 spectator delay ms, 12 reconnect grace ms, 13 solvable_only (0/1), 14 private (0/1),
--       15 seed fixed by the creator (0/1), 16 origin (create, quick_match, rematch), 17 invite code ('' = none),
--       18 race this one is a rematch of ('' = none), 19 who may watch (anyone, link, nobody), 20 record retention
--       ms once finished ('' = the server's retention of casual records, 0 = for ever), 21 creator's account handle
--       ('' = anonymous), 22 bot (0/1), 23 rated (0/1), 24 salt (hex), 25 deal commitment, 26 deal tier ('' =
--       unknown), 27 proving line (JSON list, '' = none), 28 tier the creator asked for ('' = any)
if redis.call('EXISTS', K_STATE) == 1 then return {0, 'exists'} end
local now = now_ms()
redis.call('HSET', K_STATE, 'id', ARGV[3], 'status', 'waiting', 'profile', ARGV[6], 'undo', ARGV[7],
  'redeal_once', ARGV[8], 'time_limit', ARGV[9], 'seed', ARGV[10], 'created_at', now, 'start_at', 0,
  'deadline', 0, 'event_seq', 0, 'finished_at', 0, 'spectator_delay', ARGV[11], 'grace', ARGV[12], 'watchers', 0,
  'solvable_only', ARGV[13], 'private', ARGV[14], 'seed_fixed', ARGV[15], 'origin', ARGV[16], 'invite', ARGV[17],
  'rematch_of', ARGV[18], 'spectators', ARGV[19], 'epoch', 1, 'rated', ARGV[23], 'salt', ARGV[24], 'commitment', ARGV[25],
  'difficulty', ARGV[26], 'line', ARGV[27], 'asked_difficulty', ARGV[28])
if ARGV[20] ~= '' then redis.call('HSET', K_STATE, 'record_ttl', ARGV[20]) end
redis.call('HSET', K_STATE, unpack(seat_fields(0, ARGV[4], ARGV[5])))
redis.call('HSET', K_STATE, 'p0_account', ARGV[21], 'p0_bot', ARGV[22])
emit(joined_event(0), now)
expire_all(LIVE_TTL)
return {1, now}
