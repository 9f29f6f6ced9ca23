#!/usr/bin/env bash
# Prints benchmark figures, measured side by side in one run on this machine.
#
#   scripts/bench.sh            release build, full size (several minutes after the build); no game night
#   scripts/bench.sh --smoke    debug build, a few thousand requests and a few seconds of API load: checks the
#                               benchmarks run, not the speed; then the small game night and the small scale run
#                               (CI runs it)
#   scripts/bench.sh --fanout   the fan-out figures alone
#   scripts/bench.sh --api      the HTTP API figures alone (with --smoke: their small version)
#   scripts/bench.sh --api --baseline REF
#                               the front door's figures (registrations beside pgbench, updates at 1,000/s and
#                               5,000/s, the max) on this checkout and on REF, built in a git worktree under
#                               .build-baseline/ (kept for the next run, never committed), in rounds that alternate the
#                               two; prints each side's median and their ratio (about twenty minutes after the builds)
#   scripts/bench.sh --emulator the emulator against nghttpd alone
#   scripts/bench.sh --gamenight  the brownout, the game nights and the renewal game alone, full size (about ten
#                               minutes after the build; with --smoke: the small game night and the small renewal game,
#                               about three minutes)
#   scripts/bench.sh --scale    one feed update's fan-out to 300,000 followers through 1, 2 and 3 instances of one
#                               APNs connection each, and 1 with 3 connections (about eight minutes after the build:
#                               one connection of 100 streams answered after 40 ms carries at most 2,500 pushes/s, so
#                               one instance takes 120 s; with --smoke: the small run, about a minute)
#   scripts/bench.sh --ten-million  ten million token followers of one feed on one PostgreSQL primary, imported through
#                               the API, fanned out by one and by three instances to nginx, and the operator's paths
#                               timed at that size (scripts/bench-ten-million.sh says what it runs; on demand, never
#                               in CI; about a quarter of an hour after the build)
#
# Any section fails the run (exit 1) when its requests fail; the game night and the scale run also when the wire
# breaks a rule.
#
# APNs client: Livecast's client (one event-loop thread, like h2load's default of one) and h2load post the same
# Live Activity pushes to nghttpd (Debian's nghttp2-server) serving a file, with 1, 2 and 4 connections, 100
# streams each; medians of the rounds and their ratio.
# Emulator: h2load posts the same pushes to the APNs emulator and, for scale, to nghttpd.
# Fan-out: one feed update to 1,000,000 token-based followers stored in a throwaway PostgreSQL (the benchmark
# starts one per run with LocalPostgres, as the demo and the tests do), through the dispatcher and the client to a
# sink that answers 200 to any path (each follower has its own token): nghttpd --echo-upload, then nginx's
# `return 200`; against h2load posting as many pushes to the same sink with as many connections; wall time, rate,
# ratio and the benchmark's peak memory. FANOUT_SINKS="nginx" picks one.
# HTTP API: a throwaway PostgreSQL (`livecast postgres`) with an app and an operator key made through the CLI, and
# livecast-api-benchmark, whose every mode starts the APNs emulator in its own process and `livecast serve` pointed
# at it, then loads the API over keep-alive HTTP/1.1 connections (HdrHistogram percentiles): push-to-start
# registrations of new devices, closed loop, next to pgbench running the equivalent upsert (one INSERT … ON
# CONFLICT per transaction into push_to_start_tokens) with as many clients on the same PostgreSQL, once with
# pgbench's default simple query protocol (the statement parsed and planned each time) and once prepared (`-M
# prepared`, PostgreSQL's fastest single upsert), the target of issue #12 beside each, at 16 connections and at
# 64 (a launch peak brings many at once; the group commit's batches grow with them), in three rounds that alternate
# pgbench and Livecast, their medians compared (one round with --smoke); activity updates
# offered open loop at a fixed rate (latency from each request's intended send time, so no coordinated omission):
# 1,000 a second, then 5,000 a second on 128 connections (sustained if every request is accepted at that pace), and
# closed loop on 128 connections for the highest accepted rate (with one batch written at a time, a group commit
# holds at most what the connections have in flight: on 64, part of the machine stayed idle; docs/PERFORMANCE.md),
# at no priority given, at priority 10 (alerts: each spends the app's hourly priority-10 budget) and with an
# Idempotency-Key on each; channel feeds'
# updates and a token feed's fan-out timed from the 202 to the emulator's answer (on the wire); bulk imports of
# push-to-start tokens, where the server has the endpoint. Each figure is printed beside the target of issue #12.
# Game night (livecast-api-benchmark gamenight, the chaos scenario): its own throwaway PostgreSQL (provisioned with
# the CLI, as above), two `livecast serve` on it and the APNs emulator recording every push. A feed with a Most Recent
# Message channel and 4,000 token followers (--smoke: 300) gets 4 updates a second for 90 s (2 for 25 s), posted
# alternately to the two instances, then its end; meanwhile 20 % of pushes are refused (503, a few GOAWAYs and
# dropped connections), three followers' tokens answer 410, 200 followers rotate their token (20) and 400 late fans
# join (40), one instance is killed with SIGKILL at 30 s and restarted 14 s later (8 s, 5 s later), and PostgreSQL
# restarts at 60 s (16 s). The client retries on the other instance. The wire is then judged: the run fails on any
# push out of order, sent after a 410 or after an accepted end, a follower or the channel not showing the final end,
# a rotated-away token pushed after its rotation, or an API call failed after retries. Before it (full size only),
# issue #44's brownout on the same rig: 3,000 followers, four updates 1.3 s apart and the end, 30 % of pushes
# refused, no kill and no restart; it also fails when an update takes over 15 s to reach every follower. After it
# (full size only), issue #53's game night on three servers: 20,000 followers, APNs answering after 40 ms, the same
# faults, kill and restart. Then issue #65's renewal game (livecast-api-benchmark renewal): three servers with a short
# --activity-lifetime (120 s; smoke 60 s) and the emulator's iPhones ending activities at the same lifetime, token and
# channel followers of a renewing feed updated every 2 s, users who swipe the activity away, iPhones without a
# push-to-start token, one server killed during the renewals; it fails when a follower is not renewed before its end,
# a renewed activity misses the end, an old token activity ends before its successor was reported, a swiped-away
# iPhone is started again, or the wire breaks a rule (the devices' push-to-start budget included). The small game night splits its fan-outs into slices of 100 followers
# (`--fan-out-slice`), so both servers walk each update side by side, across the kill and the restart.
# Scale (livecast-api-benchmark scale, issue #53): its own throwaway PostgreSQL (provisioned with the CLI, as above)
# and the APNs emulator answering each push after 40 ms, advertising 100 streams per connection, answering 200 to any
# token and recording the wire. One feed per run, each with 1,000,000 token followers of its own (--smoke: 10,000),
# made before the first run (the followers with `livecast tokens import`). Each run starts N `livecast serve` on the
# database, 2 APNs connections each: N = 1, 2, 3, then one instance with 6 connections (--smoke: 1 and 2, with fan-out
# slices of 2,500 followers; else the server's default slice); posts its feed's update and times it from the 202 to
# the last follower's push on the wire: seconds, pushes/s, the ratio to the one-instance run, each instance's peak
# resident memory (VmHWM), followers lost and violations (a follower pushed the update twice, a push out of order,
# any other push). It fails on a lost follower or a violation.
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=release requests=200000 rounds=3 followers=1000000 sections="client emulator fanout api" section_given=false
gamenight_preset=full
# The scale section's sizes: followers per run, the instance counts, the APNs connections of each instance (1 of 100
# streams at 40 ms: 2,500 pushes/s an instance, 7,500/s for three, under what two cores can judge at the wire), the
# connection counts run on one instance too, and the followers per fan-out slice (empty: the server's default).
scale_followers=300000 scale_instances=1,2,3 scale_connections=1 scale_compare_connections=3 scale_slice=
# The API section's sizes: seconds of load, the registrations' connections (each count beside as many pgbench
# clients), activities, the update rate offered, the sustained rate and the connections it and the max rate load
# with, the fan-out's followers, broadcasts (at a rate, over feeds), imported rows (in batches).
api_seconds=10 api_register_connections="16 64" api_register_rounds=3 api_warm_up=2 api_activities=1000 api_rate=1000 api_sustained_rate=5000 api_load_connections=128 api_followers=10000 api_broadcasts=200 api_broadcast_rate=20
api_feeds=40 api_broadcast_warm_up=10 api_import_rows=100000 api_import_batch=10000
baseline_ref=
while (($# > 0)); do
    option=$1
    shift
    case $option in
    --baseline)
        (($# > 0)) || { echo "scripts/bench.sh: --baseline needs a commit" >&2; exit 2; }
        baseline_ref=$1
        shift
        ;;
    --smoke)
        configuration=debug requests=3000 rounds=1 followers=20000
        api_seconds=2 api_register_connections="4 16" api_register_rounds=1 api_warm_up=0.5 api_activities=50 api_rate=50 api_sustained_rate=100 api_load_connections=16 api_followers=200 api_broadcasts=10 api_broadcast_rate=5
        api_feeds=10 api_broadcast_warm_up=2 api_import_rows=2000 api_import_batch=1000
        gamenight_preset=smoke
        scale_followers=10000 scale_instances=1,2 scale_connections=2 scale_compare_connections=none scale_slice=2500
        ;;
    --fanout) sections=fanout section_given=true ;;
    --api) sections=api section_given=true ;;
    --emulator) sections=emulator section_given=true ;;
    --gamenight) sections=gamenight section_given=true ;;
    --scale) sections=scale section_given=true ;;
    --ten-million) sections=ten-million section_given=true ;;
    *) echo "usage: scripts/bench.sh [--smoke] [--fanout | --api [--baseline REF] | --emulator | --gamenight | --scale | --ten-million]" >&2; exit 2 ;;
    esac
done
if [[ -n $baseline_ref && $sections != api ]]; then echo "scripts/bench.sh: --baseline goes with --api" >&2; exit 2; fi
# The small game night and the small scale run are part of the smoke run (CI's chaos scenario, and the fan-out across
# instances judged); the full ones run only when asked for.
if [[ $gamenight_preset == smoke && $section_given == false ]]; then sections+=" gamenight scale"; fi

scripts/prerequisites.sh --bench
# The benchmark targets are in the package only when asked for (Package.swift).
export LIVECAST_BENCHMARKS=1

swift build -c "$configuration" --product livecast >&2
# The sections that need the APNs sinks (nghttpd, the emulator under h2load) and their benchmarks.
sinks=false
if [[ $sections == *client* || $sections == *emulator* || $sections == *fanout* || $sections == *ten-million* ]]; then sinks=true; fi
if [[ $sections == *client* || $sections == *emulator* || $sections == *fanout* ]]; then
    swift build -c "$configuration" --product livecast-client-benchmark >&2
    swift build -c "$configuration" --product livecast-fanout-benchmark >&2
fi
if [[ $sections == *api* || $sections == *gamenight* || $sections == *scale* ]]; then
    swift build -c "$configuration" --product livecast-api-benchmark >&2
fi
bin="$(swift build -c "$configuration" --show-bin-path)"
livecast="$bin/livecast"
# --baseline REF: REF's own CLI and API benchmark, built in a git worktree of their own under .build-baseline/ (kept
# between runs, so a second run builds nothing; never committed).
if [[ -n $baseline_ref ]]; then
    baseline_commit=$(git rev-parse --verify --quiet "$baseline_ref^{commit}") ||
        { echo "scripts/bench.sh: $baseline_ref names no commit" >&2; exit 2; }
    baseline_tree=$PWD/.build-baseline/$baseline_commit
    if [[ ! -f $baseline_tree/Package.swift ]]; then
        rm -rf "$baseline_tree"
        git worktree prune
        git worktree add --detach "$baseline_tree" "$baseline_commit" >&2
    fi
    (cd "$baseline_tree" && swift build -c "$configuration" --product livecast >&2 &&
        swift build -c "$configuration" --product livecast-api-benchmark >&2)
    baseline_bin=$(cd "$baseline_tree" && swift build -c "$configuration" --show-bin-path)
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; } # LINE KEY -> value (of a summary line)

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # The API benchmark's `livecast serve`, should the benchmark have died without stopping it.
    for pid_file in "$work"/*/serve.pid; do
        if [[ -f $pid_file ]]; then kill "$(cat "$pid_file")" 2>/dev/null || true; fi
    done
    # The game nights', the renewal games' and the scale run's servers and PostgreSQL, likewise.
    for pid_file in "$work"/gamenight-*/*.pid "$work"/renewal-*/*.pid "$work"/scale/*.pid "$work"/ten-million/*.pid; do
        if [[ -f $pid_file ]]; then kill "$(cat "$pid_file")" 2>/dev/null || true; fi
    done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

openssl ecparam -genkey -name prime256v1 -noout | openssl pkcs8 -topk8 -nocrypt -out "$work/key.p8"
if [[ $sinks == true ]]; then
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/nghttpd-key.pem" \
    -out "$work/nghttpd-cert.pem" -days 1 -subj /CN=localhost 2>/dev/null
token=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkdir -p "$work/www/3/device" && echo ok >"$work/www/3/device/$token"
printf '{"aps":{"timestamp":%d,"event":"update","content-state":{"homeScore":2,"awayScore":1}}}' "$(date +%s)" >"$work/payload.json"

"$livecast" emulator --port 0 --management-port 0 --cert-out "$work/emulator.pem" --accept-unknown-tokens \
    --trust-key "BENCHTEAM1:BENCHKEY01:$work/key.p8" >"$work/emulator.out" 2>"$work/emulator.err" &
pids+=($!)
for _ in $(seq 100); do grep -q ready "$work/emulator.out" 2>/dev/null && break; sleep 0.1; done
emulator_port=$(grep -o 'push=127.0.0.1:[0-9]*' "$work/emulator.err" | cut -d: -f2)
nghttpd_port=$((20000 + RANDOM % 20000))
nghttpd -d "$work/www" "$nghttpd_port" "$work/nghttpd-key.pem" "$work/nghttpd-cert.pem" >/dev/null 2>&1 &
pids+=($!)
sleep 0.5

jwt=$(Tests/Fixtures/make-jwt.sh "$work/key.p8" BENCHKEY01 BENCHTEAM1)
h2load_rate() { # URL [CONNECTIONS] -> requests per second
    h2load -n "$requests" -c "${2:-4}" -m 100 -d "$work/payload.json" \
        -H "authorization: bearer $jwt" -H "apns-push-type: liveactivity" \
        -H "apns-topic: com.example.bench.push-type.liveactivity" -H "apns-priority: 5" "$1" |
        awk '/^finished in/ { gsub(",", "", $4); print int($4) } /^status codes:/ { if ($3 + 0 != '"$requests"') bad = 1 } END { if (bad) exit 1 }'
}
fi

# nginx answering `return 200` to any path, as a second, faster sink (it answers before reading the body). With
# --ten-million it also counts what it answers: a byte and a newline a request in count.log.
start_nginx() {
nginx_port=$((20000 + RANDOM % 20000))
mkdir -p "$work/nginx"
local access_log="access_log off;"
if [[ $sections == *ten-million* ]]; then
    access_log="log_format count '1'; access_log $work/nginx/count.log count buffer=64k flush=50ms;"
    : >"$work/nginx/count.log"
fi
cat >"$work/nginx/nginx.conf" <<NGINX
daemon off; master_process off; worker_processes 1; pid $work/nginx/nginx.pid; error_log $work/nginx/error.log;
events { worker_connections 256; }
http {
    $access_log client_body_temp_path $work/nginx/body; keepalive_requests 100000000;
    server {
        listen 127.0.0.1:$nginx_port ssl http2;
        ssl_certificate $work/nghttpd-cert.pem; ssl_certificate_key $work/nghttpd-key.pem;
        location / { return 200; }
    }
}
NGINX
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
pids+=($!)
sleep 0.5
}

client_rate() { # CONNECTIONS -> requests per second
    "$bin/livecast-client-benchmark" --url "https://localhost:$nghttpd_port" --ca "$work/nghttpd-cert.pem" \
        --key "$work/key.p8" --token "$token" --payload "$work/payload.json" --connections "$1" --threads 1 \
        --requests "$requests" | sed -n 's/.*rate=\([0-9]*\) failures=0$/\1/p'
}

if [[ $sections == *client* ]]; then
echo "APNs client against nghttpd ($configuration build; 100 streams per connection; $requests pushes per round; median of $rounds)"
printf '  %-12s %14s %14s %8s\n' connections "h2load req/s" "client req/s" ratio
for connections in 1 2 4; do
    h2load_rates=() client_rates=()
    for _ in $(seq "$rounds"); do
        h2load_rates+=("$(h2load_rate "https://127.0.0.1:$nghttpd_port/3/device/$token" "$connections")")
        client_rates+=("$(client_rate "$connections")")
    done
    h2load_median=$(printf '%s\n' "${h2load_rates[@]}" | median)
    client_median=$(printf '%s\n' "${client_rates[@]}" | median)
    [[ -n $client_median && -n $h2load_median ]] || { echo "scripts/bench.sh: a run failed" >&2; exit 1; }
    awk -v c="$connections" -v h="$h2load_median" -v l="$client_median" 'BEGIN { printf "  %-12s %14d %14d %8.2f\n", c, h, l, l / h }'
done
echo
fi

if [[ $sections == *emulator* ]]; then
nghttpd_rates=() emulator_rates=()
for _ in $(seq "$rounds"); do
    nghttpd_rates+=("$(h2load_rate "https://127.0.0.1:$nghttpd_port/3/device/$token")")
    emulator_rates+=("$(h2load_rate "https://127.0.0.1:$emulator_port/3/device/$token")")
done
nghttpd_median=$(printf '%s\n' "${nghttpd_rates[@]}" | median)
emulator_median=$(printf '%s\n' "${emulator_rates[@]}" | median)

echo "APNs emulator under h2load ($configuration build; -c 4 -m 100; $requests POSTs per round; median of $rounds)"
printf '  %-22s %10s req/s   rounds: %s\n' "nghttpd (file)" "$nghttpd_median" "${nghttpd_rates[*]}"
printf '  %-22s %10s req/s   rounds: %s\n' "livecast emulator" "$emulator_median" "${emulator_rates[*]}"
awk -v e="$emulator_median" -v n="$nghttpd_median" 'BEGIN { printf "  emulator / nghttpd     %10.2f\n", e / n }'
echo
fi

if [[ $sections == *fanout* ]]; then
# An echoing nghttpd.
echo_port=$((20000 + RANDOM % 20000))
nghttpd --echo-upload -d "$work/www" "$echo_port" "$work/nghttpd-key.pem" "$work/nghttpd-cert.pem" >/dev/null 2>&1 &
pids+=($!)
sleep 0.5

fanout_connections=2
start_nginx
[[ ${FANOUT_SINKS:-} ]] || FANOUT_SINKS="nghttpd nginx"

echo "Fan-out of one feed update to $followers stored token followers ($configuration build; $fanout_connections connections)"
printf '  %-24s %10s %12s %12s %7s %9s\n' sink "wall s" "pushes/s" "h2load/s" ratio "peak MiB"
requests=$followers
for sink in $FANOUT_SINKS; do
    if [[ $sink == nginx ]]; then sink_port=$nginx_port; label="nginx return 200"; else sink_port=$echo_port; label="nghttpd --echo-upload"; fi
    h2load_fanout=$(h2load_rate "https://127.0.0.1:$sink_port/3/device/$token" "$fanout_connections")
    fanout=$("$bin/livecast-fanout-benchmark" \
        --push-url "https://localhost:$sink_port" --ca "$work/nghttpd-cert.pem" --key "$work/key.p8" \
        --followers "$followers" --connections "$fanout_connections")
    rate=$(sed -n 's/.* rate=\([0-9]*\) .*/\1/p' <<<"$fanout")
    seconds=$(sed -n 's/.* seconds=\([0-9.]*\) .*/\1/p' <<<"$fanout")
    peak=$(sed -n 's/.* peak_mib=\([0-9?]*\).*/\1/p' <<<"$fanout")
    [[ -n $rate && -n $h2load_fanout ]] || { echo "scripts/bench.sh: the fan-out run failed: $fanout" >&2; exit 1; }
    awk -v l="$label" -v s="$seconds" -v r="$rate" -v h="$h2load_fanout" -v p="$peak" \
        'BEGIN { printf "  %-24s %10s %12d %12d %7.2f %9s\n", l, s, r, h, r / h, p }'
done
fi

if [[ $sections == *api* ]]; then
[[ $sections == api ]] || echo
bundle=com.example.bench
export LIVECAST_MASTER_KEY_FILE="$work/master.key"
head -c 32 /dev/urandom | base64 >"$LIVECAST_MASTER_KEY_FILE"
# Each side (this checkout, `head`, and with --baseline REF that build, `base`) has its own binaries, its own throwaway
# PostgreSQL migrated by its own CLI, its app and its operator key, and its own work directory.
declare -A side_bin side_url side_key side_app
api_provision() { # SIDE BIN_DIR
    local side=$1 dir=$2 url
    mkdir -p "$work/$side"
    "$dir/livecast" postgres >"$work/$side/postgres.out" 2>"$work/$side/postgres.err" &
    pids+=($!)
    for _ in $(seq 600); do grep -q '^postgres://' "$work/$side/postgres.out" 2>/dev/null && break; sleep 0.1; done
    url=$(head -1 "$work/$side/postgres.out")
    [[ $url == postgres://* ]] || { echo "scripts/bench.sh: livecast postgres ($side) did not start:" >&2; cat "$work/$side/postgres.err" >&2; exit 1; }
    DATABASE_URL=$url "$dir/livecast" migrate >&2
    DATABASE_URL=$url "$dir/livecast" apps add --bundle-id "$bundle" --environment sandbox --team-id BENCHTEAM1 \
        --key-id BENCHKEY01 --key-file "$work/key.p8" >&2
    side_key[$side]=$(DATABASE_URL=$url "$dir/livecast" keys create --bundle-id "$bundle" --role operator | tail -1)
    side_app[$side]=$(psql "$url" -Atc "SELECT id FROM apps WHERE bundle_id = '$bundle'")
    side_bin[$side]=$dir
    side_url[$side]=$url
}
api_sides=head
api_provision head "$bin"
if [[ -n $baseline_ref ]]; then
    api_sides="head base"
    api_provision base "$baseline_bin"
fi

api() { # SIDE MODE [OPTIONS...] -> the mode's summary line
    local side=$1
    DATABASE_URL=${side_url[$side]} "${side_bin[$side]}/livecast-api-benchmark" "$2" --livecast "${side_bin[$side]}/livecast" \
        --signing-key "BENCHTEAM1:BENCHKEY01:$work/key.p8" --bundle-id "$bundle" --api-key "${side_key[$side]}" \
        --work "$work/$side" "${@:3}" | tail -1 ||
        { echo "scripts/bench.sh: livecast-api-benchmark $2 ($side) failed; the server's last words:" >&2; tail -20 "$work/$side/serve.err" >&2; exit 1; }
}
succeeded() { # LINE: stops the run unless the mode's summary line counts no error
    [[ $1 == *" errors=0" ]] || { echo "scripts/bench.sh: API requests failed: $1 (the first error is above)" >&2; exit 1; }
}

# What one registration does, as one statement: a new device's token, or a new token for a known device.
cat >"$work/register.sql" <<'SQL'
\set n random(1, 1000000000000)
INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled)
VALUES (:app::bigint, 'pgbench-' || :n, 'GameAttributes', lpad(to_hex(:n::bigint), 64, 'f'), 'user-' || :n, '17.5', true)
ON CONFLICT (app_id, device_id, attributes_type) WHERE invalidated_at IS NULL
DO UPDATE SET token = excluded.token, user_id = excluded.user_id, os_version = excluded.os_version,
    frequent_updates_enabled = excluded.frequent_updates_enabled, last_seen_at = now();
SQL
# The tables just grew by tens of thousands of rows: the statistics autovacuum would gather within a minute, now, so
# that the planner does not take them for empty.
analyze() { psql -q "${side_url[$1]}" -c ANALYZE; }
# Rounds of pgbench (in each protocol) and of Livecast alternate, so that all see the same moods of a shared machine;
# each side's median is compared. For each side and size: the rounds' rates, and the summary line of Livecast's median
# round. With a baseline, each round runs on this checkout, then on the baseline.
pgbench_protocols="simple prepared"
declare -A pgbench_rounds register_rounds register
for _ in $(seq "$api_register_rounds"); do
    for clients in $api_register_connections; do
        for side in $api_sides; do
            for protocol in $pgbench_protocols; do
                tps=$(pgbench -n -M "$protocol" -c "$clients" -j 2 -T "${api_seconds%.*}" -D app="${side_app[$side]}" \
                    -f "$work/register.sql" "${side_url[$side]}" 2>"$work/pgbench.err" | sed -n 's/^tps = \([0-9]*\).*/\1/p')
                [[ -n $tps ]] || { echo "scripts/bench.sh: pgbench failed:" >&2; cat "$work/pgbench.err" >&2; exit 1; }
                pgbench_rounds[$side,$clients,$protocol]+="$tps "
            done
            analyze "$side"
            line=$(api "$side" register --connections "$clients" --seconds "$api_seconds")
            succeeded "$line"
            register_rounds[$side,$clients]+="$(field "$line" rate) "
            register[$side,$clients,$(field "$line" rate)]=$line
        done
    done
done
rounds_median() { printf '%s\n' $1 | median; } # "ROUND ROUND…" -> their median
if [[ -n $baseline_ref ]]; then
# The update figures in rounds as well, alternating the sides; then every figure beside the baseline's.
declare -A update_rounds
for side in $api_sides; do
    succeeded "$(api "$side" activities --count "$api_activities")"
    analyze "$side"
done
for _ in $(seq "$api_register_rounds"); do
    for side in $api_sides; do
        line=$(api "$side" updates --rate "$api_rate" --seconds "$api_seconds" --warm-up "$api_warm_up" --activities "$api_activities")
        succeeded "$line"
        update_rounds[$side,p50]+="$(field "$line" p50_ms) " update_rounds[$side,p99]+="$(field "$line" p99_ms) "
        line=$(api "$side" updates --rate "$api_sustained_rate" --connections "$api_load_connections" --seconds "$api_seconds" \
            --warm-up "$api_warm_up" --activities "$api_activities")
        succeeded "$line"
        update_rounds[$side,sustained]+="$(field "$line" rate) "
        line=$(api "$side" max-updates --connections "$api_load_connections" --seconds "$api_seconds" --warm-up "$api_warm_up" \
            --activities "$api_activities")
        succeeded "$line"
        update_rounds[$side,max]+="$(field "$line" rate) "
    done
done
echo "HTTP API, this checkout (HEAD $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources sql Package.swift || echo ', changed')) against $baseline_ref ($configuration builds; rounds alternate, medians of $api_register_rounds)"
compare() { # LABEL HEAD_ROUNDS BASE_ROUNDS TARGET
    local head base
    head=$(rounds_median "$2") base=$(rounds_median "$3")
    printf '  %-52s %10s %10s %8s   %-9s rounds: %s| %s\n' "$1" "$head" "$base" \
        "$(awk -v h="$head" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", h / b; else print "-" }')" "$4" "$2" "$3"
}
ratio_rounds() { # SIDE CLIENTS PROTOCOL -> each round's registrations / pgbench
    local rates tps
    read -ra rates <<<"${register_rounds[$1,$2]}"
    read -ra tps <<<"${pgbench_rounds[$1,$2,$3]}"
    for i in "${!rates[@]}"; do awk -v r="${rates[$i]}" -v p="${tps[$i]}" 'BEGIN { printf "%.2f ", r / p }'; done
}
printf '  %-52s %10s %10s %8s   %-9s\n' figure HEAD "${baseline_ref:0:10}" ratio target
for clients in $api_register_connections; do
    compare "registrations, $clients connections, req/s" "${register_rounds[head,$clients]}" "${register_rounds[base,$clients]}" ""
    for protocol in $pgbench_protocols; do
        compare "pgbench -M $protocol, $clients clients, tps" "${pgbench_rounds[head,$clients,$protocol]}" \
            "${pgbench_rounds[base,$clients,$protocol]}" ""
    done
    compare "registrations / pgbench -M simple, $clients (per round)" "$(ratio_rounds head "$clients" simple)" \
        "$(ratio_rounds base "$clients" simple)" "$([[ $clients == 16 ]] && echo '>= 0.60' || echo '>= 1.00')"
done
compare "updates at $api_rate/s offered: p50 ms" "${update_rounds[head,p50]}" "${update_rounds[base,p50]}" ""
compare "updates at $api_rate/s offered: p99 ms" "${update_rounds[head,p99]}" "${update_rounds[base,p99]}" "<= 10"
compare "updates at $api_sustained_rate/s offered: accepted/s" "${update_rounds[head,sustained]}" "${update_rounds[base,sustained]}" ">= 5000"
compare "updates, max, $api_load_connections connections: /s" "${update_rounds[head,max]}" "${update_rounds[base,max]}" ">= 5000"
else
activities=$(api head activities --count "$api_activities")
analyze head
updates=$(api head updates --rate "$api_rate" --seconds "$api_seconds" --warm-up "$api_warm_up" --activities "$api_activities")
sustained=$(api head updates --rate "$api_sustained_rate" --connections "$api_load_connections" --seconds "$api_seconds" \
    --warm-up "$api_warm_up" --activities "$api_activities")
max_updates=$(api head max-updates --connections "$api_load_connections" --seconds "$api_seconds" --warm-up "$api_warm_up" \
    --activities "$api_activities")
broadcast=$(api head broadcast-latency --count "$api_broadcasts" --rate "$api_broadcast_rate" --feeds "$api_feeds" \
    --warm-up "$api_broadcast_warm_up")
fanout=$(api head fanout-latency --followers "$api_followers")
import=$(api head import --rows "$api_import_rows" --batch "$api_import_batch")
# The max rate at priority 10, as a sports app's alerts ask (each update spends the app's hourly budget), and with an
# Idempotency-Key on each, as a backend that retries safely sends: last, so that the outbox they leave behind does
# not delay the broadcasts' and the fan-out's pushes.
max_priority10=$(api head max-updates --priority 10 --connections "$api_load_connections" --seconds "$api_seconds" \
    --warm-up "$api_warm_up" --activities "$api_activities")
max_keyed=$(api head max-updates --idempotency-keys --connections "$api_load_connections" --seconds "$api_seconds" \
    --warm-up "$api_warm_up" --activities "$api_activities")

echo "HTTP API ($configuration build; one livecast serve per line, its pushes to the APNs emulator in the benchmark's process)"
row() { printf '  %-62s %-56s %s\n' "$@"; }
row "" measured "target (issue #12)"
for connections in $api_register_connections; do
    read -ra rates <<<"${register_rounds[head,$connections]}"
    rate=$(printf '%s\n' "${rates[@]}" | median)
    line=${register[head,$connections,$rate]}
    row "registrations: $connections connections, closed loop, ${api_seconds} s" \
        "$rate req/s (p50 $(field "$line" p50_ms), p99 $(field "$line" p99_ms) ms); rounds: ${rates[*]}" ""
    for protocol in $pgbench_protocols; do
        read -ra tps_rounds <<<"${pgbench_rounds[head,$connections,$protocol]}"
        tps=$(printf '%s\n' "${tps_rounds[@]}" | median)
        row "pgbench -M $protocol: the same upsert, $connections clients" "$tps tps; rounds: ${tps_rounds[*]}" ""
        row "registrations / pgbench -M $protocol, $connections each (medians of $api_register_rounds)" \
            "$(awk -v a="$rate" -v p="$tps" 'BEGIN { printf "%.2f", a / p }')" ">= 1.00"
    done
done
row "updates: $api_rate/s offered, open loop, $api_activities activities, ${api_seconds} s" \
    "p50 $(field "$updates" p50_ms), p99 $(field "$updates" p99_ms), p99.9 $(field "$updates" p999_ms) ms; $(field "$updates" rate)/s" \
    "p99 <= 10 ms"
row "updates: $api_sustained_rate/s offered, open loop, $api_load_connections connections, ${api_seconds} s" \
    "$(field "$sustained" rate)/s accepted (p50 $(field "$sustained" p50_ms), p99 $(field "$sustained" p99_ms), p99.9 $(field "$sustained" p999_ms) ms)" \
    ">= 5000/s sustained"
row "updates: max, $api_load_connections connections, closed loop, ${api_seconds} s" \
    "$(field "$max_updates" rate)/s (p50 $(field "$max_updates" p50_ms), p99 $(field "$max_updates" p99_ms) ms)" ">= 5000/s"
row "updates: max, priority 10, $api_load_connections connections, closed loop, ${api_seconds} s" \
    "$(field "$max_priority10" rate)/s (p50 $(field "$max_priority10" p50_ms), p99 $(field "$max_priority10" p99_ms) ms)" ""
row "updates: max with Idempotency-Key, $api_load_connections connections, ${api_seconds} s" \
    "$(field "$max_keyed" rate)/s (p50 $(field "$max_keyed" p50_ms), p99 $(field "$max_keyed" p99_ms) ms)" ""
row "broadcast: channel feed update, 202 -> on the wire ($(field "$broadcast" count) at ${api_broadcast_rate}/s)" \
    "p50 $(field "$broadcast" p50_ms), p99 $(field "$broadcast" p99_ms), max $(field "$broadcast" max_ms) ms" "p99 <= 20 ms"
row "fan-out: $api_followers token followers, 202 -> last push on the wire" \
    "$(field "$fanout" last_ms) ms, $(field "$fanout" pushes_per_s) pushes/s (first push $(field "$fanout" first_ms) ms)" ""
if [[ $(field "$import" available) == true ]]; then
    row "import: batches of $api_import_batch rows, 2 connections" \
        "$(field "$import" rows_per_s) rows/s (batch p50 $(field "$import" batch_p50_ms), p99 $(field "$import" batch_p99_ms) ms)" ">= 50000 rows/s"
else
    row "import" "n/a (endpoint not available)" ">= 50000 rows/s"
fi
for line in "$activities" "$updates" "$sustained" "$max_updates" "$max_priority10" "$max_keyed" "$broadcast" "$fanout" "$import"; do succeeded "$line"; done
fi
fi

gamenight() { # PRESET TITLE [OPTIONS...]: runs one game night and prints its figures
    local status=0 line preset=$1 title=$2 run=$1
    shift 2
    if (($# > 0)); then run="$preset-$(($#))"; fi
    line=$("$bin/livecast-api-benchmark" gamenight --preset "$preset" --livecast "$livecast" \
        --signing-key "BENCHTEAM1:BENCHKEY01:$work/key.p8" --work "$work/gamenight-$run" "$@" | tail -1) || status=$?
    if [[ $line != "gamenight "* ]]; then
        echo "scripts/bench.sh: the game night ($run) did not finish; its servers' last words:" >&2
        for err in "$work/gamenight-$run"/gamenight-serve-*.err; do [[ -f $err ]] && tail -10 "$err" >&2; done
        exit 1
    fi
    echo "$title ($configuration build; judged at the wire)"
    row() { printf '  %-46s %s\n' "$@"; }
    row "followers (late fans included), updates" "$(field "$line" followers), $(field "$line" updates) and the end"
    row "pushes on the wire" "$(field "$line" requests) ($(field "$line" accepted) accepted, $(field "$line" wasted) wasted)"
    row "out of order / after 410 / after the end" \
        "$(field "$line" ordering_violations) / $(field "$line" sent_after_410) / $(field "$line" sent_after_end)"
    row "followers not showing the final end" "$(field "$line" followers_not_final) (channel showing it: $(field "$line" channel_final))"
    row "rotated-away tokens pushed after rotation" "$(field "$line" rotated_old_token_after)"
    row "202 -> every follower, seconds" \
        "p50 $(field "$line" convergence_p50), p99 $(field "$line" convergence_p99), max $(field "$line" convergence_max); the end: $(field "$line" end_p100)"
    row "API calls failed after retries" \
        "$(field "$line" registrations_failed) registrations, $(field "$line" updates_failed) updates ($(field "$line" client_retries) retries)"
    row "verdict" "$(field "$line" verdict)"
    [[ $status == 0 ]] || { echo "scripts/bench.sh: the game night ($run) failed (the reasons are above)" >&2; exit 1; }
}

renewal() { # PRESET TITLE: runs one renewal game and prints its figures
    local status=0 line preset=$1 title=$2
    line=$("$bin/livecast-api-benchmark" renewal --preset "$preset" --livecast "$livecast" \
        --signing-key "BENCHTEAM1:BENCHKEY01:$work/key.p8" --work "$work/renewal-$preset" | tail -1) || status=$?
    if [[ $line != "renewal "* ]]; then
        echo "scripts/bench.sh: the renewal game ($preset) did not finish; its servers' last words:" >&2
        for err in "$work/renewal-$preset"/renewal-serve-*.err; do [[ -f $err ]] && tail -10 "$err" >&2; done
        exit 1
    fi
    echo "$title ($configuration build; judged at the wire)"
    row() { printf '  %-46s %s\n' "$@"; }
    row "followers renewed before their lifetime" "$(field "$line" renewed) of $(field "$line" followers) (showing the end: $(field "$line" final))"
    row "old token activities ended early / not ended" "$(field "$line" old_ended_early) / $(field "$line" old_not_ended)"
    row "swiped away and started again" "$(field "$line" dismissed_started_again)"
    row "without a push-to-start token, marked so" "$(field "$line" tokenless_marked)"
    row "pushes on the wire" "$(field "$line" requests) ($(field "$line" accepted) accepted)"
    row "out of order / after 410 / after the end" \
        "$(field "$line" ordering_violations) / $(field "$line" sent_after_410) / $(field "$line" sent_after_end)"
    row "dropped by the devices (budget, alert shape)" "$(field "$line" dropped_by_devices)"
    row "API calls failed after retries" "$(field "$line" calls_failed)"
    row "verdict" "$(field "$line" verdict)"
    [[ $status == 0 ]] || { echo "scripts/bench.sh: the renewal game ($preset) failed (the reasons are above)" >&2; exit 1; }
}

if [[ $sections == *gamenight* ]]; then
[[ $sections == gamenight ]] || echo
# Each has its own PostgreSQL (it restarts it), app and key, and two servers: only the signing key is shared.
if [[ $gamenight_preset == smoke ]]; then
    gamenight smoke "Game night, small (two servers, slices of 100 followers, one killed, PostgreSQL restarted, 20 % of pushes refused)" \
        --fan-out-slice 100
    echo
    renewal smoke "Renewal, small (three servers, a 60 s activity lifetime, 18 followers, one server killed during the renewals)"
else
    gamenight brownout "Brownout (3,000 followers, four updates 1.3 s apart and the end, 30 % of pushes refused; target: 15 s)"
    echo
    gamenight full "Game night (two servers, one killed, PostgreSQL restarted, 20 % of pushes refused)"
    echo
    gamenight full "Game night, three servers (20,000 followers, APNs answering after 40 ms, one killed, PostgreSQL restarted, 20 % refused)" \
        --instances 3 --followers 20000 --latency-ms 40
    echo
    renewal full "Renewal (three servers, a 120 s activity lifetime, 90 followers, one server killed during the renewals)"
fi
fi

if [[ $sections == *scale* ]]; then
[[ $sections == scale ]] || echo
scale_options=(--followers "$scale_followers" --instances "$scale_instances" --connections "$scale_connections"
    --compare-connections "$scale_compare_connections")
if [[ -n $scale_slice ]]; then scale_options+=(--slice "$scale_slice"); fi
status=0
# Its notes (the import, each run's figures and anything counted against it) go to standard error as it goes.
table=$("$bin/livecast-api-benchmark" scale --livecast "$livecast" --signing-key "BENCHTEAM1:BENCHKEY01:$work/key.p8" \
    --work "$work/scale" "${scale_options[@]}") || status=$?
slice_label="the server's default"
if [[ -n $scale_slice ]]; then slice_label="$scale_slice followers"; fi
echo "Fan-out across instances: one feed update to $scale_followers token followers per run ($configuration build;"
echo "emulator: 40 ms, 100 streams per connection; $scale_connections APNs connections an instance; slice: $slice_label; judged at the wire)"
sed 's/^/  /' <<<"$table"
if [[ $status != 0 ]]; then
    echo "scripts/bench.sh: the scale run failed (a follower lost, a violation, or the reason above); its servers' last words:" >&2
    for err in "$work/scale"/scale-serve-*.err; do [[ -f $err ]] && tail -10 "$err" >&2; done
    exit 1
fi
fi

if [[ $sections == *ten-million* ]]; then
start_nginx
source scripts/bench-ten-million.sh
fi
