#!/usr/bin/env bash
# run.sh BIN FILE.md...: the documentation's console sessions, run as written.
#
# A fenced code block that directly follows a line `<!-- doc-test -->` is a
# console session:
#
#   $ COMMAND            a command (a line ending in '\' continues on the next)
#   OUTPUT LINES         what it prints, standard output and error together
#   ...                  alone on a line: any number of lines (none included)
#
# A command must exit 0, unless it ends with the comment `# exit status N`.
#
# Each command runs with bash in a scratch directory that looks like the
# repository root: its top-level files and folders are linked there, and
# build/bin is BIN (so build/bin/coconet is the coconet under test, also for
# SANITIZE=1 builds); files the commands write land in the scratch directory.
# Commands of one file share that directory, in order. A command that starts
# with `mpirun` runs as $RUN_ENV $MPIRUN ... (runtime/host/host.mk's
# HOST_RUN_ENV and HOST_MPIRUN: --oversubscribe, and --allow-run-as-root as
# root), without the --oversubscribe and --allow-run-as-root it shows. Every command must exit with its status and print what the block
# shows, line for line (blanks at line ends ignored). Prints one line per command and a
# summary; exits 1 when any command failed or no session was found.
set -u
if [ $# -lt 2 ]; then
  echo "usage: run.sh BIN FILE.md..." >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 - "$root" "$@" <<'PY'
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

root, bindir, files = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3:]
MARK = "<!-- doc-test -->"
mpirun = os.environ.get("MPIRUN") or "mpirun --oversubscribe"
run_env = os.environ.get("RUN_ENV") or ""


def sessions(path):
    """(line number, [(command, [expected lines])]) for each marked block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() != MARK:
            i += 1
            continue
        i += 1
        if i >= len(lines) or not lines[i].startswith("```"):
            sys.exit(f"{path}:{i}: '{MARK}' must be followed by a fenced code block")
        start, i = i + 1, i + 1
        cmds = []
        while i < len(lines) and not lines[i].startswith("```"):
            line = lines[i]
            if line.startswith("$ "):
                cmd = line[2:]
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd[:-1] + " " + lines[i].strip()
                cmds.append((cmd, []))
            elif cmds:
                cmds[-1][1].append(line)
            elif line.strip():
                sys.exit(f"{path}:{i + 1}: a doc-test block must start with '$ COMMAND'")
            i += 1
        out.append((start, cmds))
        i += 1
    return out


def matches(want, got):
    """want (with '...' lines) matches got, line for line."""
    want = [w.rstrip() for w in want]
    got = [g.rstrip() for g in got]
    while want and want[-1] == "":
        want.pop()
    while got and got[-1] == "":
        got.pop()
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[i, j]
        if i == len(want):
            r = j == len(got)
        elif want[i] == "...":
            r = any(m(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and want[i] == got[j] and m(i + 1, j + 1)
        memo[i, j] = r
        return r

    return m(0, 0)


def scratch():
    d = tempfile.mkdtemp(prefix="coconet-doctest.")
    for name in os.listdir(root):
        if name in (".git", "build"):
            continue
        os.symlink(os.path.join(root, name), os.path.join(d, name))
    os.makedirs(os.path.join(d, "build"))
    os.symlink(bindir, os.path.join(d, "build", "bin"))
    return d


env = dict(os.environ, COCONET_COLOR="0", LC_ALL="C")
passed = failed = 0
for path in files:
    found = sessions(os.path.join(root, path))
    if not found:
        print(f"doc-test: FAIL {path}: no '{MARK}' session")
        failed += 1
        continue
    d = scratch()
    try:
        for start, cmds in found:
            for cmd, want in cmds:
                run = cmd
                status = re.search(r"#\s*exit status (\d+)\s*$", cmd)
                status = int(status.group(1)) if status else 0
                if re.match(r"mpirun\s", cmd):
                    # The flags the docs show for root and small machines are $MPIRUN's already.
                    rest = re.sub(r"\s--(oversubscribe|allow-run-as-root)(?=\s)", "", cmd[len("mpirun"):])
                    run = f"{run_env} {mpirun} {rest.lstrip()}"
                p = subprocess.run(["bash", "-c", run], cwd=d, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                got = p.stdout.decode("utf-8", "replace").split("\n")
                if p.returncode == status and matches(want, got):
                    print(f"doc-test: ok   {path}:{start}: $ {cmd}")
                    passed += 1
                    continue
                failed += 1
                print(f"doc-test: FAIL {path}:{start}: $ {cmd}")
                if p.returncode != status:
                    print(f"  exit status {p.returncode}, expected {status}")
                diff = difflib.unified_diff([w.rstrip() for w in want], [g.rstrip() for g in got],
                                            "shown", "printed", lineterm="", n=2)
                for line in diff:
                    print("  " + line)
    finally:
        shutil.rmtree(d, ignore_errors=True)
print(f"doc-test: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 and passed > 0 else 1)
PY
