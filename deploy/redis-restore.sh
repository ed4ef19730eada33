#!/bin/sh
# Restores the Redis of docker-compose.yml from an RDB snapshot (docs/OPERATIONS.md "Backups and restore"):
#   deploy/redis-restore.sh backup.rdb          (from the folder of docker-compose.yml; COMPOSE overrides the command)
# Stops the servers and Redis, replaces the volume's data with the snapshot (the AOF is moved aside: with
# appendonly yes Redis would load the AOF, or start empty without one, and ignore the snapshot), starts Redis once
# with appendonly off so that it loads the snapshot, turns the AOF on (Redis writes it from the loaded data), then
# starts Redis and the servers as usual.
set -eu
backup=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
compose=${COMPOSE:-docker compose}
$compose stop server-1 server-2 redis
chmod a+r "$backup"
$compose run --rm --no-deps -v "$backup:/backup.rdb:ro" --entrypoint sh redis \
    -c 'rm -rf /data/appendonlydir.before-restore; [ ! -d /data/appendonlydir ] || mv /data/appendonlydir /data/appendonlydir.before-restore; cp /backup.rdb /data/dump.rdb'
name=flowergarden-redis-restore-$$
$compose run -d --no-deps --name "$name" redis redis-server --appendonly no --save "" > /dev/null
until docker exec "$name" redis-cli ping 2> /dev/null | grep -q PONG; do sleep 0.5; done
docker exec "$name" redis-cli CONFIG SET appendonly yes > /dev/null
# The AOF is complete once this fresh process has finished its first rewrite.
until docker exec "$name" redis-cli INFO persistence | grep -q '^aof_rewrites:1'; do sleep 0.5; done
echo "redis-restore: $(docker exec "$name" redis-cli DBSIZE) keys restored"
docker exec "$name" redis-cli SHUTDOWN > /dev/null 2>&1 || true
docker rm -f "$name" > /dev/null 2>&1 || true
$compose start redis server-1 server-2
