#!/usr/bin/env python3
"""Parity of the report options with translation.

For every input of the golden and corpus tests that a RUN line hands to coconet (with the
clang flags after `--` it gives, lit's path substitutions %S, %inputs and %root
replaced as lit.cfg.py does; a line with any other `%` is left to lit), run coconet
to translate it and with each report option below. All must exit with the same
status and print the same diagnostics: a file --check passes must translate, and
one whose translation fails must fail --check with the same messages. An input
that translates is run through --check (the front end, the analysis and the
schedule; --verify=ir:2 too until stop 52, and the golden tests' own
--verify=ir lines and the mutation level run the interpreter); one that fails,
through --check and one of --explain, --dump=json and --verify=ir:2 in turn
(each of the three on a third of them: until stop 55 all three on each), each of
which stops where translation does (--dump=ir and --emit-dot print what the
schedule stage made, as --explain does: the printers' own tests cover them).
This keeps the level inside the test budget.

usage: parity.py COCONET ROOT
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

coconet, root = sys.argv[1], sys.argv[2]
dirs = [os.path.join(root, "tests", "golden"), os.path.join(root, "tests", "corpus")]
mpi = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True).stdout.split()


def substitute(word, folder):
    """lit.cfg.py's path substitutions (and lit's %S), longest name first."""
    for name, value in (("%inputs", os.path.join(root, "tests", "golden", "Inputs")), ("%root", root),
                        ("%S", folder)):
        word = word.replace(name, value)
    return word


def inputs():
    seen = set()
    for dirpath, subdirs, files in (w for d in dirs for w in os.walk(d)):
        subdirs[:] = [d for d in subdirs if d != "Inputs"]
        for name in sorted(files):
            if not name.endswith(".cu"):
                continue
            path = os.path.join(dirpath, name)
            for line in open(path, errors="replace"):
                m = re.search(r"RUN:.*%coconet\b([^|;&>]*)", line)
                if not m or "%s" not in m.group(1).split():
                    continue
                words = shlex.split(m.group(1))
                extra = words[words.index("--") + 1:] if "--" in words else []
                extra = [substitute(w, dirpath) for w in extra if w != "%mpiflags"]
                if any("%" in w for w in extra):
                    continue
                key = (path, tuple(extra))
                if key not in seen:
                    seen.add(key)
                    yield path, extra


def run(args):
    env = dict(os.environ, COCONET_COLOR="0")
    p = subprocess.run([coconet] + args, capture_output=True, text=True, env=env)
    return p.returncode, p.stderr


REPORTS = [["--explain"], ["--dump=json"], ["--verify=ir:2"]]


def check(index, item, tmp):
    path, extra = item
    d = tempfile.mkdtemp(dir=tmp)
    out = os.path.join(d, "out.cu")
    results = [(["-o", out], run(["-o", out, path, "--"] + mpi + extra))]
    code0, err0 = results[0][1]
    modes = [["--check"]]
    if code0 != 0:
        modes.append(REPORTS[index % len(REPORTS)])
    results += [(m, run(m + [path, "--"] + mpi + extra)) for m in modes]
    lines = []
    for mode, (code, err) in results[1:]:
        if code != code0 or (code0 != 0 and err != err0):
            rel = os.path.relpath(path, root)
            lines.append(f"parity: FAIL {rel} {' '.join(extra)}: translating exits {code0}, {mode[0]} exits {code}")
            if err != err0:
                lines.append("  translating said:\n    " + err0.strip().replace("\n", "\n    "))
                lines.append(f"  {mode[0]} said:\n    " + err.strip().replace("\n", "\n    "))
    return lines, len(results)


with tempfile.TemporaryDirectory() as tmp:
    items = list(inputs())
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda it: check(*it, tmp), enumerate(items)))
bad = sum(1 for lines, _ in results if lines)
for lines, _ in results:
    for line in lines:
        print(line)
runs = sum(n for _, n in results)
print(f"parity: {len(items)} inputs, {runs} runs (2 modes, 3 for inputs that fail), {bad} with disagreements")
sys.exit(1 if bad or not items else 0)
