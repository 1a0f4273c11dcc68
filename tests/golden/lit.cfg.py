# lit configuration for coconet's golden tests: each input file carries its
# `// RUN:` lines and its `// CHECK:` expectations (FileCheck).
import os
import lit.formats

config.name = "coconet-golden"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".cu", ".cuh", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
build = lit_config.params.get("build", os.path.join(root, "build"))
llvm_bin = lit_config.params.get("llvm_bin", "/usr/lib/llvm-16/bin")
config.test_exec_root = os.path.join(build, "golden")

config.substitutions.append(("%coconet-cc", os.path.join(build, "bin", "coconet-cc")))
config.substitutions.append(("%coconet", os.path.join(build, "bin", "coconet")))
config.substitutions.append(("%FileCheck", os.path.join(llvm_bin, "FileCheck")))
config.substitutions.append(("%not", os.path.join(llvm_bin, "not")))
config.substitutions.append(("%expect", os.path.join(root, "tests", "golden", "expect-exit.sh")))
config.substitutions.append(("%inputs", os.path.join(root, "tests", "golden", "Inputs")))
config.substitutions.append(("%root", root))

# COCONET_VERIFY_MPIRUN carries LeakSanitizer's options for MPI programs to the
# harnesses --verify runs (runtime/host/host.mk, TRANSLATOR_RUN_ENV);
# COCONET_VERIFY_CC, the builder of those harnesses (golden.mk); COCONET_VERIFY_CACHE,
# the test run's memo of their runs (the Makefile's run_levels).
for var in ("PATH", "CUDA_HOME", "TMPDIR", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH",
            "OMPI_MCA_mpi_yield_when_idle", "HOME", "COCONET_VERIFY_MPIRUN",
            "COCONET_VERIFY_CC", "COCONET_VERIFY_CACHE"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["PATH"] = llvm_bin + os.pathsep + os.environ.get("PATH", "")
config.environment["COCONET_COLOR"] = "0"
# The precompiled prelude's cache (frontend_pch.c): `make test`'s levels share one
# (COCONET_CACHE from the Makefile, the plain and sanitizer builds alike: libclang
# writes it, not coconet's code); lit run by hand, one per build.
config.environment["COCONET_CACHE"] = os.environ.get("COCONET_CACHE") or os.path.join(build, "cache")
if "COCONET_CACHE_KEEP" in os.environ:
    config.environment["COCONET_CACHE_KEEP"] = os.environ["COCONET_CACHE_KEEP"]

# MPI's include flags, for inputs (the examples) that include <mpi.h>.
import subprocess
try:
    mpi = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True).stdout.strip()
except OSError:
    mpi = ""
config.substitutions.append(("%mpiflags", mpi))

# host-openmp: programs built with `coconet-cc --target=host` may include <omp.h>
# and use -fopenmp (the host compiler has OpenMP: g++ does, clang++ does only
# with libomp, so not in the SANITIZE=1 build).
import tempfile
with tempfile.TemporaryDirectory() as probe_dir:
    probe = os.path.join(probe_dir, "probe.cu")
    with open(probe, "w") as f:
        f.write("#include <omp.h>\nint threads() { return omp_get_max_threads(); }\n")
    try:
        built = subprocess.run([os.path.join(build, "bin", "coconet-cc"), "--target=host", "-fopenmp", "-c", probe,
                                "-o", os.path.join(probe_dir, "probe.o")], capture_output=True).returncode == 0
    except OSError:
        built = False
if built:
    config.available_features.add("host-openmp")
