// Style: the corners of regions read per instance of their template
// (template-instances.cu has the common shapes). Instances whose arguments
// are policy types of the same name in two namespaces (the code coconet writes
// names them from the global namespace: `::eng::cfg::Scale`); an unnamed
// defaulted parameter (left out of the instance's test); integer arguments
// whose names would be the same (<-1> and <1>: `shift_1`, `shift_1_2`); a class
// template declared before its definition, with a deleted copy constructor
// naming the template, whose member is defined in the class; a member function
// template of a class that is not one, its instances from calls (T deduced
// from a `T *` parameter, or written). Refused, with the
// reason: a function the region calls declared again after the template, where
// an instance could call it while coconet reads the region where the template
// is defined (LATER).
// RUN: %coconet --verify=2 %s -- -I%S/Inputs | %FileCheck --check-prefix=EXEC %s
// RUN: %coconet %s -- -I%S/Inputs | %FileCheck --check-prefix=CODE %s
// RUN: %expect 1 %coconet --check %s -- -I%S/Inputs -DLATER 2>&1 | %FileCheck --check-prefix=LATER %s
#include <cuda_runtime.h>

#include "tinst/decoder_kernels.h"
#include "tinst/nccl_param.h"

namespace cfg {
struct Scale {
  static constexpr float k = 2.0f;
};
}  // namespace cfg

namespace eng {
namespace cfg {
struct Scale {
  static constexpr float k = 3.0f;
};
}  // namespace cfg

template <typename C, typename = void>
struct Layer {
  NcclParam p;
  cudaStream_t st;
  void fwd(float *x, int n);
};
}  // namespace eng

template <typename C>
__global__ void scaleBy(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * C::k;
}

template <typename C, typename U>
void eng::Layer<C, U>::fwd(float *x, int n) {
#pragma coconet region name(fwd) split reorder
  {
    allReduceSum(x, x, (size_t)n, p, st);
    scaleBy<C><<<(n + 255) / 256, 256, 0, st>>>(x, n);
  }
}

template struct eng::Layer<::cfg::Scale>;
template struct eng::Layer<eng::cfg::Scale>;

template <int K>
void shift(float *x, int n, NcclParam p, cudaStream_t st) {
#pragma coconet region name(shift) split reorder
  {
    allReduceSum(x, x, (size_t)n, p, st);
    scaleGrads<float><<<(n + 255) / 256, 256, 0, st>>>(x, (float)K, (size_t)n);
  }
}

template void shift<-1>(float *, int, NcclParam, cudaStream_t);
template void shift<1>(float *, int, NcclParam, cudaStream_t);

template <typename T>
class Mlp;

template <typename T>
class Mlp {
 public:
  Mlp() = default;
  Mlp(const Mlp<T> &) = delete;
  NcclParam p;
  cudaStream_t st;
  void act(T *x, int n) {
#pragma coconet region name(act) split reorder
    {
      allReduceSum(x, x, (size_t)n, p, st);
      gelu<T><<<(n + 255) / 256, 256, 0, st>>>(x, n);
    }
  }
};

template class Mlp<float>;

class Comm {
 public:
  NcclParam p;
  cudaStream_t st;
  template <typename T>
  static void mean(T *g, int n, NcclParam p, cudaStream_t st) {
#pragma coconet region name(member_tmpl) split reorder
    {
      allReduceSum(g, g, (size_t)n, p, st);
      scaleGrads<T><<<(n + 255) / 256, 256, 0, st>>>(g, 0.5f, (size_t)n);
    }
  }
};

void average(Comm &c, float *f, __half *h, int n) {
  Comm::mean(f, n, c.p, c.st);
  Comm::mean<__half>(h, n, c.p, c.st);
}

template <typename T>
void invokeGelu(T *x, int n, cudaStream_t st) {
  gelu<T><<<(n + 255) / 256, 256, 0, st>>>(x, n);
}

template <typename T>
struct Act {
  NcclParam p;
  cudaStream_t st;
  void run(T *x, int n);
};

template <typename T>
void Act<T>::run(T *x, int n) {
#pragma coconet region name(later) split reorder
  {
    allReduceSum(x, x, (size_t)n, p, st);
    invokeGelu(x, n, st);
  }
}

#if defined(LATER)
void invokeGelu(__half *x, int n, cudaStream_t st);
#endif

template struct Act<__half>;

// EXEC: verify fwd_cfg_Scale_void: ok
// EXEC: verify fwd_eng_cfg_Scale_void: ok
// EXEC: verify shift_1: ok
// EXEC: verify shift_1_2: ok
// EXEC: verify act_float: ok
// EXEC: verify member_tmpl_float: ok
// EXEC: verify member_tmpl_half: ok
// EXEC: verify later_half: ok

// CODE: if constexpr (std::is_same<C, ::cfg::Scale>::value) {
// CODE: } else if constexpr (std::is_same<C, ::eng::cfg::Scale>::value) {
// CODE: if constexpr (K == -1) {
// CODE: } else if constexpr (K == 1) {

// LATER: template-edge-cases.cu:{{[0-9]+}}:1: error: region 'later' is in a template and its statements depend on the template's parameters, so coconet reads it in each instance this file makes, and it cannot: the region calls 'invokeGelu', which is declared again after the template (line {{[0-9]+}}), and an instance may call that one (C++ looks dependent calls up where a template is instantiated too), while coconet reads the region where the template is defined: declare it before the template
