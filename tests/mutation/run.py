#!/usr/bin/env python3
"""Mutation smoke test of the analysis: coconet never crashes.

run.py COCONET OUTDIR [--mutants N] [--seed S]

Takes annotated files (the examples, the tutorial's, the legality tests),
mutates the bodies of their kernels and device helpers (a token deleted,
duplicated or replaced by another token of the file; an operator swapped; a
call renamed to another math function), and runs `coconet --verify=ir:2` on each
mutant (the whole translation, then the interpreter). It must exit 0 or 1,
and 1 only with a located diagnostic; a crash, an internal error (exit 3) or a hang (60 s)
fails, and the mutant is kept in OUTDIR with its seed. Ends with the
'N passed, N failed' line (a mutant is one test).
"""
import argparse
import os
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ap = argparse.ArgumentParser()
ap.add_argument("coconet")
ap.add_argument("outdir")
ap.add_argument("--mutants", type=int, default=200)
ap.add_argument("--seed", type=int, default=1)
opt = ap.parse_args()
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.makedirs(opt.outdir, exist_ok=True)
mpi = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True).stdout.split()

SOURCES = [("examples/adam/adam.cu", []), ("examples/adamw/adamw.cu", []), ("examples/megatron/row_linear.cu", []),
           ("docs/examples/sgd.cu", []), ("tests/golden/legality/per-rank.cu", ["-DCASE_BIAS", "-DDECLARED"]),
           ("tests/golden/legality/coverage.cu", ["-DCASE_FORMS"]),
           ("tests/golden/legality/effects.cu", ["-DCASE_ONCE"]),
           ("tests/golden/codegen/Inputs/fusion.cu", []), ("tests/golden/codegen/Inputs/tail.cu", []),
           ("tests/corpus/templates.cu", []), ("tests/corpus/macros.cu", []),
           ("tests/corpus/math-intrinsics.cu", []), ("tests/corpus/count-expressions.cu", []),
           ("tests/corpus/control-flow.cu", []), ("tests/corpus/stochastic-rounding.cu", []),
           ("tests/corpus/optional-pointers.cu", []), ("tests/corpus/sgd-nesterov.cu", []),
           ("tests/corpus/vector-access.cu", []), ("tests/corpus/rowwise.cu", []),
           ("tests/corpus/reductions.cu", []), ("examples/tp_norm/tp_norm.cu", []),
           ("tests/corpus/rowwise-warps.cu", []), ("tests/corpus/block-sums.cu", []),
           ("tests/corpus/rowwise-launch-forms.cu", [])]
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+\.?\d*f?|==|!=|<=|>=|&&|\|\||<<|>>|[-+*/%<>=!&|^~?:;,.()\[\]{}]")
MATH = ["sqrtf", "rsqrtf", "expf", "__expf", "logf", "tanhf", "fabsf", "fmaxf", "fminf", "powf", "fmaf", "erff",
        "__ldg", "min", "max", "atomicAdd", "__syncthreads", "__shfl_xor_sync", "curand_uniform", "__hadd2",
        "__hmul2", "__hfma2", "make_float4", "__half22float2", "__low2float"]
OPS = ["+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "&&", "||", "&", "|", "^", "<<", ">>", "=", "+=", "?"]


def kernel_spans(text):
    """(begin, end) offsets of the bodies of __global__ and __device__ functions."""
    spans = []
    for m in re.finditer(r"__(global|device)__[^;{]*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        spans.append((m.end(), i - 1))
    return spans


def mutate(text, rng):
    spans = kernel_spans(text)
    if not spans:
        return text
    b, e = rng.choice(spans)
    toks = [m for m in TOKEN.finditer(text, b, e)]
    if not toks:
        return text
    t = rng.choice(toks)
    k = rng.random()
    if k < 0.2:
        new = ""
    elif k < 0.35:
        new = t.group(0) + " " + t.group(0)
    elif k < 0.55:
        new = rng.choice(OPS)
    elif k < 0.75 and re.match(r"[A-Za-z_]", t.group(0)):
        new = rng.choice(MATH)
    else:
        new = rng.choice(toks).group(0)
    return text[:t.start()] + new + text[t.end():]


def one(i):
    rng = random.Random(opt.seed * 1000003 + i)
    src, flags = SOURCES[i % len(SOURCES)]
    text = open(os.path.join(root, src)).read()
    for _ in range(rng.randint(1, 3)):
        text = mutate(text, rng)
    path = os.path.join(opt.outdir, f"mutant_{opt.seed}_{i}.cu")
    open(path, "w").write(text)
    inc = ["-I" + os.path.join(root, os.path.dirname(src))]
    for mode in (["--verify=ir:2"],):
        try:
            p = subprocess.run([opt.coconet] + mode + [path, "--"] + mpi + inc + flags, capture_output=True, text=True,
                               timeout=60, env=dict(os.environ, COCONET_COLOR="0"))
        except subprocess.TimeoutExpired:
            return f"mutation: FAIL {path} ({src}): {mode[0]} hung (60 s)"
        if p.returncode not in (0, 1) or "internal error" in p.stderr:
            return f"mutation: FAIL {path} ({src}): {mode[0]} exited {p.returncode}\n{p.stderr[-2000:]}"
        if p.returncode == 1 and not re.search(r"^[^\s:]+:\d+:\d+: error: |^coconet: error: ", p.stderr, re.M):
            return f"mutation: FAIL {path} ({src}): {mode[0]} exited 1 without a located error\n{p.stderr[-2000:]}"
    os.remove(path)
    return None


with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = list(pool.map(one, range(opt.mutants)))
failed = [r for r in results if r]
for r in failed:
    print(r)
print(f"mutation: {opt.mutants} mutants of {len(SOURCES)} files (seed {opt.seed}), each through --verify=ir:2")
print(f"{opt.mutants - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
