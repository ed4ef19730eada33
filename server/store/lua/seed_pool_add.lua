-- Add a proven seed to a profile's pool unless the pool is full (several processes fill one pool).
-- KEYS: 1 the pool (set). ARGV: 1 the pooled deal (JSON), 2 target size. Returns the pool's size.
if redis.call('SCARD', KEYS[1]) < tonumber(ARGV[2]) then redis.call('SADD', KEYS[1], ARGV[1]) end
return redis.call('SCARD', KEYS[1])
