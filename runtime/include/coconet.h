/* coconet.h: what the code coconet generates calls at run time.
 *
 * Header-only (static inline functions and templates), included by every file
 * coconet translates; the prefix is coconet_ (macros COCONET_). It builds with
 * nvcc for the GPU and, unchanged, against the host backend's headers
 * (runtime/host) for --target=host.
 *
 *   COCONET_CUDA_CHECK(call), COCONET_NCCL_CHECK(call)
 *                          abort with file:line, the call and the error
 *   coconet_comm_info      rank and rank count of a communicator (cached)
 *   coconet_grid_size      blocks for a grid-stride kernel over n elements
 *                          (from the device's SM count, cached);
 *                          coconet_sum_grid_size: for one that ends in a block sum
 *   coconet_part_of        the elements of a chunk, this rank's slice of it
 *                          and the remainder (the translator's IrSpan);
 *                          coconet_part_rows: slices of whole rows;
 *                          coconet_slice, coconet_slice_rows: the whole buffer
 *   coconet_region_streams the second stream and events of an overlapped
 *                          region, created once per region and device
 *   coconet_disjoint       whether the buffers a schedule takes to be apart
 *                          are (the region runs as written when not)
 *   coconet_check_clauses  COCONET_CHECK=clauses: replicated buffers compared
 *                          across ranks at region entry
 *                          (coconet_check_replicated), shard and scratch
 *                          buffers poisoned after the region (coconet_poison)
 *   coconet_aligned, coconet_load, coconet_store
 *                          vectorized access in generated kernels
 *   coconet_block_sum      a block's sum of one value per thread (generated
 *                          kernels that sum into an accumulator)
 *
 * The caches are per host thread and never freed (they live as long as the
 * process). A communicator destroyed and recreated at the same address must
 * be forgotten with coconet_comm_forget.
 */
#ifndef COCONET_H
#define COCONET_H

#include <cuda_runtime.h>
#include <nccl.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>
#include <type_traits>  /* a region in a template: std::is_same picks its instance's code */

#define COCONET_BLOCK_SIZE 256    /* threads per block of generated kernels */
#define COCONET_BLOCKS_PER_SM 8   /* grid-stride kernels: at most this many blocks per SM */
#define COCONET_MAX_DEVICES 16    /* devices per process the caches hold */
#define COCONET_MAX_COMMS 16      /* communicators coconet_comm_info remembers */
#define COCONET_MAX_CHUNKS 64     /* overlap(chunks=K): the largest K */

/*
 * Checks
 */

#define COCONET_CUDA_CHECK(call) coconet_cuda_check((call), #call, __FILE__, __LINE__)
#define COCONET_NCCL_CHECK(call) coconet_nccl_check((call), #call, __FILE__, __LINE__)

static inline int coconet_current_device(void) {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = -1;
  return dev;
}

static inline void coconet_fail(const char *file, int line, const char *call, const char *msg) {
  fprintf(stderr, "coconet: %s:%d: device %d: %s failed: %s\n", file, line, coconet_current_device(), call, msg);
  abort();
}

static inline void coconet_cuda_check(cudaError_t err, const char *call, const char *file, int line) {
  if (err != cudaSuccess) coconet_fail(file, line, call, cudaGetErrorString(err));
}

static inline void coconet_nccl_check(ncclResult_t res, const char *call, const char *file, int line) {
  if (res != ncclSuccess) coconet_fail(file, line, call, ncclGetErrorString(res));
}

/* The current device, checked against the caches' size. */
static inline int coconet_device(void) {
  int dev = 0;
  COCONET_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= COCONET_MAX_DEVICES) {
    fprintf(stderr, "coconet: device %d: more than COCONET_MAX_DEVICES (%d) devices\n", dev, COCONET_MAX_DEVICES);
    abort();
  }
  return dev;
}

/*
 * Communicators
 */

typedef struct coconet_comm_entry {
  ncclComm_t comm;
  int rank, nranks;
} coconet_comm_entry;

static inline coconet_comm_entry *coconet_comm_cache(void) {
  static thread_local coconet_comm_entry cache[COCONET_MAX_COMMS];
  return cache;
}

/* This process's rank in comm and the number of ranks, asked of NCCL once. */
static inline void coconet_comm_info(ncclComm_t comm, int *rank, int *nranks) {
  static thread_local int next;
  coconet_comm_entry *cache = coconet_comm_cache();
  for (int i = 0; i < COCONET_MAX_COMMS; i++) {
    if (cache[i].comm == comm && comm) {
      *rank = cache[i].rank;
      *nranks = cache[i].nranks;
      return;
    }
  }
  COCONET_NCCL_CHECK(ncclCommUserRank(comm, rank));
  COCONET_NCCL_CHECK(ncclCommCount(comm, nranks));
  cache[next].comm = comm;
  cache[next].rank = *rank;
  cache[next].nranks = *nranks;
  next = (next + 1) % COCONET_MAX_COMMS;
}

/* Drop comm from the cache (call it before ncclCommDestroy if the address may come back). */
static inline void coconet_comm_forget(ncclComm_t comm) {
  coconet_comm_entry *cache = coconet_comm_cache();
  for (int i = 0; i < COCONET_MAX_COMMS; i++)
    if (cache[i].comm == comm) cache[i].comm = NULL;
}

/*
 * Launch configuration
 */

static inline int coconet_sm_count(void) {
  static thread_local int sms[COCONET_MAX_DEVICES];
  int dev = coconet_device();
  if (sms[dev] == 0) COCONET_CUDA_CHECK(cudaDeviceGetAttribute(&sms[dev], cudaDevAttrMultiProcessorCount, dev));
  return sms[dev];
}

/* Blocks of COCONET_BLOCK_SIZE threads for a grid-stride loop over n elements:
 * one thread per element up to COCONET_BLOCKS_PER_SM blocks per SM, never 0. */
static inline unsigned coconet_grid_size(size_t n) {
  size_t blocks = (n + COCONET_BLOCK_SIZE - 1) / COCONET_BLOCK_SIZE;
#if !defined(COCONET_HOST_H)
  /* On a GPU a grid-stride loop over a grid that fills the SMs is best. The
     host backend runs threads one after another, where one element (or one
     vector) per thread keeps the walk over memory sequential. */
  size_t most = (size_t)coconet_sm_count() * COCONET_BLOCKS_PER_SM;
  if (blocks > most) blocks = most;
#endif
  return blocks ? (unsigned)blocks : 1u;
}

/* Blocks for a grid-stride kernel over n elements that ends in a block sum
 * (coconet_block_sum): coconet_grid_size on a GPU. The host backend runs such a
 * block as fibers, which cost per thread, so there at most
 * COCONET_HOST_SUM_BLOCKS blocks, each thread summing many elements. */
#define COCONET_HOST_SUM_BLOCKS 8
static inline unsigned coconet_sum_grid_size(size_t n) {
  unsigned blocks = coconet_grid_size(n);
#if defined(COCONET_HOST_H)
  if (blocks > COCONET_HOST_SUM_BLOCKS) blocks = COCONET_HOST_SUM_BLOCKS;
#endif
  return blocks;
}

/*
 * Spans: which elements each rank works on
 */

/* Chunk `chunk` of `nchunks` of a buffer of count elements, cut at multiples
 * of unit (GEMM columns), split over nranks ranks in multiples of grain
 * elements (whole rows of a row-wise kernel; 1 otherwise):
 *   [lo, hi)              the chunk (count elements; all of them when nchunks <= 1)
 *   [first_unit, +units)  the chunk in units
 *   s                     elements per rank: count / grain / nranks * grain
 *   [slice_lo, slice_hi)  this rank's slice (where ncclReduceScatter in place leaves it)
 *   [tail_lo, hi)         the remainder (tail elements), which every rank computes */
typedef struct coconet_part {
  size_t lo, hi, count;
  size_t first_unit, units;
  size_t s, slice_lo, slice_hi;
  size_t tail_lo, tail;
} coconet_part;

static inline coconet_part coconet_part_rows(size_t count, size_t unit, size_t grain, int chunk, int nchunks,
                                             int rank, int nranks) {
  coconet_part p;
  size_t u = unit ? unit : 1, g = grain ? grain : 1;
  p.lo = 0;
  p.count = count;
  if (nchunks > 1) {
    size_t q = count / u / (size_t)nchunks;
    p.lo = (size_t)chunk * q * u;
    p.count = chunk == nchunks - 1 ? count - p.lo : q * u;
  }
  p.hi = p.lo + p.count;
  p.first_unit = p.lo / u;
  p.units = p.count / u;
  p.s = p.count / g / (size_t)nranks * g;
  p.slice_lo = p.lo + (size_t)rank * p.s;
  p.slice_hi = p.slice_lo + p.s;
  p.tail_lo = p.lo + (size_t)nranks * p.s;
  p.tail = p.hi - p.tail_lo;
  return p;
}

static inline coconet_part coconet_part_of(size_t count, size_t unit, int chunk, int nchunks, int rank,
                                           int nranks) {
  return coconet_part_rows(count, unit, 1, chunk, nchunks, rank, nranks);
}

/* The whole buffer of count elements as one chunk: this rank's slice and the tail. */
static inline coconet_part coconet_slice(size_t count, int rank, int nranks) {
  return coconet_part_of(count, 1, 0, 1, rank, nranks);
}

/* The same in whole rows of row elements. */
static inline coconet_part coconet_slice_rows(size_t count, size_t row, int rank, int nranks) {
  return coconet_part_rows(count, 1, row, 0, 1, rank, nranks);
}

/* A buffer a region uses: its first byte, its size and whether the region writes it. */
typedef struct coconet_extent {
  const void *p;
  size_t bytes;
  bool written;
} coconet_extent;

/* Whether no buffer the region writes overlaps another of the extents (null
 * or empty ones overlap nothing). A kernel that reads a buffer at other
 * elements than its own (bias[i % H], a row's gamma[j]) sees, in the
 * schedule, only this rank's reduced slice of what the region reduces: the
 * generated block tests this at its top and runs the region as written when
 * the caller passed one buffer for both. */
static inline bool coconet_disjoint(std::initializer_list<coconet_extent> extents) {
  for (const coconet_extent *a = extents.begin(); a != extents.end(); a++)
    for (const coconet_extent *b = a + 1; b != extents.end(); b++) {
      if (!(a->written || b->written) || !a->p || !b->p || !a->bytes || !b->bytes) continue;
      uintptr_t a0 = (uintptr_t)a->p, b0 = (uintptr_t)b->p;
      if (a0 < b0 + b->bytes && b0 < a0 + a->bytes) return false;
    }
  return true;
}

/*
 * COCONET_CHECK=clauses: the clauses a region declares, checked at run time
 * (a debug switch; off, the generated code only tests the variable)
 */

static inline bool coconet_check_clauses(void) {
  static int on = -1;
  if (on < 0) {
    const char *e = getenv("COCONET_CHECK");
    on = e && strstr(e, "clauses") ? 1 : 0;
  }
  return on == 1;
}

/* The smallest and the largest of v over the ranks of comm (seen[0], seen[1]). */
static inline void coconet_check_range(unsigned long long v, ncclComm_t comm, cudaStream_t stream,
                                       unsigned long long seen[2], const char *file, int line) {
  unsigned long long pair[2] = {v, v}, *dev = NULL;
  coconet_cuda_check(cudaMalloc((void **)&dev, sizeof pair), "cudaMalloc", file, line);
  coconet_cuda_check(cudaMemcpy(dev, pair, sizeof pair, cudaMemcpyHostToDevice), "cudaMemcpy", file, line);
  coconet_nccl_check(ncclAllReduce(dev, dev, 1, ncclUint64, ncclMin, comm, stream), "ncclAllReduce", file, line);
  coconet_nccl_check(ncclAllReduce(dev + 1, dev + 1, 1, ncclUint64, ncclMax, comm, stream), "ncclAllReduce", file,
                     line);
  coconet_cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", file, line);
  coconet_cuda_check(cudaMemcpy(seen, dev, 2 * sizeof *seen, cudaMemcpyDeviceToHost), "cudaMemcpy", file, line);
  coconet_cuda_check(cudaFree(dev), "cudaFree", file, line);
}

/* A launcher that picks its kernel at run time: every rank of comm takes the
 * path the schedule is for, or none does (else the ranks would run different
 * collectives); else the process stops with the region and the rank. */
static inline void coconet_check_path(bool taken, ncclComm_t comm, cudaStream_t stream, const char *region,
                                      const char *launcher, const char *file, int line) {
  unsigned long long seen[2];
  coconet_cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", file, line);
  coconet_check_range(taken ? 1 : 0, comm, stream, seen, file, line);
  if (seen[0] == seen[1]) return;
  int rank = -1, nranks = 0;
  coconet_comm_info(comm, &rank, &nranks);
  fprintf(stderr,
          "%s:%d: COCONET_CHECK=clauses: region '%s': '%s' picks its kernel at run time, and rank %d of %d %s the "
          "path the schedule is for while another rank %s: the ranks would run different collectives; make the "
          "launcher's choice the same on every rank, or take it out of the region\n",
          file, line, region, launcher, rank, nranks, taken ? "takes" : "does not take", taken ? "does not" : "does");
  abort();
}

/* replicated(name): the bytes of buf hash the same on every rank of comm
 * (FNV-1a over a host copy, the smallest and largest hash all-reduced);
 * else the process stops with the clause, the buffer and the rank. A NULL
 * buf (an optional buffer the program passes NULL while a flag is off)
 * hashes as 0: every rank must pass NULL then. */
static inline void coconet_check_replicated(const void *buf, size_t bytes, ncclComm_t comm, cudaStream_t stream,
                                            const char *region, const char *name, const char *file, int line) {
  unsigned long long hash = 1469598103934665603ull;
  coconet_cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", file, line);
  if (buf) {
    unsigned char *host = (unsigned char *)malloc(bytes ? bytes : 1);
    if (!host) coconet_fail(file, line, "coconet_check_replicated", "out of host memory");
    coconet_cuda_check(cudaMemcpy(host, buf, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", file, line);
    for (size_t i = 0; i < bytes; i++) hash = (hash ^ host[i]) * 1099511628211ull;
    free(host);
  } else {
    hash = 0;
  }
  unsigned long long seen[2];
  coconet_check_range(hash, comm, stream, seen, file, line);
  if (seen[0] == seen[1]) return;
  int rank = -1, nranks = 0;
  coconet_comm_info(comm, &rank, &nranks);
  fprintf(stderr,
          "%s:%d: COCONET_CHECK=clauses: region '%s': replicated(%s) does not hold: rank %d of %d holds other "
          "bytes than another rank (hash %016llx; the ranks' range %016llx..%016llx); the schedule would gather "
          "slices of different copies\n",
          file, line, region, name, rank, nranks, hash, seen[0], seen[1]);
  abort();
}

/* shard(b) and scratch(b): after the region, the elements [lo, hi) of buf
 * (elem bytes each) hold no value the program may read: they are set to all
 * ones (NaN for floating types), so that a later read shows. */
static inline void coconet_poison(void *buf, size_t elem, size_t lo, size_t hi, cudaStream_t stream,
                                  const char *file, int line) {
  if (hi > lo)
    coconet_cuda_check(cudaMemsetAsync((char *)buf + lo * elem, 0xff, (hi - lo) * elem, stream), "cudaMemsetAsync",
                       file, line);
}

/* shard(b): b's count elements outside this rank's slice and the tail poisoned. */
static inline void coconet_poison_outside_slice(void *buf, size_t elem, size_t count, ncclComm_t comm,
                                                cudaStream_t stream, const char *file, int line) {
  int rank, nranks;
  coconet_comm_info(comm, &rank, &nranks);
  const coconet_part p = coconet_slice(count, rank, nranks);
  coconet_poison(buf, elem, 0, p.slice_lo, stream, file, line);
  coconet_poison(buf, elem, p.slice_hi, p.tail_lo, stream, file, line);
}

/*
 * Row-wise kernels run one warp or one thread per row
 */

/* Blocks of block threads that run rows rows, row_threads threads to a row
 * (32: a warp, 1: a thread); never 0. */
static inline unsigned coconet_rows_grid(size_t rows, size_t block, size_t row_threads) {
  size_t per_block = row_threads ? block / row_threads : 0;
  size_t blocks = per_block ? (rows + per_block - 1) / per_block : rows;
  return blocks ? (unsigned)blocks : 1u;
}

/* The launch as written gives every row its own row_threads threads: blocks of
 * whole warps (or threads), and grid * rows a block >= rows. The translation,
 * which launches blocks enough for a slice's rows, computes every row, so the
 * program as written must too. */
static inline void coconet_check_rows(size_t grid, size_t block, size_t row_threads, size_t rows, const char *kernel,
                                      const char *file, int line) {
  char msg[256];
  size_t per_block = row_threads ? block / row_threads : 0;
  if (block % row_threads == 0 && grid * per_block >= rows) return;
  if (block % row_threads)
    snprintf(msg, sizeof msg, "blocks of %zu threads are not whole warps, so two blocks share a row; coconet's "
             "translation runs one warp per row: launch blocks of a multiple of 32 threads", block);
  else
    snprintf(msg, sizeof msg, "as written it reaches %zu of its %zu rows (grid %zu x %zu rows a block); coconet's "
             "translation computes them all: launch enough blocks, or take the launch out of the region",
             grid * per_block, rows, grid, per_block);
  coconet_fail(file, line, kernel, msg);
}

/* A row-wise kernel whose rows are stride elements apart in a buffer coconet
 * splits in rows of h elements: the two must be the same (contiguous rows). */
static inline void coconet_check_stride(long long stride, long long h, const char *what, const char *kernel,
                                        const char *file, int line) {
  char msg[256];
  if (stride == h) return;
  snprintf(msg, sizeof msg, "its row stride %s is %lld but its rows have %lld elements; coconet's translation splits "
           "the buffer in contiguous rows: pass contiguous rows, or take the launch out of the region", what, stride, h);
  coconet_fail(file, line, kernel, msg);
}

/* A buffer a row-wise kernel tests against null: the translation moves it to
 * this rank's rows and gathers it, which a null pointer cannot take. */
static inline void coconet_require_buffer(const void *p, const char *what, const char *file, int line) {
  if (!p)
    coconet_fail(file, line, what, "null: the kernel skips a null buffer, but coconet's translation moves it to "
                 "this rank's rows and gathers it; pass a buffer, or take the launch out of the region");
}

/*
 * pipeline(tag=T): between pipeline stages, each rank of the sending stage's
 * group sends its slice of a buffer (and the tail, which every rank holds) to
 * its peer, and the receiving stage's group all-gathers the slices. A header
 * goes first; the receiver checks it before it receives anything else: same
 * tag, the sender's rank and rank count in its group equal to the receiver's
 * in its own, same count and element size. The receiver reads the header on
 * the host, so it waits for its stream once per exchange.
 */

enum {
  COCONET_PIPE_MAGIC,
  COCONET_PIPE_TAG,
  COCONET_PIPE_RANK,
  COCONET_PIPE_NRANKS,
  COCONET_PIPE_COUNT,
  COCONET_PIPE_ESIZE,
  COCONET_PIPE_S,
  COCONET_PIPE_TAIL,
  COCONET_PIPE_LINE,
  COCONET_PIPE_NAME,  /* the tag's first 31 characters, NUL-terminated */
  COCONET_PIPE_WORDS = COCONET_PIPE_NAME + 4
};
#define COCONET_PIPE_MAGIC_VALUE 0x636f636f6e657450LL

/* One per region that sends or receives (a zero-initialised static in the
 * generated code): a device buffer for the header, per device. */
typedef struct coconet_pipe_state {
  long long *header[COCONET_MAX_DEVICES];
} coconet_pipe_state;

static inline long long coconet_pipe_hash(const char *tag) {
  unsigned long long h = 1469598103934665603ULL;
  for (const char *c = tag; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
  return (long long)(h >> 1);
}

static inline long long *coconet_pipe_header(coconet_pipe_state *state) {
  long long **h = &state->header[coconet_device()];
  if (!*h) COCONET_CUDA_CHECK(cudaMalloc((void **)h, COCONET_PIPE_WORDS * sizeof(long long)));
  return *h;
}

/* This rank's slice p.s at p.slice_lo and the tail of buf (count elements of
 * esize bytes, split as p over the group where it is rank of nranks) to peer;
 * line: the ncclSend's line in the source, for the receiver's messages. */
static inline void coconet_pipe_send(coconet_pipe_state *state, const void *buf, size_t esize, size_t count,
                                     coconet_part p, int rank, int nranks, ncclDataType_t dtype, int peer,
                                     ncclComm_t comm, cudaStream_t stream, const char *tag, int line) {
  long long h[COCONET_PIPE_WORDS];
  h[COCONET_PIPE_MAGIC] = COCONET_PIPE_MAGIC_VALUE;
  h[COCONET_PIPE_TAG] = coconet_pipe_hash(tag);
  h[COCONET_PIPE_RANK] = rank;
  h[COCONET_PIPE_NRANKS] = nranks;
  h[COCONET_PIPE_COUNT] = (long long)count;
  h[COCONET_PIPE_ESIZE] = (long long)esize;
  h[COCONET_PIPE_S] = (long long)p.s;
  h[COCONET_PIPE_TAIL] = (long long)p.tail;
  h[COCONET_PIPE_LINE] = line;
  memset(&h[COCONET_PIPE_NAME], 0, 4 * sizeof(long long));
  strncpy((char *)&h[COCONET_PIPE_NAME], tag, 4 * sizeof(long long) - 1);
  long long *d = coconet_pipe_header(state);
  const char *b = (const char *)buf;
  COCONET_CUDA_CHECK(cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, stream));
  COCONET_NCCL_CHECK(ncclSend(d, COCONET_PIPE_WORDS, ncclInt64, peer, comm, stream));
  COCONET_NCCL_CHECK(ncclGroupStart());
  if (p.s) COCONET_NCCL_CHECK(ncclSend(b + p.slice_lo * esize, p.s, dtype, peer, comm, stream));
  if (p.tail) COCONET_NCCL_CHECK(ncclSend(b + p.tail_lo * esize, p.tail, dtype, peer, comm, stream));
  COCONET_NCCL_CHECK(ncclGroupEnd());
}

static inline void coconet_pipe_mismatch(const char *file, int line, const char *tag, const char *what,
                                         long long sent, long long here, const long long *h) {
  char msg[512], sent_tag[4 * sizeof(long long)];
  memcpy(sent_tag, &h[COCONET_PIPE_NAME], sizeof sent_tag);
  sent_tag[sizeof sent_tag - 1] = '\0';
  int n = snprintf(msg, sizeof msg, "pipeline(tag=%s): the sending region (tag=%s, its ncclSend at line %lld) has ",
                   tag, sent_tag, h[COCONET_PIPE_LINE]);
  if (!what) snprintf(msg + n, sizeof msg - (size_t)n, "another tag");
  else snprintf(msg + n, sizeof msg - (size_t)n, "%s %lld, this one %lld", what, sent, here);
  n = (int)strlen(msg);
  snprintf(msg + n, sizeof msg - (size_t)n, "; the two ends must have the same tag, groups of the same size in which "
           "each rank sends to the rank of the same index, and the same count and datatype");
  coconet_fail(file, line, "ncclRecv", msg);
}

/* The peer's slice and the tail of buf (count elements of esize bytes), then
 * the slices of the group's ranks gathered: all of buf, on every rank. */
static inline void coconet_pipe_recv(coconet_pipe_state *state, void *buf, size_t esize, size_t count,
                                     ncclDataType_t dtype, int peer, ncclComm_t comm, ncclComm_t group,
                                     cudaStream_t stream, const char *tag, const char *file, int line) {
  int rank, nranks;
  coconet_comm_info(group, &rank, &nranks);
  long long *d = coconet_pipe_header(state), h[COCONET_PIPE_WORDS];
  COCONET_NCCL_CHECK(ncclRecv(d, COCONET_PIPE_WORDS, ncclInt64, peer, comm, stream));
  COCONET_CUDA_CHECK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream));
  COCONET_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (h[COCONET_PIPE_MAGIC] != COCONET_PIPE_MAGIC_VALUE)
    coconet_fail(file, line, "ncclRecv", "pipeline: the peer's first message is not a coconet pipeline header: "
                 "translate the sending region with pipeline(tag=...) too");
  if (h[COCONET_PIPE_TAG] != coconet_pipe_hash(tag))
    coconet_pipe_mismatch(file, line, tag, NULL, 0, 0, h);
  if (h[COCONET_PIPE_NRANKS] != nranks)
    coconet_pipe_mismatch(file, line, tag, "group size", h[COCONET_PIPE_NRANKS], nranks, h);
  if (h[COCONET_PIPE_RANK] != rank)
    coconet_pipe_mismatch(file, line, tag, "rank in its group", h[COCONET_PIPE_RANK], rank, h);
  if (h[COCONET_PIPE_COUNT] != (long long)count)
    coconet_pipe_mismatch(file, line, tag, "count", h[COCONET_PIPE_COUNT], (long long)count, h);
  if (h[COCONET_PIPE_ESIZE] != (long long)esize)
    coconet_pipe_mismatch(file, line, tag, "element size", h[COCONET_PIPE_ESIZE], (long long)esize, h);
  size_t s = (size_t)h[COCONET_PIPE_S], tail = (size_t)h[COCONET_PIPE_TAIL];
  if ((size_t)nranks * s + tail != count)
    coconet_fail(file, line, "ncclRecv", "pipeline: the sender's slices and tail do not cover the count");
  char *b = (char *)buf;
  COCONET_NCCL_CHECK(ncclGroupStart());
  if (s) COCONET_NCCL_CHECK(ncclRecv(b + (size_t)rank * s * esize, s, dtype, peer, comm, stream));
  if (tail) COCONET_NCCL_CHECK(ncclRecv(b + (size_t)nranks * s * esize, tail, dtype, peer, comm, stream));
  COCONET_NCCL_CHECK(ncclGroupEnd());
  if (s && nranks > 1) COCONET_NCCL_CHECK(ncclAllGather(b + (size_t)rank * s * esize, b, s, dtype, group, stream));
}

/*
 * overlap: the second stream and the events of a region
 */

typedef struct coconet_streams {
  cudaStream_t stream;                    /* collectives and slice work of each chunk */
  cudaEvent_t chunk[COCONET_MAX_CHUNKS];  /* recorded on the user's stream after chunk c's GEMM */
  cudaEvent_t done;                       /* recorded on stream after the last chunk */
  int nchunks;                            /* 0 until created */
} coconet_streams;

/* One per region (a zero-initialised static in the generated code). */
typedef struct coconet_region_state {
  coconet_streams device[COCONET_MAX_DEVICES];
} coconet_region_state;

/* The region's stream and events on the current device, created on first use. */
static inline const coconet_streams *coconet_region_streams(coconet_region_state *state, int nchunks) {
  if (nchunks < 1 || nchunks > COCONET_MAX_CHUNKS) {
    fprintf(stderr, "coconet: overlap(chunks=%d): at most COCONET_MAX_CHUNKS (%d) chunks\n", nchunks,
            COCONET_MAX_CHUNKS);
    abort();
  }
  coconet_streams *s = &state->device[coconet_device()];
  if (s->nchunks >= nchunks) return s;
  if (s->nchunks == 0) {
    COCONET_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    COCONET_CUDA_CHECK(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
  }
  for (int c = s->nchunks; c < nchunks; c++)
    COCONET_CUDA_CHECK(cudaEventCreateWithFlags(&s->chunk[c], cudaEventDisableTiming));
  s->nchunks = nchunks;
  return s;
}

/*
 * Vectorized access in generated kernels: N elements at once, as one 4, 8 or
 * 16 byte load or store, when every pointer is aligned to N elements.
 */

template <int Bytes>
struct coconet_bits;
template <>
struct coconet_bits<4> {
  typedef unsigned int type;
};
template <>
struct coconet_bits<8> {
  typedef uint2 type;
};
template <>
struct coconet_bits<16> {
  typedef uint4 type;
};

template <int N>
__device__ __forceinline__ bool coconet_aligned(size_t) {
  return true;
}

/* p + lo (and each further pointer + lo) is aligned to N of its elements. */
template <int N, class T, class... Rest>
__device__ __forceinline__ bool coconet_aligned(size_t lo, const T *p, Rest... rest) {
  return (uintptr_t)(p + lo) % (N * sizeof(T)) == 0 && coconet_aligned<N>(lo, rest...);
}

template <int N, class T>
__device__ __forceinline__ void coconet_load(const T *p, T (&v)[N]) {
  typedef typename coconet_bits<N * sizeof(T)>::type Bits;
  const Bits bits = *reinterpret_cast<const Bits *>(p);
  memcpy(v, &bits, sizeof bits);
}

template <int N, class T>
__device__ __forceinline__ void coconet_store(T *p, const T (&v)[N]) {
  typedef typename coconet_bits<N * sizeof(T)>::type Bits;
  Bits bits;
  memcpy(&bits, v, sizeof bits);
  *reinterpret_cast<Bits *>(p) = bits;
}

/* The sum of v over the threads of the block, valid in thread 0: warp
 * shuffles, then the first warp over the warps' sums. Every thread of the block
 * calls it (blockDim.x a multiple of 32, at most 1024); it may be called again. */
template <class T>
__device__ __forceinline__ T coconet_block_sum(T v) {
  __shared__ T warp_sums[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = (blockDim.x + 31) / 32;
  __syncthreads();  /* an earlier call's first warp has read warp_sums */
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < nwarps ? warp_sums[threadIdx.x] : T(0);
  if (warp == 0)
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  return v;
}

#endif
