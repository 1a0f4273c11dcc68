#!/usr/bin/env python3
"""run-levels.py MAKE JOBS TARGET...: run `MAKE TARGET` for each test level, JOBS at a
time, in the order given (the Makefile puts the longest first), each level's
output printed whole when it ends, with its time. A level that fails is also
recorded as "FAIL level:TARGET" in $COCONET_TEST_RESULTS, so a level that fails
before its tests record anything (a build error) is counted by tests/summary.sh.
Exits 1 when a level failed. make -j would start the levels waiting for a slot
last-queued first, the shortest of them before the longest."""
import os
import subprocess
import sys
import threading
import time

make = sys.argv[1]
jobs = int(sys.argv[2])
queue = list(sys.argv[3:])
lock = threading.Lock()
failed = []


def worker():
    while True:
        with lock:
            if not queue:
                return
            target = queue.pop(0)
            print(f"run-levels: {target} started", flush=True)
        start = time.time()
        done = subprocess.run([make, "--no-print-directory", target], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        with lock:
            sys.stdout.buffer.write(done.stdout)
            status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
            print(f"run-levels: {target} {status} in {time.time() - start:.0f}s", flush=True)
            if done.returncode != 0:
                failed.append(target)
                results = os.environ.get("COCONET_TEST_RESULTS")
                if results:
                    with open(results, "a") as f:
                        f.write(f"FAIL level:{target} {time.time() - start:.0f}s\n")


threads = [threading.Thread(target=worker) for _ in range(max(1, jobs))]
for t in threads:
    t.start()
for t in threads:
    t.join()
if failed:
    print("run-levels: failed:", " ".join(failed), flush=True)
sys.exit(1 if failed else 0)
