#!/bin/sh
# Builds, where no image registry is reachable, local stand-ins for the images the compose files name:
#   python:3.11-slim              a Debian bookworm base (debootstrap) with python3, venv, headers, CA certificates
#   redis:7.2                     Debian's redis-server 7.0 on that base
#   nginx:1.27-alpine             Debian's nginx 1.22
#   prom/prometheus:v3.1.0        Debian's prometheus 2.42 (promtool included)
#   oliver006/redis_exporter:v1.67.0   Debian's prometheus-redis-exporter 1.45
#   postgres:15-bookworm          Debian's postgresql-15 (the official image's POSTGRES_* variables and data folder)
# Each stand-in keeps the real image's interface (entrypoint, paths, ports) as far as docker-compose*.yml use it.
# The debootstrap root file system is cached as a tarball (FLOWERGARDEN_IMAGE_CACHE, default
# ~/.cache/flowergarden/images), so a second run on a fresh Docker data root only imports it; an image already in
# the engine is not rebuilt. Needs root, debootstrap and a Debian mirror (the one apt uses; DEBIAN_MIRROR overrides).
#   deploy/images/build-stand-ins.sh            (DOCKER_HOST selects the engine, as for the docker CLI)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${FLOWERGARDEN_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flowergarden/images}
base_tar="$cache/python-3.11-slim-bookworm.tar"
mkdir -p "$cache"

mirror=${DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | grep -o -m1 -E 'https?://[^ ]*/debian/?( |$)' | head -n1 | tr -d ' ')
fi
mirror=${mirror:-http://deb.debian.org/debian}

has_image() { docker image inspect "$1" > /dev/null 2>&1; }

if ! has_image python:3.11-slim; then
    if [ ! -s "$base_tar" ]; then
        root=$(mktemp -d "$cache/rootfs.XXXXXX")
        trap 'rm -rf "$root"' EXIT
        echo "build-stand-ins: debootstrap bookworm from $mirror (a few minutes, once) …"
        debootstrap --variant=minbase --include=python3,python3-venv,python3-dev,python-is-python3,ca-certificates \
            bookworm "$root" "$mirror" > "$cache/debootstrap.log" 2>&1 \
            || { echo "build-stand-ins: debootstrap failed, see $cache/debootstrap.log" >&2; exit 1; }
        # The build's pip reaches the package index the way this machine does: trust the same extra CAs.
        if ls /usr/local/share/ca-certificates/*.crt > /dev/null 2>&1; then
            cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
            chroot "$root" update-ca-certificates > /dev/null
        fi
        printf 'deb %s bookworm main\n' "$mirror" > "$root/etc/apt/sources.list"
        # As Debian's own images: packages installed in a build do not try to start their services.
        printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d" && chmod 755 "$root/usr/sbin/policy-rc.d"
        rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
        tar -C "$root" -cf "$base_tar.part" . && mv "$base_tar.part" "$base_tar"
        rm -rf "$root"
        trap - EXIT
    fi
    echo "build-stand-ins: importing python:3.11-slim"
    docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
        --change 'CMD ["python3"]' \
        "$base_tar" python:3.11-slim > /dev/null
fi

for spec in redis:redis:7.2 nginx:nginx:1.27-alpine prometheus:prom/prometheus:v3.1.0 \
            redis-exporter:oliver006/redis_exporter:v1.67.0 postgres:postgres:15-bookworm; do
    folder=${spec%%:*}
    tag=${spec#*:}
    if ! has_image "$tag"; then
        echo "build-stand-ins: building $tag from deploy/images/$folder"
        DOCKER_BUILDKIT=0 docker build -t "$tag" "$here/$folder" > "$cache/build-$folder.log" 2>&1 \
            || { echo "build-stand-ins: building $tag failed, see $cache/build-$folder.log" >&2; exit 1; }
    fi
done
echo "build-stand-ins: python:3.11-slim redis:7.2 nginx:1.27-alpine prom/prometheus:v3.1.0 oliver006/redis_exporter:v1.67.0 postgres:15-bookworm ready"
