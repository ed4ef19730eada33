-- Record the rematch race of a finished race once both players agreed, and tell them.
-- ARGS: new_race (its id)
-- Returns {1, new race id} | {2, the race linked before (the new one must be discarded)}
local linked = get('rematch_race')
if linked then return {2, linked} end
set_state('rematch_race', ARGS.new_race)
emit({type = 'rematch', new_race = ARGS.new_race}, now_ms())
return {1, ARGS.new_race}
