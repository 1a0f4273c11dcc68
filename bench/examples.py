#!/usr/bin/env python3
"""examples.py: helpers shared by mk/demo.sh, bench/host.sh and bench/gpu/prepare.sh.

  examples.py list [gpu]                   the examples of bench/examples.conf (or of the file
                                           $BENCH_EXAMPLES_CONF names), one per line,
                                           fields separated by tabs (name source tolerance
                                           sizes demo bench gpu); with gpu, those that run on
                                           one GPU only (gpu field not '-')
  examples.py model SIZES ARGS NP          a --model=FILE for coconet --explain: nranks and
                                           the size variables of the run (defaults otherwise);
                                           SIZES may set np, the ranks of one collective's group
                                           (np=np//2: two pipeline stages)
  examples.py traffic IRDUMP SIZES ARGS NP bytes moved per rank and step, computed from the
                                           region's IR (coconet --dump=ir), as written and as
                                           scheduled (key=value lines, below)
  examples.py predicted EXPLAIN            "WRITTEN_US SCHEDULED_US RATIO" from --explain's
                                           'predicted:' lines (summed over the regions)
  examples.py stats                        reads lines "VARIANT MS" on stdin, prints
                                           "median_orig median_sched ratio n_orig n_sched"

The traffic model (what bench/RESULTS.md calls "computed from the schedule"):
  - collectives, ring algorithms, bytes each rank sends (and receives) for a buffer of
    B bytes over N ranks: AllReduce 2 (N-1)/N B; ReduceScatter and AllGather (N-1)/N B;
    Broadcast and Reduce B; Send/Recv B; a pipeline Send B/N, its Recv B/N and the
    AllGather of the rest, (N-1)/N B. The same formulas as the cost model
    (translator/ir/cost.c), so the figures and --explain agree.
  - pointwise kernels: every tensor the kernel reads at [i] and every tensor it writes
    (at [i]) moves its element size once per element the rank computes (this rank's
    slice after `reorder`, plus the tail); a tensor read at any other index (bias[i %
    hidden]) moves at most its own size once. GEMMs are not counted (a schedule leaves
    their work unchanged; overlap only chunks it).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONF = os.environ.get("BENCH_EXAMPLES_CONF") or os.path.join(ROOT, "bench", "examples.conf")
FIELDS = ["name", "source", "tolerance", "sizes", "demo", "bench", "gpu"]


def load_conf(path=CONF):
    out = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != len(FIELDS):
                sys.exit(f"{path}:{lineno}: expected {len(FIELDS)} fields separated by '|', got {len(parts)}")
            out.append(dict(zip(FIELDS, parts)))
    return out


def parse_args(args):
    """'-n 1000 -steps 5' -> {'n': 1000, 'steps': 5}."""
    words = args.split()
    d = {}
    for i in range(0, len(words) - 1, 2):
        key, val = words[i].lstrip("-"), words[i + 1]
        try:
            d[key] = int(val)
        except ValueError:
            try:
                d[key] = float(val)
            except ValueError:
                d[key] = val
    return d


def size_values(sizes, args, np_):
    env = dict(parse_args(args))
    env["np"] = int(np_)
    vals = {}
    for item in sizes.split():
        var, _, expr = item.partition("=")
        vals[var] = eval(expr, {"__builtins__": {}}, env)  # the conf is ours
    return vals


# ---------------------------------------------------------------------------
# --dump=ir

def esize(dtype):
    m = re.search(r"(\d+)", dtype)
    if dtype.startswith("fp8") or dtype in ("e4m3", "e5m2"):
        return 1
    return int(m.group(1)) // 8 if m else 4


def eval_count(text, vals):
    total = 1
    for factor in text.split("*"):
        factor = factor.strip()
        if re.fullmatch(r"\d+", factor):
            total *= int(factor)
        elif factor in vals:
            total *= vals[factor]
        else:
            raise SystemExit(f"examples.py: size variable '{factor}' has no value: add it to the sizes "
                             f"field of bench/examples.conf")
    return total


OP_RE = re.compile(r"^  (?:\(?(?P<outs>[^=]*?)\)? = )?(?P<op>[\w.]+)\((?P<args>.*)\)\[(?P<count>[^\]]*)\]"
                   r"(?P<span>(?: @\S+)*)(?: fuse=\d+)?  # ")


def parse_ir(text):
    """-> list of regions: {name, tensors: {name: (esize, count_text)},
    written: [ops], scheduled: [ops], bodies: {kernel: body lines}}."""
    regions = []
    cur = None
    section = None
    last_op = None
    for line in text.splitlines():
        m = re.match(r"^region (\S+) \(", line)
        if m:
            cur = {"name": m.group(1), "tensors": {}, "written": [], "scheduled": [], "bodies": {}}
            regions.append(cur)
            section = "written"
            continue
        m = re.match(r"^scheduled (\S+):", line)
        if m:
            cur = next((r for r in regions if r["name"] == m.group(1)), cur)
            section = "scheduled"
            continue
        if cur is None:
            continue
        m = re.match(r"^  tensor (\S+) : (\w+)\[([^\]]*)\]", line)
        if m:
            cur["tensors"][m.group(1)] = (esize(m.group(2)), m.group(3))
            continue
        if line.startswith("      ") and last_op is not None and last_op["kind"] == "pointwise":
            if section == "written":
                cur["bodies"].setdefault(last_op["op"], []).append(line.strip())
            continue
        m = OP_RE.match(line)
        if m:
            span = m.group("span").strip()
            chunk = re.search(r"@chunk\((\d+)/(\d+)\)\.?(\w*)", span)
            if chunk:
                nchunks, part = int(chunk.group(2)), chunk.group(3) or "all"
            else:
                nchunks, part = 1, span.lstrip("@") or "all"
            opname = m.group("op")
            kind = ("collective" if opname in ("AllReduce", "ReduceScatter", "AllGather", "Broadcast", "Reduce",
                                               "Send", "Recv")
                    else "gemm" if " x " in m.group("count")
                    else "other" if opname in ("copy", "memset") or opname.startswith("event")
                    else "pointwise")
            args = m.group("args").split(";")[0]
            first = args.split(",")[-1].strip()  # a collective's input follows its reduction
            count = re.sub(r"^i < ", "", m.group("count"))
            last_op = {"op": opname, "kind": kind, "count": count, "part": part, "nchunks": nchunks,
                       "input": first, "pipeline": "pipeline=" in m.group("args")}
            (cur["written"] if section == "written" else cur["scheduled"]).append(last_op)
            continue
        last_op = None if not line.startswith("      ") else last_op
    return regions


def base_tensor(ref, tensors):
    if ref in tensors:
        return ref
    m = re.fullmatch(r"(.*\d)_\d+", ref)
    if m and m.group(1) in tensors:
        return m.group(1)
    m = re.fullmatch(r"(.*?)\d+", ref)
    if m and m.group(1) in tensors:
        return m.group(1)
    return ref


def span_elems(count, part, nchunks, nranks):
    l = count / nchunks if nchunks > 1 else count
    s = float(int(l / nranks)) if l >= nranks else 0.0
    return {"all": l, "slice": s, "body": s * nranks, "tail": l - s * nranks}.get(part, l)


def body_traffic(body, tensors, vals):
    """(bytes per computed element, fixed bytes) of a kernel body."""
    per_elem, fixed = 0, 0
    seen_i, seen_other = set(), set()
    for line in body:
        lhs, _, rhs = line.partition(" = ")
        m = re.fullmatch(r"(\w[\w.]*)\[i\]", lhs)
        if m:
            seen_i.add(("w", m.group(1)))
        for name, idx in re.findall(r"([A-Za-z_][\w.]*)\[([^\[\]]*)\]", rhs):
            if idx.strip() == "i":
                seen_i.add(("r", name))
            else:
                seen_other.add(name)
    for _, name in seen_i:
        per_elem += tensors.get(name, (4, "1"))[0]
    for name in seen_other - {n for _, n in seen_i}:
        es, cnt = tensors.get(name, (4, "1"))
        fixed += es * eval_count(cnt, vals)
    return per_elem, fixed


def traffic(text, vals, nranks):
    """-> dict of per-rank bytes for one step: comm_orig, comm_sched, mem_orig, mem_sched,
    and kernels: {(variant, kernel): bytes}."""
    res = {"comm_orig": 0.0, "comm_sched": 0.0, "mem_orig": 0.0, "mem_sched": 0.0}
    kernels = {}
    N = nranks
    for r in parse_ir(text):
        tensors = r["tensors"]
        for variant, ops in (("orig", r["written"]), ("sched", r["scheduled"] or r["written"])):
            for op in ops:
                count = eval_count(op["count"], vals) if op["kind"] in ("collective", "pointwise") else 0
                e = span_elems(count, op["part"], op["nchunks"], N)
                if op["kind"] == "collective":
                    es = tensors.get(base_tensor(op["input"], tensors), (4, "1"))[0]
                    if N <= 1 and op["op"] not in ("Send", "Recv"):
                        b = 0.0
                    elif op["op"] == "AllReduce":
                        b = 2.0 * (N - 1) / N * e * es
                    elif op["op"] in ("ReduceScatter", "AllGather"):
                        b = (N - 1) / N * (e * N if op["part"] == "all" else e) * es
                    elif op["pipeline"]:
                        b = (e / N + ((N - 1) / N * e if op["op"] == "Recv" else 0)) * es
                    else:
                        b = e * es
                    res["comm_" + variant] += b
                elif op["kind"] == "pointwise":
                    body = r["bodies"].get(op["op"], [])
                    per_elem, fixed = body_traffic(body, tensors, vals)
                    b = e * per_elem + (min(fixed, e * per_elem) if e > 0 else 0)
                    res["mem_" + variant] += b
                    kernels[(variant, op["op"])] = kernels.get((variant, op["op"]), 0.0) + b
    res["kernels"] = kernels
    return res


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd = argv[1]
    if cmd == "list":
        for ex in load_conf():
            if argv[2:] != ["gpu"] or ex["gpu"] != "-":
                print("\t".join(ex[f] for f in FIELDS))
    elif cmd == "model":
        sizes, args, np_ = argv[2:5]
        vals = size_values(sizes, args, np_)
        print(f"nranks = {int(vals.pop('np', np_))}")
        for var, val in vals.items():
            print(f"size.{var} = {val}")
    elif cmd == "traffic":
        irfile, sizes, args, np_ = argv[2:6]
        vals = size_values(sizes, args, np_)
        group = int(vals.pop("np", np_))
        with open(irfile) as f:
            res = traffic(f.read(), vals, group)
        for k in ("comm_orig", "comm_sched", "mem_orig", "mem_sched"):
            print(f"{k}={res[k]:.0f}")
        for (variant, kernel), b in sorted(res["kernels"].items()):
            print(f"kernel_{variant}_{kernel}={b:.0f}")
    elif cmd == "predicted":
        w = s = 0.0
        with open(argv[2]) as f:
            for m in re.finditer(r"predicted: ([\d.]+) us as written, ([\d.]+) us scheduled", f.read()):
                w += float(m.group(1))
                s += float(m.group(2))
        print(f"{w:.1f} {s:.1f} {w / s:.2f}" if s > 0 else "- - -")
    elif cmd == "stats":
        times = {"orig": [], "sched": []}
        for line in sys.stdin:
            parts = line.split()
            if len(parts) == 2 and parts[0] in times:
                times[parts[0]].append(float(parts[1]))

        def median(xs):
            xs = sorted(xs)
            n = len(xs)
            return (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2) if n else float("nan")
        a, b = median(times["orig"]), median(times["sched"])
        ratio = a / b if b > 0 else float("nan")
        print(f"{a:.3f} {b:.3f} {ratio:.2f} {len(times['orig'])} {len(times['sched'])}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
