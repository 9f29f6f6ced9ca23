#!/usr/bin/env bash
# Runs Livecast's tests: installs the Debian packages the build and the tests need when they are missing
# (scripts/prerequisites.sh; root needed for that), then runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh --tests
exec swift test "$@"
