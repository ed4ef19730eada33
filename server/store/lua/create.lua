-- Store a new race with its creator in seat 0.
-- ARGS: race (its id), player, name, account (the creator's handle, '' = anonymous), bot (0/1), settings (the race's
--       settings in force as state-hash fields, stored as given: shared/race/settings.py SettingsInForce, through
--       server/store/race_store.py settings_fields), deal (deal_fields), seed_fixed (0/1: the creator chose the seed),
--       origin (create, quick_match, rematch), invite (its code, '' = none), rematch_of (the race this one is a
--       rematch of, '' = none), own_record_ttl (ms the record is kept once finished; false = the server's retention of
--       casual records, 0 = for ever)
if redis.call('EXISTS', K_STATE) == 1 then return {0, 'exists'} end
local now = now_ms()
local fields = {'id', ARGS.race, 'status', 'waiting', 'created_at', now, 'start_at', 0, 'deadline', 0, 'event_seq', 0,
  'finished_at', 0, 'watchers', 0, 'epoch', 1, 'seed_fixed', ARGS.seed_fixed, 'origin', ARGS.origin, 'invite', ARGS.invite,
  'rematch_of', ARGS.rematch_of}
for name, value in pairs(ARGS.settings) do
  fields[#fields + 1] = name
  fields[#fields + 1] = value
end
set_state(unpack(fields))
set_state(unpack(deal_fields(ARGS.deal)))
if ARGS.own_record_ttl then set_state('record_ttl', ARGS.own_record_ttl) end
set_state(unpack(seat_fields(0, ARGS.player, ARGS.name)))
set_state('p0_account', ARGS.account, 'p0_bot', ARGS.bot)
emit(joined_event(0), now)
expire_all(LIVE_TTL)
return {1, now}
