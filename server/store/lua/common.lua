-- Shared by the race scripts: each starts with the definitions below that it uses (server/store/scripts.py
-- race_script), so the top level holds definitions only ('local function f' or 'local NAME = ...').
-- KEYS: 1 state hash, 2 events stream, 3-4 moves lists (slot 0, 1), 5-6 move-id hashes (slot 0, 1),
--       7-8 presence leases of each seat's connections, 9 spectators' leases (sorted sets, score = lease expiry ms).
-- ARGS (lua/arguments.lua): live_ttl and record_ttl (ms) of every race script, then the script's own fields.
local K_STATE, K_EVENTS = KEYS[1], KEYS[2]
local K_MOVES = {KEYS[3], KEYS[4]}
local K_IDS = {KEYS[5], KEYS[6]}
local K_PRESENCE = {KEYS[7], KEYS[8]}
local K_WATCHERS = KEYS[9]
local LIVE_TTL, RECORD_TTL = ARGS.live_ttl, ARGS.record_ttl

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The state hash's fields this script has read or written, as Redis holds them (text; false for a missing field):
-- each field is read from Redis at most once per call (one HMGET for the fields a script names up front:
-- load_state), and every write of the script goes through set_state/incr_state/del_state, which keep it current.
local STATE = {}
-- A number the script wrote is kept as the number and given as text only when read as text (formatting costs
-- more than most commands): the text Redis stored, an integer's digits (Redis formats script numbers with %.17g
-- on 6.2, the shortest form on 7; every number the scripts write is an integer).
local function get(name)
  local value = STATE[name]
  if value == nil then
    value = redis.call('HGET', K_STATE, name)
    STATE[name] = value
  elseif type(value) == 'number' then
    return string.format('%.17g', value)
  end
  return value
end
local function geti(name)
  local value = STATE[name]
  if type(value) == 'number' then return value end
  return tonumber(get(name) or '0')
end
local function load_state(names)
  local values = redis.call('HMGET', K_STATE, unpack(names))
  for i, name in ipairs(names) do STATE[name] = values[i] end
end
-- HSET on the state hash with field, value pairs.
local function set_state(...)
  local fields = {...}
  redis.call('HSET', K_STATE, unpack(fields))
  for i = 1, #fields, 2 do STATE[fields[i]] = fields[i + 1] end
end
local function incr_state(name)
  local value = redis.call('HINCRBY', K_STATE, name, 1)
  STATE[name] = value
  return value
end
local function del_state(names)
  redis.call('HDEL', K_STATE, unpack(names))
  for _, name in ipairs(names) do STATE[name] = false end
end
local SEAT_PREFIX = {[0] = 'p0_', [1] = 'p1_'}  -- a number's conversion to text costs a sprintf
local function pf(slot, name) return SEAT_PREFIX[slot] .. name end

-- The lifecycle events this script emitted (packed), returned to the server for its logs and metrics.
local LIFECYCLE_TYPES = {started = true, attempt_ended = true, result = true}
local LIFECYCLE = {}

-- Append one event; its stream id 0-<seq> is the race's event sequence number. The same event is published on
-- the channel named like the stream ("<seq> <msgpack>"), which wakes every process with a recipient of the race
-- (server/services/event_hub.py); the stream stays the truth a process catches up from. On a Redis Cluster of
-- Redis >= 7 the store loads these scripts with SPUBLISH instead (a sharded channel of the race's slot:
-- server/store/scripts.py, race_channel.ShardedRaceChannels). Returns the event's seq and the
-- published message.
local PUBLISH = 'PUBLISH'
-- ``seq``: the event's seq when the caller already wrote it as ``event_seq`` (the move script, in its one HSET).
local function emit(event, now, seq)
  seq = seq or incr_state('event_seq')
  event['at'] = now
  local packed = cmsgpack.pack(event)
  local seq_text = tostring(seq)
  redis.call('XADD', K_EVENTS, '0-' .. seq_text, 'e', packed)
  if LIFECYCLE_TYPES[event.type] then LIFECYCLE[#LIFECYCLE + 1] = packed end
  local published = seq_text .. ' ' .. packed
  redis.call(PUBLISH, K_EVENTS, published)
  return seq, published
end

local function expire_all(ttl)
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
end

-- A finished race's record is kept for the race's own retention ('record_ttl' ms, set at creation: 0 keeps it for
-- ever, e.g. a rated race) or else the server's retention of casual records (RECORD_TTL).
local function keep_record()
  local ttl = tonumber(get('record_ttl') or RECORD_TTL)
  if ttl > 0 then
    expire_all(ttl)
  else
    for i = 1, #KEYS do redis.call('PERSIST', KEYS[i]) end
  end
end

-- The live TTL after an action: renewed on all keys only when it has run down by a minute (one PTTL per move
-- instead of nine PEXPIREs), or at once when the action created keys (``created``: a seat's first action).
local TTL_SLACK = 60000
local function refresh_live_ttl(created)
  if created or redis.call('PTTL', K_STATE) < tonumber(LIVE_TTL) - TTL_SLACK then expire_all(LIVE_TTL) end
end

local SEAT_DEFAULTS = {{'count', 0}, {'left', 52}, {'moves', 0}, {'undos', 0}, {'status', 'playing'}, {'state', 'playing'},
                       {'count_seq', 0}, {'ended_at', 0}, {'ended_seq', 0}, {'seen', 0}, {'away', 0}, {'grace_until', 0},
                       {'told', 'here'}, {'told_at', 0}, {'rematch', 0}, {'account', ''}, {'bot', 0}}

-- HSET arguments of a fresh seat.
local function seat_fields(slot, player, name)
  local fields = {pf(slot, 'player'), player, pf(slot, 'name'), name}
  for _, default in ipairs(SEAT_DEFAULTS) do
    fields[#fields + 1] = pf(slot, default[1])
    fields[#fields + 1] = default[2]
  end
  return fields
end

-- The player_joined event of a seat: its account (a registered handle) and bot flag only when set.
local function joined_event(slot)
  local event = {type = 'player_joined', slot = slot, player = get(pf(slot, 'player')), name = get(pf(slot, 'name'))}
  local account = get(pf(slot, 'account')) or ''
  if account ~= '' then event['account'] = account end
  if get(pf(slot, 'bot')) == '1' then event['bot'] = true end
  return event
end

-- HDEL arguments that empty a seat.
local function seat_names(slot)
  local names = {pf(slot, 'player'), pf(slot, 'name')}
  for _, default in ipairs(SEAT_DEFAULTS) do names[#names + 1] = pf(slot, default[1]) end
  return names
end

-- HSET arguments of a sealed deal (ARGS.deal: server/store/race_store.py deal_arguments): the seed (a string: Lua's
-- numbers hold 53 bits), the salt, the commitment, the tier ('' unknown), the proving line (JSON, '' none).
local function deal_fields(deal)
  return {'seed', deal.seed, 'salt', deal.salt, 'commitment', deal.commitment, 'difficulty', deal.difficulty, 'line', deal.line}
end

local function end_attempt(slot, reason, now)
  set_state(pf(slot, 'state'), reason, pf(slot, 'ended_at'), now)
  local seq = emit({type = 'attempt_ended', slot = slot, reason = reason,
                    count = geti(pf(slot, 'count')), left = geti(pf(slot, 'left'))}, now)
  set_state(pf(slot, 'ended_seq'), seq)
end

-- The result rules (docs/PROTOCOL.md "Result"): returns winner slot (-1 for a draw) and reason, or nil.
local function outcome()
  local state = {get('p0_state'), get('p1_state')}
  if state[1] == 'playing' and state[2] == 'playing' then return nil end  -- every rule below needs an attempt over
  if state[1] == 'cleared' or state[2] == 'cleared' then
    if state[1] == 'cleared' and state[2] == 'cleared' then
      return (geti('p0_ended_seq') < geti('p1_ended_seq')) and 0 or 1, 'cleared'
    end
    return (state[1] == 'cleared') and 0 or 1, 'cleared'
  end
  -- A rated race is lost by abandoning it (away past the grace period), whatever the counts.
  if get('rated') == '1' and (state[1] == 'abandoned') ~= (state[2] == 'abandoned') then
    return (state[1] == 'abandoned') and 1 or 0, 'abandoned'
  end
  local count = {geti('p0_count'), geti('p1_count')}
  local count_seq = {geti('p0_count_seq'), geti('p1_count_seq')}
  local ended = {state[1] ~= 'playing', state[2] ~= 'playing'}
  if ended[1] and ended[2] then
    if count[1] ~= count[2] then return (count[1] > count[2]) and 0 or 1, 'count' end
    if count_seq[1] ~= count_seq[2] then return (count_seq[1] < count_seq[2]) and 0 or 1, 'reached_first' end
    return -1, 'draw'
  end
  -- One attempt still runs. Without undo its count can only grow, so it may already have won.
  if (ended[1] or ended[2]) and get('undo') == '0' then
    local done = ended[1] and 1 or 2
    local live = 3 - done
    if count[live] > count[done] then return live - 1, 'count' end
    if count[live] == count[done] and count_seq[live] < count_seq[done] then return live - 1, 'reached_first' end
  end
  return nil
end

local WATCHERS_EVERY = 1000
local PRESENCE_EVERY = 1000
local DEFAULT_GRACE = 30000  -- for races stored without their own 'grace_ms'

-- Presence: each seat's connections and the spectators hold leases (sorted sets, score = expiry). A seat whose
-- last lease is gone (closed, or its process died and stopped renewing) is away: 'disconnected', and once the race
-- is under way its grace period runs; a lease again: 'back'. Grace over while running: the attempt ends as abandoned.
local function grace_applies(slot, status)
  return (status == 'countdown' or status == 'running') and get(pf(slot, 'state')) == 'playing'
end

-- What the others should know of a seat's presence: 'here', or 'away:<grace_until>' (0: no grace period runs).
local function presence_of(slot)
  if geti(pf(slot, 'away')) == 0 then return 'here' end
  return 'away:' .. geti(pf(slot, 'grace_until'))
end

-- Announce a seat's presence if it differs from what was last announced ('told'), at most once per PRESENCE_EVERY
-- ms: a client that connects and drops in a loop cannot flood the race; a change held back is announced by the
-- tick that next_due() schedules, and a seat back before that is never announced away.
local function told(slot) return get(pf(slot, 'told')) or 'here' end

-- ``force`` announces a held-back change at once: before the attempt it ends, or the result.
local function announce_seat(slot, now, force)
  local presence = presence_of(slot)
  if presence == told(slot) or (not force and now < geti(pf(slot, 'told_at')) + PRESENCE_EVERY) then return end
  set_state(pf(slot, 'told'), presence, pf(slot, 'told_at'), now)
  if presence == 'here' then
    emit({type = 'back', slot = slot}, now)
  else
    local event = {type = 'disconnected', slot = slot}
    local grace_until = geti(pf(slot, 'grace_until'))
    if grace_until > 0 then event['grace_until'] = grace_until end
    emit(event, now)
  end
end

-- A rated race too short to mean anything is aborted, rated for nobody (docs/PLAYERS.md "Ladder rules"): a player made
-- fewer than 'abort_moves' actions, or it ended within 'abort_ms' of its start (both fixed at the join from the
-- server's ladder rules). Returns the abort reason, or nil.
local function abort_reason(now)
  if get('rated') ~= '1' then return nil end
  local least, abort = geti('abort_moves'), nil
  if geti('p0_moves') < least or geti('p1_moves') < least then
    abort = 'too_few_moves'
  elseif now - geti('start_at') < geti('abort_ms') then
    abort = 'too_short'
  end
  return abort
end

-- Finish the race when the winner can no longer change; returns true if it did.
local function decide(now)
  local winner, reason = outcome()
  if winner == nil then return false end
  local start_at = geti('start_at')
  local aborted = abort_reason(now)
  local players = {}
  for slot = 0, 1 do
    if get(pf(slot, 'state')) == 'playing' then
      set_state(pf(slot, 'state'), 'race_over', pf(slot, 'ended_at'), now)
    end
    players[slot + 1] = {slot = slot, player = get(pf(slot, 'player')), name = get(pf(slot, 'name')),
      count = geti(pf(slot, 'count')), left = geti(pf(slot, 'left')), ended = get(pf(slot, 'state')),
      time_ms = math.max(0, geti(pf(slot, 'ended_at')) - start_at),
      moves = geti(pf(slot, 'moves')), undos = geti(pf(slot, 'undos'))}
    local account = get(pf(slot, 'account')) or ''
    if account ~= '' then players[slot + 1]['account'] = account end
    if get(pf(slot, 'bot')) == '1' then players[slot + 1]['bot'] = true end
    if get('rated') == '1' and not aborted then  -- the rating change of this outcome, computed when the race started
      local result = (winner == slot) and 'win' or ((winner == -1) and 'draw' or 'loss')
      local change = get('rating_' .. slot .. '_' .. result)
      if change then players[slot + 1]['rating'] = cjson.decode(change) end
    end
  end
  for slot = 0, 1 do announce_seat(slot, now, true) end  -- the stream ends with each seat's true presence
  set_state('status', 'finished', 'finished_at', now, 'winner', winner, 'result_reason', reason)
  -- The reveal: seed and salt recompute the countdown's commitment (with the proving line of a pooled deal).
  local event = {type = 'result', reason = reason, players = players, seed = get('seed'), salt = get('salt') or ''}
  if winner >= 0 then event['winner'] = winner end
  if aborted then
    set_state('aborted', aborted)
    event['aborted'] = aborted
  end
  local line = get('line')
  if line and line ~= '' then event['proving_line'] = cjson.decode(line) end
  emit(event, now)
  redis.call('DEL', K_PRESENCE[1], K_PRESENCE[2], K_WATCHERS)
  keep_record()
  return true
end

local function time_up(now)
  for slot = 0, 1 do
    if get(pf(slot, 'state')) == 'playing' then end_attempt(slot, 'time_limit', now) end
  end
  decide(now)
end

-- Whether the race's time limit has passed (the race then ends on it: time_up).
local function past_deadline(now)
  local deadline = geti('deadline')
  return deadline > 0 and now >= deadline
end

-- Countdown over -> running (once). Returns nil when play is open (or opens now), else the refusal code; a passed
-- time limit is left to the caller (open_for_play).
local function opening(now)
  local status = get('status')
  if status == false then return 'unknown_race' end
  if status == 'finished' then return 'race_over' end
  if status == 'closed' then return 'race_closed' end
  if status == 'waiting' then return 'not_started' end
  if status == 'countdown' then
    if now < geti('start_at') then return 'not_started' end
    set_state('status', 'running')
    emit({type = 'started'}, now)
  end
  return nil
end

-- Whether a berserk seat's own deadline (half the time limit: berserk.lua) has passed while its attempt runs.
local function seat_past_deadline(slot, now)
  local deadline = geti(pf(slot, 'deadline'))
  return deadline > 0 and now >= deadline and get(pf(slot, 'state')) == 'playing'
end

-- End the attempts of the seats whose own deadline passed (time_limit), and decide the race if that decides it.
local function seat_time_up(now)
  local ended = false
  for slot = 0, 1 do
    if seat_past_deadline(slot, now) then
      end_attempt(slot, 'time_limit', now)
      ended = true
    end
  end
  if ended then decide(now) end
end

-- Countdown over -> running (once); deadline passed -> time limit (a berserk seat's own deadline ends its attempt
-- alone). Returns nil when play is open, else the refusal code.
local function open_for_play(now)
  local refusal = opening(now)
  if refusal then return refusal end
  if past_deadline(now) then
    time_up(now)
    return 'race_over'
  end
  seat_time_up(now)
  if get('status') == 'finished' then return 'race_over' end
  return nil
end

-- The checks of a player's next action once play is open: the attempt, the sequence, the action limit. Returns nil,
-- or the code (and the expected seq).
local function attempt_refusal(slot, seq, max_actions)
  if get(pf(slot, 'state')) ~= 'playing' then return 'attempt_over' end
  local length = redis.call('LLEN', K_MOVES[slot + 1])
  if length ~= seq then return 'out_of_sequence', length end
  if length >= max_actions then return 'too_many_moves' end
  return nil
end

-- Why a player's next action cannot be stored, in the order docs/PROTOCOL.md ("Order of checks") promises: the
-- race's state (closed, not started, over), the attempt, the sequence, the action limit. Opens play once the countdown
-- is over (and applies a passed time limit) on the way. Returns nil, or the code (and the expected seq).
local function action_refusal(slot, seq, max_actions, now)
  local refusal = open_for_play(now)
  if refusal then return refusal end
  return attempt_refusal(slot, seq, max_actions)
end

-- Whether an action checked by the engine on the caller's view of the race may go on: {0, 'not_seated'} when
-- ``player`` no longer holds the seat, {0, 'stale_epoch', epoch} when the seats or the deal changed since the view
-- (the race's epoch, bumped by join and leave, moved on), else nil.
local function seat_refusal(slot, player, epoch)
  if get(pf(slot, 'player')) ~= player then return {0, 'not_seated'} end
  local current = geti('epoch')
  if current ~= epoch then return {0, 'stale_epoch', current} end
  return nil
end

-- The stored action of a move id already used by this seat: {2, move_seq, action}, or nil.
local function stored_action(slot, move_id)
  local known = redis.call('HGET', K_IDS[slot + 1], move_id)
  if not known then return nil end
  return {2, tonumber(known), redis.call('LINDEX', K_MOVES[slot + 1], tonumber(known) - 1)}
end

-- A seat's presence after its expired leases are dropped; returns true when its grace period ended its attempt.
local function update_seat(slot, status, now)
  local key = K_PRESENCE[slot + 1]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) > 0 then
    set_state(pf(slot, 'seen'), 1, pf(slot, 'away'), 0, pf(slot, 'grace_until'), 0)
    announce_seat(slot, now)
    return false
  end
  if get(pf(slot, 'seen')) ~= '1' then return false end  -- never connected yet: nothing was lost
  local away = geti(pf(slot, 'away'))
  local grace_until = geti(pf(slot, 'grace_until'))
  local starts_grace = grace_until == 0 and grace_applies(slot, status)
  if away == 0 or starts_grace then
    if starts_grace then
      local grace = geti('grace_ms')
      grace_until = now + ((grace > 0) and grace or DEFAULT_GRACE)
    end
    set_state(pf(slot, 'away'), (away > 0) and away or now, pf(slot, 'grace_until'), grace_until)
  end
  announce_seat(slot, now)
  if grace_until > 0 and now >= grace_until and status == 'running' and get(pf(slot, 'state')) == 'playing' then
    announce_seat(slot, now, true)
    end_attempt(slot, 'abandoned', now)
    return true
  end
  return false
end

local function update_presence(now)
  local status = get('status')
  if status == false or status == 'finished' or status == 'closed' then return end
  local ended = false
  for slot = 0, 1 do
    if get(pf(slot, 'player')) and update_seat(slot, status, now) then ended = true end
  end
  if ended and decide(now) then return end
  redis.call('ZREMRANGEBYSCORE', K_WATCHERS, '-inf', now)
  local count = redis.call('ZCARD', K_WATCHERS)
  -- At most one 'watchers' event per WATCHERS_EVERY ms: spectators coming and going cannot flood the race;
  -- a change held back is announced by the tick that next_due() schedules.
  if count ~= geti('watchers') and now >= geti('watchers_at') + WATCHERS_EVERY then
    set_state('watchers', count, 'watchers_at', now)
    emit({type = 'watchers', count = count}, now)
  end
end

-- The state fields next_due() reads: the presence and timer scripts read them with one HMGET (load_state) first.
local DEADLINE_FIELDS = {'status', 'start_at', 'deadline', 'watchers', 'watchers_at',
                         'p0_player', 'p0_seen', 'p0_state', 'p0_grace_until', 'p0_away', 'p0_told', 'p0_told_at',
                         'p0_deadline',
                         'p1_player', 'p1_seen', 'p1_state', 'p1_grace_until', 'p1_away', 'p1_told', 'p1_told_at',
                         'p1_deadline'}

-- The race's next deadline (ms; 0 for none): start, time limit, a grace period, the first lease to expire.
local function next_due()
  local status = get('status')
  if status == false or status == 'finished' or status == 'closed' then return 0 end
  local due = 0
  local function consider(t)
    if t > 0 and (due == 0 or t < due) then due = t end
  end
  if status == 'countdown' then consider(geti('start_at')) end
  consider(geti('deadline'))
  for slot = 0, 1 do  -- a grace period (and a berserk seat's deadline) only ends an attempt once the race runs
    if status == 'running' and get(pf(slot, 'state')) == 'playing' then
      consider(geti(pf(slot, 'grace_until')))
      consider(geti(pf(slot, 'deadline')))
    end
  end
  for index, key in ipairs({K_PRESENCE[1], K_PRESENCE[2], K_WATCHERS}) do
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if first[2] then
      consider(tonumber(first[2]))
    elseif index <= 2 and get(pf(index - 1, 'player')) and get(pf(index - 1, 'seen')) == '1' and geti(pf(index - 1, 'away')) == 0 then
      consider(1)  -- a seat counted as followed that no lease holds (e.g. a rematch's, seated for its player) is away now
    end
  end
  if redis.call('ZCARD', K_WATCHERS) ~= geti('watchers') then consider(geti('watchers_at') + WATCHERS_EVERY) end
  for slot = 0, 1 do
    if get(pf(slot, 'player')) and presence_of(slot) ~= told(slot) then consider(geti(pf(slot, 'told_at')) + PRESENCE_EVERY) end
  end
  return due
end

-- The move scripts' first checks (apply_action.lua, apply_move.lua), before anything is written: the race exists, the
-- given player still holds the seat at the caller's epoch, the move id is not a resend. One HMGET reads what an
-- ordinary move of a running race reads; the rarer paths read more with get() when needed. Returns the reply of a
-- refusal or a resend, or nil.
local function move_checks(slot)
  load_state({'status', 'epoch', 'deadline', 'event_seq', pf(slot, 'player'), pf(slot, 'count'), 'p0_state', 'p1_state',
              'p0_deadline', 'p1_deadline'})
  if get('status') == false then return {0, 'unknown_race'} end
  local stale = seat_refusal(slot, ARGS.player, ARGS.epoch)
  if stale then return stale end
  return stored_action(slot, ARGS.move_id)
end

-- Store a checked move (ARGS): RPUSH, the move id, the counters with the move event's seq (one HSET), the 'move'
-- event. Returns the move's seq in the player's list and the event as published.
local function store_move(slot, now)
  local move_seq = redis.call('RPUSH', K_MOVES[slot + 1], ARGS.action)
  redis.call('HSET', K_IDS[slot + 1], ARGS.move_id, move_seq)
  local count = ARGS.count
  local seq = geti('event_seq') + 1  -- the move event's: written with the counters, in one HSET, and given to emit()
  local fields = {pf(slot, 'count'), count, pf(slot, 'left'), ARGS.left, pf(slot, 'status'), ARGS.status,
                  pf(slot, 'undos'), ARGS.undos, pf(slot, 'moves'), move_seq, 'event_seq', seq}
  if count ~= geti(pf(slot, 'count')) then
    fields[#fields + 1] = pf(slot, 'count_seq')
    fields[#fields + 1] = seq
  end
  set_state(unpack(fields))
  local event = {type = 'move', slot = slot, move = ARGS.action, move_seq = move_seq, count = count,
                 left = ARGS.left, status = ARGS.status}
  if ARGS.columns then event['columns'] = ARGS.columns end
  local _, published = emit(event, now, seq)
  return move_seq, published
end
