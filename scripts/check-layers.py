#!/usr/bin/env python3
"""Checks that only the store holds SQL (issues #45 and #55): LivecastStore exposes named queries, and the service,
the server and the CLI keep the policy, so every statement lives in one module. Fails, naming file:line, on a
`SELECT`, `INSERT INTO`, `DELETE FROM` or `UPDATE <table> [alias] SET` in Sources/LivecastService,
Sources/LivecastServer or Sources/livecast, in code or in a string literal, across lines too, and on a `.query(`
called with a string literal. In Sources/LivecastStore, outside States/, it also fails on a state, status, event, target
kind or environment spelled as an SQL literal (`a.state = 'ended'`, `u.event <> 'start'`, `status IN ('sent', ...)`,
`d.target_kind = 'device'`): the store binds
or interpolates the typed value (`ActivityState.ended.sql`), so a renamed state cannot leave a query behind. Comments
do not count. Run from the repository's root; exits 1 when it finds any."""
import glob
import re
import sys

ROOTS = ["Sources/LivecastService", "Sources/LivecastServer", "Sources/livecast"]

STATEMENTS = [
    ("SELECT", re.compile(r"\bSELECT\s")),
    ("INSERT INTO", re.compile(r"\bINSERT\s+INTO\b")),
    ("DELETE FROM", re.compile(r"\bDELETE\s+FROM\b")),
    ("UPDATE ... SET", re.compile(r"\bUPDATE\s+\w+(?:\s+(?!SET\b)\w+)?\s+SET\b")),
    ("a query with SQL text", re.compile(r"\.query\(\s*(?:\"|#\")")),
]


def without_comments(text):
    """The text with `//` comments blanked (lengths and line breaks kept); string literals, multi-line ones included,
    are left alone."""
    kept = []
    in_block = False  # inside a multi-line string literal
    for line in text.split("\n"):
        if in_block:
            in_block = line.count('"""') % 2 == 0
            kept.append(line)
            continue
        in_string = False
        cut = len(line)
        index = 0
        while index < len(line):
            if line.startswith('"""', index) and not in_string:
                in_block = line.count('"""', index) % 2 == 1
                break
            if line[index] == "\\" and in_string:
                index += 2
                continue
            if line[index] == '"':
                in_string = not in_string
            elif not in_string and line.startswith("//", index):
                cut = index
                break
            index += 1
        kept.append(line[:cut] + " " * (len(line) - cut))
    return "\n".join(kept)


# A state-like column compared with a literal, or a literal list: the columns StoredState types map.
SPELLED_STATE = re.compile(
    r"\b(?:\w+\.)?(?:state|status|event|replay_outcome|target_kind|environment)\s*(?:=|<>|!=|IN\s*\()\s*'\w+'", re.IGNORECASE
)


def spelled_states():
    """(path, line) of each state spelled as an SQL literal in the store outside States/."""
    found = []
    for path in sorted(glob.glob("Sources/LivecastStore/**/*.swift", recursive=True)):
        if "/States/" in path:
            continue
        with open(path) as source:
            text = without_comments(source.read())
        for match in SPELLED_STATE.finditer(text):
            found.append((path, text.count("\n", 0, match.start()) + 1))
    return found


findings = []
for path in sorted(path for root in ROOTS for path in glob.glob(f"{root}/**/*.swift", recursive=True)):
    with open(path) as source:
        text = without_comments(source.read())
    for name, pattern in STATEMENTS:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            findings.append((path, line, name))
for path, line, name in sorted(findings):
    print(f"scripts/check-layers.py: {path}:{line}: {name}: SQL belongs in LivecastStore, behind a named query", file=sys.stderr)
spelled = spelled_states()
for path, line in spelled:
    print(f"scripts/check-layers.py: {path}:{line}: a state spelled in SQL: interpolate its StoredState's .sql", file=sys.stderr)
print(f"layers: {len(findings)} SQL statements in {', '.join(ROOTS)}; {len(spelled)} states spelled in the store's SQL")
sys.exit(1 if findings or spelled else 0)
