#!/bin/sh
# Register Persyn's custom search attributes on a Temporal namespace, idempotently.
#
#   register-search-attributes.sh NAME=TYPE [NAME=TYPE ...]
#
# Connection comes from the temporal CLI's own environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
# and TEMPORAL_API_KEY / TEMPORAL_TLS* for Temporal Cloud. Exits 0 only when every attribute is
# listed with its type, so `depends_on: condition: service_completed_successfully` means workers
# never start a workflow the namespace would refuse for an unknown search attribute.
#
# REGISTER_ATTEMPTS (default 90) bounds each wait, one attempt a second.
set -eu

attempts="${REGISTER_ATTEMPTS:-90}"
namespace="${TEMPORAL_NAMESPACE:-default}"

if [ "$#" -eq 0 ]; then
    echo "usage: $0 NAME=TYPE [NAME=TYPE ...]" >&2
    exit 2
fi

# The value `temporal operator search-attribute list -o json` shows for a type.
indexed_type() {
    case "$1" in
        Keyword) echo INDEXED_VALUE_TYPE_KEYWORD ;;
        KeywordList) echo INDEXED_VALUE_TYPE_KEYWORD_LIST ;;
        Text) echo INDEXED_VALUE_TYPE_TEXT ;;
        Int) echo INDEXED_VALUE_TYPE_INT ;;
        Double) echo INDEXED_VALUE_TYPE_DOUBLE ;;
        Bool) echo INDEXED_VALUE_TYPE_BOOL ;;
        Datetime) echo INDEXED_VALUE_TYPE_DATETIME ;;
        *) echo "unknown search attribute type '$1'" >&2; return 1 ;;
    esac
}

listing() {
    temporal operator search-attribute list --namespace "$namespace" -o json
}

# auto-setup reports the cluster healthy before it has created the default namespace, and an
# external cluster may still be provisioning: wait for the namespace rather than fail.
tries=0
until temporal operator namespace describe --namespace "$namespace" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge "$attempts" ]; then
        echo "namespace '$namespace' did not appear at ${TEMPORAL_ADDRESS:-the default address}" >&2
        exit 1
    fi
    sleep 1
done

for pair in "$@"; do
    name="${pair%%=*}"
    type="${pair#*=}"
    wanted="$(indexed_type "$type")"
    current="$(listing)"
    if printf '%s' "$current" | grep -q "\"$name\": *\"$wanted\""; then
        echo "$name ($type) already registered"
        continue
    fi
    if printf '%s' "$current" | grep -q "\"$name\":"; then
        echo "$name exists with another type; a search attribute's type cannot change" >&2
        exit 1
    fi
    # One call per attribute: the CLI pairs each --name with its own --type, so a single call
    # with several names and one type registers only the first name.
    temporal operator search-attribute create --namespace "$namespace" --name "$name" --type "$type"
    echo "$name ($type) registered"
done

# Registration reaches the namespace cache asynchronously; finish only when all are listed.
tries=0
while :; do
    current="$(listing)"
    missing=""
    for pair in "$@"; do
        name="${pair%%=*}"
        wanted="$(indexed_type "${pair#*=}")"
        printf '%s' "$current" | grep -q "\"$name\": *\"$wanted\"" || missing="$missing $name"
    done
    if [ -z "$missing" ]; then
        echo "search attributes ready on namespace '$namespace'"
        exit 0
    fi
    tries=$((tries + 1))
    if [ "$tries" -ge "$attempts" ]; then
        echo "search attributes still missing on namespace '$namespace':$missing" >&2
        exit 1
    fi
    sleep 1
done
