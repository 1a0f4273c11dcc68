/* coconet_verify.h: what the harness of `coconet --verify` calls on the
 * host backend. The translator generates a program that contains the user's
 * file, runs each region as written and as scheduled on the same random
 * inputs under MPI, and compares every buffer and host variable the region
 * leaves behind; this header holds the parts that do not depend on the region:
 * MPI and NCCL set-up, the handles a region needs, allocation, random filling,
 * snapshots and the comparison, and the report (read back by the translator).
 *
 * One program holds the harness of every region of a file; each region runs
 * between coconet_verify_region_begin and coconet_verify_region_end.
 * Report lines (rank 0, standard output), for region number R:
 *   coconet-verify: region R buffer NAME TYPE ULP    largest difference in ULPs, all ranks
 *   coconet-verify: region R mismatch TEXT           the first element or host variable
 *                                                    beyond the bound (lowest rank first)
 *   coconet-verify: region R paths TAKEN             the runs that took the path the schedule is
 *                                                    for (a launcher that picks its kernel at run
 *                                                    time), when the region has one
 *   coconet-verify: region R done NRANKS TRIALS MISMATCHES
 */
#ifndef COCONET_VERIFY_H
#define COCONET_VERIFY_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

/* Element types, numbered as the translator's IrType. */
enum { COCONET_VERIFY_F32 = 1, COCONET_VERIFY_F16, COCONET_VERIFY_BF16, COCONET_VERIFY_F64, COCONET_VERIFY_I32,
       COCONET_VERIFY_I64, COCONET_VERIFY_U32, COCONET_VERIFY_U8, COCONET_VERIFY_I8, COCONET_VERIFY_BOOL };

enum { COCONET_VERIFY_MAX_HANDLES = 8, COCONET_VERIFY_MAX_BUFFERS = 64 };

struct coconet_verify_buffer {
  const char *name;
  int type;
  size_t count;
  void *dev;
  std::vector<unsigned char> written, scheduled;  /* snapshots after each run */
  double max_ulp;
};

struct coconet_verify_ctx {
  int rank, nranks;
  ncclComm_t comm;
  cudaStream_t streams[COCONET_VERIFY_MAX_HANDLES];
  cudaEvent_t events[COCONET_VERIFY_MAX_HANDLES];
  cublasHandle_t cublas;
  coconet_verify_buffer buffers[COCONET_VERIFY_MAX_BUFFERS];
  int nbuffers;
  long mismatches;
  long ulp_bound;     /* largest difference accepted, in units in the last place */
  bool reassociated;  /* a sum runs in another order: a float element also passes within the
                         interpreter's tolerance of its type (coconet_verify_relative) times the
                         buffer's largest magnitude (rounding magnified where values cancel) */
  char first[512];    /* the first mismatch */
  long paths;         /* the runs that took the path the schedule is for; -1: the region has none */
};

/* A harness whose regions have fused kernels allocates its buffers in symmetric
 * memory (so that the fused kernels run, not only their NCCL-path fallback). */
#ifdef COCONET_VERIFY_SYMMETRIC
#include <coconet_fused.h>
#define COCONET_VERIFY_MALLOC coconet_symmetric_malloc
#define COCONET_VERIFY_FREE coconet_free
#define COCONET_VERIFY_COMM_DESTROY coconet_comm_destroy
#else
#define COCONET_VERIFY_MALLOC cudaMalloc
#define COCONET_VERIFY_FREE cudaFree
#define COCONET_VERIFY_COMM_DESTROY ncclCommDestroy
#endif

#define COCONET_VERIFY_CHECK(call, ok)                                                             \
  do {                                                                                             \
    if ((call) != (ok)) {                                                                          \
      std::fprintf(stderr, "coconet-verify: %s:%d: %s failed\n", __FILE__, __LINE__, #call);      \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

static inline void coconet_verify_begin(int *argc, char ***argv, coconet_verify_ctx *cx) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &cx->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &cx->nranks);
  ncclUniqueId id;
  if (cx->rank == 0) COCONET_VERIFY_CHECK(ncclGetUniqueId(&id), ncclSuccess);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  COCONET_VERIFY_CHECK(ncclCommInitRank(&cx->comm, cx->nranks, id, cx->rank), ncclSuccess);
  for (int i = 0; i < COCONET_VERIFY_MAX_HANDLES; i++) {
    COCONET_VERIFY_CHECK(cudaStreamCreate(&cx->streams[i]), cudaSuccess);
    COCONET_VERIFY_CHECK(cudaEventCreate(&cx->events[i]), cudaSuccess);
  }
  COCONET_VERIFY_CHECK(cublasCreate(&cx->cublas), CUBLAS_STATUS_SUCCESS);
  COCONET_VERIFY_CHECK(cublasSetStream(cx->cublas, cx->streams[0]), CUBLAS_STATUS_SUCCESS);
  cx->nbuffers = 0;
}

static inline void coconet_verify_region_begin(coconet_verify_ctx *cx, long ulp_bound, bool reassociated) {
  for (int i = 0; i < COCONET_VERIFY_MAX_BUFFERS; i++) {
    coconet_verify_buffer *b = &cx->buffers[i];
    b->name = NULL;
    b->dev = NULL;
    b->count = 0;
    b->max_ulp = 0;
  }
  cx->nbuffers = 0;
  cx->mismatches = 0;
  cx->ulp_bound = ulp_bound;
  cx->reassociated = reassociated;
  cx->first[0] = '\0';
  cx->paths = -1;
}

/* Before a scheduled run: whether it takes the path the schedule is for. */
static inline void coconet_verify_path(coconet_verify_ctx *cx, bool taken) {
  cx->paths = (cx->paths < 0 ? 0 : cx->paths) + (taken ? 1 : 0);
}

/* The relative difference accepted where a region sums in another order: the
 * tolerance of `coconet --verify=ir` (translator/interp/interp_verify.c) for the type. */
static inline double coconet_verify_relative(int type) {
  switch (type) {
  case COCONET_VERIFY_F32: return 1e-5;
  case COCONET_VERIFY_F64: return 1e-12;
  case COCONET_VERIFY_F16: return 1e-3;
  case COCONET_VERIFY_BF16: return 8e-3;
  default: return 0;
  }
}

static inline size_t coconet_verify_size(int type) {
  switch (type) {
  case COCONET_VERIFY_F16: case COCONET_VERIFY_BF16: return 2;
  case COCONET_VERIFY_F64: case COCONET_VERIFY_I64: return 8;
  case COCONET_VERIFY_U8: case COCONET_VERIFY_I8: case COCONET_VERIFY_BOOL: return 1;
  default: return 4;
  }
}

/* The buffer for a region's tensor (allocated once, at the largest count). */
static inline void *coconet_verify_buffer_of(coconet_verify_ctx *cx, int id, const char *name, int type, size_t count) {
  coconet_verify_buffer *b = &cx->buffers[id];
  if (id >= cx->nbuffers) cx->nbuffers = id + 1;
  if (!b->dev || b->count < count) {
    if (b->dev) COCONET_VERIFY_CHECK(COCONET_VERIFY_FREE(b->dev), cudaSuccess);
    COCONET_VERIFY_CHECK(COCONET_VERIFY_MALLOC(&b->dev, (count ? count : 1) * coconet_verify_size(type)), cudaSuccess);
  }
  b->name = name;
  b->type = type;
  b->count = count;
  return b->dev;
}

/* The object a region reaches through a pointer for its members (`config->comm`),
   value-initialized for each input; the harness sets the members the region reads. */
template <typename T> static inline T *coconet_verify_object(T *) {
  static std::remove_const_t<T> object{};
  object = std::remove_const_t<T>{};
  return &object;
}

/* The object a pointer member of the harness's objects points at where the region reads it
   through `->` (`ctx.tp` of `ctx.tp->comm`): one for each member K, value-initialized for each
   input (the harness's own objects hold null pointers). */
template <int K, typename T> static inline T *coconet_verify_pointee(T *) {
  static std::remove_const_t<T> object{};
  object = std::remove_const_t<T>{};
  return &object;
}

static inline uint64_t coconet_verify_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Random contents: floats in [-1, 1), integers in [0, 16) ([-8, 8) for int8_t), bools either. */
static inline void coconet_verify_fill(coconet_verify_ctx *cx, int id, uint64_t seed) {
  coconet_verify_buffer *b = &cx->buffers[id];
  size_t es = coconet_verify_size(b->type);
  std::vector<unsigned char> host(b->count * es + 1);
  for (size_t i = 0; i < b->count; i++) {
    double u = (double)(coconet_verify_next(&seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    long k = (long)(coconet_verify_next(&seed) % 16);
    unsigned char *p = host.data() + i * es;
    switch (b->type) {
    case COCONET_VERIFY_F32: { float v = (float)u; std::memcpy(p, &v, 4); break; }
    case COCONET_VERIFY_F64: std::memcpy(p, &u, 8); break;
    case COCONET_VERIFY_F16: { __half v = __float2half((float)u); std::memcpy(p, &v, 2); break; }
    case COCONET_VERIFY_BF16: { __nv_bfloat16 v = __float2bfloat16((float)u); std::memcpy(p, &v, 2); break; }
    case COCONET_VERIFY_I64: { int64_t v = k; std::memcpy(p, &v, 8); break; }
    case COCONET_VERIFY_U8: *p = (unsigned char)k; break;
    case COCONET_VERIFY_I8: { int8_t v = (int8_t)(k - 8); std::memcpy(p, &v, 1); break; }
    case COCONET_VERIFY_BOOL: *p = (unsigned char)(k & 1); break;
    default: { int32_t v = (int32_t)k; std::memcpy(p, &v, 4); break; }
    }
  }
  COCONET_VERIFY_CHECK(cudaMemcpy(b->dev, host.data(), b->count * es, cudaMemcpyHostToDevice), cudaSuccess);
}

static inline void coconet_verify_snapshot(coconet_verify_ctx *cx, bool scheduled) {
  COCONET_VERIFY_CHECK(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < cx->nbuffers; i++) {
    coconet_verify_buffer *b = &cx->buffers[i];
    if (!b->dev) continue;
    std::vector<unsigned char> &to = scheduled ? b->scheduled : b->written;
    to.assign(b->count * coconet_verify_size(b->type), 0);
    COCONET_VERIFY_CHECK(cudaMemcpy(to.data(), b->dev, to.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  }
}

/* An element as an integer that orders like the value: the distance of two is in ULPs. */
static inline int64_t coconet_verify_ordered(int type, const unsigned char *p, double *value) {
  int64_t bits = 0;
  switch (type) {
  case COCONET_VERIFY_F32: { int32_t b; float f; std::memcpy(&b, p, 4); std::memcpy(&f, p, 4); *value = f;
    bits = b < 0 ? INT32_MIN - (int64_t)b : b; return bits; }
  case COCONET_VERIFY_F64: { int64_t b; std::memcpy(&b, p, 8); std::memcpy(value, p, 8);
    return b < 0 ? INT64_MIN - b : b; }
  case COCONET_VERIFY_F16: case COCONET_VERIFY_BF16: { int16_t b; std::memcpy(&b, p, 2);
    uint16_t u; std::memcpy(&u, p, 2);
    *value = type == COCONET_VERIFY_F16 ? (double)__half2float(*(const __half *)p)
                                        : (double)__bfloat162float(*(const __nv_bfloat16 *)p);
    (void)u;
    return b < 0 ? INT16_MIN - (int64_t)b : b; }
  case COCONET_VERIFY_I64: { int64_t v; std::memcpy(&v, p, 8); *value = (double)v; return v; }
  case COCONET_VERIFY_U32: { uint32_t v; std::memcpy(&v, p, 4); *value = v; return v; }
  case COCONET_VERIFY_U8: case COCONET_VERIFY_BOOL: *value = *p; return *p;
  case COCONET_VERIFY_I8: { int8_t v; std::memcpy(&v, p, 1); *value = v; return v; }
  default: { int32_t v; std::memcpy(&v, p, 4); *value = v; return v; }
  }
}

/* Compare elements [lo, hi) of buffer id between the two runs. */
static inline void coconet_verify_compare(coconet_verify_ctx *cx, int id, size_t lo, size_t hi, int trial) {
  coconet_verify_buffer *b = &cx->buffers[id];
  size_t es = coconet_verify_size(b->type);
  bool is_float = b->type <= COCONET_VERIFY_F64;
  if (hi > b->count) hi = b->count;
  double scale = 0;  /* the largest finite magnitude, as written */
  for (size_t i = lo; i < hi && cx->reassociated && is_float; i++) {
    double x;
    coconet_verify_ordered(b->type, b->written.data() + i * es, &x);
    if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
  }
  for (size_t i = lo; i < hi; i++) {
    double x, y;
    int64_t a = coconet_verify_ordered(b->type, b->written.data() + i * es, &x);
    int64_t c = coconet_verify_ordered(b->type, b->scheduled.data() + i * es, &y);
    bool both_nan = is_float && std::isnan(x) && std::isnan(y);
    double ulp = both_nan ? 0 : std::fabs((double)a - (double)c);
    if (ulp > b->max_ulp) b->max_ulp = ulp;
    if (ulp <= (is_float ? (double)cx->ulp_bound : 0.0)) continue;
    if (cx->reassociated && is_float &&
        std::fabs(x - y) <= coconet_verify_relative(b->type) * std::max(scale, std::max(std::fabs(x), std::fabs(y))))
      continue;
    if (cx->mismatches++ == 0)
      std::snprintf(cx->first, sizeof cx->first,
                    "%d ranks, rank %d, input %d: %s[%zu] is %.9g as written and %.9g scheduled (%.0f ULP apart)",
                    cx->nranks, cx->rank, trial, b->name, i, x, y, ulp);
  }
}

/* A host variable the region may change: the same after both runs? */
template <typename T>
static inline void coconet_verify_host(coconet_verify_ctx *cx, const char *name, const T &written, const T &scheduled,
                                       int trial) {
  if (std::memcmp(&written, &scheduled, sizeof(T)) == 0) return;
  if (cx->mismatches++ == 0)
    std::snprintf(cx->first, sizeof cx->first,
                  "%d ranks, rank %d, input %d: host variable '%s' differs after the region (as written vs scheduled)",
                  cx->nranks, cx->rank, trial, name);
}

/* A variable of the user's file: saved before a region's run as written, set back
 * before its run as scheduled (a region's `g_step++` runs both from the same
 * value), the written run's value compared with the scheduled run's. Numbers,
 * enums and arrays of them up to 16 MiB only: a pointer (a workspace allocated on
 * first use) or a struct holding one would be set back to memory the written run
 * freed, and two runs' allocations differ. */
template <typename T, bool Plain = false> struct coconet_verify_global {
  using element = typename std::remove_all_extents<T>::type;
  /* Numbers, enums, arrays of them; Plain: a class of those the translator found without pointers. */
  static constexpr bool kept = (std::is_arithmetic<element>::value || std::is_enum<element>::value ||
                                (Plain && std::is_trivially_copyable<element>::value)) &&
                               sizeof(T) <= (16u << 20);
  std::vector<unsigned char> before, written;
  void save(const T &v) {
    if constexpr (kept) {
      before.resize(sizeof(T));
      std::memcpy(before.data(), &v, sizeof(T));
    }
  }
  void restore(T &v) {
    if constexpr (kept) {
      written.resize(sizeof(T));
      std::memcpy(written.data(), &v, sizeof(T));
      std::memcpy(&v, before.data(), sizeof(T));
    }
  }
  void compare(coconet_verify_ctx *cx, const char *name, const T &v, int trial) {
    if constexpr (kept)
      if (std::memcmp(written.data(), &v, sizeof(T)) != 0 && cx->mismatches++ == 0)
        std::snprintf(cx->first, sizeof cx->first,
                      "%d ranks, rank %d, input %d: variable '%s' of the file differs after the region (as written "
                      "vs scheduled)", cx->nranks, cx->rank, trial, name);
  }
};

/* Gather region R's results on rank 0 and print its report; frees its buffers. */
static inline long coconet_verify_region_end(coconet_verify_ctx *cx, int region, int trials) {
  for (int i = 0; i < cx->nbuffers; i++) {
    coconet_verify_buffer *b = &cx->buffers[i];
    double m = b->max_ulp;
    MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (cx->rank == 0 && b->name) std::printf("coconet-verify: region %d buffer %s %d %.0f\n", region, b->name, b->type, m);
  }
  long total = cx->mismatches;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  /* The first mismatch of the lowest rank that has one. */
  int who = cx->mismatches ? cx->rank : cx->nranks;
  MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (total && who != 0) {
    if (cx->rank == who) MPI_Send(cx->first, sizeof cx->first, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    if (cx->rank == 0) MPI_Recv(cx->first, sizeof cx->first, MPI_CHAR, who, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (cx->rank == 0) {
    if (total) std::printf("coconet-verify: region %d mismatch %s\n", region, cx->first);
    if (cx->paths >= 0) std::printf("coconet-verify: region %d paths %ld\n", region, cx->paths);
    std::printf("coconet-verify: region %d done %d %d %ld\n", region, cx->nranks, trials, total);
    std::fflush(stdout);
  }
  for (int i = 0; i < cx->nbuffers; i++)
    if (cx->buffers[i].dev) COCONET_VERIFY_CHECK(COCONET_VERIFY_FREE(cx->buffers[i].dev), cudaSuccess);
  return total;
}

/* After every region: the exit status (1 when any region had a mismatch). */
static inline int coconet_verify_end(coconet_verify_ctx *cx, long mismatches) {
  for (int i = 0; i < COCONET_VERIFY_MAX_HANDLES; i++) {
    cudaStreamDestroy(cx->streams[i]);
    cudaEventDestroy(cx->events[i]);
  }
  cublasDestroy(cx->cublas);
  COCONET_VERIFY_COMM_DESTROY(cx->comm);
  MPI_Finalize();
  return mismatches ? 1 : 0;
}

#endif
