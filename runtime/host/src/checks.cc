// coconet host backend: the checks NCCL does not make.
//
// On GPUs, ranks that call different collectives (or the same with another
// count, datatype, op or root) hang or compute garbage. Here every group's
// collectives on a communicator are compared across its ranks before any data
// moves: each rank sends its calls (with their call sites, recorded by nccl.h's
// macros) to every other, and a difference is reported with every rank's
// calls. The message also carries the input of a group's lone small AllReduce
// or AllGather, which then needs no exchange of its own.
// Each ncclSend sends its print (count, datatype, call site) ahead of its data,
// and the matching ncclRecv compares it with its own before receiving.
// The exchange, and the waits for sends and receives, poll with a timeout
// (COCONET_HOST_TIMEOUT seconds) so that a rank that never arrives (another
// call, an early exit) ends the job with a report instead of a hang.
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>

#include "host.h"

namespace coconet_host {

double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

// COCONET_HOST_TIMEOUT: seconds a rank waits for the others (0: forever).
double timeout_seconds(void) {
  static double seconds = -1;
  if (seconds >= 0) return seconds;
  const char *v = getenv("COCONET_HOST_TIMEOUT");
  if (!v || !*v) return seconds = 60;
  char *end;
  double t = strtod(v, &end);
  if (*end || t < 0) fatal("environment", "COCONET_HOST_TIMEOUT must be a number of seconds (0: no timeout), not '%s'", v);
  return seconds = t;
}

namespace {

thread_local char callsite[96];

// What the ranks compare: one collective.
struct call_print {
  unsigned long long seq;
  unsigned long long count;
  int kind, dtype, op, root;
  char site[96];
  // A fused kernel's call (kind FUSED): its region, and where its buffers (root of them) lie in their windows.
  char region[32];
  unsigned long long offsets[4];
};

bool keep_going(void) {
  const char *v = getenv("COCONET_HOST_ON_ERROR");
  if (!v || !*v || strcmp(v, "abort") == 0) return false;
  if (strcmp(v, "continue") == 0) return true;
  fatal("environment", "COCONET_HOST_ON_ERROR must be 'abort' (the default) or 'continue', not '%s'", v);
}

// Whether MPI's own waits yield the processor (an oversubscribed run).
bool mpi_yields(void) {
  static int yields = -1;
  if (yields < 0) {
    const char *y = getenv("OMPI_MCA_mpi_yield_when_idle");
    yields = y && strcmp(y, "0") != 0 && strcmp(y, "false") != 0;
  }
  return yields;
}

// Calls done() until it says yes; after the timeout ends the job saying
// what() is waited for (called only then).
template <class Done, class What>
void poll_until(Done done, What what) {
  if (done()) return;
  const double limit = timeout_seconds(), start = now();
  const bool yield = mpi_yields();
  for (;;) {
    if (done()) return;
    double waited = now() - start;
    if (limit > 0 && waited > limit)
      fatal("timeout",
            "waited %.0f s for %s; a rank that has not arrived is in another call, has finished, or has exited "
            "(COCONET_HOST_TIMEOUT=%g; every rank's COCONET_DEBUG=INFO log shows its calls)",
            waited, std::string(what()).c_str(), limit);
    if (waited > 0.05) {  // busy for 50 ms, as MPI's blocking calls are; then 1 ms naps for long waits
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, nullptr);
    } else if (yield) {  // an oversubscribed run, where MPI's own waits yield too
      sched_yield();
    }
  }
}

// Polls until every request completes (with the timeout; what() only then).
template <class What>
void wait_requests(MPI_Request *requests, int n, What what) {
  poll_until(
      [&] {
        int done = 0;
        COCONET_MPI_CHECK(MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE));
        return done != 0;
      },
      what);
}

void wait_polling(MPI_Request *requests, int n, const char *what) {
  wait_requests(requests, n, [what] { return what; });
}

const int DESTROY = -1;  // the kind of an ncclCommDestroy (compared like a collective)
const int FUSED = -2;    // a fused kernel's call site (coconet_host_fused_check)

std::string describe(const call_print &c) {
  char text[256];
  const op_kind kind = (op_kind)c.kind;
  if (c.kind == DESTROY) {
    snprintf(text, sizeof text, "ncclCommDestroy after %llu collectives%s%s", c.seq - 1, c.site[0] ? " at " : "", c.site);
    return text;
  }
  if (c.kind == FUSED) {
    int n = snprintf(text, sizeof text, "call %llu: the fused kernel of region %s, its buffers at offsets", c.seq,
                     c.region);
    for (int i = 0; i < c.root && i < 4; ++i) n += snprintf(text + n, sizeof text - n, "%s %llu", i ? "," : "", c.offsets[i]);
    snprintf(text + n, sizeof text - n, " of their windows");
    return text;
  }
  int n = snprintf(text, sizeof text, "call %llu: nccl%s count %llu %s", c.seq, op_kind_name(kind), c.count,
                   dtype_name((ncclDataType_t)c.dtype));
  if (needs_reduction(kind)) n += snprintf(text + n, sizeof text - n, " %s", redop_name((ncclRedOp_t)c.op));
  if (has_root(kind)) n += snprintf(text + n, sizeof text - n, " root %d", c.root);
  if (c.site[0]) snprintf(text + n, sizeof text - n, " at %s", c.site);
  return text;
}

bool same_call(const call_print &a, const call_print &b) {
  const op_kind kind = (op_kind)a.kind;
  if (a.kind == DESTROY || b.kind == DESTROY) return a.kind == b.kind && a.seq == b.seq;
  if (a.kind == FUSED || b.kind == FUSED)
    return a.kind == b.kind && a.seq == b.seq && a.root == b.root && !strcmp(a.region, b.region) &&
           !memcmp(a.offsets, b.offsets, sizeof a.offsets);
  return a.seq == b.seq && a.kind == b.kind && a.count == b.count && a.dtype == b.dtype &&
         (!needs_reduction(kind) || a.op == b.op) && (!has_root(kind) || a.root == b.root);
}

}  // namespace

void take_callsite(char *site, size_t size) {
  snprintf(site, size, "%s", callsite);
  callsite[0] = '\0';
}

namespace {

// Every rank's calls gathered and compared with rank 0's; a difference is reported.
// COCONET_HOST_CHECK=0 turns the comparison off (to measure what it costs).
bool checking(void) {
  static int on = -1;
  if (on < 0) {
    const char *v = getenv("COCONET_HOST_CHECK");
    on = !(v && strcmp(v, "0") == 0);
  }
  return on;
}

const int CHECK_TAG = 2;       // the ranks' calls (0 and 1 carry send/recv data and prints)
const int CHECK_REST_TAG = 3;  // the rest of a message longer than a receive slot

// Every rank's message of one check, [call count][total size][calls][data],
// rank j's at area[j * capacity], sizes[j] bytes of it.
struct messages {
  std::vector<char> area;
  std::vector<size_t> sizes;
  size_t capacity = 0, header = 0;  // header: where the data starts (16-byte aligned, like capacity)
  const char *at(int j) const { return area.data() + j * capacity; }
  // The calls rank j's message holds whole.
  unsigned calls(int j) const {
    unsigned k = 0;
    if (sizes[j] >= CALLS_AT) memcpy(&k, at(j), sizeof k);
    const size_t whole = sizes[j] < CALLS_AT ? 0 : (sizes[j] - CALLS_AT) / sizeof(call_print);
    return k < whole ? k : (unsigned)whole;
  }
  uint32_t total(int j) const {
    uint32_t t = 0;
    if (sizes[j] >= CALLS_AT) memcpy(&t, at(j) + sizeof(unsigned), sizeof t);
    return t;
  }
  call_print call(int j, unsigned k) const {
    call_print c;
    memcpy(&c, at(j) + CALLS_AT + k * sizeof(call_print), sizeof c);
    return c;
  }
  static const size_t CALLS_AT = 8;
};

size_t round16(size_t n) { return (n + 15) / 16 * 16; }

// Sends this rank's calls (and `data`, the input of the group's lone small
// collective) to every other rank of comm and receives theirs into m. The
// receives are posted first, into slots that hold any message a lone
// collective sends (REPORT_CALLS calls and CARRY_MAX_BYTES of data), so that
// no message is ever truncated (an MPI implementation may write past a
// receive buffer a longer message truncates); a longer message (a group of
// many calls) sends the rest on CHECK_REST_TAG, which is received once the
// slot shows its total size. where() says what is waited for, should a wait
// time out.
const unsigned REPORT_CALLS = 16;
const size_t SLOT = (messages::CALLS_AT + REPORT_CALLS * sizeof(call_print) + 15) / 16 * 16 + CARRY_MAX_BYTES;

template <class Where>
void exchange_calls(ncclComm_t comm, const std::vector<call_print> &mine, const void *data, size_t data_bytes,
                    Where where, messages &m) {
  const int n = comm->nranks, me = comm->rank;
  const unsigned ncalls = (unsigned)mine.size();
  m.header = round16(messages::CALLS_AT + ncalls * sizeof(call_print));
  const size_t own_size = m.header + data_bytes;
  if (own_size > UINT32_MAX) fatal("collective check", "a group of %u calls is too long to check", ncalls);
  static thread_local std::vector<char> own;
  own.assign(own_size, 0);
  const uint32_t total = (uint32_t)own_size;
  memcpy(own.data(), &ncalls, sizeof ncalls);
  memcpy(own.data() + sizeof ncalls, &total, sizeof total);
  if (ncalls) memcpy(own.data() + messages::CALLS_AT, mine.data(), ncalls * sizeof(call_print));
  if (data_bytes) memcpy(own.data() + m.header, data, data_bytes);
  m.capacity = SLOT;
  m.area.resize(n * SLOT);
  m.sizes.assign(n, 0);
  const size_t first = own_size < SLOT ? own_size : SLOT;
  // The receives (by rank; MPI_REQUEST_NULL for this one), the sends, the sends of the rest.
  static thread_local std::vector<MPI_Request> requests;
  static thread_local std::vector<MPI_Status> statuses;
  requests.assign(3 * n, MPI_REQUEST_NULL);
  statuses.resize(3 * n);
  for (int j = 0; j < n; ++j)
    if (j != me)
      COCONET_MPI_CHECK(MPI_Irecv(m.area.data() + j * SLOT, (int)SLOT, MPI_BYTE, j, CHECK_TAG, comm->mpi, &requests[j]));
  for (int j = 0; j < n; ++j) {
    if (j == me) continue;
    COCONET_MPI_CHECK(MPI_Isend(own.data(), (int)first, MPI_BYTE, j, CHECK_TAG, comm->mpi, &requests[n + j]));
    if (own_size > SLOT)
      COCONET_MPI_CHECK(MPI_Isend(own.data() + SLOT, (int)(own_size - SLOT), MPI_BYTE, j, CHECK_REST_TAG, comm->mpi,
                                  &requests[2 * n + j]));
  }
  // At a timeout: where this rank waits, and each other rank's first call if it has arrived.
  auto waiting = [&] {
    std::string text = where();
    for (int j = 0; j < n; ++j) {
      if (j == me) continue;
      int arrived = 0;
      MPI_Status st;
      COCONET_MPI_CHECK(MPI_Request_get_status(requests[j], &arrived, &st));
      std::string state = " has not arrived";
      if (arrived) {
        unsigned calls = 0;
        memcpy(&calls, m.at(j), sizeof calls);
        state = calls ? " is in " + describe(m.call(j, 0)) : " is in a group without collectives";
      }
      text += "; rank " + std::to_string(j) + state;
    }
    return text;
  };
  auto all_done = [&] {
    int done = 0;
    COCONET_MPI_CHECK(MPI_Testall(3 * n, requests.data(), &done, statuses.data()));
    return done != 0;
  };
  poll_until(all_done, waiting);
  std::vector<uint32_t> totals(n, 0);
  size_t longest = own_size;
  for (int j = 0; j < n; ++j) {
    if (j == me) continue;
    int size = 0;
    COCONET_MPI_CHECK(MPI_Get_count(&statuses[j], MPI_BYTE, &size));
    m.sizes[j] = size > 0 ? (size_t)size : 0;
    totals[j] = m.total(j);
    if (totals[j] > longest) longest = totals[j];
  }
  if (longest > SLOT) {  // a long group: the rests, each message whole in a slot of the longest's size
    const size_t capacity = round16(longest);
    std::vector<char> area(n * capacity);
    for (int j = 0; j < n; ++j)
      if (j != me) memcpy(area.data() + j * capacity, m.at(j), m.sizes[j]);
    m.area.swap(area);
    m.capacity = capacity;
    requests.assign(n, MPI_REQUEST_NULL);
    for (int j = 0; j < n; ++j)
      if (j != me && totals[j] > SLOT && m.sizes[j] == SLOT)
        COCONET_MPI_CHECK(MPI_Irecv(m.area.data() + j * capacity + SLOT, (int)(totals[j] - SLOT), MPI_BYTE, j,
                                    CHECK_REST_TAG, comm->mpi, &requests[j]));
    auto rest_done = [&] {
      int done = 0;
      COCONET_MPI_CHECK(MPI_Testall(n, requests.data(), &done, MPI_STATUSES_IGNORE));
      return done != 0;
    };
    poll_until(rest_done, waiting);
    for (int j = 0; j < n; ++j)
      if (j != me && totals[j] > SLOT && m.sizes[j] == SLOT) m.sizes[j] = totals[j];
  }
  memcpy(m.area.data() + me * m.capacity, own.data(), own_size);
  m.sizes[me] = own_size;
}

ncclResult_t compare(ncclComm_t comm, const std::vector<call_print> &mine, const void *data = nullptr,
                     size_t data_bytes = 0, carried_inputs *inputs = nullptr) {
  if (!checking()) return ncclSuccess;
  const int n = comm->nranks;
  auto where = [&] {
    char text[160];
    snprintf(text, sizeof text, "the other ranks of communicator %p in %s", (void *)comm,
             mine.empty() ? "a group" : describe(mine[0]).c_str());
    return std::string(text);
  };
  static thread_local messages m;  // kept: no allocation per call; inputs point into it until the next check
  exchange_calls(comm, mine, data, data_bytes, where, m);
  std::vector<int> counts(n);
  for (int j = 0; j < n; ++j) counts[j] = (int)m.calls(j);
  bool differ = false;
  for (int j = 1; j < n && !differ; ++j) {
    differ = counts[j] != counts[0];
    for (int k = 0; k < counts[0] && !differ; ++k)
      differ = !same_call(m.call(j, k), m.call(0, k));
  }
  if (!differ) {
    if (inputs && data_bytes) *inputs = carried_inputs{m.at(0) + m.header, m.capacity};  // the calls agree: all sent data
    return ncclSuccess;
  }
  std::string report;
  for (int j = 0; j < n; ++j) {
    report += "\n  rank " + std::to_string(j) + ":";
    if (!counts[j]) report += " no collective in this group";
    for (int k = 0; k < counts[j]; ++k) report += (k ? "; " : " ") + describe(m.call(j, k));
  }
  const bool go_on = keep_going();
  if (comm->rank == 0) {
    const char *say = "the ranks of a communicator must make the same collective calls in the same order, with the "
                      "same count, datatype, reduction op and root";
    if (go_on) {
      fprintf(stderr, "coconet-host[rank %d]: error: collective mismatch on communicator %p (%d ranks):%s\n  %s; "
              "the calls return ncclInvalidUsage (COCONET_HOST_ON_ERROR=continue)\n", world_rank(), (void *)comm, n,
              report.c_str(), say);
      fflush(stderr);
    } else {
      fatal("collective mismatch", "on communicator %p (%d ranks):%s\n  %s", (void *)comm, n, report.c_str(), say);
    }
  } else if (!go_on) {
    MPI_Request never;  // rank 0 reports and ends the job
    COCONET_MPI_CHECK(MPI_Ibarrier(comm->mpi, &never));
    wait_polling(&never, 1, "rank 0 to report a collective mismatch");
  }
  return nccl_error(ncclInvalidUsage, "collective mismatch on communicator %p", (void *)comm);
}

}  // namespace

void fused_check(ncclComm_t comm, const char *region, int nbufs, const size_t *offsets) {
  std::vector<call_print> mine(1, call_print{++comm->collectives, 0, FUSED, 0, 0, nbufs, {0}, {0}, {0}});
  snprintf(mine[0].region, sizeof mine[0].region, "%s", region);
  for (int i = 0; i < nbufs && i < 4; ++i) mine[0].offsets[i] = offsets[i];
  COCONET_INFO(SUB_SYMM, "fused kernel of region %s on communicator %p (call %llu)", region, (void *)comm,
               comm->collectives);
  compare(comm, mine);
}

ncclResult_t check_collectives(ncclComm_t comm, const std::vector<const queued_op *> &ops, const void *data,
                               size_t data_bytes, carried_inputs *inputs) {
  std::vector<call_print> mine(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const queued_op &q = *ops[i];
    mine[i] = call_print{q.seq, q.count, (int)q.kind, (int)q.dtype, (int)q.op, q.root, {0}, {0}, {0}};
    snprintf(mine[i].site, sizeof mine[i].site, "%s", q.site);
  }
  return compare(comm, mine, data, data_bytes, inputs);
}

namespace {

const int P2P_PRINT_TAG = 1;  // the data moves on tag 0

std::string describe_p2p(const queued_op &q) {
  char text[256];
  snprintf(text, sizeof text, "nccl%s count %zu %s %s rank %d%s%s", op_kind_name(q.kind), q.count,
           dtype_name(q.dtype), q.kind == SEND ? "to" : "from", q.root, q.site[0] ? " at " : "", q.site);
  return text;
}

std::string describe_print(const p2p_print &p, int to) {
  char text[256];
  snprintf(text, sizeof text, "ncclSend count %llu %s to rank %d%s%s", p.count, dtype_name((ncclDataType_t)p.dtype),
           to, p.site[0] ? " at " : "", p.site);
  return text;
}

}  // namespace

void post_send_prints(const std::vector<const queued_op *> &sends, std::vector<p2p_print> &prints,
                      std::vector<MPI_Request> &requests) {
  if (!checking()) return;
  prints.resize(sends.size());
  for (size_t i = 0; i < sends.size(); ++i) {
    const queued_op &q = *sends[i];
    prints[i] = p2p_print{q.count, (int)q.dtype, {0}};
    snprintf(prints[i].site, sizeof prints[i].site, "%s", q.site);
    MPI_Request r;
    COCONET_MPI_CHECK(MPI_Isend(&prints[i], sizeof prints[i], MPI_BYTE, q.root, P2P_PRINT_TAG, q.comm->mpi, &r));
    requests.push_back(r);
  }
}

ncclResult_t match_recvs(const std::vector<const queued_op *> &recvs, std::vector<p2p_print> &prints,
                         std::vector<bool> &matched) {
  matched.assign(recvs.size(), true);
  if (!checking() || recvs.empty()) return ncclSuccess;
  prints.resize(recvs.size());
  std::vector<MPI_Request> requests(recvs.size());
  for (size_t i = 0; i < recvs.size(); ++i) {
    const queued_op &q = *recvs[i];
    COCONET_MPI_CHECK(MPI_Irecv(&prints[i], sizeof prints[i], MPI_BYTE, q.root, P2P_PRINT_TAG, q.comm->mpi,
                                &requests[i]));
  }
  wait_requests(requests.data(), (int)requests.size(), [&] {
    std::string what = "the matching ncclSend of";
    for (size_t i = 0; i < recvs.size(); ++i) what += (i ? "; " : " ") + describe_p2p(*recvs[i]);
    return what;
  });
  ncclResult_t result = ncclSuccess;
  for (size_t i = 0; i < recvs.size(); ++i) {
    const queued_op &q = *recvs[i];
    if (prints[i].count == q.count && prints[i].dtype == (int)q.dtype) continue;
    matched[i] = false;
    char text[768];
    snprintf(text, sizeof text, "on communicator %p: rank %d's %s does not match rank %d's %s\n  a ncclRecv must "
             "have the count and datatype of the ncclSend it receives (the sends and receives between two ranks "
             "pair in the order they are issued)", (void *)q.comm, q.comm->rank, describe_p2p(q).c_str(), q.root,
             describe_print(prints[i], q.comm->rank).c_str());
    if (!keep_going()) fatal("send/recv mismatch", "%s", text);
    fprintf(stderr, "coconet-host[rank %d]: error: send/recv mismatch %s; the ncclRecv returns ncclInvalidUsage and "
            "receives nothing (COCONET_HOST_ON_ERROR=continue)\n", world_rank(), text);
    fflush(stderr);
    result = nccl_error(ncclInvalidUsage, "send/recv mismatch on communicator %p", (void *)q.comm);
  }
  return result;
}

void wait_all(std::vector<MPI_Request> &requests, const char *what) {
  wait_polling(requests.data(), (int)requests.size(), what);
}

void check_destroy(ncclComm_t comm) {
  std::vector<call_print> mine(1, call_print{comm->collectives + 1, 0, DESTROY, 0, 0, 0, {0}, {0}, {0}});
  take_callsite(mine[0].site, sizeof mine[0].site);
  if (compare(comm, mine) != ncclSuccess) return;
  // Every rank is here: a send that was made is in by now (wait a little for the last bytes).
  int pending = 0;
  MPI_Status status;
  for (int tries = 0; tries < 50 && !pending; ++tries) {
    COCONET_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm->mpi, &pending, &status));
    if (!pending) {
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, nullptr);
    }
  }
  if (!pending) return;
  char text[512];
  if (status.MPI_TAG == P2P_PRINT_TAG) {
    p2p_print p;
    COCONET_MPI_CHECK(MPI_Recv(&p, sizeof p, MPI_BYTE, status.MPI_SOURCE, P2P_PRINT_TAG, comm->mpi, MPI_STATUS_IGNORE));
    snprintf(text, sizeof text, "rank %d's %s was not received: rank %d destroyed the communicator without its "
             "ncclRecv (on GPUs the sender hangs)", status.MPI_SOURCE, describe_print(p, comm->rank).c_str(),
             comm->rank);
  } else {
    int bytes = 0;
    COCONET_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &bytes));
    snprintf(text, sizeof text, "rank %d has %d bytes sent by rank %d that no ncclRecv received (a ncclSend without "
             "its matching ncclRecv: on GPUs the sender hangs)", comm->rank, bytes, status.MPI_SOURCE);
  }
  if (!keep_going()) fatal("unmatched send", "%s", text);
  nccl_error(ncclInvalidUsage, "%s", text);
}

}  // namespace coconet_host

using namespace coconet_host;

void coconet_host_callsite(const char *file, int line) {
  snprintf(callsite, sizeof callsite, "%s:%d", file ? file : "?", line);
}

extern "C" void coconet_host_fused_check(ncclComm_t comm, const char *region, int nbufs, const size_t *offsets) {
  if (!comm) coconet_host::fatal("coconet_host_fused_check", "comm is NULL");
  coconet_host::fused_check(comm, region, nbufs, offsets);
}
