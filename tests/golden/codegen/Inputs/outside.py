#!/usr/bin/env python3
"""outside.py ORIGINAL TRANSLATED: outside the spans coconet rewrites, the
translated file equals the original byte for byte.

The spans are found independently of coconet: each `#pragma coconet region`
line (with its continuation lines) and the statement after it (a `{ ... }`
block, matched by braces outside comments and strings) in the original; each
block between `// coconet: begin generated code` and `// coconet: end
generated code` markers (and the blank line after it) in the translated file,
and the one #include of coconet's runtime (`#include <coconet.h>  // coconet:
...` after the file's includes, or a `// coconet:` line, the #include and a
blank line above the declaration). A line diff of the two files may then only
replace region spans by text that starts with the commented pragma, and insert
marker blocks and the runtime's #include.
"""
import difflib
import re
import sys


def region_spans(lines):
    """(first, last) line indexes of each region: pragma line to its block's '}'."""
    spans = []
    i = 0
    while i < len(lines):
        if re.match(r"\s*#\s*pragma\s+coconet\s+region\b", lines[i]):
            first = i
            while lines[i].rstrip("\r\n").endswith("\\"):
                i += 1
            i += 1
            depth, started = 0, False
            text_state = None
            while i < len(lines):
                line = lines[i]
                j = 0
                while j < len(line):
                    c = line[j]
                    if text_state == "block":
                        if line.startswith("*/", j):
                            text_state, j = None, j + 1
                    elif text_state in ('"', "'"):
                        if c == "\\":
                            j += 1
                        elif c == text_state:
                            text_state = None
                    elif line.startswith("//", j):
                        break
                    elif line.startswith("/*", j):
                        text_state, j = "block", j + 1
                    elif c in "\"'":
                        text_state = c
                    elif c == "{":
                        depth, started = depth + 1, True
                    elif c == "}":
                        depth -= 1
                    elif c == ";" and not started:
                        depth, started = 0, True
                    j += 1
                if started and depth == 0:
                    break
                i += 1
            spans.append((first, i))
        i += 1
    return spans


RUNTIME_INCLUDE = re.compile(r"#include <coconet(_fused)?\.h>(  // coconet: .*)?$")


def generated_spans(lines):
    spans, start = [], None
    for i, line in enumerate(lines):
        if RUNTIME_INCLUDE.match(line.rstrip("\r\n")):
            first = i - 1 if i > 0 and lines[i - 1].startswith("// coconet: ") else i
            last = i + 1 if first < i and i + 1 < len(lines) and lines[i + 1].strip() == "" else i
            spans.append((first, last))
            continue
        if line.lstrip().startswith("// coconet: begin generated code for region "):
            start = i
        elif line.lstrip().startswith("// coconet: end generated code for region ") and start is not None:
            end = i + 1 if i + 1 < len(lines) and lines[i + 1].strip() == "" else i
            spans.append((start, end))
            start = None
    return spans


def inside(lo, hi, spans):
    return all(any(a <= k <= b for a, b in spans) for k in range(lo, hi))


def main():
    with open(sys.argv[1], "rb") as f:
        old = f.read().decode("latin-1").splitlines(keepends=True)
    with open(sys.argv[2], "rb") as f:
        new = f.read().decode("latin-1").splitlines(keepends=True)
    regions, generated = region_spans(old), generated_spans(new)
    bad = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert" and (inside(j1, j2, generated) or any(a < i1 <= b for a, b in regions)):
            continue
        if tag in ("replace", "delete") and inside(i1, i2, regions):
            continue
        bad += 1
        print(f"outside.py: {tag} of original lines {i1 + 1}-{i2} / translated lines {j1 + 1}-{j2} "
              "is outside the rewritten spans", file=sys.stderr)
        sys.stderr.writelines("  - " + l for l in old[i1:i2])
        sys.stderr.writelines("  + " + l for l in new[j1:j2])
    if not regions:
        print("outside.py: no region in the original", file=sys.stderr)
        bad += 1
    for first, _ in regions:
        pragma = old[first].strip().rstrip("\\").rstrip()
        if not any(l.strip().startswith("// " + pragma) and "(translated by coconet)" in l for l in new):
            print(f"outside.py: the pragma at line {first + 1} is not kept as a comment", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
