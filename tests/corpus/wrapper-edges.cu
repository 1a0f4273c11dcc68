// Style: host wrappers as an adversarial review wrote them. What a wrapper's
// parameter, local or template parameter stands for keeps its type and its
// meaning in the caller: an int 1 for a float parameter divides in float, a
// non-type template argument and a dim3 parameter given one value are
// written out, a wrapper's `base + offset` is the buffer plus an offset. What
// the caller could read otherwise (a one-argument constructor that is not a
// dim3, an enumerator of the wrapper's namespace, a constant of a launcher
// class, recursion) is not seen through. A static member function is a wrapper;
// an argument a call leaves to its default is the default's text, unless it
// names a type, namespace or enumerator of the file (QUALIFIED_DEFAULT). A local
// initialized by a call that changes something is not seen through either, read
// or not (DROPPED_CALL: the generated code, which does not call the launcher,
// would drop the count), while a trait computing with its own locals is read.
// RUN: %coconet --verify=4 %s | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -o %t.cu
// RUN: %expect 1 %coconet --check %s -- -DNOT_DIM3 2>&1 | %FileCheck --check-prefix=NOT_DIM3 %s
// RUN: %expect 1 %coconet --check %s -- -DNAMESPACE_ENUM 2>&1 | %FileCheck --check-prefix=ENUM %s
// RUN: %expect 1 %coconet --check %s -- -DRECURSIVE 2>&1 | %FileCheck --check-prefix=RECURSIVE %s
// RUN: %expect 1 %coconet --check %s -- -DOFFSET 2>&1 | %FileCheck --check-prefix=OFFSET %s
// RUN: %expect 1 %coconet --check %s -- -DENUM_PARAM 2>&1 | %FileCheck --check-prefix=ENUM_PARAM %s
// RUN: %coconet %s -- -DDEFAULT_ARG | %FileCheck --check-prefix=DEFAULT_ARG %s
// RUN: %expect 1 %coconet --check %s -- -DDEFAULT_ARG -DQUALIFIED_DEFAULT 2>&1 | %FileCheck --check-prefix=QUALIFIED %s
// RUN: %expect 1 %coconet --check %s -- -DLATER_EFFECT 2>&1 | %FileCheck --check-prefix=LATER_EFFECT %s
// RUN: %expect 1 %coconet --check %s -- -DCLASS_CONSTANT 2>&1 | %FileCheck --check-prefix=CLASS %s
// RUN: %expect 1 %coconet --check %s -- -DDROPPED_CALL 2>&1 | %FileCheck --check-prefix=DROPPED %s
#include <algorithm>
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
// An int argument for a float parameter: num / den divides in float.
void launchScale(float *x, float num, int den, int n, cudaStream_t s) {
  scale<<<(n + 255) / 256, 256, 0, s>>>(x, num / den, n);
}

// The same through const references (the call's temporaries): 1 is a float there too.
void launchScaleRef(float *x, const float &num, const int &den, const int &n, cudaStream_t s) {
  scale<<<(n + 255) / 256, 256, 0, s>>>(x, num / den, n);
}

__global__ void shiftAdd(int *x, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 2 + a;
}
template <int K> void invokeShift(int *x, int n, cudaStream_t s) {
  shiftAdd<<<(n + 255) / 256, 256, 0, s>>>(x, K * 3, n);
}

__global__ void halve(float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] *= 0.5f;
}
// A dim3 parameter given one value; block.x is unsigned, as std::min needs.
void invokeHalve(float *x, int n, dim3 block, cudaStream_t s) {
  dim3 grid(std::min((n + block.x - 1) / block.x, 1024u));
  halve<<<grid, block, 0, s>>>(x, n);
}

#ifdef NOT_DIM3
struct Half {
  int x;
  explicit Half(int v) : x(v / 2) {}
};
void launchFirstHalf(float *x, int n, cudaStream_t s) {
  Half h(n);
  halve<<<128, 256, 0, s>>>(x, h.x);
}
#endif

#ifdef NAMESPACE_ENUM
namespace ops {
enum Act { kIdentity = 0, kRelu = 1 };
__global__ void act(float *x, int a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    if (a == kRelu) x[i] = fmaxf(x[i], 0.0f);
}
void invokeRelu(float *x, int n, cudaStream_t s) { act<<<64, 256, 0, s>>>(x, kRelu, n); }
}  // namespace ops
#endif

#ifdef RECURSIVE
void rec(float *x, int n, cudaStream_t s) { rec(x, n, s); }
#endif

#ifdef OFFSET
__global__ void addTo(float *y, const float *g, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] += g[i];
}
void addFrom(float *y, const float *g, int offset, int count, cudaStream_t s) {
  const float *src = g + offset;
  addTo<<<64, 256, 0, s>>>(y, src, count);
}
#endif

#ifdef DEFAULT_ARG
#if defined(QUALIFIED_DEFAULT)
struct Halves {
  static constexpr float kHalf = 0.5f;
};
void launchHalf(float *x, int n, cudaStream_t s, float a = Halves::kHalf) {
#else
void launchHalf(float *x, int n, cudaStream_t s, float a = 0.5f) {
#endif
  scale<<<(n + 255) / 256, 256, 0, s>>>(x, a, n);
}
#endif

#ifdef ENUM_PARAM
enum class Mode { Identity, Relu };
__global__ void actMode(float *x, Mode m, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    if (m == Mode::Relu) x[i] = fmaxf(x[i], 0.0f);
}
#endif

#ifdef DROPPED_CALL
static int g_launches = 0;
static int count_launch() { return ++g_launches; }
void launchCounted(float *x, int n, cudaStream_t s) {
  const int seq = count_launch();
  scale<<<(n + 255) / 256, 256, 0, s>>>(x, 0.5f, n);
}
#endif

// A static member function launches as a free function does; a name of its class
// (CLASS_CONSTANT) is the class's, not the caller's.
struct Launcher {
  static constexpr int kBlock = 128;
  static void scaleAll(float *x, float a, int n, cudaStream_t s) {
#ifdef CLASS_CONSTANT
    scale<<<(n + kBlock - 1) / kBlock, kBlock, 0, s>>>(x, a, n);
#else
    scale<<<(n + 127) / 128, 128, 0, s>>>(x, a, n);
#endif
  }
};

void step(float *x, int *k, float *h, float *w, float *acc, int n, int world, ncclComm_t comm, cudaStream_t s) {
#pragma coconet region name(average) split reorder
  {
    ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, s);
    launchScale(x, 1, world, n, s);
  }
#pragma coconet region name(const_ref) split reorder
  {
    ncclAllReduce(acc, acc, n, ncclFloat, ncclSum, comm, s);
    launchScaleRef(acc, 1, world, n, s);
  }
#pragma coconet region name(negative_k) split reorder
  {
    ncclAllReduce(k, k, n, ncclInt32, ncclSum, comm, s);
    invokeShift<-2>(k, n, s);
  }
#pragma coconet region name(dim3_param) split reorder
  {
    ncclAllReduce(h, h, n, ncclFloat, ncclSum, comm, s);
    invokeHalve(h, n, 256, s);
  }
#pragma coconet region name(static_member) split reorder
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    Launcher::scaleAll(w, 0.25f, n, s);
  }
#if defined(NOT_DIM3)
#pragma coconet region name(not_dim3) split reorder
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    launchFirstHalf(w, n, s);
  }
#elif defined(NAMESPACE_ENUM)
#pragma coconet region name(namespace_enum) split reorder
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    ops::invokeRelu(w, n, s);
  }
#elif defined(RECURSIVE)
#pragma coconet region name(recursive) split reorder
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    rec(w, n, s);
  }
#elif defined(OFFSET)
#pragma coconet region name(offset) split reorder replicated(acc) scratch(w)
  {
    ncclAllReduce(w, w, 2 * n, ncclFloat, ncclSum, comm, s);
    halve<<<64, 256, 0, s>>>(w, 2 * n);
    addFrom(acc, w, n, n, s);
  }
#elif defined(DEFAULT_ARG)
#pragma coconet region name(default_arg) split reorder
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    launchHalf(w, n, s);
  }
#elif defined(LATER_EFFECT)
  // The wrapper reads `a` as the call passes it; a later argument changes it, which the schedule
  // evaluates at the top: the call kept as written would read the changed value.
  float a = 1.5f;
#pragma coconet region name(later_effect) split
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    launchScale(w, a, world, n, s);
    scale<<<(n + 255) / 256, 256, 0, s>>>(acc, a *= 0.5f, n);
  }
#elif defined(DROPPED_CALL)
#pragma coconet region name(dropped_call) split reorder
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    launchCounted(w, n, s);
  }
#elif defined(ENUM_PARAM)
#pragma coconet region name(enum_param) split reorder
  {
    ncclAllReduce(w, w, n, ncclFloat, ncclSum, comm, s);
    actMode<<<64, 256, 0, s>>>(w, Mode::Relu, n);
  }
#endif
  (void)w, (void)acc;
}

// EXEC: verify average: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify const_ref: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify negative_k: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify dim3_param: ok (the region as written and as scheduled agree within 0 ULP)
// EXEC: verify static_member: ok (the region as written and as scheduled agree within 0 ULP)
// CLASS: note: the call of 'Launcher::scaleAll' ({{.*}}wrapper-edges.cu:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: a text of its launch reads a variable that is not the function's parameter or local, a name of its namespace or class
// NOT_DIM3: note: the call of 'launchFirstHalf' ({{.*}}) is not seen through as the kernel launch or collective inside it: its body declares a local without an initializer of one value
// ENUM: note: the call of 'invokeRelu' ({{.*}}) is not seen through as the kernel launch or collective inside it: a text of its launch reads a variable that is not the function's parameter or local, a name of its namespace or class, a macro, or a local whose initializer has side effects
// RECURSIVE: error: reorder: no pointwise kernel consumes the result of a split AllReduce
// OFFSET: error: 'w' and 'w+n' may overlap (both offset 'w'); coconet cannot schedule work on buffers it cannot tell apart
// ENUM_PARAM: error: kernel 'actMode': parameter 'm' has type 'Mode'; coconet handles scalar parameters of arithmetic types (pass an enum as an int)
// The argument launchHalf leaves to its default is the default's text:
// DEFAULT_ARG: coconet_default_arg_slice<<<coconet_grid_size(coconet_p.s), COCONET_BLOCK_SIZE, 0, s>>>(w,
// DEFAULT_ARG-NEXT: {{^}}        0.5f, coconet_p.slice_lo, coconet_p.slice_hi);
// A default naming a class of the file (`Halves::kHalf`) is not the caller's to read: the caller's
// scope may have another Halves (a namespace's own), so it is not pasted there:
// QUALIFIED: note: the call of 'launchHalf' ({{.*}}) is not seen through as the kernel launch or collective inside it: a text of its launch reads a variable that is not the function's parameter or local, a name of its namespace or class
// LATER_EFFECT: error: region 'later_effect': 'a *= 0.5f' changes 'a', and this argument, passed before it to a host function coconet sees through, reads it; the schedule evaluates the change at the top of the generated block: compute 'a *= 0.5f' into a local before the region
// DROPPED: note: the call of 'launchCounted' ({{.*}}wrapper-edges.cu:{{[0-9]+}}:{{[0-9]+}}) is not seen through as the kernel launch or collective inside it: its body has a statement that is not an initialized local, a launch, an NCCL collective or group call, a call of such a function, or one coconet can run beside its collective ('const int seq = count_launch();' at wrapper-edges.cu:{{[0-9]+}}: coconet runs such statements beside a collective, not a launch)
