// Host backend: NCCL over MPI.  Every collective x data type x reduction op,
// in place and out of place, with counts that do not divide by the number of
// ranks, checked against results computed directly here; plus the documented
// rank-order rounding, groups of sends and receives, ncclCommSplit and
// argument errors.  Run under mpirun with any number of ranks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <mpi.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "check.h"

static int rank, nranks;
static ncclComm_t comm;
static cudaStream_t stream;

static const ncclDataType_t all_types[] = {ncclInt8,    ncclUint8,   ncclInt32,    ncclUint32,
                                           ncclInt64,   ncclUint64,  ncclFloat16,  ncclFloat32,
                                           ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

static size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    default: return 8;
  }
}

static bool is_unsigned(ncclDataType_t t) { return t == ncclUint8 || t == ncclUint32 || t == ncclUint64; }
static bool is_integer(ncclDataType_t t) { return t <= ncclUint64; }

// Writes v (exactly representable, or rounded once as the type's conversion does).
static void put(ncclDataType_t t, void *buf, size_t i, double v) {
  char *p = static_cast<char *>(buf) + i * type_size(t);
  switch (t) {
    case ncclInt8: *(int8_t *)p = (int8_t)v; break;
    case ncclUint8: *(uint8_t *)p = (uint8_t)v; break;
    case ncclInt32: *(int32_t *)p = (int32_t)v; break;
    case ncclUint32: *(uint32_t *)p = (uint32_t)v; break;
    case ncclInt64: *(int64_t *)p = (int64_t)v; break;
    case ncclUint64: *(uint64_t *)p = (uint64_t)v; break;
    case ncclFloat16: *(__half *)p = __double2half(v); break;
    case ncclFloat32: *(float *)p = (float)v; break;
    case ncclFloat64: *(double *)p = v; break;
    case ncclBfloat16: *(__nv_bfloat16 *)p = __double2bfloat16(v); break;
    case ncclFloat8e4m3: *(__nv_fp8_e4m3 *)p = __nv_fp8_e4m3(v); break;
    default: *(__nv_fp8_e5m2 *)p = __nv_fp8_e5m2(v); break;
  }
}

// What rank r contributes at index i: small integers, so every exact result
// fits every type; products stay within +-16.
static double value(ncclDataType_t t, ncclRedOp_t op, int r, size_t i) {
  if (op == ncclProd) {
    const int k = (int)((r + i) % 3);
    return k == 0 ? 2 : k == 1 ? 1 : is_unsigned(t) ? 1 : -1;
  }
  const int v = (int)((r * 7 + i * 3) % 5);
  return is_unsigned(t) ? v : v - 2;
}

// PreMulSum scalars: rank r multiplies by r + 1.
static double scalar(int r) { return r + 1; }

// The exact reduction over all ranks, then rounded once to the type.
static double expected(ncclDataType_t t, ncclRedOp_t op, size_t i, bool premul) {
  double acc = value(t, op, 0, i) * (premul ? scalar(0) : 1);
  for (int r = 1; r < nranks; ++r) {
    const double v = value(t, op, r, i) * (premul ? scalar(r) : 1);
    switch (op) {
      case ncclProd: acc *= v; break;
      case ncclMax: acc = v > acc ? v : acc; break;
      case ncclMin: acc = v < acc ? v : acc; break;
      default: acc += v; break;
    }
  }
  if (op == ncclAvg) acc = is_integer(t) ? (double)((long long)acc / nranks) : acc / nranks;
  return acc;
}

static bool same_element(ncclDataType_t t, const void *a, size_t i, double want) {
  alignas(8) char w[8];
  put(t, w, 0, want);
  return memcmp(static_cast<const char *>(a) + i * type_size(t), w, type_size(t)) == 0;
}

struct reduction_case {
  ncclRedOp_t op;      // the op passed to NCCL
  ncclRedOp_t math;    // what it computes
  bool premul;
};

static void fill(ncclDataType_t t, ncclRedOp_t math, void *buf, size_t count, size_t offset) {
  for (size_t i = 0; i < count; ++i) put(t, buf, i, value(t, math, rank, i + offset));
}

static int count_bad(ncclDataType_t t, const reduction_case &rc, const void *buf, size_t count, size_t offset) {
  int bad = 0;
  for (size_t i = 0; i < count; ++i) bad += !same_element(t, buf, i, expected(t, rc.math, i + offset, rc.premul));
  return bad;
}

static void test_reductions(ncclDataType_t t, const reduction_case &rc, size_t count) {
  const size_t es = type_size(t);
  char *send, *recv;
  cudaMalloc(&send, nranks * count * es);
  cudaMalloc(&recv, nranks * count * es);
  for (int inplace = 0; inplace < 2; ++inplace) {
    // AllReduce
    fill(t, rc.math, send, count, 0);
    char *out = inplace ? send : recv;
    CHECK(ncclAllReduce(send, out, count, t, rc.op, comm, stream) == ncclSuccess);
    CHECK_MSG(count_bad(t, rc, out, count, 0) == 0, "AllReduce %d op %d count %zu inplace %d", (int)t, (int)rc.op,
              count, inplace);
    // Reduce to the last rank
    const int root = nranks - 1;
    fill(t, rc.math, send, count, 0);
    out = inplace ? send : recv;
    CHECK(ncclReduce(send, rank == root || inplace ? out : nullptr, count, t, rc.op, root, comm, stream) ==
          ncclSuccess);
    if (rank == root)
      CHECK_MSG(count_bad(t, rc, out, count, 0) == 0, "Reduce %d op %d count %zu inplace %d", (int)t, (int)rc.op,
                count, inplace);
    // ReduceScatter: rank r gets elements [r*count, (r+1)*count) of the whole vector
    fill(t, rc.math, send, nranks * count, 0);
    out = inplace ? send + rank * count * es : recv;
    CHECK(ncclReduceScatter(send, out, count, t, rc.op, comm, stream) == ncclSuccess);
    CHECK_MSG(count_bad(t, rc, out, count, rank * count) == 0, "ReduceScatter %d op %d count %zu inplace %d", (int)t,
              (int)rc.op, count, inplace);
  }
  cudaFree(send);
  cudaFree(recv);
}

static void test_data_movement(ncclDataType_t t, size_t count) {
  const size_t es = type_size(t);
  char *send, *recv;
  cudaMalloc(&send, nranks * count * es);
  cudaMalloc(&recv, nranks * count * es);
  // Tag every element with its source rank and index (rounded alike on both sides).
  auto tag = [&](int r, size_t i) { return (double)((r * 31 + (int)i) % 100); };
  for (int inplace = 0; inplace < 2; ++inplace) {
    int bad = 0;
    // AllGather
    char *in = inplace ? recv + rank * count * es : send;
    for (size_t i = 0; i < count; ++i) put(t, in, i, tag(rank, i));
    CHECK(ncclAllGather(in, recv, count, t, comm, stream) == ncclSuccess);
    for (int r = 0; r < nranks; ++r)
      for (size_t i = 0; i < count; ++i) bad += !same_element(t, recv, r * count + i, tag(r, i));
    CHECK_MSG(bad == 0, "AllGather type %d count %zu inplace %d: %d wrong", (int)t, count, inplace, bad);
    // Broadcast from each root
    for (int root = 0; root < nranks; ++root) {
      bad = 0;
      for (size_t i = 0; i < count; ++i) put(t, send, i, tag(rank, i));
      char *out = inplace ? send : recv;
      CHECK(ncclBroadcast(send, out, count, t, root, comm, stream) == ncclSuccess);
      for (size_t i = 0; i < count; ++i) bad += !same_element(t, out, i, tag(root, i));
      CHECK_MSG(bad == 0, "Broadcast type %d root %d inplace %d", (int)t, root, inplace);
    }
    // Gather to rank 0 and Scatter from rank 0
    bad = 0;
    in = inplace && rank == 0 ? recv : send;
    for (size_t i = 0; i < count; ++i) put(t, in, i, tag(rank, i));
    CHECK(ncclGather(in, recv, count, t, 0, comm, stream) == ncclSuccess);
    if (rank == 0)
      for (int r = 0; r < nranks; ++r)
        for (size_t i = 0; i < count; ++i) bad += !same_element(t, recv, r * count + i, tag(r, i));
    for (int r = 0; r < nranks; ++r)
      for (size_t i = 0; i < count; ++i) put(t, send, r * count + i, tag(r, i + 1));
    char *out = inplace && rank == 0 ? send : recv;
    CHECK(ncclScatter(send, out, count, t, 0, comm, stream) == ncclSuccess);
    for (size_t i = 0; i < count; ++i) bad += !same_element(t, out, i, tag(rank, i + 1));
    CHECK_MSG(bad == 0, "Gather/Scatter type %d count %zu inplace %d", (int)t, count, inplace);
  }
  // AlltoAll: block j of rank r goes to rank j as its block r.
  int bad = 0;
  for (int j = 0; j < nranks; ++j)
    for (size_t i = 0; i < count; ++i) put(t, send, j * count + i, tag(rank * nranks + j, i));
  CHECK(ncclAlltoAll(send, recv, count, t, comm, stream) == ncclSuccess);
  for (int r = 0; r < nranks; ++r)
    for (size_t i = 0; i < count; ++i) bad += !same_element(t, recv, r * count + i, tag(r * nranks + rank, i));
  CHECK_MSG(bad == 0, "AlltoAll type %d count %zu", (int)t, count);
  cudaFree(send);
  cudaFree(recv);
}

static void test_all_combinations(const std::vector<size_t> &counts, bool all_ops) {
  for (ncclDataType_t t : all_types) {
    double *device_scalar;
    cudaMalloc(&device_scalar, sizeof(double));
    alignas(8) char host_scalar[8], later[8];
    put(t, host_scalar, 0, scalar(rank));
    put(t, device_scalar, 0, 0.0);
    ncclRedOp_t premul_host, premul_device;
    CHECK(ncclRedOpCreatePreMulSum(&premul_host, host_scalar, t, ncclScalarHostImmediate, comm) == ncclSuccess);
    CHECK(ncclRedOpCreatePreMulSum(&premul_device, device_scalar, t, ncclScalarDevice, comm) == ncclSuccess);
    put(t, host_scalar, 0, 0.0);                                // host scalars are read at creation,
    put(t, later, 0, scalar(rank));                             // device ones when the collective runs
    memcpy(device_scalar, later, type_size(t));
    std::vector<reduction_case> cases = {{ncclSum, ncclSum, false}, {premul_host, ncclSum, true}};
    if (all_ops) {
      cases.push_back({ncclProd, ncclProd, false});
      cases.push_back({ncclMax, ncclMax, false});
      cases.push_back({ncclMin, ncclMin, false});
      cases.push_back({ncclAvg, ncclAvg, false});
      cases.push_back({premul_device, ncclSum, true});
    }
    for (const reduction_case &rc : cases)
      for (size_t count : counts) test_reductions(t, rc, count);
    for (size_t count : counts) test_data_movement(t, count);
    CHECK(ncclRedOpDestroy(premul_host, comm) == ncclSuccess);
    CHECK(ncclRedOpDestroy(premul_device, comm) == ncclSuccess);
    cudaFree(device_scalar);
  }
}

// The documented semantics: rank order, accumulation in float, one rounding.
static void test_rounding_order(void) {
  float *f;
  cudaMallocManaged(&f, sizeof(float));
  const float contribution[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  *f = contribution[rank % 4];
  CHECK(ncclAllReduce(f, f, 1, ncclFloat32, ncclSum, comm, stream) == ncclSuccess);
  float fold = contribution[0];
  for (int r = 1; r < nranks; ++r) fold += contribution[r % 4];
  CHECK_MSG(*f == fold, "float sum %g, rank-order fold %g", *f, fold);
  cudaFree(f);

  __half *h;
  cudaMallocManaged(&h, sizeof(__half));
  *h = __float2half(rank == 0 ? 2048.0f : 1.0f);
  CHECK(ncclAllReduce(h, h, 1, ncclFloat16, ncclSum, comm, stream) == ncclSuccess);
  CHECK(__half_as_ushort(*h) == __half_as_ushort(__float2half(2048.0f + (nranks - 1))));
  cudaFree(h);

  unsigned char *u;
  cudaMallocManaged(&u, 1);
  *u = 200;
  CHECK(ncclAllReduce(u, u, 1, ncclUint8, ncclSum, comm, stream) == ncclSuccess);
  CHECK(*u == (unsigned char)(200 * nranks));
  cudaFree(u);
}

// A ring of n-float messages, an exchange with every rank and a collective,
// all in one (nested) group.
static void test_groups(size_t n) {
  float *send, *recv, *all, *exchange;
  cudaMalloc(&send, n * sizeof(float));
  cudaMalloc(&recv, n * sizeof(float));
  cudaMalloc(&all, nranks * sizeof(float));
  cudaMalloc(&exchange, nranks * 4 * sizeof(float));
  for (size_t i = 0; i < n; ++i) send[i] = (float)(rank * 1000 + (int)(i % 1000));
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  float one = (float)rank;
  CHECK(ncclGroupStart() == ncclSuccess);
  CHECK(ncclSend(send, n, ncclFloat32, next, comm, stream) == ncclSuccess);
  CHECK(ncclRecv(recv, n, ncclFloat32, prev, comm, stream) == ncclSuccess);
  CHECK(ncclGroupStart() == ncclSuccess);
  CHECK(ncclAllGather(&one, all, 1, ncclFloat32, comm, stream) == ncclSuccess);
  CHECK(ncclGroupEnd() == ncclSuccess);
  for (int peer = 0; peer < nranks; ++peer) {
    CHECK(ncclSend(send, 4, ncclFloat32, peer, comm, stream) == ncclSuccess);
    CHECK(ncclRecv(exchange + peer * 4, 4, ncclFloat32, peer, comm, stream) == ncclSuccess);
  }
  CHECK(ncclGroupEnd() == ncclSuccess);
  int bad = 0;
  for (size_t i = 0; i < n; ++i) bad += recv[i] != (float)(prev * 1000 + (int)(i % 1000));
  for (int r = 0; r < nranks; ++r) bad += all[r] != (float)r;
  for (int r = 0; r < nranks; ++r)
    for (int i = 0; i < 4; ++i) bad += exchange[r * 4 + i] != (float)(r * 1000 + i);
  CHECK_MSG(bad == 0, "%d wrong values after a group of sends, receives and a collective", bad);
  CHECK(ncclGroupEnd() == ncclInvalidUsage);

  // Outside a group a lone send/recv pair still works (rank 0 -> last rank).
  if (nranks > 1) {
    if (rank == 0) CHECK(ncclSend(send, 10, ncclFloat32, nranks - 1, comm, stream) == ncclSuccess);
    if (rank == nranks - 1) {
      CHECK(ncclRecv(recv, 10, ncclFloat32, 0, comm, stream) == ncclSuccess);
      CHECK(recv[9] == 9.0f);
    }
  }
  cudaFree(send);
  cudaFree(recv);
  cudaFree(all);
  cudaFree(exchange);
}

static void test_split_and_queries(void) {
  int count = 0, me = -1, dev = -1, version = 0;
  CHECK(ncclCommCount(comm, &count) == ncclSuccess && count == nranks);
  CHECK(ncclCommUserRank(comm, &me) == ncclSuccess && me == rank);
  CHECK(ncclCommCuDevice(comm, &dev) == ncclSuccess && dev == 0);
  CHECK(ncclGetVersion(&version) == ncclSuccess && version == NCCL_VERSION_CODE);
  CHECK(strcmp(ncclGetErrorString(ncclSuccess), "no error") == 0);

  ncclComm_t half = nullptr;
  CHECK(ncclCommSplit(comm, rank % 2, -rank, &half, nullptr) == ncclSuccess);
  int half_size = 0, half_rank = -1;
  CHECK(ncclCommCount(half, &half_size) == ncclSuccess && half_size == (nranks + 1 - rank % 2) / 2);
  CHECK(ncclCommUserRank(half, &half_rank) == ncclSuccess && half_rank == (half_size - 1) - rank / 2);
  int *x;
  cudaMallocManaged(&x, sizeof(int));
  *x = rank;
  CHECK(ncclAllReduce(x, x, 1, ncclInt32, ncclSum, half, stream) == ncclSuccess);
  int expect = 0;
  for (int r = rank % 2; r < nranks; r += 2) expect += r;
  CHECK(*x == expect);
  CHECK(ncclCommDestroy(half) == ncclSuccess);
  ncclComm_t none = comm;
  CHECK(ncclCommSplit(comm, rank == 0 ? NCCL_SPLIT_NOCOLOR : 1, 0, &none, nullptr) == ncclSuccess);
  CHECK((none == nullptr) == (rank == 0));
  if (none) CHECK(ncclCommDestroy(none) == ncclSuccess);

  // A communicator with a configuration, and one whose ranks were not given the same id.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t configured = nullptr;
  CHECK(ncclCommInitRankConfig(&configured, nranks, id, rank, &config) == ncclSuccess);
  CHECK(ncclCommDestroy(configured) == ncclSuccess);
  ncclUniqueId own;
  ncclGetUniqueId(&own);
  ncclComm_t mismatched = nullptr;
  const ncclResult_t r = ncclCommInitRank(&mismatched, nranks, own, rank);
  CHECK(r == (nranks == 1 ? ncclSuccess : ncclInvalidUsage));
  if (r == ncclSuccess) CHECK(ncclCommDestroy(mismatched) == ncclSuccess);

  CHECK(ncclAllReduce(x, x, 1, ncclInt32, ncclSum, nullptr, stream) == ncclInvalidArgument);
  CHECK(ncclAllReduce(x, x, 1, (ncclDataType_t)13, ncclSum, comm, stream) == ncclInvalidArgument);
  CHECK(ncclAllReduce(x, x, 1, ncclInt32, (ncclRedOp_t)9, comm, stream) == ncclInvalidArgument);
  CHECK(ncclBroadcast(x, x, 1, ncclInt32, nranks, comm, stream) == ncclInvalidArgument);
  CHECK(ncclRedOpDestroy(ncclSum, comm) == ncclInvalidArgument);
  CHECK(strlen(ncclGetLastError(comm)) > 0);
  CHECK(ncclCommFinalize(comm) == ncclSuccess);
  cudaFree(x);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  CHECK(ncclCommInitRank(&comm, nranks, id, rank) == ncclSuccess);
  CHECK(cudaStreamCreate(&stream) == cudaSuccess);

  // One device per rank of the node (all ranks are on one node here), so that a
  // program choosing its GPU by node-local rank runs.
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int ndev = 0, dev = -1;
  CHECK(cudaGetDeviceCount(&ndev) == cudaSuccess && ndev == nranks);
  CHECK(cudaSetDevice(local ? atoi(local) : rank) == cudaSuccess);
  CHECK(cudaGetDevice(&dev) == cudaSuccess && dev == rank);
  CHECK(cudaSetDevice(ndev) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);

  if (getenv("COCONET_HOST_CHUNK_BYTES")) {
    // Tiny chunks: fewer combinations, each split into many pieces.
    test_all_combinations({1, 103}, false);
    test_groups(1000);
  } else {
    test_all_combinations({1, 7, 1003}, true);
    test_rounding_order();
    test_groups(1 << 20);  // 4 MiB messages: beyond any eager limit
    test_split_and_queries();
  }

  CHECK(ncclCommDestroy(comm) == ncclSuccess);
  cudaStreamDestroy(stream);
  int failures = check_failures, checks = check_count, all_failures = 0, all_checks = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("host nccl, %d ranks: %d checks, %d failed\n", nranks, all_checks, all_failures);
  MPI_Finalize();
  return failures != 0;
}
