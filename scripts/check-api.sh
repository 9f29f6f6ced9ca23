#!/usr/bin/env bash
# Checks that the products' public API has not broken since the last release: `swift package
# diagnose-api-breaking-changes` against the commit named in .ci/api-baseline, for the root package's library
# products (LivecastCore, APNs, APNsEmulator) and for LivecastKit's. A breaking change made on purpose is named, one
# message a line, in .ci/api-breakage-allowlist (the command's own words: `API breakage: func foo() has been
# removed`) until the next release moves the baseline.
#
# The root package is compared in a scratch directory of its own (.build-api/), so the working build is left alone;
# it builds the products twice (the baseline's and today's), about 13 minutes on two cores. LivecastKit is a package
# in a folder of the repository, which the command cannot check out by itself: its baseline is committed to a
# throwaway repository of its own, with today's sources as the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."

baseline=$(tr -d '[:space:]' <.ci/api-baseline)
if ! git cat-file -e "$baseline^{commit}" 2>/dev/null; then
    if [[ $(git rev-parse --is-shallow-repository) == true ]] && git fetch --quiet --unshallow 2>/dev/null; then
        :
    else
        echo "scripts/check-api.sh: the baseline $baseline (.ci/api-baseline) is not in this clone's history" >&2
        exit 1
    fi
fi
allowlist=(--breakage-allowlist-path "$PWD/.ci/api-breakage-allowlist")

swift package --scratch-path .build-api diagnose-api-breaking-changes "$baseline" "${allowlist[@]}" \
    --products LivecastCore APNs APNsEmulator

kit=$(mktemp -d)
trap 'rm -rf "$kit"' EXIT
git archive "$baseline" LivecastKit | tar -x -C "$kit" --strip-components=1
git -C "$kit" init --quiet
git -C "$kit" add -A
git -C "$kit" -c user.name=check-api -c user.email=check-api@localhost commit --quiet --no-verify -m "LivecastKit at $baseline"
find "$kit" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
tar -C LivecastKit --exclude=./.build -cf - . | tar -C "$kit" -xf -
swift package --package-path "$kit" diagnose-api-breaking-changes HEAD "${allowlist[@]}"
