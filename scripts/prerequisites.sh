#!/usr/bin/env bash
# Installs the Debian packages Livecast needs and the machine lacks (needs root to install):
#   to build:                 libnghttp2-dev (the HTTP/2 engine of the APNs client), pkg-config
#   with --tests, to test:    curl, openssl, perl, nghttp2-client (nghttp, h2load), nginx-light, chromium,
#                             chromium-driver (chromedriver, for the browser tests), and
#                             PostgreSQL's server binaries (postgresql) unless initdb is already there
#   with --demo, for `livecast demo`: PostgreSQL's server binaries (postgresql) unless initdb is already there
#   with --bench, to measure: nghttp2-client, nghttp2-server (nghttpd), nginx-light, and PostgreSQL's server
#                             binaries (with pgbench and psql, for the API section) unless initdb and pgbench are
#                             already there
#   with --fuzz, for scripts/fuzz.sh: curl, python3 and python3-venv (schemathesis goes into a venv), and PostgreSQL's
#                             server binaries unless initdb is already there
set -euo pipefail

wanted=(libnghttp2-dev pkg-config)
for option in "$@"; do
    case $option in
    --tests)
        wanted+=(curl openssl perl nghttp2-client nginx-light chromium chromium-driver)
        command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || wanted+=(postgresql)
        ;;
    --demo)
        command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || wanted+=(postgresql)
        ;;
    --bench)
        wanted+=(nghttp2-client nghttp2-server nginx-light)
        command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || wanted+=(postgresql)
        command -v pgbench >/dev/null || wanted+=(postgresql)
        ;;
    --fuzz)
        wanted+=(curl)
        python3 -c 'import ensurepip, venv' 2>/dev/null || wanted+=(python3 python3-venv)
        command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || wanted+=(postgresql)
        ;;
    *) echo "scripts/prerequisites.sh: unknown option $option" >&2; exit 2 ;;
    esac
done

missing=()
for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
((${#missing[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
    echo "Livecast needs these Debian packages: ${missing[*]}; install them (sudo apt-get install ${missing[*]}) and retry." >&2
    exit 1
fi
echo "installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
