// --verify on what extraction does not model: pointers only an opaque
// statement uses get memory of their own; host variables and the file's
// variables are compared (an argument evaluated twice shows there); regions the harness cannot run say why.
// RUN: %coconet --verify=2 %s -- -DCASE_OPAQUE | %FileCheck --check-prefix=OPAQUE %s
// RUN: env COCONET_TEST_PLANT_EFFECTS_BUG=1 %expect 1 %coconet --verify=2 %s -- -DCASE_EFFECTS | %FileCheck --check-prefix=TWICE %s
// RUN: %coconet --verify=2 %s -- -DCASE_EFFECTS | %FileCheck --check-prefix=ONCE %s
// RUN: %coconet --verify=2 %s -- -DCASE_GLOBAL | %FileCheck --check-prefix=GLOBAL %s
// RUN: %coconet --verify=2 %s -- -DCASE_GLOBAL -DWORKSPACE | %FileCheck --check-prefix=GLOBAL %s
// RUN: env COCONET_TEST_PLANT_EFFECTS_BUG=1 %expect 1 %coconet --verify=2 %s -- -DCASE_GLOBAL -DCOUNT_ONLY | %FileCheck --check-prefix=GLOBAL-TWICE %s
// RUN: %expect 1 %coconet --verify=2 %s -- -DCASE_OFFSET 2>&1 | %FileCheck --check-prefix=OFFSET %s
// RUN: %coconet %s -- -DCASE_STREAM | %FileCheck --check-prefix=STREAM %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void sgd(float *w, const float *g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

__global__ void shift(float *o, const float *g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n) o[i] = g[i + 1];
}

static float next_lr(int &calls) { return 0.01f * ++calls; }

namespace {
int g_steps;  // a variable of the file the region changes: both runs start from its value
struct Schedule {  // a class of numbers: set back and compared like them
  int step;
  float base[2];
} g_schedule = {0, {0.01f, 0.02f}};
}
#if defined(CASE_GLOBAL)
// Other variables of the file the harness builds with: a class's static member
// and a variable template (not set back: not namespace-scope variables), C
// linkage, device and constant memory, an RNG (its state is numbers: set back)
// and a vector (not set back: it holds a pointer), a workspace allocated on first use
// (a pointer: setting it back would hand the scheduled run freed memory).
#include <random>
#include <vector>
struct Stats {
  static int calls;
};
int Stats::calls = 0;
template <typename T> T pi_v = T(3.14159);
extern "C" {
int c_counter;
}
__constant__ float c_w[4];
__device__ int d_flag;
std::mt19937 rng(5);
std::vector<float> history;
float *g_workspace;
size_t g_workspace_n;
static float *workspace(size_t n) {
  if (g_workspace_n < n) {
    free(g_workspace);
    g_workspace = (float *)malloc(n * sizeof(float));
    g_workspace_n = n;
  }
  return g_workspace;
}
size_t g_want = 8;
static float lr_ws() {
  g_want *= 2;  // a bigger workspace each call: it is freed and allocated again
  return workspace(g_want) ? 0.1f : 0.2f;
}
namespace outer {
namespace {
unsigned inner_steps;
}
}  // namespace outer
#endif
static float tick_lr() {
#if defined(COUNT_ONLY)
  ++g_steps;
  return 0.1f;
#else
  ++g_schedule.step;
  return g_schedule.base[g_schedule.step % 2] * (float)(++g_steps % 3 + 1);  // a schedule by step
#endif
}

void step(float *w, float *g, float *o, int n, int off, ncclComm_t comm, cudaStream_t s, cudaStream_t *streams) {
  int calls = 0, k = 0;
#if defined(CASE_OPAQUE)
#pragma coconet region name(opaque) split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    shift<<<(n + 255) / 256, 256, 0, s>>>(o, g, n);
  }
#elif defined(CASE_EFFECTS)
#pragma coconet region name(effects) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, next_lr(calls), n);
  }
#elif defined(CASE_GLOBAL)
#pragma coconet region name(global) split reorder scratch(g) replicated(w)
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, s);
#if defined(WORKSPACE)
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, lr_ws(), n);
#else
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, tick_lr(), n);
#endif
  }
#elif defined(CASE_OFFSET)
#pragma coconet region name(offset) split
  {
    ncclAllReduce(g + off, g + off, n, ncclFloat, ncclSum, comm, s);
  }
#elif defined(CASE_STREAM)
#pragma coconet region name(stream) split
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, streams[k++]);
  }
#endif
  (void)calls, (void)k, (void)off, (void)streams, (void)w, (void)o;
}

// shift reads g[i + 1]: not pointwise, kept as written; o is known only to it.
// OPAQUE: verify opaque: output 'g' (f32): max 0 ULP apart over 1..2 ranks x 3 inputs
// OPAQUE: verify opaque: memory 'o' (used where coconet does not look): max 0 ULP apart over 1..2 ranks x 3 inputs
// OPAQUE: verify opaque: ok
// With the arguments copied instead of evaluated once, the slice and tail
// launches call next_lr twice:
// TWICE: verify effects: MISMATCH: {{.*}}
// ONCE: verify effects: ok
// The file's variables are set back before the run as scheduled (the learning
// rate of step g_steps, in an anonymous namespace, is the same in both runs) and
// compared after it (COUNT_ONLY: with the argument evaluated twice, only the
// count differs):
// GLOBAL: verify global: ok
// GLOBAL-TWICE: verify global: MISMATCH: {{.*}}: variable 'g_steps' of the file differs after the region (as written vs scheduled)
// OFFSET: error: --verify: region 'offset' cannot be run by the harness: buffer 'g+off' is not a variable of the enclosing function, so the harness cannot allocate it
// The stream expression is evaluated once for the ReduceScatter, the tail's AllReduce and the AllGather:
// STREAM: {{\[\[}}maybe_unused{{\]\]}} const auto coconet_arg1 = streams[k++];
// STREAM: ncclReduceScatter(g, g + coconet_p.slice_lo, coconet_p.s, ncclFloat, ncclSum, comm, coconet_arg1)
// STREAM: ncclAllReduce(g + coconet_p.tail_lo, g + coconet_p.tail_lo, coconet_p.tail, ncclFloat, ncclSum, comm, coconet_arg1)
// STREAM: ncclAllGather(g + coconet_p.slice_lo, g, coconet_p.s, ncclFloat, comm, coconet_arg1)
// A harness that does not finish a region (here a launcher that runs nothing)
// is not a mismatch: the region is reported as not checked, status 1.
// RUN: env COCONET_VERIFY_MPIRUN=true %expect 1 %coconet --verify=1 %s -- -DCASE_EFFECTS | %FileCheck --check-prefix=STOPPED %s
// STOPPED: verify {{.*}}: NOT CHECKED: the harness stopped before the region finished with 1 ranks (a crash, a hang or the time limit)
// STOPPED-NOT: MISMATCH

// A pointer to the trainer's configuration read only through `->` (llm.c's
// `multi_gpu_config->nccl_comm`, in the region or in a local before it) points at
// a value-initialized object whose members the harness sets (CONFIG): the
// communicator, and the rank count and rank in the members the program sets with
// ncclCommCount and ncclCommUserRank (a count of 0 would divide by zero in
// `per_rank`, computed after `ranks` in one declaration). Passed to a function of
// the file that reads it only through `->` too (`shard_of`), it is the same
// object; passed whole to a call coconet does not see into, it is not run
// (CONFIG_PASSED).
// RUN: %coconet --verify=2 %s -- -DCASE_CONFIG | %FileCheck --check-prefix=CONFIG %s
// RUN: %expect 1 %coconet --verify=2 %s -- -DCASE_CONFIG -DCONFIG_PASSED 2>&1 | %FileCheck --check-prefix=CONFIG-PASSED %s
// The communicator read through the pointer in the collective itself (CONFIG_DIRECT).
// RUN: %coconet --verify=2 %s -- -DCASE_CONFIG -DCONFIG_DIRECT | %FileCheck --check-prefix=CONFIG %s
#if defined(CASE_CONFIG)
typedef struct {
  int process_rank;
  int num_processes;
  ncclComm_t nccl_comm;
} MultiGpuConfig;

void log_config(const MultiGpuConfig *c);

typedef struct {
  int offset, count;
} Shard;

// Reads the configuration only through `->` (llm.c's multi_gpu_get_shard_offset).
static Shard shard_of(int n, const MultiGpuConfig *c) {
  const int count = n / c->num_processes;
  return Shard{c->process_rank * count, count};
}

void config_init(MultiGpuConfig *c, ncclComm_t comm) {
  c->nccl_comm = comm;
  ncclCommCount(comm, &c->num_processes);
  ncclCommUserRank(comm, &c->process_rank);
}

void config_step(float *w, float *g, int n, const MultiGpuConfig *multi_gpu_config, cudaStream_t s) {
  ncclComm_t nccl_comm = multi_gpu_config->nccl_comm;
  const int ranks = multi_gpu_config->num_processes, per_rank = n / ranks;
  const Shard shard = shard_of(n, multi_gpu_config);
#pragma coconet region name(config) split reorder scratch(g) replicated(w)
  {
#if defined(CONFIG_DIRECT)
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, multi_gpu_config->nccl_comm, s);
#else
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, nccl_comm, s);
#endif
    sgd<<<(n + 255) / 256, 256, 0, s>>>(w, g, 0.1f * per_rank / n + 0.001f * shard.count, n);
#if defined(CONFIG_PASSED)
    log_config(multi_gpu_config);
#endif
  }
}
#endif
// CONFIG: verify config: ok
// CONFIG-PASSED: error: --verify: region 'config' cannot be run by the harness: 'multi_gpu_config' (const MultiGpuConfig *) is used where coconet does not see how much memory it needs
