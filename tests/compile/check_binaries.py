#!/usr/bin/env python3
"""check_binaries.py [--arch SM]... BINARY...: check what nvcc built.

Each BINARY must be an x86-64 ELF executable that links libnccl dynamically and
whose .nv_fatbin section holds a device image (cubin) for every --arch (default:
80 and 90). The cubins' SM version is read from their ELF header (e_flags), so no
CUDA tool (cuobjdump is not always installed) and no GPU is needed.
Prints one line per binary; exits 1 if any check fails.
"""
import struct
import subprocess
import sys

EM_CUDA = 190


def sections(data):
    """Name -> (offset, size) of the sections of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_off = headers[shstrndx][4]
    result = {}
    for name_idx, _type, _flags, _addr, off, size in headers:
        start = names_off + name_idx
        name = data[start:data.index(b"\0", start)].decode()
        result[name] = (off, size)
    return result


def cubin_archs(fatbin):
    """SM versions of the uncompressed CUDA ELF images inside a fatbin blob."""
    archs = set()
    pos = fatbin.find(b"\x7fELF")
    while pos >= 0:
        machine, = struct.unpack_from("<H", fatbin, pos + 18)
        if fatbin[pos + 4] == 2 and machine == EM_CUDA:
            flags, = struct.unpack_from("<I", fatbin, pos + 48)
            archs.add((flags >> 8) & 0xFF)
        pos = fatbin.find(b"\x7fELF", pos + 4)
    return archs


def needed_libs(path):
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def check(path, want_archs):
    try:
        with open(path, "rb") as f:
            data = f.read()
        secs = sections(data)
    except (OSError, ValueError) as e:
        print("FAIL %s: %s" % (path, e))
        return False
    problems = []
    if ".nv_fatbin" not in secs:
        problems.append("no .nv_fatbin section (no device code)")
        archs = set()
    else:
        off, size = secs[".nv_fatbin"]
        archs = cubin_archs(data[off:off + size])
        missing = sorted(set(want_archs) - archs)
        if missing:
            problems.append("no cubin for " + ", ".join("sm_%d" % a for a in missing))
    if not any(lib.startswith("libnccl.so") for lib in needed_libs(path)):
        problems.append("does not link libnccl")
    arch_text = " ".join("sm_%d" % a for a in sorted(archs))
    if problems:
        print("FAIL %s: %s" % (path, "; ".join(problems)))
        return False
    print("ok   %s: cubins %s, links libnccl" % (path, arch_text))
    return True


def main(argv):
    want, paths = [], []
    args = iter(argv)
    for arg in args:
        if arg == "--arch":
            want.append(int(next(args)))
        else:
            paths.append(arg)
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ok = all([check(p, want or [80, 90]) for p in paths])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
