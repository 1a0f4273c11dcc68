// coconet host backend: kernel launches.
//
// launch_begin/launch_end bracket every launch (the loop over the grid of a
// COCONET_HOST_SIMPLE launch is inlined in coconet_host.h).  A
// COCONET_HOST_SYNC launch runs each block with one fiber per CUDA thread:
// the scheduler switches to every ready fiber in thread order, a fiber runs
// until it exits or waits at a barrier or warp collective, and the last
// thread to arrive releases the others.  A pass in which nothing can run is a
// deadlock and is reported with what every thread waits for.
//
// Barriers count exited threads as arrived (as the hardware does).  A warp
// collective completes when every non-exited lane of its mask has arrived at
// a warp collective with the same mask; the lanes must then agree on the
// operation, and a shuffle may only read a lane that takes part.
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host.h"

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace coconet_host {

namespace {

enum thread_state { READY, AT_BARRIER, AT_WARP, EXITED };

// One CUDA thread of the running block (COCONET_HOST_SYNC).
struct cuda_thread {
  uint3 idx;
  int state;
  int op;                    // warp collective kind, while AT_WARP
  unsigned mask;             // its mask
  unsigned long long value;  // this lane's input bits
  int arg;                   // source lane, delta, lane mask, or signedness
  int width;                 // shuffle width
  unsigned long long result;
};

struct warp_lanes {
  unsigned present;  // lanes that exist (the last warp of a block may be partial)
  unsigned exited;
};

struct launch_state {
  bool active;
  int flags;
  char description[256];
  void *shared;
  // COCONET_HOST_SYNC only:
  void (*thread_main)(void *);
  void *ctx;
  fiber *fibers;
  std::vector<cuda_thread> threads;
  std::vector<warp_lanes> warps;
  unsigned nthreads;
  unsigned current;
  unsigned exited;
  unsigned at_barrier;
  int barrier_kind;  // of the barrier now gathering, -1 if none
  int barrier_acc;
  int barrier_result;
};

launch_state L;

const char *warp_op_name(int kind) {
  switch (kind) {
    case WARP_SYNC: return "__syncwarp";
    case WARP_SHFL: return "__shfl_sync";
    case WARP_SHFL_UP: return "__shfl_up_sync";
    case WARP_SHFL_DOWN: return "__shfl_down_sync";
    case WARP_SHFL_XOR: return "__shfl_xor_sync";
    case WARP_BALLOT: return "__ballot_sync";
    case WARP_ANY: return "__any_sync";
    case WARP_ALL: return "__all_sync";
    case WARP_MATCH_ANY: return "__match_any_sync";
    case WARP_MATCH_ALL: return "__match_all_sync";
    case WARP_REDUCE_ADD: return "__reduce_add_sync";
    case WARP_REDUCE_MIN: return "__reduce_min_sync";
    case WARP_REDUCE_MAX: return "__reduce_max_sync";
    case WARP_REDUCE_AND: return "__reduce_and_sync";
    case WARP_REDUCE_OR: return "__reduce_or_sync";
    case WARP_REDUCE_XOR: return "__reduce_xor_sync";
  }
  return "a warp collective";
}

const char *barrier_name(int kind) {
  switch (kind) {
    case BARRIER_COUNT: return "__syncthreads_count";
    case BARRIER_AND: return "__syncthreads_and";
    case BARRIER_OR: return "__syncthreads_or";
  }
  return "__syncthreads";
}

// The kernel expression: the launch text up to its first top-level comma.
void describe(const launch_site *site) {
  char kernel[128];
  size_t n = 0;
  int depth = 0;
  for (const char *p = site->text; *p && n + 1 < sizeof kernel; ++p) {
    if (*p == '<' || *p == '(' || *p == '[' || *p == '{') depth++;
    if (*p == '>' || *p == ')' || *p == ']' || *p == '}') depth--;
    if (*p == ',' && depth <= 0) break;
    kernel[n++] = *p;
  }
  kernel[n] = '\0';
  snprintf(L.description, sizeof L.description, "kernel %s launched at %s:%d", kernel, site->file, site->line);
}

// Aborts unless the running kernel was launched with COCONET_HOST_SYNC.
void require_sync(const char *what) {
  if (!L.active) fatal(what, "called outside a kernel");
  if (L.flags != COCONET_HOST_SYNC)
    fatal(what, "called by %s with COCONET_HOST_SIMPLE; a kernel that reaches a barrier or warp collective must "
                "be launched with COCONET_HOST_SYNC",
          L.description);
}

void release_barrier(void) {
  L.barrier_result = L.barrier_acc;
  for (cuda_thread &t : L.threads)
    if (t.state == AT_BARRIER) t.state = READY;
  L.at_barrier = 0;
  L.barrier_kind = -1;
}

unsigned live_lanes(unsigned w) { return L.warps[w].present & ~L.warps[w].exited; }

// The bits lane src contributes to the collective of lane reader.
unsigned long long lane_value(unsigned w, unsigned need, unsigned reader, unsigned src) {
  if (!(need >> src & 1)) {
    const cuda_thread &t = L.threads[w * 32 + reader];
    const char *why = !(L.warps[w].present >> src & 1) ? "does not exist (partial warp)"
                      : (L.warps[w].exited >> src & 1) ? "has exited"
                                                       : "is not in the mask";
    fatal(warp_op_name(t.op), "in %s, warp %u lane %u reads lane %u, which %s (mask 0x%08x)", L.description, w, reader,
          src, why, t.mask);
  }
  return L.threads[w * 32 + src].value;
}

unsigned long long lane_result(unsigned w, unsigned need, unsigned lane) {
  const cuda_thread &t = L.threads[w * 32 + lane];
  const unsigned width = (unsigned)t.width;
  const unsigned base = lane & ~(width - 1);
  switch (t.op) {
    case WARP_SYNC: return 0;
    case WARP_SHFL: return lane_value(w, need, lane, base + ((unsigned)t.arg & (width - 1)));
    case WARP_SHFL_UP:
      return lane - base < (unsigned)t.arg ? t.value : lane_value(w, need, lane, lane - (unsigned)t.arg);
    case WARP_SHFL_DOWN:
      return lane - base + (unsigned)t.arg >= width ? t.value : lane_value(w, need, lane, lane + (unsigned)t.arg);
    case WARP_SHFL_XOR: {
      const unsigned src = lane ^ ((unsigned)t.arg & 31);
      return src >= base + width ? t.value : lane_value(w, need, lane, src);
    }
  }
  // Votes, matches and reductions over the lanes that take part.
  unsigned ballot = 0, match = 0, acc = 0;
  int sacc = 0;
  bool first = true;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(need >> l & 1)) continue;
    const unsigned long long v = L.threads[w * 32 + l].value;
    if (v) ballot |= 1u << l;
    if (v == t.value) match |= 1u << l;
    const unsigned u = (unsigned)v;
    const int s = (int)u;
    if (first) {
      acc = u;
      sacc = s;
      first = false;
      continue;
    }
    switch (t.op) {
      case WARP_REDUCE_ADD: acc += u; break;
      case WARP_REDUCE_MIN:
        acc = u < acc ? u : acc;
        sacc = s < sacc ? s : sacc;
        break;
      case WARP_REDUCE_MAX:
        acc = u > acc ? u : acc;
        sacc = s > sacc ? s : sacc;
        break;
      case WARP_REDUCE_AND: acc &= u; break;
      case WARP_REDUCE_OR: acc |= u; break;
      case WARP_REDUCE_XOR: acc ^= u; break;
    }
  }
  switch (t.op) {
    case WARP_BALLOT: return ballot;
    case WARP_ANY: return ballot != 0;
    case WARP_ALL: return ballot == need;
    case WARP_MATCH_ANY: return match;
    case WARP_MATCH_ALL: return match == need ? need : 0;
    case WARP_REDUCE_MIN:
    case WARP_REDUCE_MAX: return t.arg ? (unsigned)sacc : acc;
  }
  return acc;
}

// Completes the collective of the lanes of mask in warp w if all have arrived.
bool try_complete(unsigned w, unsigned mask) {
  const unsigned need = mask & live_lanes(w);
  int kind = -1;
  unsigned first = 0;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(need >> l & 1)) continue;
    const cuda_thread &t = L.threads[w * 32 + l];
    if (t.state != AT_WARP || t.mask != mask) return false;
    if (kind < 0) {
      kind = t.op;
      first = l;
    } else if (t.op != kind) {
      fatal(warp_op_name(t.op), "in %s, block (%u,%u,%u), warp %u: lane %u is at %s but lane %u is at %s with the "
            "same mask 0x%08x",
            L.description, blockIdx.x, blockIdx.y, blockIdx.z, w, l, warp_op_name(t.op), first, warp_op_name(kind),
            mask);
    }
  }
  unsigned long long results[32];
  for (unsigned l = 0; l < 32; ++l)
    if (need >> l & 1) results[l] = lane_result(w, need, l);
  for (unsigned l = 0; l < 32; ++l)
    if (need >> l & 1) {
      L.threads[w * 32 + l].result = results[l];
      L.threads[w * 32 + l].state = READY;
    }
  return true;
}

void thread_exit(void) {
  const unsigned t = L.current;
  const unsigned w = t / 32;
  L.threads[t].state = EXITED;
  L.exited++;
  L.warps[w].exited |= 1u << (t % 32);
  if (L.at_barrier > 0 && L.at_barrier + L.exited == L.nthreads) release_barrier();
  for (unsigned l = 0; l < 32 && w * 32 + l < L.nthreads; ++l) {
    const cuda_thread &other = L.threads[w * 32 + l];
    if (other.state == AT_WARP) try_complete(w, other.mask);
  }
  fiber_exit(&L.fibers[t]);
}

void fiber_main(void) {
  fiber_started();
  L.thread_main(L.ctx);
  thread_exit();
}

[[noreturn]] void report_deadlock(void) {
  char msg[1536];
  size_t n = 0;
  unsigned at_warp = 0;
  for (const cuda_thread &t : L.threads) at_warp += t.state == AT_WARP;
  n += (size_t)snprintf(msg + n, sizeof msg - n,
                        "in %s, block (%u,%u,%u) of %u threads: %u wait at %s, %u at warp collectives, %u have exited",
                        L.description, blockIdx.x, blockIdx.y, blockIdx.z, L.nthreads, L.at_barrier,
                        barrier_name(L.barrier_kind), at_warp, L.exited);
  for (unsigned w = 0; w < L.warps.size() && n < sizeof msg - 200; ++w) {
    unsigned waiting = 0, mask = 0;
    int op = 0;
    for (unsigned l = 0; l < 32 && w * 32 + l < L.nthreads; ++l) {
      const cuda_thread &t = L.threads[w * 32 + l];
      if (t.state != AT_WARP) continue;
      waiting |= 1u << l;
      mask = t.mask;
      op = t.op;
    }
    if (waiting)
      n += (size_t)snprintf(msg + n, sizeof msg - n, "; warp %u: lanes 0x%08x wait at %s (mask 0x%08x, e.g.), "
                            "lanes 0x%08x are elsewhere",
                            w, waiting, warp_op_name(op), mask, live_lanes(w) & ~waiting);
  }
  fatal("deadlock", "%s", msg);
}

void run_block(void) {
  while (L.exited < L.nthreads) {
    bool ran = false;
    for (unsigned t = 0; t < L.nthreads; ++t) {
      if (L.threads[t].state != READY) continue;
      L.current = t;
      threadIdx = L.threads[t].idx;
      fiber_switch_in(&L.fibers[t]);
      ran = true;
    }
    if (!ran) report_deadlock();
  }
}

}  // namespace

// The running launch for messages, or "host code" outside kernels.
const char *launch_description(void) { return L.active ? L.description : "host code"; }

bool launch_begin(int flags, const launch_site *site, const void *kernel, dim3 grid, dim3 block, size_t shmem,
                  cudaStream_t stream) {
  if (L.active) {
    char outer[sizeof L.description];
    memcpy(outer, L.description, sizeof outer);
    describe(site);
    fatal("kernel launch", "%s from inside another kernel (%s): dynamic parallelism is not supported", L.description,
          outer);
  }
  describe(site);
  const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
  cudaError_t err = cudaSuccess;
  if (!grid.x || !grid.y || !grid.z || !threads || threads > 1024 || block.x > 1024 || block.y > 1024 ||
      block.z > 64 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
    err = cudaErrorInvalidConfiguration;
  else if (shmem > kernel_max_dynamic_shared(kernel))
    err = cudaErrorInvalidValue;
  else if (!stream_is_valid(stream))
    err = cudaErrorInvalidResourceHandle;
  if (err != cudaSuccess) {
    COCONET_WARN(SUB_LAUNCH, "%s with grid (%u,%u,%u), block (%u,%u,%u), %zu bytes of shared memory: %s; not run",
                 L.description, grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem, cudaGetErrorString(err));
    set_last_error(err);
    return false;
  }
  COCONET_TRACE(SUB_LAUNCH, "%s: grid (%u,%u,%u), block (%u,%u,%u), %zu bytes of shared memory, %s", L.description,
                grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem,
                flags == COCONET_HOST_SYNC ? "fibers" : "simple loop");
  gridDim = grid;
  blockDim = block;
  L.shared = shmem ? aligned_alloc(128, (shmem + 127) / 128 * 128) : nullptr;
  if (shmem && !L.shared) fatal("kernel launch", "cannot allocate %zu bytes of dynamic shared memory", shmem);
  L.flags = flags;
  L.active = true;
  return true;
}

void launch_end(void) {
  if (memcheck_enabled()) memcheck_verify(L.description);
  free(L.shared);
  L.shared = nullptr;
  L.active = false;
}

void launch_fibers(void (*thread_main)(void *), void *ctx) {
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  const unsigned nwarps = (n + 31) / 32;
  L.thread_main = thread_main;
  L.ctx = ctx;
  L.nthreads = n;
  L.fibers = fiber_pool(n);
  L.threads.assign(n, cuda_thread{});
  L.warps.assign(nwarps, warp_lanes{});
  for (unsigned bz = 0; bz < gridDim.z; ++bz)
    for (unsigned by = 0; by < gridDim.y; ++by)
      for (unsigned bx = 0; bx < gridDim.x; ++bx) {
        blockIdx = uint3{bx, by, bz};
        unsigned t = 0;
        for (unsigned tz = 0; tz < blockDim.z; ++tz)
          for (unsigned ty = 0; ty < blockDim.y; ++ty)
            for (unsigned tx = 0; tx < blockDim.x; ++tx, ++t) {
              L.threads[t] = cuda_thread{};
              L.threads[t].idx = uint3{tx, ty, tz};
              L.threads[t].state = READY;
              fiber_prepare(&L.fibers[t], fiber_main);
            }
        for (unsigned w = 0; w < nwarps; ++w) {
          const unsigned lanes = n - w * 32 < 32 ? n - w * 32 : 32;
          L.warps[w].present = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
          L.warps[w].exited = 0;
        }
        L.exited = 0;
        L.at_barrier = 0;
        L.barrier_kind = -1;
        run_block();
      }
}

int block_barrier(int kind, int predicate) {
  require_sync(barrier_name(kind));
  if (L.barrier_kind < 0) {
    L.barrier_kind = kind;
    L.barrier_acc = kind == BARRIER_AND ? 1 : 0;
  } else if (L.barrier_kind != kind) {
    fatal(barrier_name(kind), "in %s, block (%u,%u,%u): thread (%u,%u,%u) reaches %s while others wait at %s",
          L.description, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z,
          barrier_name(kind), barrier_name(L.barrier_kind));
  }
  if (kind == BARRIER_COUNT) L.barrier_acc += predicate;
  if (kind == BARRIER_AND) L.barrier_acc &= predicate;
  if (kind == BARRIER_OR) L.barrier_acc |= predicate;
  L.at_barrier++;
  if (L.at_barrier + L.exited == L.nthreads) {
    release_barrier();
    return L.barrier_result;
  }
  const unsigned t = L.current;
  L.threads[t].state = AT_BARRIER;
  fiber_switch_out(&L.fibers[t]);
  return L.barrier_result;
}

unsigned long long warp_collective(int kind, unsigned mask, unsigned long long value, int arg, int width) {
  require_sync(warp_op_name(kind));
  const unsigned t = L.current;
  const unsigned w = t / 32, lane = t % 32;
  if (!(mask >> lane & 1))
    fatal(warp_op_name(kind),
          "in %s, thread (%u,%u,%u) of block (%u,%u,%u) (warp %u lane %u) is not in its mask 0x%08x",
          L.description, threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z, w, lane, mask);
  if (width < 1 || width > 32 || (width & (width - 1)))
    fatal(warp_op_name(kind), "in %s: width %d is not a power of two between 1 and 32", L.description, width);
  cuda_thread &me = L.threads[t];
  me.op = kind;
  me.mask = mask;
  me.value = value;
  me.arg = arg;
  me.width = width;
  me.state = AT_WARP;
  if (!try_complete(w, mask)) fiber_switch_out(&L.fibers[t]);
  return me.result;
}

unsigned warp_active_mask(void) {
  require_sync("__activemask");
  return live_lanes(L.current / 32);
}

void device_trap(const char *what) {
  fatal(what, "in %s, thread (%u,%u,%u) of block (%u,%u,%u)", launch_description(), threadIdx.x, threadIdx.y,
        threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z);
}

void device_nanosleep(unsigned ns) {
  (void)ns;
  sched_yield();
}

long long device_clock64(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

unsigned long long device_globaltimer(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

}  // namespace coconet_host

extern "C" void *coconet_host_dynamic_shared(void) {
  if (!coconet_host::L.active) coconet_host::fatal("coconet_host_dynamic_shared", "called outside a kernel");
  return coconet_host::L.shared;
}
