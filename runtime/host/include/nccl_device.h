/* coconet host backend: the subset of NCCL 2.28's device API (nccl_device.h)
 * that coconet's fused kernels use, with NCCL's names and signatures, on CPUs.
 *
 *   ncclDevCommCreate / ncclDevCommDestroy   a device communicator with
 *                                            lsaBarrierCount LSA barriers
 *   ncclTeamLsa(comm), ncclTeamLsa(devComm)  the ranks that share memory
 *                                            (all of them; COCONET_HOST_LSA_SIZE
 *                                            makes smaller domains, to test
 *                                            fallbacks)
 *   ncclGetLsaPointer(win, offset, peer)     a peer's address of a window
 *   ncclLsaBarrierSession<ncclCoopCta>       arrive / wait / sync of the
 *                                            block's barrier with the same
 *                                            block of every LSA peer
 *   ncclCoopCta, cuda::memory_order_*
 *
 * A session's sync is a __syncthreads, then one thread's cross-rank barrier
 * (counters in symmetric memory, shared-memory atomics), then a __syncthreads:
 * kernels that use it must be launched with COCONET_HOST_SYNC. Blocks run one
 * after the other on every rank, so block b's barriers meet block b's of the
 * peers. Waits end the job after COCONET_HOST_TIMEOUT seconds with who is
 * missing. Test switches: COCONET_HOST_LSA_DELAY_US=N makes rank r sleep r*N
 * microseconds before each arrive (peers lag), COCONET_HOST_FAULT=lsa-barrier
 * turns the cross-rank part off (the emulation must then expose the race). */
#ifndef NCCL_DEVICE_H_
#define NCCL_DEVICE_H_

#include <stdint.h>

#include "coconet_host_device.h"
#include "nccl.h"

namespace cuda {
enum memory_order {
  memory_order_relaxed,
  memory_order_consume,
  memory_order_acquire,
  memory_order_release,
  memory_order_acq_rel,
  memory_order_seq_cst
};
}  // namespace cuda

struct ncclTeam {
  int nRanks, rank, stride;
};
typedef struct ncclTeam ncclTeam_t;
struct ncclTeamTagLsa {};

struct ncclLsaBarrierHandle {
  ncclWindow_t window;  // this rank's arrival counters, one per barrier, shared with the peers
  int count;            // barriers
};
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;

struct ncclDevComm {
  int rank, nRanks;
  int lsaRank, lsaSize;
  ncclLsaBarrierHandle_t lsaBarrier;
  unsigned long long *epochs;  // per barrier: this rank's arrivals so far (private memory)
};
typedef struct ncclDevComm ncclDevComm_t;

struct ncclDevCommRequirements {
  void *resourceRequirementsList;
  void *teamRequirementsList;
  bool lsaMultimem;
  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;
  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
};
typedef struct ncclDevCommRequirements ncclDevCommRequirements_t;

extern "C" {
/* Collective over comm: allocates the barriers' counters in symmetric memory.
 * Only lsaBarrierCount (and barrierCount, which adds to it) may be non-zero. */
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t *reqs, ncclDevComm_t *out);
/* Collective over comm: frees what ncclDevCommCreate made. */
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t *devComm);
ncclTeam_t ncclTeamLsa(ncclComm_t comm);
/* Rank peer's address of offset in window w (a fatal error past its end). */
void *coconet_host_lsa_pointer(ncclWindow_t w, size_t offset, int peer);
/* Block blockIdx's barrier `index` of dev: arrive, and wait for every LSA peer. */
void coconet_host_lsa_arrive(const ncclDevComm *dev, uint32_t index);
void coconet_host_lsa_wait(const ncclDevComm *dev, uint32_t index);
}

inline ncclTeam ncclTeamLsa(const ncclDevComm &dev) { return ncclTeam{dev.lsaSize, dev.lsaRank, 1}; }

inline void *ncclGetLsaPointer(ncclWindow_t w, size_t offset, int peer) {
  return coconet_host_lsa_pointer(w, offset, peer);
}

/* The whole block: every thread takes part. */
struct ncclCoopCta {
  int thread_rank() const { return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)); }
  int size() const { return (int)(blockDim.x * blockDim.y * blockDim.z); }
  int num_threads() const { return size(); }
  void sync() { __syncthreads(); }
};

template <typename Coop>
struct ncclLsaBarrierSession {
  ncclLsaBarrierSession(Coop, const ncclDevComm &dev, ncclTeam, ncclLsaBarrierHandle, uint32_t index)
      : dev_(&dev), index_(index) {}
  ncclLsaBarrierSession(Coop, const ncclDevComm &dev, ncclTeamTagLsa, uint32_t index) : dev_(&dev), index_(index) {}
  ncclLsaBarrierSession(const ncclLsaBarrierSession &) = delete;

  void arrive(Coop coop, cuda::memory_order) {
    coop.sync();
    if (coop.thread_rank() == 0) coconet_host_lsa_arrive(dev_, index_);
  }
  void wait(Coop coop, cuda::memory_order) {
    if (coop.thread_rank() == 0) coconet_host_lsa_wait(dev_, index_);
    coop.sync();
  }
  void sync(Coop coop, cuda::memory_order order) {
    arrive(coop, order);
    wait(coop, order);
  }

 private:
  const ncclDevComm *dev_;
  uint32_t index_;
};

#endif
