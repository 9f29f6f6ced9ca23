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
# In a git checkout it also installs the commit-msg hook (scripts/git-hooks/commit-msg; CONTRIBUTING.md).
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

# In a git checkout, the commit-msg hook that checks CONTRIBUTING.md's commit convention goes into the checkout's
# hooks directory (core.hooksPath if set), unless the same file is already there. A different commit-msg hook of
# one's own is left alone. Outside a checkout, or without git, nothing happens; this never fails the script.
install_commit_msg_hook() {
    local root hook hooks target
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." 2>/dev/null && pwd -P) || return 0
    hook=$root/scripts/git-hooks/commit-msg
    [[ -f $hook ]] && command -v git >/dev/null || return 0
    # Only in a checkout of Livecast itself, not of a repository it sits in.
    [[ $(cd "$root" && git rev-parse --show-toplevel 2>/dev/null) == "$root" ]] || return 0
    hooks=$(cd "$root" && git rev-parse --git-path hooks 2>/dev/null) || return 0
    [[ -n $hooks ]] || return 0
    [[ $hooks == /* ]] || hooks=$root/$hooks
    target=$hooks/commit-msg
    cmp -s "$hook" "$target" && return 0
    if [[ -e $target ]] && ! grep -q "Livecast commit-msg hook" "$target" 2>/dev/null; then
        echo "scripts/prerequisites.sh: $target is not Livecast's commit-msg hook; left as it is" >&2
        return 0
    fi
    if mkdir -p "$hooks" 2>/dev/null && cp "$hook" "$target.tmp.$$" 2>/dev/null && chmod +x "$target.tmp.$$" &&
        mv -f "$target.tmp.$$" "$target"; then
        echo "scripts/prerequisites.sh: installed the commit-msg hook in $hooks" >&2
    else
        rm -f "$target.tmp.$$" 2>/dev/null
        echo "scripts/prerequisites.sh: could not install the commit-msg hook in $hooks" >&2
    fi
    return 0
}
install_commit_msg_hook || true

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
