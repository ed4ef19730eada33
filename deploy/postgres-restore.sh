#!/bin/sh
# Restores the PostgreSQL of docker-compose.yml (or docker-compose.cluster.yml: COMPOSE="docker compose -f
# docker-compose.cluster.yml") from a dump of `pg_dump -Fc` (docs/OPERATIONS.md "Backups and restore (PostgreSQL)"):
#   deploy/postgres-restore.sh fg-2026-12-01.dump     (from the folder of docker-compose.yml; COMPOSE overrides the command)
# Stops the servers (nothing may write while the database is replaced), starts the postgres service (a lost volume
# is made again, empty, by its first start), replaces the database with a fresh one holding the dump (in one
# transaction: a failed restore leaves an empty database and says so, never half of one), then starts the servers;
# their start-time migration finds the dump's schema version and applies only what it lacks.
set -eu
dump=$1
[ -s "$dump" ] || { echo "postgres-restore: no dump at $dump" >&2; exit 1; }
compose=${COMPOSE:-docker compose}
$compose stop server-1 server-2
$compose up -d --no-deps postgres
# Ready over TCP (the official image's first start serves its unix socket before the cluster is made).
tries=0
until $compose exec -T postgres sh -c 'pg_isready -q -h 127.0.0.1 -U "$POSTGRES_USER" -d "$POSTGRES_DB"'; do
    tries=$((tries + 1))
    [ "$tries" -lt 120 ] || { echo "postgres-restore: postgres did not become ready" >&2; exit 1; }
    sleep 1
done
$compose exec -T postgres sh -c 'psql -q -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres \
    -c "DROP DATABASE IF EXISTS \"$POSTGRES_DB\" WITH (FORCE)" -c "CREATE DATABASE \"$POSTGRES_DB\""'
$compose exec -T postgres sh -c 'pg_restore --exit-on-error --single-transaction --no-owner -U "$POSTGRES_USER" -d "$POSTGRES_DB"' < "$dump"
counts=$($compose exec -T postgres sh -c 'psql -tA -U "$POSTGRES_USER" -d "$POSTGRES_DB" \
    -c "SELECT count(*) FROM accounts" -c "SELECT count(*) FROM finished_races"')
# shellcheck disable=SC2086  # two numbers, one a line
set -- $counts
echo "postgres-restore: $dump restored: $1 accounts, $2 finished races"
$compose start server-1 server-2
