#!/usr/bin/env bash
# Runs Livecast's tests: installs the Debian packages the build and the tests need when they are missing
# (scripts/prerequisites.sh; root needed for that), runs the tests of LivecastKit, the app side's package of its own
# (`swift test --package-path LivecastKit`: a stub in the process stands in for Livecast, so they take seconds), then
# runs the root package's `swift test`. Both get any arguments given (a filter that matches nothing in one of them
# passes there). The root run comes last, so its verdict is the log's closing line; the script fails if either failed.
#
# The test output is line-buffered (stdbuf), so a log shows every test that finished. Two guards keep a stuck run
# from eating CI's time limit silently:
# - once the run has printed its verdict ("Test run with N tests … passed|failed"), the test process gets
#   TEST_EXIT_GRACE seconds (default 120) to exit; one that lingers is stopped and the verdict stands;
# - a run that prints nothing for TEST_SILENCE_LIMIT seconds (default 900) is stopped and fails, naming the tests
#   that started and never finished.
#
# Swift Testing runs at most SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH tests at once (default here 6). The suite
# is CPU-bound on two cores, and its tests that time a takeover, a lease or an HTTP answer failed when too many others
# ran beside them in a slow hour; capped, none did, in about the same time (docs/TESTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh --tests

exit_grace=${TEST_EXIT_GRACE:-120}
silence_limit=${TEST_SILENCE_LIMIT:-900}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-6}

# LivecastKit's own tests, with the silence limit as their time limit.
kit_status=0
timeout --kill-after=10 "$silence_limit" stdbuf -oL -eL swift test --package-path LivecastKit "$@" 2>&1 || kit_status=$?
if ((kit_status != 0)); then echo "scripts/test.sh: LivecastKit's tests failed (exit $kit_status); running the root package's tests anyway" >&2; fi

# Exits with the root run's status, or 1 when LivecastKit's tests failed.
finish() {
    if ((kit_status != 0)); then
        echo "scripts/test.sh: LivecastKit's tests failed (swift test --package-path LivecastKit, above)" >&2
        exit 1
    fi
    exit "$1"
}

stdbuf -oL -eL swift test "$@" > >(tee "$log") 2>&1 &
tests=$!

verdict_seen_at=
last_size=-1
last_change=$SECONDS
while kill -0 "$tests" 2>/dev/null; do
    sleep 2
    size=$(stat -c %s "$log")
    if [[ $size != "$last_size" ]]; then last_size=$size last_change=$SECONDS; fi
    if [[ -z $verdict_seen_at ]] && grep -qE '^[^ ]+ Test run with [0-9]+ tests? .*(passed|failed)' "$log"; then
        verdict_seen_at=$SECONDS
    fi
    if [[ -n $verdict_seen_at ]] && ((SECONDS - verdict_seen_at > exit_grace)); then
        echo "scripts/test.sh: the test process did not exit ${exit_grace} s after its verdict; stopping it" >&2
        pkill -KILL -f "$PWD/.build/.*livecastPackageTests.xctest" || true
        wait "$tests" || true
        status=0
        grep -qE '^[^ ]+ Test run with [0-9]+ tests? .*passed' "$log" && ! grep -q '^✘' "$log" || status=1
        finish "$status"
    fi
    if ((SECONDS - last_change > silence_limit)); then
        echo "scripts/test.sh: no test output for ${silence_limit} s; stopping the run. Started and never finished:" >&2
        # Names may repeat across suites: each start is matched with one end.
        grep -E '^◇ Test [^ ]+ started' "$log" | sed -E 's/^◇ Test ([^ ]+) started.*/\1/' | grep -vx run | sort >"$log.started"
        grep -E '^(✔|✘) Test [^ ]+ .*(passed|failed) after' "$log" | sed -E 's/^[^ ]+ Test ([^ ]+) .*/\1/' | grep -vx run | sort >"$log.ended"
        comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
        rm -f "$log.started" "$log.ended"
        pkill -KILL -f "$PWD/.build/.*livecastPackageTests.xctest" || true
        wait "$tests" || true
        finish 1
    fi
done
status=0
wait "$tests" || status=$?
finish "$status"
