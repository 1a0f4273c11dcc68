#!/usr/bin/env python3
"""api_list.py DOC INCLUDE_DIR [--write]: the list of CUDA runtime, cuBLAS,
cuBLASLt, curand and NCCL functions the host backend declares (its headers in
INCLUDE_DIR) must be the one DOC shows between its api-list markers. --write
regenerates that part of DOC. Exit 1 (with the difference) when they differ."""
import glob
import os
import re
import sys

BEGIN, END = "<!-- api-list: begin (tests/host/api_list.py --write) -->", "<!-- api-list: end -->"
DECL = re.compile(r"^[A-Za-z_][\w \*&<>,:]*?\b((?:cuda|nccl|cublas)[A-Z]\w*|curand\w*)\s*\(")
GROUPS = [("CUDA runtime", "cuda", "cudaX"), ("cuBLAS", "cublas", "cublasLt"), ("cuBLASLt", "cublasLt", None),
          ("curand (device API)", "curand", None), ("NCCL", "nccl", None)]


def declared(include):
    names = set()
    for path in sorted(glob.glob(os.path.join(include, "*.h")) + glob.glob(os.path.join(include, "*", "*.h"))):
        with open(path) as f:
            for line in f:
                m = DECL.match(line)
                if m:
                    names.add(m.group(1))
    return names


def section(names):
    out = [BEGIN, ""]
    for title, prefix, exclude in GROUPS:
        group = sorted(n for n in names if n.startswith(prefix) and not (exclude and n.startswith(exclude)))
        out.append(f"- **{title}** ({len(group)}): " + ", ".join(f"`{n}`" for n in group))
    out += ["", END]
    return "\n".join(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    doc, include, write = sys.argv[1], sys.argv[2], "--write" in sys.argv[3:]
    text = open(doc).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"api_list: {doc} has no api-list markers")
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    new = section(declared(include))
    if write:
        open(doc, "w").write(head + new + tail)
        return
    listed = set(re.findall(r"`(\w+)`", old))
    names = declared(include)
    missing, extra = sorted(names - listed), sorted(listed - names)
    if missing or extra:
        print(f"api_list: {doc} is out of date with {include} (run tests/host/api_list.py {doc} {include} --write)")
        if missing:
            print("  declared but not listed: " + ", ".join(missing))
        if extra:
            print("  listed but not declared: " + ", ".join(extra))
        sys.exit(1)
    print(f"api_list: {len(names)} functions, {doc} lists them all")


main()
