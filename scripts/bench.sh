#!/usr/bin/env bash
# Prints benchmark figures, measured side by side in one run on this machine.
#
#   scripts/bench.sh            release build, full size (about a minute after the build)
#   scripts/bench.sh --smoke    debug build, a few thousand requests: checks the benchmark runs, not the speed
#
# Emulator: h2load (Debian's nghttp2-client) posts Live Activity pushes to the APNs emulator and, for scale,
# to nghttpd (Debian's nghttp2-server) serving a file, with the same flags; the median of the rounds is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=release requests=200000 rounds=3
if [[ ${1:-} == --smoke ]]; then configuration=debug requests=3000 rounds=1; fi

missing=()
command -v h2load >/dev/null || missing+=(nghttp2-client)
command -v nghttpd >/dev/null || missing+=(nghttp2-server)
if ((${#missing[@]})); then
    [[ $(id -u) -eq 0 ]] || { echo "scripts/bench.sh: please install: ${missing[*]}" >&2; exit 1; }
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

swift build -c "$configuration" --product livecast >&2
livecast="$(swift build -c "$configuration" --show-bin-path)/livecast"

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
h2load_rate() { # URL -> requests per second
    h2load -n "$requests" -c 4 -m 100 -d "$work/payload.json" \
        -H "authorization: bearer $jwt" -H "apns-push-type: liveactivity" \
        -H "apns-topic: com.example.bench.push-type.liveactivity" -H "apns-priority: 5" "$1" |
        awk '/^finished in/ { gsub(",", "", $4); print int($4) } /^status codes:/ { if ($3 + 0 != '"$requests"') bad = 1 } END { if (bad) exit 1 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

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
