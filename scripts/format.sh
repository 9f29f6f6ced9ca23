#!/usr/bin/env bash
# Formats the Swift sources with swift-format and the repository's .swift-format.
#
#   scripts/format.sh            formats Sources, Tests, Benchmarks, Package.swift and the LivecastKit package in place
#   scripts/format.sh --check    changes nothing; lists every finding and exits non-zero if there is one
set -euo pipefail
cd "$(dirname "$0")/.."

paths=(Sources Tests Benchmarks Package.swift LivecastKit/Sources LivecastKit/Tests LivecastKit/Package.swift)
case "${1:-}" in
"") swift format format --in-place --parallel --recursive "${paths[@]}" ;;
--check) swift format lint --strict --parallel --recursive "${paths[@]}" ;;
*)
    echo "usage: scripts/format.sh [--check]" >&2
    exit 2
    ;;
esac
