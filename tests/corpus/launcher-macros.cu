// Style: host launchers that use the project's function-like macros in their
// locals and launches (CEIL_DIV for the grid, small expression macros for the
// arguments). A macro whose body is an expression of its parameters moves into
// the generated code expanded as the preprocessor expands it: tokens that would
// run together get a blank (`-NEG(f)` is `- -(f)`, not `--(f)`), a parameter
// named like a keyword is still a parameter (`CAST(a, float)`). Refused: a macro
// standing for two arguments (PAIR), in a launcher or in the region's own launch
// (REGION_PAIR); a macro that assigns its argument (DECAY); a launch written in
// a macro's body, in a launcher (LAUNCH_MACRO) or in the region (REGION_LAUNCH_MACRO):
// the note names the macro. Not a macro: a launch leaving a kernel parameter
// to its default argument (DEFAULT_ARG) is refused with its own note.
// RUN: %coconet --verify=3 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -DPAIR_ARGS 2>&1 | %FileCheck --check-prefix=PAIR %s
// RUN: %expect 1 %coconet --check %s -- -DREGION_PAIR 2>&1 | %FileCheck --check-prefix=PAIR %s
// RUN: %expect 1 %coconet --check %s -- -DDECAY 2>&1 | %FileCheck --check-prefix=DECAY %s
// RUN: %expect 1 %coconet --check %s -- -DLAUNCH_MACRO 2>&1 | %FileCheck --check-prefix=LAUNCH_MACRO %s
// RUN: %expect 1 %coconet --check %s -- -DDEFAULT_ARG 2>&1 | %FileCheck --check-prefix=DEFAULT_ARG %s
// RUN: %expect 1 %coconet --check %s -- -DREGION_LAUNCH_MACRO 2>&1 | %FileCheck --check-prefix=IN_REGION %s
#include <cuda_runtime.h>
#include <nccl.h>

#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))
#define NEG(a) -(a)
#define SUB(a, b) (a-b)
#define CAST(a, float) ((float)(a))
#define PAIR(a, b) a, b
#define DECAYED(b) ((b) *= 0.5f)
#define LAUNCH_AXPB(x, a, b, n, s) axpb<<<CEIL_DIV(n, 128), 128, 0, s>>>(x, a, b, n)

__global__ void axpb(float *x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

#if defined(DEFAULT_ARG)
__global__ void axpb_default(float *x, float a, int n, float b = 1.0f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}
#endif

void launch_axpb(float *x, float f, int n, cudaStream_t s) {
  const int block_size = 128;
  const int num_blocks = CEIL_DIV(n, block_size);
#if defined(PAIR_ARGS)
  axpb<<<num_blocks, block_size, 0, s>>>(x, PAIR(f, f), n);
#elif defined(DECAY)
  axpb<<<num_blocks, block_size, 0, s>>>(x, DECAYED(f), f, n);
#elif defined(LAUNCH_MACRO)
  LAUNCH_AXPB(x, f, f, n, s);
#else
  // -NEG(f) is f; SUB(f, -1.0f) is f + 1; CAST(n, int) is (int)(n), the parameter named float.
  axpb<<<num_blocks, block_size, 0, s>>>(x, -NEG(f), SUB(f, -1.0f) / CAST(n, int), n);
#endif
}

void step(float *x, float f, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(macros) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, stream);
#if defined(REGION_PAIR)
    axpb<<<CEIL_DIV(n, 256), 256, 0, stream>>>(x, PAIR(f, f), n);
#elif defined(REGION_LAUNCH_MACRO)
    LAUNCH_AXPB(x, f, f, n, stream);
#elif defined(DEFAULT_ARG)
    axpb_default<<<CEIL_DIV(n, 256), 256, 0, stream>>>(x, f, n);
#else
    launch_axpb(x, f, n, stream);
#endif
  }
}

// EXEC: verify macros: ok
// CODE: - -(f), (f- -1.0f) / ((int)(n)), coconet_p.slice_lo
// PAIR: note: {{.*}}a macro in its launch stands for more than one argument or launch setting
// DECAY: note: the call of 'launch_axpb' {{.*}} is not seen through {{.*}}: a text of its launch has side effects
// LAUNCH_MACRO: launcher-macros.cu:{{[0-9]+}}:5: note: the call of 'launch_axpb' ({{.*}}launcher-macros.cu:{{[0-9]+}}:6) is not seen through as the kernel launch or collective inside it: its kernel launch is written in a macro's body, not out in the function ('LAUNCH_AXPB' at launcher-macros.cu:{{[0-9]+}}); coconet sees through
// IN_REGION: launcher-macros.cu:{{[0-9]+}}:5: note: its kernel launch is written in the body of macro 'LAUNCH_AXPB' at launcher-macros.cu:{{[0-9]+}}; coconet reads a launch whose kernel, '<<<', '>>>' and arguments are written out, in the region or in a launcher's body: write it out there
// DEFAULT_ARG: note: its launch leaves kernel parameters to their default arguments; coconet reads a launch that writes out every argument: write them out
