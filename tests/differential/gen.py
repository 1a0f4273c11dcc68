#!/usr/bin/env python3
"""Random CUDA + NCCL programs for the differential test (tests/differential/run.py).

gen.py SEED REGIONS OUT.cu writes one file with REGIONS regions, each in a host
function of its own, and prints a JSON map {region: [first line, last line]}.
Each region: an AllReduce (in place or not, f32/f16/bf16, sometimes in an NCCL
group) and one or two pointwise kernels (guarded or grid-stride, launched on
grids that cover the count or not, random bodies over the reduced buffer, a
buffer local to each rank, one declared replicated, scalars and the index),
sometimes an event between them or a second stream, sometimes an argument
with side effects (also one that changes a scalar an earlier launch reads),
C++ float overloads (fma, sqrt, tanh) and values keyed by where the thread is
(threadIdx.x, blockIdx.x), buffers passed through (const void *) casts, the
second launch inside an `if`, the first launch through a template host wrapper
(dim3 locals, sometimes called through a second wrapper), the AllReduce through
a template wrapper (void casts, the datatype in a local, a group of its own), a
second, independent AllReduce in the group, and a random set of clauses. About one region in four is
row-wise instead: an AllReduce of rows x h elements and a kernel that reduces
each row (a sum of squares, a largest magnitude or a sum; over a block with a
shared-memory tree, over a block in a grid-stride loop over the rows, or over a
warp with shuffles) and scales it, sometimes adding a residual it writes back,
a column weight, a per-row output, an elementwise bias kernel before it and an
elementwise kernel after it that reads the per-row output, with `split
reorder` and, half the time, `fuse`. About one region in ten is a multi-tensor
launch (slice_region). A region's pragma is inside
`#ifndef SKIP_<k>`, so that run.py can drop the regions coconet refuses and
still translate the others.
"""
import json
import random
import sys

seed, nregions, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(seed)

TYPES = {
    "f32": ("float", "ncclFloat", lambda e: e, lambda e: e),
    "f16": ("__half", "ncclHalf", lambda e: f"__half2float({e})", lambda e: f"__float2half({e})"),
    "bf16": ("__nv_bfloat16", "ncclBfloat16", lambda e: f"__bfloat162float({e})", lambda e: f"__float2bfloat16({e})"),
}


def expr(depth, leaves):
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(leaves)
    k = rng.random()
    a, b = expr(depth - 1, leaves), expr(depth - 1, leaves)
    if k < 0.45:
        return f"({a} {rng.choice(['+', '-', '*'])} {b})"
    if k < 0.6:
        return f"fmaxf({a}, {b})"
    if k < 0.7:
        return f"fminf({a}, {b})"
    if k < 0.8:
        return f"fabsf({a})"
    if k < 0.85:
        return f"({a} > {b} ? {a} : 0.5f * {b})"
    if k < 0.9:
        return rng.choice([f"fma({a}, {b}, 0.5f)", f"sqrt(fabsf({a}) + 1.0f)", f"tanh({a})"])
    return f"(0.25f * {a})"


def kernel(name, t, guarded, leaves_in, out_name, update):
    ctype, _, load, store = TYPES[t]
    reads = {"x": f"{load('x[i]')}", "l": f"{load('l[i]')}", "r": f"{load('r[i]')}", "a": "a",
             "i": "(float)(i % 7)", "c": rng.choice(["1.5f", "-0.75f", "2.0f"]),
             "t": "(float)((threadIdx.x * 7u + blockIdx.x * 3u) % 5u)"}
    leaves = [reads[k] for k in leaves_in]
    body = expr(3, leaves)
    if "x[i]" not in body:  # every kernel consumes the reduced buffer
        body = f"({reads['x']} {rng.choice(['+', '*', '-'])} {body})"
    if update:
        stmt = f"{out_name}[i] = {store(load(out_name + '[i]') + ' - a * ' + body)};"
    else:
        stmt = f"{out_name}[i] = {store(body)};"
    params = f"{ctype} *{out_name}, const {ctype} *x, const {ctype} *l, const {ctype} *r, float a, int n"
    if out_name == "x":
        params = f"{ctype} *x, const {ctype} *l, const {ctype} *r, float a, int n"
    if guarded:
        loop = f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) {{\n    {stmt}\n  }}\n"
    else:
        loop = f"  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{\n    {stmt}\n  }}\n"
    used = {b for b in ("l", "r") if f"{b}[i]" in body}
    return f"__global__ void {name}({params}) {{\n{loop}}}\n", used


def launch_config(guarded):
    if guarded:
        return rng.choice(["(n + 255) / 256, 256", "(n + 127) / 128, 128", "n / 64 + 1, 64", "(n - 1) / 32 + 1, 32",
                           "(n + 63) / 64, 64", "n, 1", "1, 256", "(n + 255) / 256, 128"])
    return rng.choice(["1, 32", "3, 64", "8, 128", "(n + 255) / 256, 256"])


ROW_OPS = {  # the row's reduction: (accumulate, combine a and b, scale from the total t)
    "sumsq": ("acc += v * v", "{a} + {b}", "rsqrtf({t} / (float)h + 1e-5f)"),
    "maxabs": ("acc = fmaxf(acc, fabsf(v))", "fmaxf({a}, {b})", "1.0f / ({t} + 1.0f)"),
    "sum": ("acc += v", "{a} + {b}", "1.0f / (1.0f + fabsf({t}) / (float)h)"),
}


def row_kernel(name, t, style, op, residual, gamma, stat):
    """A row-wise kernel: out = (x [+ residual]) * scale(row) [* gamma[j]] + a."""
    ctype, _, load, store = TYPES[t]
    acc, comb, scale = ROW_OPS[op]
    params = [f"{ctype} *out"] + ([f"{ctype} *res"] if residual else []) + [f"const {ctype} *x"]
    params += ([f"const {ctype} *gam"] if gamma else []) + (["float *stat"] if stat else []) + ["int rows", "int h", "float a"]
    warp = style == "warp"
    row = "idx" if warp else "row"
    col0, step = ("lane", "32") if warp else ("threadIdx.x", "blockDim.x")
    v = f"{load(f'x[(size_t){row} * h + j]')}" + (f" + {load(f'res[(size_t){row} * h + j]')}" if residual else "")
    first = [f"    for (int j = {col0}; j < h; j += {step}) {{", f"      const float v = {v};"]
    if residual:
        first.append(f"      res[(size_t){row} * h + j] = {store('v')};")
    first += [f"      {acc};", "    }"]
    reread = f"{load(f'res[(size_t){row} * h + j]')}" if residual else f"{load(f'x[(size_t){row} * h + j]')}"
    outv = f"{reread} * scale" + (f" * {load('gam[j]')}" if gamma else "") + " + a"
    last = [f"    for (int j = {col0}; j < h; j += {step})", f"      out[(size_t){row} * h + j] = {store(outv)};"]
    lines = [f"__global__ void {name}({', '.join(params)}) {{"]
    if warp:
        lines += ["  const int lane = threadIdx.x % 32;", "  const int idx = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;",
                  "  if (idx >= rows) return;", "  {", "    float acc = 0.0f;"] + first
        lines += ["    for (int o = 16; o > 0; o >>= 1)",
                  "      acc = " + comb.format(a="acc", b="__shfl_xor_sync(0xffffffff, acc, o)") + ";",
                  "    const float scale = " + scale.format(t="acc") + ";"]
        if stat:
            lines.append("    if (lane == 0) stat[idx] = scale;")
        lines += last + ["  }"]
    else:
        lines.append("  __shared__ float red[256];")
        if style == "grid":
            lines.append("  for (int row = blockIdx.x; row < rows; row += gridDim.x) {")
        else:
            lines += ["  const int row = blockIdx.x;", "  if (row >= rows) return;", "  {"]
        lines += ["    float acc = 0.0f;"] + first
        lines += ["    red[threadIdx.x] = acc;", "    __syncthreads();", "    for (int s = blockDim.x / 2; s > 0; s >>= 1) {",
                  "      if ((int)threadIdx.x < s) red[threadIdx.x] = "
                  + comb.format(a="red[threadIdx.x]", b="red[threadIdx.x + s]") + ";",
                  "      __syncthreads();", "    }", "    const float scale = " + scale.format(t="red[0]") + ";",
                  "    __syncthreads();"]
        if stat:
            lines.append("    if (threadIdx.x == 0) stat[row] = scale;")
        lines += last + ["  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def row_region(k, out):
    """A row-wise region (see the module's docstring); returns its function's lines."""
    t = rng.choice(list(TYPES))
    ctype, nccl_type, load, store = TYPES[t]
    style = rng.choice(["block", "block", "grid", "warp"])
    op = rng.choice(list(ROW_OPS))
    residual, gamma, stat = rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.4
    bias, post = rng.random() < 0.25, stat and rng.random() < 0.5
    in_place = rng.random() < 0.7
    red = "g" if in_place else "gr"
    out.append(row_kernel(f"k{k}", t, style, op, residual, gamma, stat))
    if bias:
        out.append(f"__global__ void k{k}_bias({ctype} *x, const {ctype} *bias, int n, int h) {{\n"
                   f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   f"  if (i < n) x[i] = {store(load('x[i]') + ' + ' + load('bias[i % h]'))};\n}}\n")
    if post:
        out.append(f"__global__ void k{k}_post({ctype} *o, const float *stat, int n, int h) {{\n"
                   f"  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
                   f"    o[i] = {store(load('o[i]') + ' * (0.5f + stat[i / h])')};\n}}\n")
    clauses = ["split", "reorder"]
    rep = [b for b, on in (("res", residual), ("gam", gamma), ("bias", bias)) if on and rng.random() < 0.9]
    if rep:
        clauses.append("replicated(%s)" % ", ".join(rep))
    if in_place and rng.random() < 0.5:
        clauses.append("scratch(g)")
    if rng.random() < 0.5:
        clauses.append("fuse")
    block = rng.choice(["64", "128", "256"])
    if style == "block":
        config = f"rows, {block}"
    elif style == "grid":
        config = f"{rng.choice(['1', '3', '8'])}, {block}"
    else:
        block = rng.choice(["64", "128"])
        config = f"(rows * 32 + {block} - 1) / {block}, {block}"
    args = ["o"] + (["res"] if residual else []) + [red] + (["gam"] if gamma else []) + (["stat"] if stat else [])
    args += ["rows", "h", rng.choice(["a", "0.5f * a"])]
    body = [f"void region_{k}({ctype} *g, {ctype} *gr, {ctype} *o, {ctype} *res, const {ctype} *gam, "
            f"const {ctype} *bias, float *stat, float a, int rows, int h, ncclComm_t comm, cudaStream_t s) {{",
            f"#ifndef SKIP_{k}",
            f"#pragma coconet region name(r{k}) {' '.join(clauses)}",
            "#endif",
            "  {",
            f"    ncclAllReduce(g, {red}, rows * h, {nccl_type}, ncclSum, comm, s);"]
    if bias:
        body.append(f"    k{k}_bias<<<(rows * h + 127) / 128, 128, 0, s>>>({red}, bias, rows * h, h);")
    body.append(f"    k{k}<<<{config}, 0, s>>>({', '.join(args)});")
    if post:
        body.append(f"    k{k}_post<<<4, 128, 0, s>>>(o, stat, rows * h, h);")
    body += ["  }", "  (void)gr, (void)res, (void)gam, (void)bias, (void)stat;", "}"]
    return body


def slice_region(k, out):
    """A multi-tensor region: an AllReduce of layers x n elements and a kernel on a grid dim3(X, layers)
    whose blockIdx.y picks a layer: its buffers at blockIdx.y * n + i (written so, through an offset local
    or through a pointer to the layer), a per-layer scale [blockIdx.y], a bias the layers share [i],
    sometimes keyed by where the thread is; sometimes a step other than n (refused)."""
    t = rng.choice(list(TYPES))
    ctype, nccl_type, load, store = TYPES[t]
    form = rng.choice(["guard", "return", "stride"])
    style = rng.choice(["direct", "offset", "pointer"])
    update = rng.random() < 0.5
    bad_step = rng.random() < 0.1
    step = "m" if bad_step else "n"

    def at(buf):
        if style == "direct":
            return f"{buf}[(size_t)blockIdx.y * {step} + i]" if rng.random() < 0.5 else f"{buf}[i + blockIdx.y * {step}]"
        if style == "offset":
            return f"{buf}[off + i]"
        return f"{buf}l[i]"
    leaves = [load(at("x")), load(at("x")), "a", load("sc[blockIdx.y]"), load("bias[i]"), "(float)(i % 5)",
              "(float)((threadIdx.x * 7u + blockIdx.x * 3u + blockIdx.y) % 5u)"]
    body = expr(3, leaves)
    if at("x") not in body:
        body = f"({load(at('x'))} + {body})"
    value = f"{load(at('w'))} - a * {body}" if update else body
    stmt = f"{at('w')} = {store(value)};"
    lines = [f"__global__ void k{k}({ctype} *w, const {ctype} *x, const {ctype} *sc, const {ctype} *bias, float a, "
             f"int n, int m) {{"]
    pre = []
    if style == "offset":
        pre.append(f"  const size_t off = (size_t)blockIdx.y * {step};")
    if style == "pointer":
        pre += [f"  {ctype} *wl = w + blockIdx.y * {step};", f"  const {ctype} *xl = x + blockIdx.y * {step};"]
    if form == "guard":
        lines += pre + ["  int i = blockIdx.x * blockDim.x + threadIdx.x;", f"  if (i < n) {{ {stmt} }}"]
    elif form == "return":
        lines += ["  int i = blockIdx.x * blockDim.x + threadIdx.x;", "  if (i >= n) return;"] + pre + [f"  {stmt}"]
    else:
        lines += pre + ["  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)",
                        f"    {stmt}"]
    lines.append("}")
    out.append("\n".join(lines) + "\n")
    in_place = rng.random() < 0.6
    red = "g" if in_place else "gr"
    rep = (["w"] if update else []) + [b for b in ("sc", "bias") if f"{b}[" in body]
    clauses = ["split", "reorder"] + (["replicated(%s)" % ", ".join(rep)] if rep else [])
    if in_place and rng.random() < 0.4:
        clauses.append("scratch(g)")
    if not update and rng.random() < 0.3:
        clauses.append("shard(w)")
    grid = "(n + 127) / 128" if form != "stride" else rng.choice(["2", "(n + 255) / 256"])
    body = [f"void region_{k}({ctype} *g, {ctype} *gr, {ctype} *w, const {ctype} *sc, const {ctype} *bias, float a, "
            f"int n, int layers, ncclComm_t comm, cudaStream_t s) {{",
            f"#ifndef SKIP_{k}",
            f"#pragma coconet region name(r{k}) {' '.join(clauses)}",
            "#endif",
            "  {",
            f"    ncclAllReduce(g, {red}, layers * n, {nccl_type}, ncclSum, comm, s);",
            f"    k{k}<<<dim3({grid}, layers), 128, 0, s>>>(w, {red}, sc, bias, a, n, {'n + 1' if bad_step else 'n'});",
            "  }",
            "  (void)gr;",
            "}"]
    return body


out = ["// Generated by tests/differential/gen.py %d %d: random regions, each either refused with a" % (seed, nregions),
       "// located diagnostic or run equal as written and as scheduled (coconet --verify).",
       "#include <cuda_bf16.h>", "#include <cuda_fp16.h>", "#include <cuda_runtime.h>", "#include <nccl.h>", "",
       "static float next_scale(int &calls) { return 0.5f + 0.125f * (float)(++calls % 4); }", ""]
spans = {}
for k in range(nregions):
    if rng.random() < 0.1:
        # The span holds the kernel too: a multi-tensor refusal is located at the access it refuses.
        first = len("\n".join(out).split("\n")) + 1
        body = slice_region(k, out)
        out.extend(body)
        out.append("")
        spans[k] = [first, len("\n".join(out).split("\n")) - 1]
        continue
    if rng.random() < 0.25:
        body = row_region(k, out)
        first = len("\n".join(out).split("\n")) + 1
        out.extend(body)
        out.append("")
        spans[k] = [first, first + len(body) - 1]
        continue
    t = rng.choice(list(TYPES))
    ctype, nccl_type = TYPES[t][0], TYPES[t][1]
    in_place = rng.random() < 0.5
    into_x = in_place and rng.random() < 0.4       # the kernel writes the split buffer itself
    update = (not into_x) and rng.random() < 0.3   # w[i] = w[i] - a * f(...)
    guarded = rng.random() < 0.6
    leaves = rng.sample(["x", "l", "r", "a", "i", "c", "t"], rng.randint(2, 4))
    if "x" not in leaves:
        leaves.append("x")
    second = rng.random() < 0.25                   # a second kernel reading the first one's output
    kname = f"k{k}"
    target = "x" if into_x else ("w" if update else "o")
    text, read = kernel(kname, t, guarded, leaves, target, update)
    out.append(text)
    if second:
        text, read2 = kernel(f"k{k}b", t, rng.random() < 0.5, ["x", rng.choice(["r", "l", "a"])], "o2", False)
        out.append(text)
        read |= read2
    red = "g" if in_place else "gr"
    clauses = ["split"]
    if rng.random() < 0.85:
        clauses.append("reorder")
    rep = []
    if "r" in read and rng.random() < 0.8:
        rep.append("r")
    if "l" in read and rng.random() < 0.1:
        rep.append("l")  # a buffer that differs per rank declared replicated: the harness fills it the same
    if update and rng.random() < 0.8:
        rep.append("w")
    if rep:
        clauses.append("replicated(%s)" % ", ".join(rep))
    if in_place and not into_x and rng.random() < 0.4:
        clauses.append("scratch(g)")
    if target == "o" and rng.random() < 0.2:
        clauses.append("shard(o)")
    stream2 = rng.random() < 0.08
    event = rng.random() < 0.1
    group = rng.random() < 0.08
    effect = rng.random() < 0.15
    casts = rng.random() < 0.1            # the buffers through (const void *) and (void *)
    later_effect = second and not effect and rng.random() < 0.3  # the second launch changes a, the first reads it
    in_if = second and rng.random() < 0.15  # the second launch inside an if: a statement coconet does not see into
    wrapped = rng.random() < 0.2           # the first launch through a template host wrapper
    group2 = group and rng.random() < 0.5  # a second AllReduce in the group, on a buffer no kernel reads
    nccl_wrapped = not group and rng.random() < 0.15  # the AllReduce through a template wrapper
    scale = "next_scale(calls)" if effect else rng.choice(["a", "0.5f * a", "a + 1.0f"])
    first = len("\n".join(out).split("\n")) + 1
    body = [f"void region_{k}({ctype} *g, {ctype} *gr, {ctype} *o, {ctype} *o2, {ctype} *w, const {ctype} *l, "
            f"const {ctype} *r, {ctype} *h, float a, int n, ncclComm_t comm, cudaStream_t s, cudaStream_t s2, "
            f"cudaEvent_t ev) {{",
            "  int calls = 0;",
            f"#ifndef SKIP_{k}",
            f"#pragma coconet region name(r{k}) {' '.join(clauses)}",
            "#endif",
            "  {"]
    if group:
        body.append("    ncclGroupStart();")
    if nccl_wrapped:
        # template <typename T> void allreduce_k(const T *in, T *out, int count, ncclComm_t c, cudaStream_t st):
        # void casts, the datatype in a local, sometimes a group of its own.
        grouped = rng.random() < 0.5
        out.extend([f"template <typename T> static void allreduce_{kname}(const T *in, T *out, int count, "
                    f"ncclComm_t c, cudaStream_t st) {{",
                    f"  const ncclDataType_t type = {nccl_type};"]
                   + (["  ncclGroupStart();"] if grouped else [])
                   + ["  ncclAllReduce((const void *)in, (void *)out, count, type, ncclSum, c, st);"]
                   + (["  ncclGroupEnd();"] if grouped else []) + ["}"])
        first = len("\n".join(out).split("\n")) + 1
        body.append(f"    allreduce_{kname}(g, {red}, n, comm, s);")
    elif casts:
        body.append(f"    ncclAllReduce((const void *)g, (void *){red}, n, {nccl_type}, ncclSum, comm, s);")
    else:
        body.append(f"    ncclAllReduce(g, {red}, n, {nccl_type}, ncclSum, comm, s);")
    if group2:
        body.append(f"    ncclAllReduce(h, h, n, {nccl_type}, ncclSum, comm, s);")
    if group:
        body.append("    ncclGroupEnd();")
    if event:
        body.append("    cudaEventRecord(ev, s);")
        body.append("    cudaStreamWaitEvent(s, ev, 0);")
    ks = "s2" if stream2 else "s"
    if into_x:
        call_args = f"{red}, l, r, {scale}, n"
    else:
        call_args = f"{target}, {red}, l, r, {scale}, n"
    config = launch_config(guarded)
    if later_effect:
        call_args = call_args.replace(f", {scale}, n", ", a, n")
    if wrapped:
        # template <typename T> void launch_k(T *..., float a, int n, cudaStream_t st): dim3 locals, one launch.
        grid, blk = config.rsplit(", ", 1)
        names = call_args.split(", ")
        kinds = ["T *"] + ["const T *"] * (len(names) - 3) + ["float ", "int "]
        params = ", ".join(f"{kinds[j]}p{j}" if j < len(names) - 1 else "int n" for j in range(len(names)))
        kargs = ", ".join(f"p{j}" if j < len(names) - 1 else "n" for j in range(len(names)))
        wrap = [f"template <typename T> static void launch_{kname}({params}, cudaStream_t st) {{",
                f"  dim3 block({blk});",
                f"  dim3 grid({grid.replace(blk, 'block.x') if rng.random() < 0.5 else grid});",
                f"  {kname}<<<grid, block, 0, st>>>({kargs});", "}"]
        if rng.random() < 0.4:
            wrap += [f"template <typename T> static void outer_{kname}({params}, cudaStream_t st) {{",
                     f"  launch_{kname}<T>({kargs}, st);", "}"]
            body.append(f"    outer_{kname}({call_args}, {ks});")
        else:
            body.append(f"    launch_{kname}({call_args}, {ks});")
        out.extend(wrap)
        first = len("\n".join(out).split("\n")) + 1
    else:
        body.append(f"    {kname}<<<{config}, 0, {ks}>>>({call_args});")
    if second:
        arg = "a *= 0.5f" if later_effect else "a"
        launch = f"k{k}b<<<{launch_config(True)}, 0, s>>>(o2, {'o' if target == 'o' else red}, l, r, {arg}, n);"
        body.append(f"    if (n > 0) {{ {launch} }}" if in_if else f"    {launch}")
    body.append("  }")
    body.append("  (void)gr, (void)o, (void)o2, (void)w, (void)l, (void)r, (void)h, (void)s2, (void)ev, (void)calls;")
    body.append("}")
    out.extend(body)
    out.append("")
    last = first + len(body) - 1
    spans[k] = [first, last]
open(path, "w").write("\n".join(out) + "\n")
print(json.dumps(spans))
