// coconet host backend: NCCL's device API (nccl_device.h) on CPUs.
//
// A device communicator's LSA barriers are counters in a symmetric window:
// rank r's counter b counts the times r's block b has arrived at barrier b.
// Arriving publishes this rank's next count (a release store); waiting spins
// until every LSA peer's counter b has reached it (acquire loads), naps after
// 50 ms and ends the job after COCONET_HOST_TIMEOUT seconds naming the ranks
// still missing. The peers' counters are read through the window's mappings.
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "host.h"
#include "nccl_device.h"

namespace coconet_host {

namespace {

// COCONET_HOST_FAULT=lsa-barrier: barriers do not wait (a test-only bug).
bool barrier_broken(void) {
  static int broken = -1;
  if (broken < 0) {
    const char *v = getenv("COCONET_HOST_FAULT");
    if (v && *v && strcmp(v, "lsa-barrier") != 0)
      fatal("environment", "COCONET_HOST_FAULT must be 'lsa-barrier' (a test-only fault), not '%s'", v);
    broken = v && *v;
    if (broken) COCONET_WARN(SUB_SYMM, "COCONET_HOST_FAULT=lsa-barrier: LSA barriers do not wait (a test-only fault)");
  }
  return broken != 0;
}

unsigned long long *counter(ncclWindow_t w, int world_peer, uint32_t index) {
  return reinterpret_cast<unsigned long long *>(w->peers[world_peer]) + index;
}

void check_index(const ncclDevComm *dev, uint32_t index, const char *what) {
  if (!dev || !dev->lsaBarrier.window) fatal(what, "in %s: the device communicator is not created (or destroyed)",
                                             launch_description());
  if (index >= (uint32_t)dev->lsaBarrier.count)
    fatal(what, "in %s, block (%u,%u,%u): barrier %u of a device communicator with lsaBarrierCount %d",
          launch_description(), blockIdx.x, blockIdx.y, blockIdx.z, index, dev->lsaBarrier.count);
}

}  // namespace

void lsa_domain(ncclComm_t comm, int *base, int *size) {
  int k = (int)env_size("COCONET_HOST_LSA_SIZE", (size_t)comm->nranks);
  if (k > comm->nranks) k = comm->nranks;
  *base = comm->rank / k * k;
  *size = *base + k <= comm->nranks ? k : comm->nranks - *base;
}

}  // namespace coconet_host

using namespace coconet_host;

ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t *reqs, ncclDevComm_t *out) {
  if (!comm || !reqs || !out) return nccl_error(ncclInvalidArgument, "ncclDevCommCreate: NULL argument");
  if (reqs->resourceRequirementsList || reqs->teamRequirementsList || reqs->lsaMultimem || reqs->railGinBarrierCount ||
      reqs->lsaLLA2ABlockCount || reqs->lsaLLA2ASlotCount || reqs->ginForceEnable || reqs->ginSignalCount ||
      reqs->ginCounterCount)
    return nccl_error(ncclInvalidUsage, "ncclDevCommCreate: the host backend has LSA barriers only (no resources, "
                                        "teams, multimem, LL A2A or GIN)");
  const int count = reqs->lsaBarrierCount + reqs->barrierCount;
  if (count < 0) return nccl_error(ncclInvalidArgument, "ncclDevCommCreate: negative barrier count");
  *out = ncclDevComm{};
  out->rank = comm->rank;
  out->nRanks = comm->nranks;
  int base = 0;
  lsa_domain(comm, &base, &out->lsaSize);
  out->lsaRank = comm->rank - base;
  out->lsaBarrier.count = count;
  const size_t bytes = (size_t)(count ? count : 1) * sizeof(unsigned long long);
  void *mem = nullptr;
  ncclResult_t res = ncclMemAlloc(&mem, bytes);
  if (res != ncclSuccess) return res;
  memset(mem, 0, bytes);
  out->epochs = static_cast<unsigned long long *>(calloc((size_t)(count ? count : 1), sizeof(unsigned long long)));
  if (!out->epochs) fatal("ncclDevCommCreate", "out of memory");
  res = ncclCommWindowRegister(comm, mem, bytes, &out->lsaBarrier.window, NCCL_WIN_COLL_SYMMETRIC);
  if (res != ncclSuccess) return res;
  COCONET_INFO(SUB_SYMM, "ncclDevCommCreate: comm %p, %d LSA barriers, LSA rank %d of %d", (void *)comm, count,
               out->lsaRank, out->lsaSize);
  return ncclSuccess;
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t *dev) {
  if (!comm || !dev || !dev->lsaBarrier.window)
    return nccl_error(ncclInvalidArgument, "ncclDevCommDestroy: NULL argument or a device communicator not created");
  // No rank may unmap the counters while a peer still reads them.
  COCONET_MPI_CHECK(MPI_Barrier(comm->mpi));
  void *mem = dev->lsaBarrier.window->base;
  ncclResult_t res = ncclCommWindowDeregister(comm, dev->lsaBarrier.window);
  if (res == ncclSuccess) res = ncclMemFree(mem);
  free(dev->epochs);
  COCONET_INFO(SUB_SYMM, "ncclDevCommDestroy: comm %p", (void *)comm);
  return res;
}

ncclTeam_t ncclTeamLsa(ncclComm_t comm) {
  if (!comm) fatal("ncclTeamLsa", "comm is NULL");
  int base = 0, size = 0;
  lsa_domain(comm, &base, &size);
  return ncclTeam_t{size, comm->rank - base, 1};
}

void *coconet_host_lsa_pointer(ncclWindow_t w, size_t offset, int peer) {
  if (!w) fatal("ncclGetLsaPointer", "in %s: the window is NULL", launch_description());
  if (peer < 0 || peer >= w->lsa_size)
    fatal("ncclGetLsaPointer", "in %s: peer %d is not an LSA rank (the LSA team has %d)", launch_description(), peer,
          w->lsa_size);
  const int r = w->lsa_base + peer;
  if (offset >= w->peer_sizes[r])
    fatal("ncclGetLsaPointer", "in %s: offset %zu is past rank %d's %zu-byte window", launch_description(), offset, r,
          w->peer_sizes[r]);
  return w->peers[r] + offset;
}

void coconet_host_lsa_arrive(const ncclDevComm *dev, uint32_t index) {
  check_index(dev, index, "ncclLsaBarrierSession::arrive");
  static const size_t delay_us = env_size("COCONET_HOST_LSA_DELAY_US", 0);
  if (delay_us && dev->lsaRank) {
    const unsigned long long ns = (unsigned long long)delay_us * 1000ull * (unsigned long long)dev->lsaRank;
    struct timespec pause = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    nanosleep(&pause, nullptr);
  }
  const ncclWindow_t w = dev->lsaBarrier.window;
  const unsigned long long epoch = ++dev->epochs[index];
  __atomic_store_n(counter(w, w->lsa_base + dev->lsaRank, index), epoch, __ATOMIC_RELEASE);
}

void coconet_host_lsa_wait(const ncclDevComm *dev, uint32_t index) {
  check_index(dev, index, "ncclLsaBarrierSession::wait");
  if (barrier_broken()) return;
  const ncclWindow_t w = dev->lsaBarrier.window;
  const unsigned long long epoch = dev->epochs[index];
  const double limit = timeout_seconds(), start = now();
  for (int peer = 0; peer < dev->lsaSize; ++peer) {
    unsigned long long *c = counter(w, w->lsa_base + peer, index);
    while (__atomic_load_n(c, __ATOMIC_ACQUIRE) < epoch) {
      const double waited = now() - start;
      if (limit > 0 && waited > limit)
        fatal("timeout", "in %s, block (%u,%u,%u) waited %.0f s at LSA barrier %u (arrival %llu) for LSA rank %d, "
                         "which has arrived %llu times; a rank that has not arrived runs another kernel or another "
                         "path (COCONET_HOST_TIMEOUT=%g)",
              launch_description(), blockIdx.x, blockIdx.y, blockIdx.z, waited, index, epoch, peer,
              __atomic_load_n(c, __ATOMIC_ACQUIRE), limit);
      if (waited > 0.05) {
        struct timespec pause = {0, 200000};
        nanosleep(&pause, nullptr);
      } else {
        sched_yield();
      }
    }
  }
}
