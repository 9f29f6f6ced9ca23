#!/usr/bin/env bash
# Property-based tests of the HTTP API against its own contract: schemathesis (from PyPI, pinned below, in a venv
# under .build/) reads the OpenAPI document `livecast serve` serves (GET /openapi.yaml), generates valid and invalid
# requests for every operation, and fails on any 5xx, any answer whose status, content type, headers or body the
# document does not describe, and any invalid request the server accepts.
#
#   scripts/fuzz.sh                        CI's size: FUZZ_EXAMPLES (default 100) generated cases per operation
#   FUZZ_EXAMPLES=500 scripts/fuzz.sh      a longer run; FUZZ_SEED=N repeats one (schemathesis prints its seed)
#   scripts/fuzz.sh --livecast PATH        use that livecast binary instead of building one (swift build)
#
# The stack is the one the demo runs, started piece by piece through the CLI: a throwaway PostgreSQL
# (`livecast postgres`), the APNs emulator trusting a new signing key (`livecast emulator --generate-key`), the app
# com.example.fuzz with that key sealed by a master key (`livecast apps add`), one API key per role (`livecast keys
# create`), and `livecast serve` pointed at the emulator. The document's `bundleId` is bound to that app (its other
# path parameters are generated) and each operation sends the key of the lowest role that may call it
# (scripts/fuzz.toml). Revoking keys (DELETE /keys/{keyId}) runs last, alone, with an admin key of its own, as a
# revoked key turns every later request into a 401. Each failure is printed with a curl command that reproduces it;
# a JUnit report stays in .build/fuzz/report. Everything started is stopped and removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

schemathesis_version=4.32.5
bundle_id=com.example.fuzz
examples=${FUZZ_EXAMPLES:-100}
livecast=
while (($#)); do
    case $1 in
    --livecast) livecast=$2; shift 2 ;;
    *) echo "scripts/fuzz.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

scripts/prerequisites.sh --fuzz
venv=.build/fuzz/venv
if [[ $("$venv/bin/st" --version 2>/dev/null) != *" $schemathesis_version" ]]; then
    echo "installing schemathesis $schemathesis_version into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$schemathesis_version"
fi
if [[ -z $livecast ]]; then
    swift build --product livecast >&2
    livecast="$(swift build --show-bin-path)/livecast"
fi

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
# Waits until FILE holds a line matching PATTERN, while process PID runs: up to 60 s.
wait_for() { # FILE PATTERN PID WHAT
    for _ in $(seq 600); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        kill -0 "$3" 2>/dev/null || break
        sleep 0.1
    done
    echo "scripts/fuzz.sh: $4 did not start:" >&2
    tail -20 "$1" "$work"/*.err >&2 || true
    exit 1
}

"$livecast" postgres >"$work/postgres.out" 2>"$work/postgres.err" &
pids+=($!)
wait_for "$work/postgres.out" '^postgres://' $! PostgreSQL
export DATABASE_URL
DATABASE_URL=$(head -1 "$work/postgres.out")

"$livecast" emulator --port 0 --management-port 0 --cert-out "$work/emulator.pem" \
    --generate-key "FUZZTEAM01:FUZZKEY001:$work/key.p8" >"$work/emulator.out" 2>"$work/emulator.err" &
pids+=($!)
wait_for "$work/emulator.out" '^ready' $! "the APNs emulator"
push_port=$(grep -o 'push=127.0.0.1:[0-9]*' "$work/emulator.err" | cut -d: -f2)
management_port=$(grep -o 'management=127.0.0.1:[0-9]*' "$work/emulator.err" | cut -d: -f2)

head -c 32 /dev/urandom | base64 >"$work/master.key"
export LIVECAST_MASTER_KEY_FILE="$work/master.key"
"$livecast" migrate >&2
"$livecast" apps add --bundle-id "$bundle_id" --environment sandbox --team-id FUZZTEAM01 --key-id FUZZKEY001 \
    --key-file "$work/key.p8" >&2
key() { "$livecast" keys create --bundle-id "$bundle_id" --role "$1" | tail -1; }
export FUZZ_BACKEND_KEY FUZZ_OPERATOR_KEY FUZZ_ADMIN_KEY FUZZ_REVOKING_KEY
FUZZ_BACKEND_KEY=$(key backend) FUZZ_OPERATOR_KEY=$(key operator) FUZZ_ADMIN_KEY=$(key admin) FUZZ_REVOKING_KEY=$(key admin)

# Rate limits far above what the fuzzer sends, failed authentications included (it sends many requests without a
# key): a 429 would only hide the answer under test.
"$livecast" serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --dispatch-workers 1 --rate-limit 100000 --rate-burst 100000 \
    --failed-auth-rate 100000 --failed-auth-burst 100000 \
    --apns-push-url "https://localhost:$push_port" --apns-management-url "https://localhost:$management_port" \
    --apns-ca-file "$work/emulator.pem" >"$work/serve.out" 2>"$work/serve.err" &
server=$!
pids+=($server)
wait_for "$work/serve.out" '^listening on' $server "livecast serve"
base="http://$(sed -n 's/^listening on //p' "$work/serve.out" | head -1)"

# Something to find: a feed with a channel and a token follower, a standalone activity, a device's push-to-start
# token. The generated feed keys, activity ids, device ids and attributes types name them half of the time (the
# dictionaries of scripts/fuzz.toml).
seed() { # METHOD PATH KEY BODY
    curl -sS --fail-with-body -X "$1" "$base/v1/apps/$bundle_id/$2" -H "authorization: Bearer $3" -d "$4"
    echo
}
token=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
seed PUT push-to-start-tokens/fuzz-device/GameAttributes "$FUZZ_BACKEND_KEY" '{"token": "'$token'", "osVersion": "17.5"}'
seed PUT feeds/fuzz-feed "$FUZZ_OPERATOR_KEY" \
    '{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}, "channel": {"storagePolicy": "noStorage"}}' |
    tee "$work/feed.json"
seed PUT activities/fuzz-follower "$FUZZ_BACKEND_KEY" \
    '{"attributesType": "GameAttributes", "feed": "fuzz-feed", "pushToken": "'${token/00/11}'", "deviceId": "fuzz-device"}'
seed PUT activities/fuzz-activity "$FUZZ_BACKEND_KEY" '{"attributesType": "DeliveryAttributes", "pushToken": "'${token/00/22}'"}'
grep -q '"channelId"' "$work/feed.json" || { echo "scripts/fuzz.sh: the seeded feed has no channel" >&2; exit 1; }

report=.build/fuzz/report
rm -rf "$report"
# The checks: no 5xx, and every answer as the document describes it (status, content type, headers, body); invalid
# requests refused, and required headers required. Left out, as the document cannot satisfy them, not the server:
# positive_data_acceptance (rules relative to the clock and to other fields, such as a timestamp at most 60 s ahead
# or a staleDate after the timestamp, and no NUL in any body string, are refused with 422 as documented but cannot
# be written as JSON Schema), ignored_auth (left out when the server's default failed-authentication limit answered
# 429, as documented, where the check wants 401 or 403; not tried again since the limit is raised here), and
# unsupported_method (Hummingbird answers 404, not 405, to a method a path does not have).
checks=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance
checks+=,response_schema_conformance,negative_data_rejection,missing_required_header
# The served document, with the path's bundleId bound to the app: valid cases name it, invalid ones anything else
# (refused with 400, 404 or 422 as documented). A schemathesis parameter override would send the app's bundle id in
# the cases it generated as invalid too, and then fault the server for accepting them.
# Each bound on the server's clock (`x-livecast-from-now`: a staleDate in the future, a sendAt at most 7 days ahead)
# becomes a plain minimum or maximum as of now, widened by a day as the clock moves on while the run lasts: a value
# beyond it is one the server must refuse (negative_data_rejection), and one just inside may be refused as documented.
"$venv/bin/python" - "$base/openapi.yaml" "$bundle_id" >"$work/openapi.yaml" <<'PYTHON'
import sys, time, urllib.request, yaml
document = yaml.safe_load(urllib.request.urlopen(sys.argv[1]))
document["components"]["parameters"]["bundleId"]["schema"] = {"type": "string", "enum": [sys.argv[2]]}
now, day = int(time.time()), 86400
def pin_clock_bounds(node):
    if isinstance(node, dict):
        bounds = node.pop("x-livecast-from-now", {})
        if "minimum" in bounds:
            node["minimum"] = now + bounds["minimum"] - day
        if "maximum" in bounds:
            node["maximum"] = now + bounds["maximum"] + day
        for value in node.values():
            pin_clock_bounds(value)
    elif isinstance(node, list):
        for value in node:
            pin_clock_bounds(value)
pin_clock_bounds(document)
yaml.safe_dump(document, sys.stdout, sort_keys=False, allow_unicode=True)
PYTHON
# Hypothesis keeps the examples it found (and replays failing ones first) under .build/, not in the checkout.
export HYPOTHESIS_STORAGE_DIRECTORY=.build/fuzz/hypothesis
# One worker: with two, hypothesis's ast.parse calls ran in two threads at once and Python 3.11 (3.11.7 here; Debian
# 12 ships 3.11.2) failed one ("AST constructor recursion depth mismatch"), a runtime error of the fuzzer.
# The filter_too_much health check is off: schemathesis discards path values a URL cannot carry (a `/` in a free-text
# identifier, `.`, `..`), and on some seeds most of the values drawn for `GET …/channels/{channelId}` were such, so
# the run failed on how its own data was drawn (CI, seed 160396045380752792154140445259610875410) without sending
# a request that could fault the API. The checks on the server's answers are unchanged.
fuzz() { # NAME [schemathesis options...]
    local name=$1
    shift
    "$venv/bin/st" --config-file scripts/fuzz.toml run "$work/openapi.yaml" --url "$base" --checks "$checks" \
        --max-examples "$examples" ${FUZZ_SEED:+--seed "$FUZZ_SEED"} --workers 1 --no-color --suppress-health-check filter_too_much \
        --report junit --report-junit-path "$report/$name.xml" "$@"
}
status=0
echo "fuzzing $base ($examples examples per operation)" >&2
start=$SECONDS
fuzz api --exclude-path '/v1/apps/{bundleId}/keys/{keyId}' || status=1
fuzz revocation --include-path '/v1/apps/{bundleId}/keys/{keyId}' || status=1
echo "fuzzing took $((SECONDS - start)) s" >&2

# Values only PostgreSQL refused (422 from the error middleware's last line of defence, not from InputLimits, so
# without the field's name): not a failure, but worth a look.
if grep 'PostgreSQL refused a value' "$work/serve.err" >&2; then
    echo "scripts/fuzz.sh: note: PostgreSQL refused the values above; InputLimits did not name their field" >&2
fi
kill -0 $server 2>/dev/null || { echo "scripts/fuzz.sh: livecast serve died:" >&2; tail -30 "$work/serve.err" >&2; status=1; }
exit $status
