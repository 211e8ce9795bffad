# The Persyn worker image: `python -m workers.main` against an external Temporal and PostgreSQL
# (docker-compose.yml wires both). Build from the repository root:
#
#   docker build -t persyn-worker .
#   docker build --build-arg PERSYN_EXTRAS=local -t persyn-worker:local .   # in-process model
#
# Two stages so compilers (needed only when the `local` extra builds llama-cpp-python from
# source) never reach the image that runs.

ARG PYTHON_IMAGE=python:3.11-slim

# ---- build: install Persyn and its dependencies into a self-contained virtualenv ----
FROM ${PYTHON_IMAGE} AS build

# Comma-separated extras of pyproject.toml, e.g. "local"; empty installs the base package.
ARG PERSYN_EXTRAS=""

RUN if [ -n "$PERSYN_EXTRAS" ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends build-essential cmake \
        && rm -rf /var/lib/apt/lists/*; \
    fi

RUN python -m venv /opt/persyn
ENV PATH=/opt/persyn/bin:$PATH \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /src
# .dockerignore keeps the context to what the package needs (no venv, tests, caches, .git).
COPY . .
RUN pip install ".${PERSYN_EXTRAS:+[$PERSYN_EXTRAS]}"

# ---- runtime: the virtualenv, two small scripts, and a user without privileges ----
FROM ${PYTHON_IMAGE} AS runtime

ARG PERSYN_EXTRAS=""
# llama.cpp's runtime wants OpenMP; nothing else needs system packages.
RUN if [ -n "$PERSYN_EXTRAS" ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends libgomp1 \
        && rm -rf /var/lib/apt/lists/*; \
    fi

# A fixed UID so volume ownership and Kubernetes runAsUser agree across rebuilds.
RUN groupadd --system --gid 10001 persyn \
    && useradd --system --uid 10001 --gid persyn --create-home --home-dir /home/persyn persyn \
    && install -d -o persyn -g persyn -m 0700 /var/lib/persyn-codec /var/lib/persyn-internal

COPY --from=build /opt/persyn /opt/persyn
COPY deploy/worker-healthcheck.sh /usr/local/bin/persyn-worker-healthcheck

# PERSYN_EMBEDDED=false: a container never starts its own Temporal or PostgreSQL; it is told
# where they are (PERSYN_TEMPORAL_ADDRESS, PERSYN_DATABASE_URL) and fails loudly if they are not.
# MALLOC_ARENA_MAX=2: as the supervisor sets for its children (workers/supervisor.py).
ENV PATH=/opt/persyn/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PERSYN_HOME=/home/persyn/.persyn \
    PERSYN_EMBEDDED=false \
    MALLOC_ARENA_MAX=2

USER persyn:persyn
WORKDIR /home/persyn

# Healthy = Temporal sees this container polling its task queue (see the script). The start
# period covers database migrations, which run before the worker starts polling.
HEALTHCHECK --interval=30s --timeout=15s --start-period=60s --retries=3 \
    CMD ["sh", "/usr/local/bin/persyn-worker-healthcheck"]

# SIGTERM lets the worker finish in-flight tasks and flush meters (workers/main.py) within the
# compose stop_grace_period.
STOPSIGNAL SIGTERM
CMD ["python", "-m", "workers.main"]
