#!/usr/bin/env bash
# Prints N import rows as NDJSON on stdout, for measuring bulk imports (`livecast tokens import`, or
# `POST /v1/apps/{bundleId}/push-to-start-tokens:import` 10,000 lines at a time):
#
#   scripts/import-rows.sh N [push-to-start|activities] [FIRST]
#
# Each row is a new device (or activity) with its own 32-byte token, numbered from FIRST (default 0), so another
# FIRST gives rows that do not collide with earlier ones, and the same FIRST the same rows again (all `unchanged`).
set -euo pipefail
count=${1:?usage: scripts/import-rows.sh N [push-to-start|activities] [FIRST]} kind=${2:-push-to-start} first=${3:-0}
case "$kind" in
push-to-start) format='{"deviceId":"bench-%d","attributesType":"GameAttributes","token":"%064x","osVersion":"17.5"}\n' ;;
activities) format='{"activityId":"bench-%d","attributesType":"GameAttributes","pushToken":"%064x","deviceId":"bench-device"}\n' ;;
*) echo "scripts/import-rows.sh: the kind is push-to-start or activities, not $kind" >&2; exit 2 ;;
esac
seq "$first" $((first + count - 1)) | awk -v format="$format" '{ printf format, $1, $1 }'
