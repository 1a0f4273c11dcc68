#!/usr/bin/env python3
"""The differential random-program test.

run.py COCONET OUTDIR [--files N] [--regions R] [--seed S] [--seconds T] [--ranks N]

Generates files of random regions (gen.py), and for each: translates it;
every refusal must be a located diagnostic (FILE:LINE:COL: error: inside the
refused region's function, exit status 1, no crash) and the region is then
dropped (-DSKIP_k) until the rest translates; the rest must run equal as
written and as scheduled on the host backend for 1..N ranks (coconet
--verify=N). Seeds are printed; a failure names the seed and keeps the
file in OUTDIR. With --seconds T it generates files until T seconds have gone
(make soak). Ends with the 'N passed, N failed' line (a file is one test).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("coconet")
ap.add_argument("outdir")
ap.add_argument("--files", type=int, default=10)
ap.add_argument("--regions", type=int, default=24)
ap.add_argument("--seed", type=int, default=int(os.environ.get("COCONET_DIFF_SEED", "1")))
ap.add_argument("--seconds", type=float, default=0)
ap.add_argument("--ranks", type=int, default=4)
opt = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(opt.outdir, exist_ok=True)
env = dict(os.environ, COCONET_COLOR="0")
LOC = re.compile(r"^(.*?):(\d+):(\d+): (error|note): (.*)$")

totals = {"files": 0, "regions": 0, "refused": 0, "ran": 0, "failed": 0}
reasons = {}


def one(seed):
    path = os.path.join(opt.outdir, f"diff_{seed}.cu")
    spans = json.loads(subprocess.run([sys.executable, os.path.join(here, "gen.py"), str(seed), str(opt.regions), path],
                                      capture_output=True, text=True, check=True).stdout)
    spans = {int(k): v for k, v in spans.items()}
    skip = set()
    problems = []
    while len(skip) < len(spans):
        flags = [f"-DSKIP_{k}" for k in sorted(skip)]
        p = subprocess.run([opt.coconet, path, "-o", os.devnull, "--"] + flags, capture_output=True, text=True, env=env)
        if p.returncode == 0:
            break
        if p.returncode != 1:
            problems.append(f"coconet exited {p.returncode} (a crash?):\n{p.stderr}")
            return problems, 0, 0
        hit = set()
        for line in p.stderr.splitlines():
            m = LOC.match(line)
            if not m or m.group(4) != "error":
                continue
            ln = int(m.group(2))
            region = [k for k, (a, b) in spans.items() if a <= ln <= b]
            if not region or not os.path.samefile(m.group(1), path):
                problems.append(f"diagnostic outside any region: {line}")
                continue
            if region[0] in hit:
                continue  # what follows from the region's first error
            hit.add(region[0])
            reason = re.sub(r"'[^']*'", "'...'", m.group(5))
            reason = re.sub(r"\d+", "N", reason)[:110]
            reasons[reason] = reasons.get(reason, 0) + 1
        if not hit:
            problems.append("exit 1 without a located error:\n" + p.stderr)
            return problems, len(skip), 0
        skip |= hit - skip
    ran = len(spans) - len(skip)
    if ran:
        flags = [f"-DSKIP_{k}" for k in sorted(skip)]
        p = subprocess.run([opt.coconet, f"--verify={opt.ranks}", path, "--"] + flags, capture_output=True,
                           text=True, env=env)
        oks = len(re.findall(r"^verify r\d+: ok", p.stdout, re.M))
        if p.returncode != 0 or oks != ran:
            problems.append(f"--verify exited {p.returncode}, {oks} of {ran} regions ok:\n{p.stdout}\n{p.stderr}")
    return problems, len(skip), ran


start = time.time()
seed = opt.seed
passed = failed = 0
while True:
    if opt.seconds:
        if time.time() - start >= opt.seconds:
            break
    elif totals["files"] >= opt.files:
        break
    problems, refused, ran = one(seed)
    totals["files"] += 1
    totals["regions"] += opt.regions
    totals["refused"] += refused
    totals["ran"] += ran
    if problems:
        failed += 1
        print(f"differential: FAIL seed {seed} ({os.path.join(opt.outdir, f'diff_{seed}.cu')}):")
        for pr in problems:
            print("  " + pr.replace("\n", "\n  "))
    else:
        passed += 1
        os.remove(os.path.join(opt.outdir, f"diff_{seed}.cu"))
        print(f"differential: ok seed {seed}: {opt.regions} regions, {refused} refused, {ran} run equal on 1..{opt.ranks} ranks")
    sys.stdout.flush()
    seed += 1
print(f"differential: {totals['files']} files, {totals['regions']} regions: {totals['refused']} refused with a located "
      f"diagnostic, {totals['ran']} translated and run equal ({time.time() - start:.0f} s)")
for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
    print(f"  first reason {n:4d}x: {reason}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or passed == 0 else 0)
