#!/usr/bin/env bash
# prepare.sh [BUILD]: builds here, on a machine without a GPU, everything that
# bench/gpu/run.sh runs on a GPU machine, into one folder to carry there
# (GPU_DIR, default BUILD/gpu, ignored by git with the rest of build/):
#   bin/NAME_orig, bin/NAME_sched  each example of bench/examples.conf built with
#                                  coconet-cc for GPU_ARCH (sm_90), as written
#                                  (--schedule=none) and scheduled; --fmad=false so that
#                                  the checksums can be compared with the host backend's
#   bin/copybw                     the device-to-device cudaMemcpy bandwidth
#   bin/fused                      bench/gpu/fused.cu: a split reorder fuse region timed on the
#                                  fused kernel and on its NCCL path (needs the GPU machine's
#                                  NCCL >= 2.28: its device API)
#   lib/ktrace.so                  per-kernel GPU times from CUPTI (CUDA_INJECTION64_PATH)
#   lib/                           the shared libraries these need that a GPU machine may
#                                  lack: Open MPI (libmpi and its dependencies), libcupti;
#                                  not NCCL or cuBLAS (218 MiB and 600 MiB: run.sh finds
#                                  the GPU machine's own, e.g. PyTorch's pip wheels)
#   openmpi/                       Open MPI's plugins (run.sh points Open MPI at them)
#   ncclstub/libnccl.so.2          a one-rank NCCL (collectives are copies), used by
#                                  run.sh only when the GPU machine has no libnccl.so.2
#   bin/mpiprobe, mpistub/         run.sh checks with mpiprobe that the carried Open MPI
#                                  starts; if not, it uses mpistub/libmpi.so.40, a
#                                  one-process MPI built against Open MPI's mpi.h
#   manifest.txt                   per example: sizes, the host backend's checksums at np=1
#                                  (as written and scheduled), the bytes per step of the
#                                  region's pointwise kernels at np=1 (from the schedule)
# The binaries find lib/ through their rpath ($ORIGIN/../lib); run.sh sets the rest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/bin
dir=${GPU_DIR:-$build/gpu}
arch=${GPU_ARCH:-sm_90}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
cores=$(nproc)
# shellcheck source=../lib.sh
source "$root/bench/lib.sh"
start=$(date +%s)
[ -x "$bin/coconet-cc" ] || { echo "prepare.sh: $bin/coconet-cc missing: run make first" >&2; exit 1; }
[ -x "$nvcc" ] || { echo "prepare.sh: no nvcc at $nvcc (set CUDA_HOME)" >&2; exit 1; }
load_examples gpu

rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib" "$dir/openmpi" "$dir/ncclstub" "$dir/logs"
hostdir=$build/bench/gpu-host
mkdir -p "$hostdir"

# Open MPI's flags for nvcc: include directories as -isystem, the C API only.
mpi_inc=() mpi_lib=()
for d in $(mpicxx --showme:incdirs); do mpi_inc+=(-isystem "$d"); done
for d in $(mpicxx --showme:libdirs); do mpi_lib+=(-L"$d"); done
cflags=(-O2 -std=c++17 -arch="$arch" --fmad=false -DOMPI_SKIP_MPICXX=1 -Xcompiler -Wno-unknown-pragmas "${mpi_inc[@]}")
libs=(-lnccl -lcublas "${mpi_lib[@]}" -lmpi -Xlinker -rpath -Xlinker '$ORIGIN/../lib')

echo "prepare.sh: building ${#EX_NAME[@]} examples for $arch (coconet-cc + nvcc), the tools, and the host references ..."
for i in "${!EX_NAME[@]}"; do
  name=${EX_NAME[$i]} src=${EX_SRC[$i]}
  for variant in orig sched; do
    flags=()
    [ "$variant" = orig ] && flags=(--coconet-flags=--schedule=none)
    parallel_limit "$cores"
    "$bin/coconet-cc" "${flags[@]}" "${cflags[@]}" "$root/$src" -o "$dir/bin/${name}_$variant" "${libs[@]}" \
      >"$dir/logs/${name}_$variant.log" 2>&1 &
    parallel_limit "$cores"
    (host_build "$bin" "$hostdir" "$name" "$src" "$variant" && touch "$hostdir/$name.ok_$variant") &
  done
  parallel_limit "$cores"
  (cd "$root" && "$bin/coconet" --dump=ir "$src" -- "${BENCH_MPI_CFLAGS[@]}" >"$hostdir/$name.ir" 2>&1) &
done
parallel_limit "$cores"
"$nvcc" -O2 -arch="$arch" "$root/bench/gpu/copybw.cu" -o "$dir/bin/copybw" >"$dir/logs/copybw.log" 2>&1 &
parallel_limit "$cores"
"$bin/coconet-cc" -O2 -std=c++17 -arch="$arch" "$root/bench/gpu/fused.cu" -o "$dir/bin/fused" -lnccl \
  -Xlinker -rpath -Xlinker '$ORIGIN/../lib' >"$dir/logs/fused.log" 2>&1 &
parallel_limit "$cores"
c++ -std=c++17 -O2 -Wall -Wextra -shared -fPIC -I"$cuda/include" "$root/bench/gpu/ktrace.cc" -o "$dir/lib/ktrace.so" \
  -L"$cuda/lib64" -lcupti -Wl,-rpath,'$ORIGIN' >"$dir/logs/ktrace.log" 2>&1 &
parallel_limit "$cores"
cc -std=c11 -O2 -Wall -Wextra -shared -fPIC -I"$cuda/include" "$root/bench/gpu/nccl_stub.c" \
  -o "$dir/ncclstub/libnccl.so.2" -Wl,-soname,libnccl.so.2 -L"$cuda/lib64/stubs" -lcuda >"$dir/logs/ncclstub.log" 2>&1 &
parallel_limit "$cores"
mpicc -O2 "$root/bench/gpu/mpiprobe.c" -o "$dir/bin/mpiprobe" -Wl,-rpath,'$ORIGIN/../lib' >"$dir/logs/mpiprobe.log" 2>&1 &
# the one-process MPI stand-in: Open MPI's predefined objects with libmpi's sizes
libmpi=
for d in $(mpicc --showme:libdirs) /usr/lib/x86_64-linux-gnu; do
  if [ -z "$libmpi" ] && [ -e "$d/libmpi.so" ]; then libmpi=$(readlink -f "$d/libmpi.so"); fi
done
nm -D --defined-only -S "$libmpi" | awk '$3 ~ /^[BDR]$/ && $4 ~ /^ompi_mpi_/ {
  printf "__attribute__((aligned(64))) char %s[0x%s];\n", $4, $2}' >"$dir/logs/mpi_stub_data.c"
parallel_limit "$cores"
mkdir -p "$dir/mpistub"
read -r -a mpicc_flags <<<"$(mpicc --showme:compile)"
cc -std=gnu11 -O2 -Wall -Wextra -shared -fPIC "${mpicc_flags[@]}" "$root/bench/gpu/mpi_stub.c" \
  "$dir/logs/mpi_stub_data.c" -o "$dir/mpistub/libmpi.so.40" -Wl,-soname,libmpi.so.40 >"$dir/logs/mpistub.log" 2>&1 &
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || true; done  # outputs are checked below
for i in "${!EX_NAME[@]}"; do
  for variant in orig sched; do
    [ -x "$dir/bin/${EX_NAME[$i]}_$variant" ] ||
      { echo "prepare.sh: building ${EX_NAME[$i]}_$variant failed:"; tail -n 20 "$dir/logs/${EX_NAME[$i]}_$variant.log"; exit 1; }
  done
done
for f in bin/copybw bin/fused bin/mpiprobe lib/ktrace.so ncclstub/libnccl.so.2 mpistub/libmpi.so.40; do
  [ -e "$dir/$f" ] || { echo "prepare.sh: building $f failed:"; cat "$dir/logs/"*.log | tail -n 20; exit 1; }
done

# Shared libraries: everything the binaries, ktrace.so and Open MPI's plugins load,
# except the C/C++ runtime (every Linux has it), the GPU driver, and NCCL/cuBLAS (too
# large to carry; run.sh finds the GPU machine's).
skip='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libutil|libstdc\+\+|libgcc_s|libcuda|libnvidia|libnccl|libcublas|libcublasLt|libcudart)\.so'
pkglib=$(ompi_info --parsable --path pkglibdir 2>/dev/null | sed -n 's/^path:pkglibdir://p')
[ -d "$pkglib" ] || pkglib=$(dirname "$(readlink -f "$(ldconfig -p | awk '/libmpi\.so\.40 / {print $NF; exit}')")")/openmpi/lib/openmpi3
cp -L "$pkglib"/*.so "$dir/openmpi/" 2>/dev/null || true
cp -L "$cuda/lib64/libcupti.so.13" "$dir/lib/" 2>/dev/null || cp -L "$cuda"/lib64/libcupti.so.* "$dir/lib/"
collect() {  # collect FILE...: copy their non-system dependencies into lib/
  ldd "$@" 2>/dev/null | awk '/=> \// {print $1, $3}' | sort -u | while read -r soname path; do
    if [[ $soname =~ $skip ]]; then continue; fi
    [ -e "$dir/lib/$soname" ] || cp -L "$path" "$dir/lib/$soname"
  done
}
collect "$dir"/bin/*_orig "$dir"/bin/*_sched "$dir/lib/ktrace.so"
collect "$dir"/openmpi/*.so
collect "$dir"/lib/*.so*   # dependencies of dependencies
# Open MPI's plugins find their libraries through LD_LIBRARY_PATH (run.sh); the help
# texts make its error messages readable.
helpdir=$(ompi_info --parsable --path pkgdatadir 2>/dev/null | sed -n 's/^path:pkgdatadir://p')
[ -d "$helpdir" ] && mkdir -p "$dir/openmpi-help" && cp "$helpdir"/help-*.txt "$dir/openmpi-help/" 2>/dev/null || true

# Host references (np=1, the demo's sizes) and bytes per step (np=1, the GPU sizes).
manifest=$dir/manifest.txt
{
  echo "# name<TAB>tolerance<TAB>check args<TAB>gpu args<TAB>host checksum as written<TAB>host checksum scheduled<TAB>region kernels<TAB>pointwise bytes/step as written<TAB>scheduled"
} >"$manifest"
for i in "${!EX_NAME[@]}"; do
  name=${EX_NAME[$i]}
  read -r -a args <<<"${EX_DEMO[$i]}"
  ref=()
  for variant in orig sched; do
    [ -e "$hostdir/$name.ok_$variant" ] || { echo "prepare.sh: host build of ${name}_$variant failed"; exit 1; }
    host_run "$hostdir/${name}_${variant}_np1.out" 1 "$hostdir/${name}_$variant" "${args[@]}" ||
      { echo "prepare.sh: host run of ${name}_$variant failed:"; tail "$hostdir/${name}_${variant}_np1.out"; exit 1; }
    ref+=("$(checksum "$hostdir/${name}_${variant}_np1.out")")
  done
  declare -A tr=()
  while IFS='=' read -r k v; do tr[$k]=$v; done \
    < <(python3 "$root/bench/examples.py" traffic "$hostdir/$name.ir" "${EX_SIZES[$i]}" "${EX_GPU[$i]}" 1)
  kernels=$(for k in "${!tr[@]}"; do if [[ $k == kernel_orig_* ]]; then echo "${k#kernel_orig_}"; fi; done |
            sort | paste -sd, -)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${EX_TOL[$i]}" "${EX_DEMO[$i]}" "${EX_GPU[$i]}" \
    "${ref[0]}" "${ref[1]}" "$kernels" "${tr[mem_orig]}" "${tr[mem_sched]}" >>"$manifest"
  unset tr
done
cp "$root/bench/gpu/run.sh" "$dir/run.sh"

echo "prepare.sh: $dir ready in $(( $(date +%s) - start )) s, $(du -sh "$dir" | cut -f1) ($(du -sb "$dir" | cut -f1) bytes; the carry limit is 64 MiB with the working tree)"
cat "$manifest"
