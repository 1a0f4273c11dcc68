/* coconet_fused.h: symmetric memory and the fused kernels' run-time path choice.
 *
 * Included by a translated file that has `#pragma coconet symmetric` or a
 * region whose `fuse` group became a fused kernel. C++ (NCCL's device API,
 * nccl_device.h, is C++); builds with nvcc and against the host backend.
 *
 *   coconet_symmetric_malloc(&p, bytes)  what `#pragma coconet symmetric`
 *                          makes of cudaMalloc: ncclMemAlloc, recorded here
 *   coconet_free(p)        what cudaFree becomes in such a file: a symmetric
 *                          allocation is deregistered from every communicator
 *                          (collective) and released with ncclMemFree; other
 *                          pointers go to cudaFree
 *   coconet_comm_destroy(comm)
 *                          what ncclCommDestroy becomes: the device
 *                          communicator and windows coconet made on comm are
 *                          released first
 *   coconet_fused_ready(...)
 *                          at a fused kernel's call site: whether the fused
 *                          kernel can run (every buffer it reaches on a peer
 *                          is in a symmetric allocation, the whole team is one
 *                          LSA domain, the rank count fits, a one-shot
 *                          kernel's buffer is at most COCONET_ONESHOT_MAX_BYTES); registers the
 *                          windows and creates the device communicator on
 *                          first use; else the NCCL path runs. Under
 *                          COCONET_DEBUG=INFO (or TRACE) each region says the
 *                          path it takes, and why it falls back, once.
 *
 *   coconet_fused_rows_grid, coconet_fused_shared, coconet_ld,
 *   coconet_reduce_span, coconet_reduce_span_shared, coconet_gather_span
 *                          the fused kernel of row-wise kernels: its grid and
 *                          shared memory, and what it does with a block's rows
 *                          (sum them from the peers, write them to the peers)
 *
 * Windows are registered lazily, at the first fused call site that needs
 * them, with the communicator of that call: registration and device
 * communicator creation are collective, so every rank must reach the same call
 * sites with buffers allocated the same way (as SPMD programs do); a rank that
 * takes the other path leaves its peers waiting (the host backend reports it
 * after COCONET_HOST_TIMEOUT). A buffer's offset in its allocation must be the
 * same on every rank (ncclGetLsaPointer reads the peers at this rank's offset).
 * The tables (inline functions' statics: one per program, shared by every file
 * that includes this header) are not thread-safe.
 */
#ifndef COCONET_FUSED_H
#define COCONET_FUSED_H

#include <coconet.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
/* NCCL 2.28's device headers do not build with -Wextra -Werror (unused parameters): not our warnings. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
#include <nccl_device.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <type_traits>

#define COCONET_FUSED_MAX_BLOCKS 128 /* blocks of a fused kernel = LSA barriers of its device communicator */
#define COCONET_MAX_SYMMETRIC 256    /* live symmetric allocations */
#define COCONET_MAX_BUFFERS 16       /* buffers one fused kernel reaches on its peers */
#ifndef COCONET_ONESHOT_MAX_BYTES
#define COCONET_ONESHOT_MAX_BYTES (1u << 20) /* one-shot kernels (every rank reads all N copies): up to this buffer size */
#endif

typedef struct coconet_symmetric_alloc {
  char *base;
  size_t bytes;
  ncclComm_t comm[COCONET_MAX_COMMS];   /* the communicators it is registered with */
  ncclWindow_t win[COCONET_MAX_COMMS];
} coconet_symmetric_alloc;

inline coconet_symmetric_alloc *coconet_symmetric_table(void) {
  static coconet_symmetric_alloc table[COCONET_MAX_SYMMETRIC];
  return table;
}

static inline coconet_symmetric_alloc *coconet_symmetric_find(const void *p, size_t bytes) {
  coconet_symmetric_alloc *t = coconet_symmetric_table();
  const char *c = (const char *)p;
  for (int i = 0; i < COCONET_MAX_SYMMETRIC; i++)
    if (t[i].base && c >= t[i].base && c + bytes <= t[i].base + t[i].bytes) return &t[i];
  return NULL;
}

/* cudaMalloc's contract (cudaErrorMemoryAllocation when it cannot), on ncclMemAlloc. */
template <class T>
static inline cudaError_t coconet_symmetric_malloc(T **p, size_t bytes) {
  coconet_symmetric_alloc *t = coconet_symmetric_table(), *slot = NULL;
  for (int i = 0; i < COCONET_MAX_SYMMETRIC && !slot; i++)
    if (!t[i].base) slot = &t[i];
  void *mem = NULL;
  if (!slot || !bytes || ncclMemAlloc(&mem, bytes) != ncclSuccess) {
    if (!slot) fprintf(stderr, "coconet: more than COCONET_MAX_SYMMETRIC (%d) symmetric allocations\n", COCONET_MAX_SYMMETRIC);
    return bytes ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
  }
  memset(slot, 0, sizeof *slot);
  slot->base = (char *)mem;
  slot->bytes = bytes;
  *p = (T *)mem;
  return cudaSuccess;
}

template <class T>
static inline cudaError_t coconet_free(T *p) {
  coconet_symmetric_alloc *a = p ? coconet_symmetric_find((const void *)p, 1) : NULL;
  if (!a || a->base != (const char *)p) return cudaFree((void *)p);
  for (int c = 0; c < COCONET_MAX_COMMS; c++)
    if (a->comm[c]) COCONET_NCCL_CHECK(ncclCommWindowDeregister(a->comm[c], a->win[c]));
  COCONET_NCCL_CHECK(ncclMemFree(a->base));
  memset(a, 0, sizeof *a);
  return cudaSuccess;
}

/* The window of comm that holds a's memory, registered on first use (collective). */
static inline ncclWindow_t coconet_symmetric_window(ncclComm_t comm, coconet_symmetric_alloc *a) {
  int c = 0;
  while (c < COCONET_MAX_COMMS && a->comm[c] && a->comm[c] != comm) c++;
  if (c == COCONET_MAX_COMMS) {
    fprintf(stderr, "coconet: a symmetric allocation is registered with more than COCONET_MAX_COMMS (%d) communicators\n",
            COCONET_MAX_COMMS);
    abort();
  }
  if (!a->comm[c]) {
    COCONET_NCCL_CHECK(ncclCommWindowRegister(comm, a->base, a->bytes, &a->win[c], NCCL_WIN_COLL_SYMMETRIC));
    a->comm[c] = comm;
  }
  return a->win[c];
}

/*
 * Device communicators: one per communicator, created at its first fused call
 */

typedef struct coconet_devcomm_entry {
  ncclComm_t comm;
  ncclDevComm dev;
} coconet_devcomm_entry;

inline coconet_devcomm_entry *coconet_devcomm_table(void) {
  static coconet_devcomm_entry table[COCONET_MAX_COMMS];
  return table;
}

static inline const ncclDevComm *coconet_devcomm(ncclComm_t comm) {
  coconet_devcomm_entry *t = coconet_devcomm_table(), *free_slot = NULL;
  for (int i = 0; i < COCONET_MAX_COMMS; i++) {
    if (t[i].comm == comm) return &t[i].dev;
    if (!t[i].comm && !free_slot) free_slot = &t[i];
  }
  if (!free_slot) {
    fprintf(stderr, "coconet: more than COCONET_MAX_COMMS (%d) communicators run fused kernels\n", COCONET_MAX_COMMS);
    abort();
  }
  ncclDevCommRequirements reqs;
  memset(&reqs, 0, sizeof reqs);
  reqs.lsaBarrierCount = COCONET_FUSED_MAX_BLOCKS;
  COCONET_NCCL_CHECK(ncclDevCommCreate(comm, &reqs, &free_slot->dev));
  free_slot->comm = comm;
  return &free_slot->dev;
}

/* Releases what coconet made on comm (collective), then destroys it. */
static inline ncclResult_t coconet_comm_destroy(ncclComm_t comm) {
  coconet_devcomm_entry *d = coconet_devcomm_table();
  for (int i = 0; i < COCONET_MAX_COMMS; i++)
    if (d[i].comm == comm && comm) {
      COCONET_NCCL_CHECK(ncclDevCommDestroy(comm, &d[i].dev));
      d[i].comm = NULL;
    }
  coconet_symmetric_alloc *t = coconet_symmetric_table();
  for (int i = 0; i < COCONET_MAX_SYMMETRIC; i++)
    for (int c = 0; c < COCONET_MAX_COMMS; c++)
      if (t[i].base && t[i].comm[c] == comm && comm) {
        COCONET_NCCL_CHECK(ncclCommWindowDeregister(comm, t[i].win[c]));
        t[i].comm[c] = NULL;
      }
  coconet_comm_forget(comm);
  return ncclCommDestroy(comm);
}

/*
 * The path a fused call site takes
 */

/* A fused kernel's view of its peers: the device communicator and, per
 * buffer, its window and offset. */
typedef struct coconet_fused_args {
  ncclDevComm dev;
  ncclWindow_t win[COCONET_MAX_BUFFERS];
  size_t offset[COCONET_MAX_BUFFERS];
} coconet_fused_args;

/* One per region (a zero-initialised static in the generated code). */
typedef struct coconet_fused_state {
  const char *region;
  bool said_fused, said_fallback;
} coconet_fused_state;

static inline bool coconet_debug_info(void) {
  const char *v = getenv("COCONET_DEBUG");
  return v && (strcmp(v, "INFO") == 0 || strcmp(v, "TRACE") == 0);
}

/* Blocks of a fused row-wise kernel: one for each block of the grid its kernel
 * is launched with on this rank's rows (or on the rows left over, when there
 * are more of them), at most COCONET_FUSED_MAX_BLOCKS. per_block: the rows a
 * block of the kernel runs (1, or its warps or threads with a warp or a thread
 * per row). */
static inline unsigned coconet_fused_rows_grid(size_t rows, size_t tail_rows, size_t per_block) {
  if (!per_block) per_block = 1;
  size_t most = rows > tail_rows ? rows : tail_rows;
  size_t blocks = (most + per_block - 1) / per_block;
  if (blocks > COCONET_FUSED_MAX_BLOCKS) blocks = COCONET_FUSED_MAX_BLOCKS;
  return blocks ? (unsigned)blocks : 1u;
}

/* A fused row-wise kernel launched with `bytes` of dynamic shared memory (its
 * kernel's): above the default 48 KiB a kernel must be allowed them, as the
 * program as written allows its own kernel. */
static inline void coconet_fused_shared(const void *kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    COCONET_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

/* Blocks of COCONET_BLOCK_SIZE threads for a fused kernel over n elements. */
static inline unsigned coconet_fused_grid(size_t n) {
  size_t blocks = (n + COCONET_BLOCK_SIZE - 1) / COCONET_BLOCK_SIZE;
  if (blocks > COCONET_FUSED_MAX_BLOCKS) blocks = COCONET_FUSED_MAX_BLOCKS;
  return blocks ? (unsigned)blocks : 1u;
}

/* Whether the fused kernel of a region runs: names[i] is buffer i's name, at
 * bufs[i] with bytes[i] bytes, reached on the peers; max_bytes (0: none) the
 * largest buffer the kernel takes (one-shot kernels). */
static inline bool coconet_fused_ready(coconet_fused_state *state, ncclComm_t comm, int nranks, int nbufs,
                                       const char *const *names, const void *const *bufs, const size_t *bytes,
                                       size_t max_bytes, coconet_fused_args *args) {
  char why[256] = "";
  const ncclTeam lsa = ncclTeamLsa(comm);
  if (max_bytes && nbufs > 0 && bytes[0] > max_bytes)
    snprintf(why, sizeof why, "'%s' has %zu bytes, more than the one-shot kernel takes (COCONET_ONESHOT_MAX_BYTES, %zu)",
             names[0], bytes[0], max_bytes);
  else if (nbufs > COCONET_MAX_BUFFERS)
    snprintf(why, sizeof why, "it reaches %d buffers on its peers, more than COCONET_MAX_BUFFERS (%d)", nbufs,
             COCONET_MAX_BUFFERS);
  else if (lsa.nRanks != nranks)
    snprintf(why, sizeof why, "the %d ranks are not one LSA domain (%d share memory: several nodes)", nranks,
             lsa.nRanks);
  else if (nranks > COCONET_BLOCK_SIZE)
    snprintf(why, sizeof why, "%d ranks are more than a block's %d threads (the tail)", nranks, COCONET_BLOCK_SIZE);
  coconet_symmetric_alloc *allocs[COCONET_MAX_BUFFERS] = {NULL};
  for (int i = 0; i < nbufs && !why[0]; i++) {
    allocs[i] = coconet_symmetric_find(bufs[i], bytes[i]);
    if (!allocs[i])
      snprintf(why, sizeof why, "'%s' is not in symmetric memory (allocate it under #pragma coconet symmetric)",
               names[i]);
    else
      args->offset[i] = (size_t)((const char *)bufs[i] - allocs[i]->base);
  }
  const bool fused = !why[0];
#if defined(COCONET_HOST_H)
  /* The host backend compares the call with the other ranks' (the path, the buffers' offsets) before the
     collective registrations below, so that a rank on the other path is reported, not waited for. */
  if (fused) coconet_host_fused_check(comm, state->region, nbufs, args->offset);
#endif
  if (fused) {
    for (int i = 0; i < nbufs; i++) args->win[i] = coconet_symmetric_window(comm, allocs[i]);
    args->dev = *coconet_devcomm(comm);
  }
  if (fused ? !state->said_fused : !state->said_fallback) {
    if (coconet_debug_info()) {
      int rank = 0;
      COCONET_NCCL_CHECK(ncclCommUserRank(comm, &rank));
      if (fused)
        fprintf(stderr, "coconet[rank %d] INFO region %s: fused kernel on symmetric memory (%d ranks)\n", rank,
                state->region, nranks);
      else
        fprintf(stderr, "coconet[rank %d] INFO region %s: NCCL path: %s\n", rank, state->region, why);
    }
    if (fused) state->said_fused = true;
    else state->said_fallback = true;
  }
  return fused;
}

/*
 * In fused kernels
 */

/* The buffer at `offset` in window win, as LSA peer `peer` maps it here. */
template <class T>
__device__ __forceinline__ T *coconet_peer(ncclWindow_t win, size_t offset, int peer) {
  return (T *)ncclGetLsaPointer(win, offset, peer);
}

enum { COCONET_SUM, COCONET_PROD, COCONET_MAX, COCONET_MIN, COCONET_AVG };

/* The compute type of a reduction: float for the 16-bit floats, else the type. */
template <class T>
__device__ __forceinline__ T coconet_widen(T v) {
  return v;
}
__device__ __forceinline__ float coconet_widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float coconet_widen(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T, class A>
__device__ __forceinline__ T coconet_narrow(A a) {
  return (T)a;
}
template <>
__device__ __forceinline__ __half coconet_narrow<__half, float>(float a) {
  return __float2half_rn(a);
}
template <>
__device__ __forceinline__ __nv_bfloat16 coconet_narrow<__nv_bfloat16, float>(float a) {
  return __float2bfloat16_rn(a);
}

template <int Op, class A>
__device__ __forceinline__ A coconet_combine(A a, A b) {
  if constexpr (std::is_same<A, bool>::value) {  /* NCCL has no bool: moved as uint8 */
    return (A)coconet_combine<Op, unsigned char>((unsigned char)a, (unsigned char)b);
  } else if constexpr (std::is_integral<A>::value) {
    typedef typename std::make_unsigned<A>::type U; /* sums and products wrap, as NCCL's do */
    if constexpr (Op == COCONET_PROD) return (A)(U)((U)a * (U)b);
    else if constexpr (Op == COCONET_MAX) return a > b ? a : b;
    else if constexpr (Op == COCONET_MIN) return a < b ? a : b;
    else return (A)(U)((U)a + (U)b);
  } else {
    if constexpr (Op == COCONET_PROD) return a * b;
    else if constexpr (Op == COCONET_MAX) return std::is_same<A, float>::value ? fmaxf(a, b) : fmax(a, b);
    else if constexpr (Op == COCONET_MIN) return std::is_same<A, float>::value ? fminf(a, b) : fmin(a, b);
    else return a + b;
  }
}

/* Element i of window offset `offset` is aligned to N elements of T (windows start page-aligned). */
template <int N, class T>
__device__ __forceinline__ bool coconet_window_aligned(size_t offset, size_t i) {
  return (offset + i * sizeof(T)) % (N * sizeof(T)) == 0;
}

/* Element i of the buffer at `offset` in win reduced over the nranks LSA peers:
 * ((v0 op v1) op v2) ... in rank order, in the compute type, rounded once
 * (the host backend's NCCL reduces the same way; NCCL on GPUs does not keep
 * rank order). Avg divides the sum by nranks. */
template <int Op, class T>
__device__ __forceinline__ T coconet_reduce(ncclWindow_t win, size_t offset, int nranks, size_t i) {
  auto acc = coconet_widen(coconet_peer<const T>(win, offset, 0)[i]);
  for (int peer = 1; peer < nranks; peer++)
    acc = coconet_combine<Op>(acc, coconet_widen(coconet_peer<const T>(win, offset, peer)[i]));
  if constexpr (Op == COCONET_AVG) acc = acc / (decltype(acc))nranks;
  return coconet_narrow<T>(acc);
}

/* coconet_reduce of elements [i0, i0 + N) into out, with one N-element load per peer
 * (the same operations, lane by lane, in the same order: the same bits). */
template <int Op, class T, int N>
__device__ __forceinline__ void coconet_reduce_vec(ncclWindow_t win, size_t offset, int nranks, size_t i0,
                                                   T (&out)[N]) {
  T v[N];
  coconet_load(coconet_peer<const T>(win, offset, 0) + i0, v);
  typedef decltype(coconet_widen(v[0])) A;
  A acc[N];
  for (int k = 0; k < N; k++) acc[k] = coconet_widen(v[k]);
  for (int peer = 1; peer < nranks; peer++) {
    coconet_load(coconet_peer<const T>(win, offset, peer) + i0, v);
    for (int k = 0; k < N; k++) acc[k] = coconet_combine<Op>(acc[k], coconet_widen(v[k]));
  }
  for (int k = 0; k < N; k++) {
    if constexpr (Op == COCONET_AVG) acc[k] = acc[k] / (A)nranks;
    out[k] = coconet_narrow<T>(acc[k]);
  }
}

/*
 * In fused row-wise kernels: the block of the user's row-wise kernel runs
 * between a reduction of its rows from the peers and a write of its output
 * rows to the peers, all by the threads of one block
 */

/* The thread's place in its block and the block's threads, over all three
 * dimensions (a row-wise kernel's block may have several). */
__device__ __forceinline__ size_t coconet_thread_rank() {
  return threadIdx.x + (size_t)blockDim.x * (threadIdx.y + (size_t)blockDim.y * threadIdx.z);
}
__device__ __forceinline__ size_t coconet_block_threads() { return (size_t)blockDim.x * blockDim.y * blockDim.z; }

/* What __ldg becomes in the fused copy of a row-wise kernel: a plain, coherent
 * load. The fused kernel writes the reduced rows that the kernel then reads,
 * and the read-only cache __ldg goes through is not coherent with writes made
 * by the same kernel. */
template <class T>
__device__ __forceinline__ T coconet_ld(const T *p) {
  return *p;
}

/* Elements [e0, e1) of the buffer at `offset` in win, reduced over the nranks
 * LSA peers (coconet_reduce: rank order, the compute type) into dst, by the
 * threads of the block (all its dimensions): 16 bytes at a time while dst and the window are
 * aligned to that, then one by one. For elements no peer writes meanwhile
 * (this rank's rows: a peer writes only its own). */
template <int Op, class T>
__device__ __forceinline__ void coconet_reduce_span(ncclWindow_t win, size_t offset, int nranks, T *dst, size_t e0,
                                                    size_t e1) {
  constexpr int N = sizeof(T) < 16 ? 16 / (int)sizeof(T) : 1;
  if (N > 1 && coconet_aligned<N>(e0, dst) && coconet_window_aligned<N, T>(offset, e0)) {
    const size_t nvec = (e1 - e0) / N;
    for (size_t j = coconet_thread_rank(); j < nvec; j += coconet_block_threads()) {
      T v[N];
      coconet_reduce_vec<Op, T, N>(win, offset, nranks, e0 + N * j, v);
      coconet_store(dst + e0 + N * j, v);
    }
    e0 += N * nvec;
  }
  for (size_t i = e0 + coconet_thread_rank(); i < e1; i += coconet_block_threads())
    dst[i] = coconet_reduce<Op, T>(win, offset, nranks, i);
}

/* The same for elements every rank reduces into its own copy while its peers
 * may still read that copy (the rows left over, reduced in place): chunks of
 * K elements a thread, and the peers' same block meets at bar between reading
 * a chunk and writing it. Every rank's block calls it with the same e1 - e0. */
template <int Op, class T, class Bar>
__device__ __forceinline__ void coconet_reduce_span_shared(Bar &bar, ncclWindow_t win, size_t offset, int nranks,
                                                           T *dst, size_t e0, size_t e1) {
  constexpr int K = 4;
  const size_t t = coconet_thread_rank(), nt = coconet_block_threads();
  for (size_t c = e0; c < e1; c += K * nt) {
    T v[K];
    for (int k = 0; k < K; k++) {
      const size_t i = c + k * nt + t;
      if (i < e1) v[k] = coconet_reduce<Op, T>(win, offset, nranks, i);
    }
    bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
    for (int k = 0; k < K; k++) {
      const size_t i = c + k * nt + t;
      if (i < e1) dst[i] = v[k];
    }
  }
}

/* Elements [e0, e1) of src, this rank's copy of the buffer at `offset` in
 * win, written to every other LSA peer's copy, by the threads of the block (16
 * bytes at a time while aligned): what the AllGather of this rank's rows does. */
template <class T>
__device__ __forceinline__ void coconet_gather_span(const ncclDevComm &dev, ncclWindow_t win, size_t offset,
                                                    const T *src, size_t e0, size_t e1) {
  constexpr int N = sizeof(T) < 16 ? 16 / (int)sizeof(T) : 1;
  if (N > 1 && coconet_aligned<N>(e0, src) && coconet_window_aligned<N, T>(offset, e0)) {
    const size_t nvec = (e1 - e0) / N;
    for (size_t j = coconet_thread_rank(); j < nvec; j += coconet_block_threads()) {
      T v[N];
      coconet_load(src + e0 + N * j, v);
      for (int peer = 0; peer < dev.lsaSize; peer++)
        if (peer != dev.lsaRank) coconet_store(coconet_peer<T>(win, offset, peer) + e0 + N * j, v);
    }
    e0 += N * nvec;
  }
  for (size_t i = e0 + coconet_thread_rank(); i < e1; i += coconet_block_threads())
    for (int peer = 0; peer < dev.lsaSize; peer++)
      if (peer != dev.lsaRank) coconet_peer<T>(win, offset, peer)[i] = src[i];
}

#endif
