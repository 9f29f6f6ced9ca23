#!/usr/bin/env python3
"""Checks that Package.swift (the root's, and LivecastKit/'s) lists, for each target, exactly the modules its files
import (issue #45): a module imported but not declared builds only by accident of another target's graph, and one
declared but never imported is dead weight. The compiler's MemberImportVisibility checks the other half: that each
file imports what it uses. Run from the repository's root; exits 1 and names the targets that differ."""
import glob
import json
import os
import re
import subprocess
import sys

# Modules of the toolchain and the system, which no Package.swift declares.
SYSTEM = {"ActivityKit", "Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Darwin", "Dispatch", "Synchronization",
          "Testing", "UIKit", "XCTest", "_Concurrency", "PackageDescription"}

environment = dict(os.environ, LIVECAST_BENCHMARKS="1")  # the benchmark targets too
# The root package, and LivecastKit's package of its own (LivecastKit/).
targets = []
for root in (".", "LivecastKit"):
    package = json.loads(subprocess.run(["swift", "package", "--package-path", root, "dump-package"], capture_output=True,
                                        text=True, check=True, env=environment).stdout)
    targets += [(root, target) for target in package["targets"]]
differing = []
for root, target in targets:
    name = target["name"]
    path = os.path.join(root, target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + name)
    declared = {entry[0] for dependency in target["dependencies"] for kind, entry in dependency.items()
                if kind in ("byName", "product", "target")}
    imported = set()
    for file in glob.glob(f"{path}/**/*.swift", recursive=True):
        with open(file) as source:
            for line in source:
                match = re.match(r"^(?:@testable |public |package |internal )?import (?:struct |class |enum |func )?(\w+)", line)
                if match:
                    imported.add(match.group(1))
    missing = imported - declared - SYSTEM - {name}
    unused = declared - imported
    if target["type"] == "system":
        continue
    if missing or unused:
        differing.append(f"{name}: imported, not declared: {sorted(missing)}; declared, never imported: {sorted(unused)}")
for line in differing:
    print(f"scripts/check-imports.py: {line}", file=sys.stderr)
print(f"imports: {len(targets)} targets, {len(differing)} differ from Package.swift")
sys.exit(1 if differing else 0)
