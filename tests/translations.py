#!/usr/bin/env python3
"""Every translation coconet makes of the examples and the test inputs, written to a folder.

    tests/translations.py BUILD OUT

For each annotated source (examples/, tests/golden/, tests/corpus/) it runs
BUILD/bin/coconet as each of the file's RUN lines does (the ones that write to
stdout; --verify and file outputs left out) and, for the file and every set
of -D flags its RUN lines name, in four modes: the CUDA output, --target=host,
--explain and --dump=ir. OUT/<file>/<n> holds the command, the exit status,
stdout and stderr. Two builds translate the same when `diff -r OUT1 OUT2` is empty:
the check for a change that must not change a translation (a move, a rename).
"""
import concurrent.futures
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODES = ([], ["--target=host"], ["--explain"], ["--dump=ir"])
SKIP = re.compile(r"%t|--verify|(^|\s)(-i|-o|-MF|-MD|-p)(\s|$)")


def sources():
    found = glob.glob(os.path.join(ROOT, "examples", "*", "*.cu"))
    for folder in ("golden", "corpus"):
        for path in glob.glob(os.path.join(ROOT, "tests", folder, "**", "*.cu*"), recursive=True):
            if "/Inputs/" not in path:
                found.append(path)
    return sorted(found)


def commands(path, coconet, mpiflags):
    text = open(path, errors="replace").read()
    runs = [m.group(1) for m in re.finditer(r"RUN:\s*(.*)", text)]
    cmds, defines = [], {()}
    for run in runs:
        if "%coconet " not in run.replace("%coconet-cc", ""):
            continue
        line = run.split("%coconet ", 1)[1]
        line = re.split(r"\s\|\s|\s\d?>|\s&&\s|\s;\s", " " + line + " ")[0]
        defines.add(tuple(sorted(re.findall(r"-D\w+(?:=\S+)?", line))))
        if SKIP.search(line):
            continue
        line = (line.replace("%s", path).replace("%inputs", os.path.join(ROOT, "tests", "golden", "Inputs"))
                .replace("%mpiflags", mpiflags).replace("%root", ROOT))
        if "%" in line:
            continue
        cmds.append([coconet] + shlex.split(line))
    flags = ["-I" + os.path.dirname(path)] + shlex.split(mpiflags)
    for d in sorted(defines):
        for mode in MODES:
            cmds.append([coconet] + mode + [path, "--"] + flags + list(d))
    return cmds


def run(job):
    out_dir, n, cmd = job
    env = dict(os.environ, COCONET_COLOR="0")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=300, cwd="/tmp", env=env)
        rc, stdout, stderr = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, stdout, stderr = "timeout", "", ""
    with open(os.path.join(out_dir, str(n)), "w") as f:
        f.write("$ %s\nexit %s\n--- stdout\n%s--- stderr\n%s" % (shlex.join(cmd[1:]), rc, stdout, stderr))


def main():
    build, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    coconet = os.path.join(build, "bin", "coconet")
    mpiflags = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True).stdout.strip()
    jobs = []
    for path in sources():
        out_dir = os.path.join(out, os.path.relpath(path, ROOT))
        os.makedirs(out_dir, exist_ok=True)
        jobs += [(out_dir, n, cmd) for n, cmd in enumerate(commands(path, coconet, mpiflags))]
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as pool:
        list(pool.map(run, jobs))
    print("%d translations of %d files in %s" % (len(jobs), len(sources()), out))


if __name__ == "__main__":
    main()
