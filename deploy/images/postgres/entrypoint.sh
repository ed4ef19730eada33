#!/bin/sh
# As the official image's entrypoint, for what docker-compose*.yml use: started as root, it gives the data folder to
# the postgres user and runs as that user; on the first start (no PG_VERSION in PGDATA) it creates the cluster with
# the superuser POSTGRES_USER (password POSTGRES_PASSWORD, required: scram-sha-256 for every TCP client, trust on
# the container's own unix socket) and the database POSTGRES_DB (default: POSTGRES_USER), then listens on every
# address of the container. Later starts only start the server: the variables no longer change anything.
set -eu
if [ "${1:-}" != "postgres" ]; then
    exec "$@"
fi
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
user=${POSTGRES_USER:-postgres}
database=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        echo "postgres: set POSTGRES_PASSWORD (the password of $user for every client over TCP)" >&2
        exit 1
    fi
    password_file=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
    # shellcheck disable=SC2086  # POSTGRES_INITDB_ARGS is a list of arguments, as in the official image
    initdb --username="$user" --pwfile="$password_file" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 ${POSTGRES_INITDB_ARGS:-} > /dev/null
    rm -f "$password_file"
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    printf "listen_addresses = '*'\n" >> "$PGDATA/postgresql.conf"
    if [ "$database" != postgres ]; then
        # Single-user mode: no server listens while the cluster is being made.
        printf 'CREATE DATABASE "%s"\n' "$database" | postgres --single -D "$PGDATA" postgres > /dev/null
    fi
    echo "postgres: cluster created in $PGDATA (superuser $user, database $database)"
fi
exec "$@"
