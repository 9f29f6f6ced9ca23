#!/usr/bin/env bash
# Runs Livecast's tests. Installs the external programs they talk to when they are missing
# (curl, openssl and nghttp from Debian's packages; needs root for that), then runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
command -v perl >/dev/null || missing+=(perl)
command -v nghttp >/dev/null || missing+=(nghttp2-client)
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "scripts/test.sh: please install: ${missing[*]} (Debian packages)" >&2
        exit 1
    fi
    echo "scripts/test.sh: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

exec swift test "$@"
