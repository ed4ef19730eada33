-- The common path of a move (the store's first try for an action that does not end its attempt): apply_action.lua
-- without what only an attempt's or the race's end needs (end_attempt, decide's result, time_up), so that Redis does
-- not define those helpers on every move (a script's definitions are created on each call). It checks as
-- apply_action.lua does and, before anything is written, hands the move to it ({3}) when the move may end an
-- attempt or the race: the other seat's attempt is over (this move may decide the race), or a time limit passed.
-- While both attempts play and the move does not end its own, decide() finds no result: the race goes on.
-- ARGS and replies: as apply_action.lua, and {3} (run apply_action.lua with the same arguments).
local slot = ARGS.slot
local checked = move_checks(slot)
if checked then return checked end
if ARGS.ends or get(pf(1 - slot, 'state')) ~= 'playing' then return {3} end
local now = now_ms()
if past_deadline(now) or seat_past_deadline(slot, now) or seat_past_deadline(1 - slot, now) then return {3} end
local refusal, expected = opening(now)
if not refusal then refusal, expected = attempt_refusal(slot, ARGS.seq, ARGS.max_actions) end
if refusal then return {0, refusal, expected or -1, LIFECYCLE} end  -- opening may have started the race
local move_seq, published = store_move(slot, now)
refresh_live_ttl(move_seq == 1)
return {1, move_seq, 0, LIFECYCLE, published}
