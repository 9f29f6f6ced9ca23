#!/usr/bin/env bash
# Prints benchmark figures, measured side by side in one run on this machine.
#
#   scripts/bench.sh            release build, full size (a few minutes after the build)
#   scripts/bench.sh --smoke    debug build, a few thousand requests: checks the benchmarks run, not the speed
#   scripts/bench.sh --fanout   the fan-out figures alone
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
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=release requests=200000 rounds=3 followers=1000000 sections="client emulator fanout"
if [[ ${1:-} == --smoke ]]; then configuration=debug requests=3000 rounds=1 followers=20000; fi
if [[ ${1:-} == --fanout ]]; then sections=fanout; fi

scripts/prerequisites.sh --bench

swift build -c "$configuration" --product livecast >&2
swift build -c "$configuration" --product livecast-client-benchmark >&2
swift build -c "$configuration" --product livecast-fanout-benchmark >&2
bin="$(swift build -c "$configuration" --show-bin-path)"
livecast="$bin/livecast"

work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

openssl ecparam -genkey -name prime256v1 -noout | openssl pkcs8 -topk8 -nocrypt -out "$work/key.p8"
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
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

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
# nginx answering `return 200` to any path, as a second, faster sink (it answers before reading the body).
nginx_port=$((20000 + RANDOM % 20000))
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<NGINX
daemon off; master_process off; worker_processes 1; pid $work/nginx/nginx.pid; error_log $work/nginx/error.log;
events { worker_connections 256; }
http {
    access_log off; client_body_temp_path $work/nginx/body; keepalive_requests 100000000;
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
