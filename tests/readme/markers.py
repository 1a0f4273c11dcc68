"""markers.py FILE.md...: every console session in the documentation says what it is.

A fenced block that opens with ```console (or ```sh, ```shell, ```bash) must directly
follow a line `<!-- doc-test -->` (run.sh runs it as written) or `<!-- illustrative:
WHY -->` (not run: WHY says what it needs that the test machine has not, a GPU, a
particular project). Prints each block that does neither, FILE:LINE; exits 1 if any.
"""
import re
import sys

bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fenced = False
    for i, line in enumerate(lines):
        if not line.startswith("```"):
            continue
        if fenced:
            fenced = False
            continue
        fenced = True
        if not re.match(r"```(console|sh|shell|bash)\s*$", line):
            continue
        prev = lines[i - 1].strip() if i else ""
        if prev == "<!-- doc-test -->" or re.match(r"<!-- illustrative: \S.* -->$", prev):
            continue
        print(f"{path}:{i + 1}: a console block neither marked <!-- doc-test --> (run) nor "
              f"<!-- illustrative: WHY --> (not run, and why)")
        bad += 1
print(f"doc-markers: {len(sys.argv) - 1} files, {bad} unmarked console blocks")
sys.exit(1 if bad else 0)
