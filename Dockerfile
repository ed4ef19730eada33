# The race server image. Build and run with Redis, two servers, a balancer and Prometheus: docker compose up --build
#
# Stage 1 compiles: the project is installed into a virtual environment with a C compiler present, so the
# solver's compiled search (shared/solver/_native.c) is built; the build fails if it is missing, because
# without it `solvable_only` seed pools fill about 13 times slower.
FROM python:3.11-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY shared shared
COPY server server
COPY client client
COPY cli cli
RUN python -m venv /opt/flowergarden \
 && /opt/flowergarden/bin/pip install --no-cache-dir . \
 && /opt/flowergarden/bin/python -c "import shared.solver._native" \
 && /opt/flowergarden/bin/flowergarden serve --help > /dev/null

# Stage 2 runs: the same base image (the venv's python links to it), no compiler, a non-root user.
FROM python:3.11-slim
RUN useradd --system --uid 10001 --user-group --home-dir /app --create-home --shell /usr/sbin/nologin flowergarden
COPY --from=build /opt/flowergarden /opt/flowergarden
ENV PATH=/opt/flowergarden/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    FLOWERGARDEN_HOST=0.0.0.0 \
    FLOWERGARDEN_PORT=8765 \
    FLOWERGARDEN_LOG_FORMAT=json
WORKDIR /app
USER flowergarden
EXPOSE 8765
# /ready, not /health: a draining or Redis-less process is not sent new connections.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/ready' % os.environ.get('FLOWERGARDEN_PORT', '8765'), timeout=2)"
STOPSIGNAL SIGTERM
CMD ["flowergarden", "serve"]
