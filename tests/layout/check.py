#!/usr/bin/env python3
"""The translator's house as translator/translator.h says it is.

    tests/layout/check.py [ROOT]

Checks, and says what is wrong and where:
  - the stage folders translator.h lists are translator.mk's TRANSLATOR_STAGES, in order;
  - every source file of a stage folder is named in translator.h or in its
    folder's map header, and every file name translator.h gives is there;
  - a file includes only its own folder's headers, by their plain names, and
    the stage headers (STAGE/STAGE.h, common/*.h) of its own and earlier stages:
    never a later stage's header, never another folder's *_impl.h;
  - no source file of the translator is longer than MAX_LINES.
Calls into a later stage are the link's to refuse (translator.mk); this is the
same rule for the headers, which the link cannot see.
"""
import glob
import os
import re
import sys

MAX_LINES = 850
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
tdir = os.path.join(root, "translator")
problems = []


def fail(where, what):
    problems.append("%s: %s" % (os.path.relpath(where, root), what))


def read(path):
    with open(path) as f:
        return f.read()


map_path = os.path.join(tdir, "translator.h")
the_map = read(map_path)
folders = re.findall(r"^// ([a-z]+)/ ", the_map, re.M)
mk = read(os.path.join(tdir, "translator.mk"))
stages = re.search(r"^TRANSLATOR_STAGES\s*:=\s*(.*)$", mk, re.M).group(1).split()
if [f for f in folders if f != "cc"] != stages:
    fail(map_path, "lists the stages %s; translator.mk builds %s" % (" ".join(folders), " ".join(stages)))

# The map's own sections: folder -> the text of its lines.
sections = {}
for i, folder in enumerate(folders):
    start = the_map.index("// %s/ " % folder)
    end = the_map.index("// %s/ " % folders[i + 1]) if i + 1 < len(folders) else the_map.index("#ifndef")
    sections[folder] = the_map[start:end]

order = {s: i for i, s in enumerate(stages)}
for folder in stages:
    files = sorted(glob.glob(os.path.join(tdir, folder, "*.[ch]")))
    named = sections.get(folder, "")
    maps = [read(p) for p in files if p.endswith(("_impl.h", "/%s.h" % folder, "/ir.h"))]
    for path in files:
        name = os.path.basename(path)
        if not re.search(r"\b%s\b" % re.escape(name), named) and not any(re.search(r"\b%s\b" % re.escape(name), m)
                                                                            for m in maps):
            fail(path, "is named neither in translator/translator.h nor in its folder's map header")
        lines = read(path).count("\n")
        if lines > MAX_LINES:
            fail(path, "has %d lines (at most %d: split it along its seams and update the map)" % (lines, MAX_LINES))
        for n, line in enumerate(read(path).splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc, at = m.group(1), "%s:%d" % (path, n)
            if "/" not in inc:
                if not os.path.exists(os.path.join(tdir, folder, inc)) and inc != "pragma.h":
                    fail(at, "includes \"%s\", which is not a file of %s/" % (inc, folder))
                continue
            other = inc.split("/")[0]
            if other not in order:
                fail(at, "includes \"%s\", which is not a stage's header" % inc)
            elif inc.endswith("_impl.h") and other != folder:
                fail(at, "includes \"%s\", the own header of another folder" % inc)
            elif order[other] > order[folder]:
                fail(at, "includes \"%s\": %s/ runs after %s/" % (inc, other, folder))
    for name in set(re.findall(r"(?<![/\w])([a-z_]+\.[ch])\b", named)):
        if not os.path.exists(os.path.join(tdir, folder, name)):
            fail(map_path, "names %s under %s/, which has no such file" % (name, folder))

for path in sorted(glob.glob(os.path.join(tdir, "*.[ch]"))):
    if os.path.basename(path) != "translator.h":
        fail(path, "is outside the stage folders")

for p in problems:
    print("layout: " + p)
print("layout: %d stages, %d problems" % (len(stages), len(problems)))
sys.exit(1 if problems else 0)
