// coconet host backend: the map of the runtime (libcoconet_host.a).
//
// A CUDA + NCCL program, lowered by the translator (coconet --target=host) and
// compiled as C++ against runtime/host/include, runs here with one MPI rank
// per GPU.  Everything executes on the calling OS thread, in issue order:
//
//   debug.cc    logging (COCONET_DEBUG), fatal errors, checked MPI calls
//   fiber.cc    stacks and the context switch behind COCONET_HOST_SYNC
//   launch.cc   kernel launches: validation, the fiber scheduler, barriers,
//               warp collectives
//   cudart.cc   the CUDA runtime API: memory, streams, events, the device
//   nccl.cc     communicators, groups, collectives and send/recv over MPI
//   checks.cc   the ranks' calls compared before data moves, waits with a
//               timeout (COCONET_HOST_TIMEOUT), call sites
//   memcheck.cc guard zones around device allocations (COCONET_HOST_MEMCHECK)
//   reduce.cc   NCCL data types and rank-order reductions
//   symm.cc     ncclMemAlloc and windows over POSIX shared memory
//   lsa.cc      the device API (nccl_device.h): device communicators, LSA
//               pointers and barriers over the windows
//   cublas.cc   cuBLAS GEMMs on OpenBLAS
//   cublaslt.cc cuBLASLt matmuls and their epilogues on OpenBLAS
#ifndef COCONET_HOST_SRC_HOST_H
#define COCONET_HOST_SRC_HOST_H

// The MPI C API only (no deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include <vector>

#define COCONET_HOST_NO_CALLSITES 1  // the runtime defines the functions the headers' call-site macros call
#include "cuda_runtime.h"
#include "nccl.h"

// Defined when compiled with AddressSanitizer (gcc or clang).
#if defined(__SANITIZE_ADDRESS__)
#define COCONET_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COCONET_HOST_ASAN 1
#endif
#endif

namespace coconet_host {

// ---- debug.cc ---------------------------------------------------------------

enum log_level { LOG_NONE, LOG_WARN, LOG_INFO, LOG_TRACE };

enum subsystem {
  SUB_INIT = 1,    // MPI start-up, communicators
  SUB_CUDA = 2,    // the CUDA runtime API: memory, streams, events, the device
  SUB_LAUNCH = 4,  // kernel launches
  SUB_COLL = 8,    // collectives
  SUB_P2P = 16,    // send/recv
  SUB_SYMM = 32,   // symmetric memory
  SUB_BLAS = 64,   // cuBLAS
};

// Whether messages of this level and subsystem are printed.  COCONET_DEBUG
// picks the level (NONE, WARN: the default, INFO, TRACE), COCONET_DEBUG_SUBSYS
// the subsystems (a comma list of INIT, CUDA, LAUNCH, COLL, P2P, SYMM, BLAS,
// ALL; a leading ^ excludes).
bool log_enabled(int level, int subsys);
// "coconet-host[rank R] INFO COLL: ..." on stderr.
void log_message(int level, int subsys, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define COCONET_LOG(level, subsys, ...)                                                     \
  do {                                                                                     \
    if (::coconet_host::log_enabled(level, subsys)) ::coconet_host::log_message(level, subsys, __VA_ARGS__); \
  } while (0)
#define COCONET_WARN(subsys, ...) COCONET_LOG(::coconet_host::LOG_WARN, subsys, __VA_ARGS__)
#define COCONET_INFO(subsys, ...) COCONET_LOG(::coconet_host::LOG_INFO, subsys, __VA_ARGS__)
#define COCONET_TRACE(subsys, ...) COCONET_LOG(::coconet_host::LOG_TRACE, subsys, __VA_ARGS__)

// Prints "coconet-host[rank R]: error: WHAT: ..." and ends the whole job
// (MPI_Abort when MPI is up, abort() otherwise), removing shared-memory
// segments first.
[[noreturn]] void fatal(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// This process's MPI_COMM_WORLD rank, or -1 before MPI_Init.
int world_rank(void);
// Checks an MPI return code; on failure reports the call, file:line and rank.
void mpi_check(int rc, const char *call, const char *file, int line);
#define COCONET_MPI_CHECK(call) ::coconet_host::mpi_check((call), #call, __FILE__, __LINE__)
// Reads a positive size_t from the environment, or dflt.
size_t env_size(const char *name, size_t dflt);

// ---- fiber.cc ---------------------------------------------------------------

// A saved execution context with its own stack.
struct fiber {
  void *sp;             // stack pointer while switched out
  char *stack;          // lowest usable address (a guard page lies below)
  size_t stack_size;    // usable bytes
  void *asan_fake;      // AddressSanitizer's fake-stack handle while switched out
};

// At least n fibers with stacks of COCONET_HOST_STACK_KB (default 256 KiB,
// 1 MiB under AddressSanitizer); the pool lives until exit.
fiber *fiber_pool(unsigned n);
// Prepares f to run entry() from the top of its stack at its next switch_in.
void fiber_prepare(fiber *f, void (*entry)(void));
// Scheduler -> fiber f; returns when f switches out.
void fiber_switch_in(fiber *f);
// Fiber f -> scheduler; returns when the scheduler switches f in again.
void fiber_switch_out(fiber *f);
// Fiber f -> scheduler for the last time.
[[noreturn]] void fiber_exit(fiber *f);
// Called first thing by a fresh fiber's entry().
void fiber_started(void);

// ---- launch.cc: the launch interface is in coconet_host.h and --------------
// ---- coconet_host_device.h. --------------------------------------------------

// "kernel K launched at file:line" while a kernel runs, else "host code".
const char *launch_description(void);

// ---- cudart.cc --------------------------------------------------------------

// Records err (unless cudaSuccess) for cudaGetLastError; returns it.
cudaError_t set_last_error(cudaError_t err);
// Whether stream is 0, a special handle or a live stream.
bool stream_is_valid(cudaStream_t stream);
// Maximum dynamic shared memory a kernel may use (its attribute, else 48 KiB).
size_t kernel_max_dynamic_shared(const void *kernel);

// ---- reduce.cc --------------------------------------------------------------

// Bytes per element; 0 for an invalid type.
size_t dtype_size(ncclDataType_t dtype);
const char *dtype_name(ncclDataType_t dtype);
const char *redop_name(ncclRedOp_t op);

// How to combine: a built-in op, or a pre-multiplied sum with each rank's
// scalar (the data type's bits, zero-extended).
struct reduction {
  ncclRedOp_t op;                            // ncclSum .. ncclAvg, or ncclNumOps for PreMulSum
  std::vector<unsigned long long> scalars;   // PreMulSum: one per rank
};

// out[i] = in[0][i] (op) in[1][i] (op) ... in[nranks-1][i], in rank order,
// where in[r] = in + r * stride elements.  16-bit and 8-bit floats are
// combined in float and rounded once; integers wrap; see README.md.
void reduce_ranks(const void *in, size_t stride, int nranks, size_t count, ncclDataType_t dtype,
                  const reduction &red, void *out);

// ---- nccl.cc ----------------------------------------------------------------

enum op_kind { ALLREDUCE, REDUCE, BROADCAST, REDUCESCATTER, ALLGATHER, ALLTOALL, GATHER, SCATTER, SEND, RECV };

const char *op_kind_name(op_kind kind);
bool needs_reduction(op_kind kind);  // AllReduce, Reduce, ReduceScatter
bool has_root(op_kind kind);         // Reduce, Broadcast, Gather, Scatter

// One issued NCCL operation.
struct queued_op {
  op_kind kind;
  const void *send;
  void *recv;
  size_t count;  // per rank: count, recvcount or sendcount as NCCL names it
  ncclDataType_t dtype;
  ncclRedOp_t op;
  int root;  // root, or peer for Send/Recv
  ncclComm_t comm;
  unsigned long long seq;  // collectives: 1 + the number issued on comm before it
  char site[96];           // "file:line" of the call, or ""
};

// A user-defined reduction op (ncclRedOpCreatePreMulSum).
struct premul_op {
  bool live;
  ncclDataType_t dtype;
  ncclScalarResidence_t residence;
  unsigned char value[8];  // the scalar, for ncclScalarHostImmediate
  const void *ptr;         // the scalar's address, for ncclScalarDevice
};

}  // namespace coconet_host

// A communicator: a private duplicate of an MPI communicator (errors return).
struct ncclComm {
  MPI_Comm mpi;
  int rank;  // == rank in mpi
  int nranks;
  unsigned long long collectives;            // issued on it so far
  unsigned long long calls[10], bytes[10];   // run on it, by op_kind, and this rank's input bytes
  std::vector<ncclWindow_vidmem *> windows;  // registered symmetric windows
  std::vector<coconet_host::premul_op> ops;  // ncclRedOpCreatePreMulSum, index = op - ncclNumOps
};

// A registered window: an ncclMemAlloc'ed range, mapped from every rank.
struct ncclWindow_vidmem {
  char *base;                      // this rank's address of the range
  size_t size;                     // this rank's size
  std::vector<char *> peers;       // every rank's range as mapped here (peers[rank] == base)
  std::vector<size_t> peer_sizes;  // every rank's size
  std::vector<void *> maps;        // the peers' whole segments as mapped here (nullptr for this rank)
  std::vector<size_t> map_sizes;
  int lsa_base, lsa_size;          // the LSA domain: ranks [lsa_base, lsa_base + lsa_size) of the comm
};

namespace coconet_host {

// Records the message ncclGetLastError returns and logs it as a warning.
ncclResult_t nccl_error(ncclResult_t result, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// ---- checks.cc --------------------------------------------------------------

// Seconds on the monotonic clock.
double now(void);
// COCONET_HOST_TIMEOUT: seconds a rank waits for the others (default 60; 0: forever).
double timeout_seconds(void);

// The call site coconet_host_callsite recorded for the NCCL call being made
// ("" if none), into site; clears it.
void take_callsite(char *site, size_t size);
// Compares the group's collectives on comm (ops, in issue order) with every
// rank's before any data moves: kind, count, datatype, op, root and sequence
// number. A mismatch is reported with each rank's calls and returns
// ncclInvalidUsage; unless COCONET_HOST_ON_ERROR=continue the job is ended.
// Ranks that do not arrive within COCONET_HOST_TIMEOUT seconds (default 60,
// 0: wait forever) end the job with a report of where this rank waits.
// `data` (data_bytes, the same on every rank whose calls agree) travels with
// the calls: when they agree, *inputs shows every rank's data (left as it is
// when the checks are off, COCONET_HOST_CHECK=0).
// A group's lone AllReduce (built-in op) or AllGather of at most this many
// bytes per rank sends its input with the check of its call: one exchange
// instead of two.
const size_t CARRY_MAX_BYTES = 64 << 10;
struct carried_inputs {
  const char *first = nullptr;  // rank 0's data; rank j's at first + j * stride (valid until the next check)
  size_t stride = 0;            // a multiple of 16 bytes
};
ncclResult_t check_collectives(ncclComm_t comm, const std::vector<const queued_op *> &ops,
                               const void *data = nullptr, size_t data_bytes = 0, carried_inputs *inputs = nullptr);
// A fused kernel's call site on comm, compared like a collective (its place in
// the sequence, its region, where its first four buffers lie in their
// windows): a rank on the NCCL path, or a buffer at another offset, is reported.
void fused_check(ncclComm_t comm, const char *region, int nbufs, const size_t *offsets);
// What an ncclSend sends its peer ahead of its data.
struct p2p_print {
  unsigned long long count;
  int dtype;
  char site[96];
};
// Posts each send's print to its peer; prints must live until requests complete.
void post_send_prints(const std::vector<const queued_op *> &sends, std::vector<p2p_print> &prints,
                      std::vector<MPI_Request> &requests);
// Receives, for each receive (in issue order), its peer's print and compares
// count and datatype. A difference is reported with both calls and ends the
// job, or with COCONET_HOST_ON_ERROR=continue returns ncclInvalidUsage with
// matched[i] false (the receive must then drain prints[i]'s bytes). Waits
// with the timeout, naming the receives.
ncclResult_t match_recvs(const std::vector<const queued_op *> &recvs, std::vector<p2p_print> &prints,
                         std::vector<bool> &matched);
// MPI_Waitall with the same timeout; `what` says what is waited for.
void wait_all(std::vector<MPI_Request> &requests, const char *what);
// At ncclCommDestroy (which every rank calls): waits for the other ranks (with
// the timeout), then reports a send no receive matched, with its call (ends
// the job unless COCONET_HOST_ON_ERROR=continue).
void check_destroy(ncclComm_t comm);

// ---- memcheck.cc -------------------------------------------------------------

// COCONET_HOST_MEMCHECK=1: device allocations get guard zones.
bool memcheck_enabled(void);
// size bytes between guard zones (site: where it was allocated, or ""); NULL when out of memory.
void *memcheck_alloc(size_t size, const char *site);
// Checks p's zones (a damaged one ends the job naming `who`) and unmaps it;
// false if p is not a guarded allocation.
bool memcheck_free(void *p, const char *who);
// Checks every guarded allocation's zones; a damaged one ends the job naming `who`.
void memcheck_verify(const char *who);

// ---- symm.cc ----------------------------------------------------------------

// Unmaps the peers' segments of every window of comm (at ncclCommDestroy).
void windows_release(ncclComm_t comm);
// Unlinks this process's shared-memory segments (at exit and on fatal errors).
void symm_cleanup(void);

// ---- lsa.cc -------------------------------------------------------------------

// The LSA domain of comm's rank: its first rank and its size (every rank, or
// COCONET_HOST_LSA_SIZE consecutive ranks).
void lsa_domain(ncclComm_t comm, int *base, int *size);

// ---- cublas.cc: elements shared with cublaslt.cc ---------------------------

enum blas_element { F32, F64, F16, BF16 };

// The element a cudaDataType names; false for types the BLAS calls do not run.
bool blas_element_of(int type, blas_element *e);
// "CUDA_R_32F" .. "CUDA_R_16BF", or "an unsupported cudaDataType".
const char *blas_type_name(int type);
// Element i of p, widened (16-bit floats exactly), and v rounded once into it.
double blas_load(const void *p, int64_t i, blas_element t);
void blas_store(double v, void *p, int64_t i, blas_element t);

// ---- cublaslt.cc: no internal interface. ----------------------------------

}  // namespace coconet_host

#endif
