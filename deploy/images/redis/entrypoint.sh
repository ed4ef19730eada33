#!/bin/sh
# As the official image's entrypoint: the official build turns protected mode off (the container's network is the
# boundary); Debian's binary keeps it on when started without a configuration file, refusing every other container.
set -e
if [ "${1:-}" = "redis-server" ]; then
    shift
    exec redis-server --protected-mode no "$@"
fi
exec "$@"
