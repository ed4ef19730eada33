-- Store a finished race's post-race analysis and announce it with an 'analysis' event (once).
-- KEYS: the race's keys (common.lua), then 10 its analysis key.
-- ARGS: record (JSON: the analysis and operator-only signals), analysis (as players get it, JSON: no nulls, no
--       empty lists), ttl_ms (of the analysis key)
-- Returns {1, seq} | {0, code}
local status = get('status')
if status == false then return {0, 'unknown_race'} end
if status ~= 'finished' then return {0, 'not_finished'} end
if redis.call('EXISTS', KEYS[10]) == 1 then return {1, 0} end
redis.call('SET', KEYS[10], ARGS.record, 'PX', ARGS.ttl_ms)
return {1, emit({type = 'analysis', analysis = cjson.decode(ARGS.analysis)}, now_ms())}
