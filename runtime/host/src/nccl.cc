// coconet host backend: NCCL over MPI.
//
// A communicator is a private duplicate of an MPI communicator.  Every NCCL
// operation is queued; outside a group the queue runs at once, inside one it
// runs at the outermost ncclGroupEnd: first all receives and sends are posted
// (non-blocking, so pairwise exchanges cannot deadlock), then the collectives
// run in issue order, then the sends and receives are completed.
//
// Collectives move data in chunks of at most COCONET_HOST_CHUNK_BYTES per
// rank (default 16 MiB, which also keeps every MPI count below 2^31) and
// reduce locally: every rank gathers the contributions it needs and combines
// them in rank order (reduce.cc), so results are deterministic and identical
// on every rank.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "host.h"

namespace coconet_host {

const char *op_kind_name(op_kind kind) {
  switch (kind) {
    case ALLREDUCE: return "AllReduce";
    case REDUCE: return "Reduce";
    case BROADCAST: return "Broadcast";
    case REDUCESCATTER: return "ReduceScatter";
    case ALLGATHER: return "AllGather";
    case ALLTOALL: return "AlltoAll";
    case GATHER: return "Gather";
    case SCATTER: return "Scatter";
    case SEND: return "Send";
    case RECV: return "Recv";
  }
  return "?";
}

bool needs_reduction(op_kind kind) { return kind == ALLREDUCE || kind == REDUCE || kind == REDUCESCATTER; }
bool has_root(op_kind kind) { return kind == REDUCE || kind == BROADCAST || kind == GATHER || kind == SCATTER; }

namespace {

char last_error[1024];
int group_depth;
std::vector<queued_op> group;

size_t chunk_bytes(void) {
  const size_t bytes = env_size("COCONET_HOST_CHUNK_BYTES", (size_t)16 << 20);
  if (bytes > ((size_t)1 << 30)) fatal("environment", "COCONET_HOST_CHUNK_BYTES must be at most 1 GiB");
  return bytes;
}

void finalize_mpi(void) {
  int finalized = 0;
  COCONET_MPI_CHECK(MPI_Finalized(&finalized));
  if (!finalized) COCONET_MPI_CHECK(MPI_Finalize());
}

// Starts MPI if the program has not (and finalizes it at exit).
void ensure_mpi(void) {
  int initialized = 0, finalized = 0;
  COCONET_MPI_CHECK(MPI_Initialized(&initialized));
  COCONET_MPI_CHECK(MPI_Finalized(&finalized));
  if (finalized) fatal("NCCL", "called after MPI_Finalize");
  if (initialized) return;
  int provided = 0;
  COCONET_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided));
  atexit(finalize_mpi);
  COCONET_INFO(SUB_INIT, "MPI was not initialized by the program; started it (finalized at exit)");
}

const char *cbytes(const void *p, size_t elements, size_t es) { return static_cast<const char *>(p) + elements * es; }
char *bytes(void *p, size_t elements, size_t es) { return static_cast<char *>(p) + elements * es; }

ncclComm_t make_comm(MPI_Comm mpi) {
  ncclComm_t comm = new ncclComm();
  comm->mpi = mpi;
  COCONET_MPI_CHECK(MPI_Comm_set_errhandler(mpi, MPI_ERRORS_RETURN));
  COCONET_MPI_CHECK(MPI_Comm_rank(mpi, &comm->rank));
  COCONET_MPI_CHECK(MPI_Comm_size(mpi, &comm->nranks));
  return comm;
}

// The reduction for op on comm, with every rank's PreMulSum scalar.
reduction make_reduction(ncclComm_t comm, ncclRedOp_t op, ncclDataType_t dtype) {
  reduction red;
  red.op = op;
  if (op < ncclNumOps) return red;
  const premul_op &p = comm->ops[op - ncclNumOps];
  unsigned long long mine = 0;
  memcpy(&mine, p.residence == ncclScalarHostImmediate ? p.value : p.ptr, dtype_size(dtype));
  red.op = ncclNumOps;
  red.scalars.resize(comm->nranks);
  COCONET_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, red.scalars.data(), 1, MPI_UNSIGNED_LONG_LONG,
                                  comm->mpi));
  return red;
}

void run_allreduce(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), chunk = chunk_bytes() / es ? chunk_bytes() / es : 1;
  const int n = q.comm->nranks;
  const reduction red = make_reduction(q.comm, q.op, q.dtype);
  std::vector<char> gathered(n * (q.count < chunk ? q.count : chunk) * es);
  for (size_t o = 0; o < q.count; o += chunk) {
    const size_t m = q.count - o < chunk ? q.count - o : chunk;
    COCONET_MPI_CHECK(MPI_Allgather(cbytes(q.send, o, es), (int)(m * es), MPI_BYTE, gathered.data(), (int)(m * es),
                                    MPI_BYTE, q.comm->mpi));
    reduce_ranks(gathered.data(), m, n, m, q.dtype, red, bytes(q.recv, o, es));
  }
}

void run_reduce(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), chunk = chunk_bytes() / es ? chunk_bytes() / es : 1;
  const int n = q.comm->nranks;
  const bool root = q.comm->rank == q.root;
  const reduction red = make_reduction(q.comm, q.op, q.dtype);
  std::vector<char> gathered(root ? n * (q.count < chunk ? q.count : chunk) * es : 0);
  for (size_t o = 0; o < q.count; o += chunk) {
    const size_t m = q.count - o < chunk ? q.count - o : chunk;
    COCONET_MPI_CHECK(MPI_Gather(cbytes(q.send, o, es), (int)(m * es), MPI_BYTE, gathered.data(), (int)(m * es),
                                 MPI_BYTE, q.root, q.comm->mpi));
    if (root) reduce_ranks(gathered.data(), m, n, m, q.dtype, red, bytes(q.recv, o, es));
  }
}

void run_broadcast(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), total = q.count * es, chunk = chunk_bytes();
  if (q.comm->rank == q.root && q.send != q.recv) memmove(q.recv, q.send, total);
  for (size_t o = 0; o < total; o += chunk) {
    const size_t m = total - o < chunk ? total - o : chunk;
    COCONET_MPI_CHECK(MPI_Bcast(bytes(q.recv, o, 1), (int)m, MPI_BYTE, q.root, q.comm->mpi));
  }
}

void run_reducescatter(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), chunk = chunk_bytes() / es ? chunk_bytes() / es : 1;
  const int n = q.comm->nranks;
  const reduction red = make_reduction(q.comm, q.op, q.dtype);
  const size_t most = n * (q.count < chunk ? q.count : chunk) * es;
  std::vector<char> packed(most), gathered(most);
  for (size_t o = 0; o < q.count; o += chunk) {
    const size_t m = q.count - o < chunk ? q.count - o : chunk;
    for (int j = 0; j < n; ++j) memcpy(&packed[j * m * es], cbytes(q.send, j * q.count + o, es), m * es);
    COCONET_MPI_CHECK(MPI_Alltoall(packed.data(), (int)(m * es), MPI_BYTE, gathered.data(), (int)(m * es), MPI_BYTE,
                                   q.comm->mpi));
    reduce_ranks(gathered.data(), m, n, m, q.dtype, red, bytes(q.recv, o, es));
  }
}

void run_allgather(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), chunk = chunk_bytes() / es ? chunk_bytes() / es : 1;
  const int n = q.comm->nranks;
  std::vector<char> gathered(n * (q.count < chunk ? q.count : chunk) * es);
  for (size_t o = 0; o < q.count; o += chunk) {
    const size_t m = q.count - o < chunk ? q.count - o : chunk;
    COCONET_MPI_CHECK(MPI_Allgather(cbytes(q.send, o, es), (int)(m * es), MPI_BYTE, gathered.data(), (int)(m * es),
                                    MPI_BYTE, q.comm->mpi));
    for (int j = 0; j < n; ++j) memmove(bytes(q.recv, j * q.count + o, es), &gathered[j * m * es], m * es);
  }
}

void run_alltoall(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), chunk = chunk_bytes() / es ? chunk_bytes() / es : 1;
  const int n = q.comm->nranks;
  const size_t most = n * (q.count < chunk ? q.count : chunk) * es;
  std::vector<char> packed(most), gathered(most);
  for (size_t o = 0; o < q.count; o += chunk) {
    const size_t m = q.count - o < chunk ? q.count - o : chunk;
    for (int j = 0; j < n; ++j) memcpy(&packed[j * m * es], cbytes(q.send, j * q.count + o, es), m * es);
    COCONET_MPI_CHECK(MPI_Alltoall(packed.data(), (int)(m * es), MPI_BYTE, gathered.data(), (int)(m * es), MPI_BYTE,
                                   q.comm->mpi));
    for (int j = 0; j < n; ++j) memmove(bytes(q.recv, j * q.count + o, es), &gathered[j * m * es], m * es);
  }
}

void run_gather(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), chunk = chunk_bytes() / es ? chunk_bytes() / es : 1;
  const int n = q.comm->nranks;
  const bool root = q.comm->rank == q.root;
  std::vector<char> gathered(root ? n * (q.count < chunk ? q.count : chunk) * es : 0);
  for (size_t o = 0; o < q.count; o += chunk) {
    const size_t m = q.count - o < chunk ? q.count - o : chunk;
    COCONET_MPI_CHECK(MPI_Gather(cbytes(q.send, o, es), (int)(m * es), MPI_BYTE, gathered.data(), (int)(m * es),
                                 MPI_BYTE, q.root, q.comm->mpi));
    if (root)
      for (int j = 0; j < n; ++j) memmove(bytes(q.recv, j * q.count + o, es), &gathered[j * m * es], m * es);
  }
}

void run_scatter(const queued_op &q) {
  const size_t es = dtype_size(q.dtype), chunk = chunk_bytes() / es ? chunk_bytes() / es : 1;
  const int n = q.comm->nranks;
  const bool root = q.comm->rank == q.root;
  std::vector<char> packed(root ? n * (q.count < chunk ? q.count : chunk) * es : 0);
  for (size_t o = 0; o < q.count; o += chunk) {
    const size_t m = q.count - o < chunk ? q.count - o : chunk;
    if (root)
      for (int j = 0; j < n; ++j) memcpy(&packed[j * m * es], cbytes(q.send, j * q.count + o, es), m * es);
    COCONET_MPI_CHECK(MPI_Scatter(packed.data(), (int)(m * es), MPI_BYTE, bytes(q.recv, o, es), (int)(m * es),
                                  MPI_BYTE, q.root, q.comm->mpi));
  }
}

// Posts the pieces of a send of q's buffer, or of a receive of `total` bytes
// into `into` (each piece at most a chunk).
void post_p2p(const queued_op &q, void *into, size_t total, std::vector<MPI_Request> &requests) {
  const size_t chunk = chunk_bytes();
  for (size_t o = 0; o < total; o += chunk) {
    const int m = (int)(total - o < chunk ? total - o : chunk);
    MPI_Request r;
    if (q.kind == SEND)
      COCONET_MPI_CHECK(MPI_Isend(cbytes(q.send, o, 1), m, MPI_BYTE, q.root, 0, q.comm->mpi, &r));
    else
      COCONET_MPI_CHECK(MPI_Irecv(bytes(into, o, 1), m, MPI_BYTE, q.root, 0, q.comm->mpi, &r));
    requests.push_back(r);
  }
}

// The bytes of this rank's buffer an operation reads (its input), for the summary at ncclCommDestroy.
unsigned long long input_bytes(const queued_op &q) {
  const unsigned long long n = q.count * dtype_size(q.dtype), all = n * (unsigned long long)q.comm->nranks;
  const bool root = q.comm->rank == q.root;
  switch (q.kind) {
    case REDUCESCATTER: case ALLTOALL: return all;
    case SCATTER: return root ? all : 0;
    case BROADCAST: return root ? n : 0;
    case RECV: return 0;
    default: return n;
  }
}

// One line per kind: "AllReduce 3 calls, 12288 bytes in"
void log_summary(ncclComm_t comm) {
  if (!log_enabled(LOG_INFO, SUB_COLL)) return;
  char text[1024];
  int n = 0;
  unsigned long long total = 0;
  for (int k = ALLREDUCE; k <= RECV; ++k) {
    if (!comm->calls[k]) continue;
    total += comm->calls[k];
    n += snprintf(text + n, sizeof text - n, "%s%s %llu (%llu bytes in)", n ? ", " : "", op_kind_name((op_kind)k),
                  comm->calls[k], comm->bytes[k]);
    if (n >= (int)sizeof text) break;
  }
  COCONET_INFO(SUB_COLL, "ncclCommDestroy: comm %p rank %d/%d ran %llu operations%s%s", (void *)comm, comm->rank,
               comm->nranks, total, total ? ": " : "", total ? text : "");
}

bool carried(const queued_op &q) {
  const bool kind = (q.kind == ALLREDUCE && q.op < ncclNumOps) || q.kind == ALLGATHER;
  return kind && q.count * dtype_size(q.dtype) <= CARRY_MAX_BYTES;
}

// Finishes a carried operation from every rank's input.
void finish_carried(const queued_op &q, const carried_inputs &in) {
  const size_t es = dtype_size(q.dtype), bytes_per_rank = q.count * es;
  if (q.kind == ALLREDUCE) {
    reduce_ranks(in.first, in.stride / es, q.comm->nranks, q.count, q.dtype, make_reduction(q.comm, q.op, q.dtype),
                 q.recv);
    return;
  }
  for (int j = 0; j < q.comm->nranks; ++j) memmove(bytes(q.recv, j * q.count, es), in.first + j * in.stride, bytes_per_rank);
}

// Runs the queued operations; the collectives of each communicator are first
// compared with the other ranks' (checks.cc), and a communicator's that differ
// are dropped (when the job is not ended).
ncclResult_t run_group(void) {
  std::vector<queued_op> ops;
  ops.swap(group);
  ncclResult_t result = ncclSuccess;
  std::vector<ncclComm_t> comms, bad;
  std::vector<const queued_op *> done;
  for (const queued_op &q : ops)
    if (q.kind != SEND && q.kind != RECV && std::find(comms.begin(), comms.end(), q.comm) == comms.end())
      comms.push_back(q.comm);
  for (ncclComm_t c : comms) {
    std::vector<const queued_op *> mine;
    for (const queued_op &q : ops)
      if (q.comm == c && q.kind != SEND && q.kind != RECV) mine.push_back(&q);
    const queued_op *carry = mine.size() == 1 && carried(*mine[0]) ? mine[0] : nullptr;
    carried_inputs inputs;
    if (check_collectives(c, mine, carry ? carry->send : nullptr, carry ? carry->count * dtype_size(carry->dtype) : 0,
                          &inputs) != ncclSuccess) {
      bad.push_back(c);
      result = ncclInvalidUsage;
    } else if (carry && inputs.first) {
      finish_carried(*carry, inputs);
      done.push_back(carry);
    }
  }
  // Sends go out with their prints ahead; each receive is posted once its
  // peer's print matches it (a mismatched one drains the sender's bytes).
  std::vector<const queued_op *> sends, recvs;
  for (const queued_op &q : ops)
    if (q.kind == SEND || q.kind == RECV) (q.kind == SEND ? sends : recvs).push_back(&q);
  std::vector<MPI_Request> requests;
  std::vector<p2p_print> sent, received;
  post_send_prints(sends, sent, requests);
  for (const queued_op *q : sends) post_p2p(*q, nullptr, q->count * dtype_size(q->dtype), requests);
  std::vector<bool> matched;
  if (match_recvs(recvs, received, matched) != ncclSuccess) result = ncclInvalidUsage;
  std::vector<std::vector<char>> drains;
  for (size_t i = 0; i < recvs.size(); ++i) {
    const queued_op &q = *recvs[i];
    if (matched[i]) {
      post_p2p(q, q.recv, q.count * dtype_size(q.dtype), requests);
    } else {
      drains.emplace_back(received[i].count * dtype_size((ncclDataType_t)received[i].dtype));
      post_p2p(q, drains.back().data(), drains.back().size(), requests);
    }
  }
  for (const queued_op &q : ops) {
    if (std::find(bad.begin(), bad.end(), q.comm) != bad.end()) continue;
    q.comm->calls[q.kind]++;
    q.comm->bytes[q.kind] += input_bytes(q);
    if (std::find(done.begin(), done.end(), &q) != done.end()) continue;
    switch (q.kind) {
      case ALLREDUCE: run_allreduce(q); break;
      case REDUCE: run_reduce(q); break;
      case BROADCAST: run_broadcast(q); break;
      case REDUCESCATTER: run_reducescatter(q); break;
      case ALLGATHER: run_allgather(q); break;
      case ALLTOALL: run_alltoall(q); break;
      case GATHER: run_gather(q); break;
      case SCATTER: run_scatter(q); break;
      case SEND:
      case RECV: break;
    }
  }
  if (!requests.empty()) wait_all(requests, "ncclSend/ncclRecv: the peers' matching calls");
  return result;
}

// Validates an operation, queues it, and runs the queue outside groups.
ncclResult_t issue(queued_op q, cudaStream_t stream) {
  const char *name = op_kind_name(q.kind);
  take_callsite(q.site, sizeof q.site);
  if (!q.comm) return nccl_error(ncclInvalidArgument, "nccl%s: comm is NULL", name);
  if (!dtype_size(q.dtype)) return nccl_error(ncclInvalidArgument, "nccl%s: invalid data type %d", name, (int)q.dtype);
  if (!stream_is_valid(stream)) return nccl_error(ncclInvalidArgument, "nccl%s: invalid stream", name);
  if (q.count > ((size_t)1 << 60) / dtype_size(q.dtype) / (size_t)q.comm->nranks)
    return nccl_error(ncclInvalidArgument, "nccl%s: count %zu is too large", name, q.count);
  if (needs_reduction(q.kind) && (int)q.op < 0)
    return nccl_error(ncclInvalidArgument, "nccl%s: invalid reduction op %d", name, (int)q.op);
  if (needs_reduction(q.kind) && q.op >= ncclNumOps) {
    const size_t i = (size_t)(q.op - ncclNumOps);
    if (i >= q.comm->ops.size() || !q.comm->ops[i].live)
      return nccl_error(ncclInvalidArgument, "nccl%s: invalid reduction op %d", name, (int)q.op);
    if (q.comm->ops[i].dtype != q.dtype)
      return nccl_error(ncclInvalidArgument, "nccl%s: op %d was created for %s, not %s", name, (int)q.op,
                        dtype_name(q.comm->ops[i].dtype), dtype_name(q.dtype));
  }
  if ((has_root(q.kind) || q.kind == SEND || q.kind == RECV) && (q.root < 0 || q.root >= q.comm->nranks))
    return nccl_error(ncclInvalidArgument, "nccl%s: %s %d is not a rank of a %d-rank communicator", name,
                      has_root(q.kind) ? "root" : "peer", q.root, q.comm->nranks);
  const bool is_root = q.comm->rank == q.root;
  const bool send_used = q.kind != RECV && !(q.kind == SCATTER && !is_root) && !(q.kind == BROADCAST && !is_root);
  const bool recv_used = q.kind != SEND && !(q.kind == REDUCE && !is_root) && !(q.kind == GATHER && !is_root);
  if (q.count && ((send_used && !q.send) || (recv_used && !q.recv)))
    return nccl_error(ncclInvalidArgument, "nccl%s: NULL buffer", name);
  COCONET_INFO(q.kind == SEND || q.kind == RECV ? SUB_P2P : SUB_COLL,
               "nccl%s: comm %p rank %d/%d, count %zu %s, op %s, %s %d, send %p recv %p%s", name, (void *)q.comm,
               q.comm->rank, q.comm->nranks, q.count, dtype_name(q.dtype), redop_name(q.op),
               has_root(q.kind) ? "root" : "peer", q.root, q.send, q.recv, group_depth ? " (grouped)" : "");
  if (q.kind != SEND && q.kind != RECV) q.seq = ++q.comm->collectives;
  group.push_back(q);
  return group_depth == 0 ? run_group() : ncclSuccess;
}

}  // namespace

ncclResult_t nccl_error(ncclResult_t result, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  COCONET_WARN(SUB_COLL, "%s (%s)", last_error, ncclGetErrorString(result));
  return result;
}

}  // namespace coconet_host

using namespace coconet_host;

ncclResult_t ncclGetVersion(int *version) {
  if (!version) return nccl_error(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  static unsigned counter;
  if (!uniqueId) return nccl_error(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  memset(uniqueId, 0, sizeof *uniqueId);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(uniqueId->internal, sizeof uniqueId->internal, "coconet-host %d %lld.%09ld %u", (int)getpid(),
           (long long)ts.tv_sec, ts.tv_nsec, counter++);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config) {
  (void)config;
  if (!comm) return nccl_error(ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
  ensure_mpi();
  int world_size = 0, me = 0;
  COCONET_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  COCONET_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  if (nranks != world_size || rank != me)
    fatal("ncclCommInitRank",
          "nranks=%d rank=%d, but this is rank %d of %d in MPI_COMM_WORLD; the host backend maps NCCL ranks to "
          "MPI_COMM_WORLD ranks (run with mpirun -np %d, and use ncclCommSplit for sub-communicators)",
          nranks, rank, me, world_size, nranks);
  unsigned long long hash = 1469598103934665603ull, lo = 0, hi = 0;
  for (char c : commId.internal) hash = (hash ^ (unsigned char)c) * 1099511628211ull;
  COCONET_MPI_CHECK(MPI_Allreduce(&hash, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
  COCONET_MPI_CHECK(MPI_Allreduce(&hash, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
  if (lo != hi) return nccl_error(ncclInvalidUsage, "ncclCommInitRank: the ranks passed different ncclUniqueIds");
  MPI_Comm mpi;
  COCONET_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &mpi));
  *comm = make_comm(mpi);
  COCONET_INFO(SUB_INIT, "ncclCommInitRank: comm %p rank %d of %d", (void *)*comm, rank, nranks);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId, ncclUniqueId *commIds,
                                      ncclConfig_t *config) {
  if (nId < 1 || !commIds) return nccl_error(ncclInvalidArgument, "ncclCommInitRankScalable: no ncclUniqueId");
  return ncclCommInitRankConfig(newcomm, nranks, commIds[0], myrank, config);
}

ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist) {
  (void)comm;
  (void)devlist;
  fatal("ncclCommInitAll",
        "asked for %d devices in one process; the host backend runs one MPI rank per GPU: call ncclCommInitRank "
        "from each rank under mpirun",
        ndev);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return comm ? ncclSuccess : nccl_error(ncclInvalidArgument, "ncclCommFinalize: comm is NULL");
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return nccl_error(ncclInvalidArgument, "ncclCommDestroy: comm is NULL");
  check_destroy(comm);
  log_summary(comm);
  windows_release(comm);
  COCONET_MPI_CHECK(MPI_Comm_free(&comm->mpi));
  COCONET_INFO(SUB_INIT, "ncclCommDestroy: comm %p", (void *)comm);
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) { return ncclCommDestroy(comm); }

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config) {
  (void)config;
  if (!comm || !newcomm) return nccl_error(ncclInvalidArgument, "ncclCommSplit: NULL argument");
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return nccl_error(ncclInvalidArgument, "ncclCommSplit: negative color %d", color);
  MPI_Comm mpi;
  COCONET_MPI_CHECK(MPI_Comm_split(comm->mpi, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key, &mpi));
  *newcomm = mpi == MPI_COMM_NULL ? nullptr : make_comm(mpi);
  COCONET_INFO(SUB_INIT, "ncclCommSplit: color %d key %d -> comm %p", color, key, (void *)*newcomm);
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

const char *ncclGetLastError(ncclComm_t comm) {
  (void)comm;
  return last_error;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  if (!comm || !asyncError) return nccl_error(ncclInvalidArgument, "ncclCommGetAsyncError: NULL argument");
  *asyncError = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!comm || !count) return nccl_error(ncclInvalidArgument, "ncclCommCount: NULL argument");
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  if (!comm || !device) return nccl_error(ncclInvalidArgument, "ncclCommCuDevice: NULL argument");
  *device = 0;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!comm || !rank) return nccl_error(ncclInvalidArgument, "ncclCommUserRank: NULL argument");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle) {
  (void)size;
  if (!comm || !handle) return nccl_error(ncclInvalidArgument, "ncclCommRegister: NULL argument");
  *handle = buff;
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) {
  (void)handle;
  return comm ? ncclSuccess : nccl_error(ncclInvalidArgument, "ncclCommDeregister: comm is NULL");
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  if (!op || !scalar || !comm) return nccl_error(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: NULL argument");
  if (!dtype_size(datatype))
    return nccl_error(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: invalid data type %d", (int)datatype);
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
    return nccl_error(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: invalid residence %d", (int)residence);
  premul_op p = {true, datatype, residence, {0}, scalar};
  memcpy(p.value, scalar, dtype_size(datatype));
  size_t i = 0;
  while (i < comm->ops.size() && comm->ops[i].live) ++i;
  if (i == comm->ops.size())
    comm->ops.push_back(p);
  else
    comm->ops[i] = p;
  *op = (ncclRedOp_t)(ncclNumOps + (int)i);
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  if (!comm) return nccl_error(ncclInvalidArgument, "ncclRedOpDestroy: comm is NULL");
  const size_t i = (size_t)(op - ncclNumOps);
  if (op < ncclNumOps || i >= comm->ops.size() || !comm->ops[i].live)
    return nccl_error(ncclInvalidArgument, "ncclRedOpDestroy: op %d was not created on this communicator", (int)op);
  comm->ops[i].live = false;
  return ncclSuccess;
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{REDUCE, sendbuff, recvbuff, count, datatype, op, root, comm, 0, {}}, stream);
}

ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return issue(queued_op{BROADCAST, buff, buff, count, datatype, ncclSum, root, comm, 0, {}}, stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, 0, {}}, stream);
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0, comm, 0, {}}, stream);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, 0, {}}, stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, 0, {}}, stream);
}

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{ALLTOALL, sendbuff, recvbuff, count, datatype, ncclSum, 0, comm, 0, {}}, stream);
}

ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{GATHER, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, 0, {}}, stream);
}

ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return issue(queued_op{SCATTER, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, 0, {}}, stream);
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return issue(queued_op{SEND, sendbuff, nullptr, count, datatype, ncclSum, peer, comm, 0, {}}, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return issue(queued_op{RECV, nullptr, recvbuff, count, datatype, ncclSum, peer, comm, 0, {}}, stream);
}

ncclResult_t ncclGroupStart(void) {
  group_depth++;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  if (group_depth == 0) return nccl_error(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  return --group_depth == 0 ? run_group() : ncclSuccess;
}
