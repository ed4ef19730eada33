-- Add a proven seed to a profile's pool unless the pool is full (several processes fill one pool).
-- KEYS: 1 the pool (set). ARGS: member (the pooled deal, JSON), target (size). Returns the pool's size.
if redis.call('SCARD', KEYS[1]) < ARGS.target then redis.call('SADD', KEYS[1], ARGS.member) end
return redis.call('SCARD', KEYS[1])
