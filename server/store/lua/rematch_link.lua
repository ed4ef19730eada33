-- Record the rematch race of a finished race once both players agreed, and tell them.
-- ARGV: 3 new race id
-- Returns {1, new race id} | {2, the race linked before (the new one must be discarded)}
local linked = get('rematch_race')
if linked then return {2, linked} end
redis.call('HSET', K_STATE, 'rematch_race', ARGV[3])
emit({type = 'rematch', new_race = ARGV[3]}, now_ms())
return {1, ARGV[3]}
