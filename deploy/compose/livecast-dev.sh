#!/bin/sh
# The shell steps of deploy/docker-compose.yml, run inside the Livecast image (POSIX sh, as uid 10001):
#   emulator   run the APNs emulator, generating the demo .p8 key on first start and trusting it afterwards
#   setup      make the master key, register the demo app and create its API keys, each once
#   reaper     run `livecast reap` every $LIVECAST_REAP_INTERVAL seconds until SIGTERM
set -eu
# Everything written here (keys above all) is for this user only.
umask 077
# The volume mounted at /var/lib/livecast (another directory when the script is tried outside a container).
state=${LIVECAST_STATE_DIR:-/var/lib/livecast}

case ${1:-} in
emulator)
    mkdir -p "$state/emulator"
    key="$state/emulator/demo.p8"
    # A certificate left by an earlier run must not pass the health check before this run has written its own.
    rm -f "$state/emulator/emulator.pem"
    if [ -s "$key" ]; then
        set -- --trust-key "$DEMO_TEAM_ID:$DEMO_KEY_ID:$key"
    else
        set -- --generate-key "$DEMO_TEAM_ID:$DEMO_KEY_ID:$key"
    fi
    # Its certificate names the host the other services reach it by, not Apple's hosts: serve trusts a certificate
    # that claims Apple's names only when APNs is on loopback.
    exec livecast emulator --host 0.0.0.0 --port 2197 --management-port 2195 --certificate-host emulator \
        --cert-out "$state/emulator/emulator.pem" "$@"
    ;;
setup)
    if [ ! -s "$state/master.key" ]; then
        # 32 random bytes in base64, as `openssl rand -base64 32` makes them.
        head -c 32 /dev/urandom | base64 >"$state/master.key.new"
        mv "$state/master.key.new" "$state/master.key"
        echo "setup: made the master key"
    fi
    if [ ! -e "$state/demo-app.done" ]; then
        livecast apps add --bundle-id "$DEMO_BUNDLE_ID" --environment sandbox --team-id "$DEMO_TEAM_ID" \
            --key-id "$DEMO_KEY_ID" --key-file "$state/emulator/demo.p8"
        touch "$state/demo-app.done"
        echo "setup: registered $DEMO_BUNDLE_ID (sandbox) with the emulator's key"
    fi
    mkdir -p "$state/api-keys"
    for role in backend operator; do
        [ -s "$state/api-keys/$role.key" ] && continue
        # `keys create` prints the key alone on its last line (a failure stops the script here: set -e).
        printed=$(livecast keys create --bundle-id "$DEMO_BUNDLE_ID" --role "$role")
        key=$(printf '%s\n' "$printed" | tail -n 1)
        [ -n "$key" ] || { echo "setup: keys create printed no key" >&2; exit 1; }
        printf '%s\n' "$key" >"$state/api-keys/$role.key"
        echo "setup: created the $role API key ($state/api-keys/$role.key)"
    done
    echo "setup: done"
    ;;
reaper)
    # A trap makes SIGTERM end the loop at once, even while sleeping (sh as PID 1 ignores untrapped SIGTERM).
    trap 'exit 0' TERM INT
    while :; do
        livecast reap || echo "reaper: livecast reap failed (exit $?)" >&2
        sleep "${LIVECAST_REAP_INTERVAL:-300}" &
        wait $! || true
    done
    ;;
*)
    echo "usage: livecast-dev.sh emulator|setup|reaper" >&2
    exit 2
    ;;
esac
