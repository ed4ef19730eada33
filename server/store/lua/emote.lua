-- A seated player sends the opponent a quick emote (a fixed phrase, shared/protocol/states.py Emote), from the
-- countdown to after the result: an `emote` event in the race's stream. The per-connection budget is the server's
-- (dispatch.py); the phrase was checked by the codec.
-- ARGS: player, phrase
-- Returns {1, seq} | {0, code}
local status = get('status')
if status == false then return {0, 'unknown_race'} end
local slot
if get('p0_player') == ARGS.player then slot = 0 elseif get('p1_player') == ARGS.player then slot = 1 else return {0, 'not_seated'} end
if status == 'closed' then return {0, 'race_closed'} end
if status == 'waiting' then return {0, 'not_started'} end
local seq = emit({type = 'emote', slot = slot, phrase = ARGS.phrase}, now_ms())
return {1, seq}
