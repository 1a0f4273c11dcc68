// Style: a model's layers as class templates (an inference library's decoder,
// a trainer's module): the region in a member function of Layer<T>, defined
// out of the class, using the object's communicator and stream as members;
// another in a function template, instantiated explicitly; a third in a
// function template this file makes no instance of (a library's, instantiated
// by its users). The buffers' element type is the template's parameter, so the
// statements depend on it: the first two regions are read in each instance the
// file makes (`template struct Layer<float>;`, `template void
// all_reduce_mean<float>(...);`), as that instance compiles it; the third is
// read as the template's pattern (its calls resolve there: ncclFloat, a kernel
// of floats), and --verify builds its harness with T bound to the element type
// the IR gives the buffer. A call whose function the template's parameter
// decides (a wrapper template called with `T *`: DEPENDENT, the form run here)
// resolves only in an instance: read in each (template-instances.cu has more);
// refused, with a note saying why, when the file makes none (NO_INSTANCE).
// RUN: %coconet --verify=2 %s -- -DDEPENDENT | %FileCheck --check-prefix=INSTANCE %s
// RUN: %expect 1 %coconet --check %s -- -DDEPENDENT -DNO_INSTANCE 2>&1 | %FileCheck --check-prefix=NONE %s
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale_bias(float *x, const float *bias, float s, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols) x[i] = x[i] * s + bias[i % cols];
}

__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * s;
}

template <typename T>
void invoke_scale_bias(T *x, const T *bias, float s, int rows, int cols, cudaStream_t stream) {
  scale_bias<<<(rows * cols + 255) / 256, 256, 0, stream>>>(x, bias, s, rows, cols);
}

template <typename T>
struct Layer {
  ncclComm_t comm;
  cudaStream_t stream;
  float scale;
  void forward(T *x, const T *bias, int rows, int cols);
};

template <typename T>
void Layer<T>::forward(T *x, const T *bias, int rows, int cols) {
#pragma coconet region name(layer) split reorder replicated(bias)
  {
    ncclAllReduce(x, x, (size_t)rows * cols, ncclFloat, ncclSum, comm, stream);
#if defined(DEPENDENT)
    invoke_scale_bias(x, bias, scale, rows, cols, stream);
#else
    scale_bias<<<(rows * cols + 255) / 256, 256, 0, stream>>>(x, bias, scale, rows, cols);
#endif
  }
}

#if !defined(NO_INSTANCE)
template struct Layer<float>;
#endif

template <typename T>
void all_reduce_mean(T *g, int n, int nranks, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(mean) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    scale<<<(n + 255) / 256, 256, 0, stream>>>(g, 1.0f / nranks, n);
  }
}

template void all_reduce_mean<float>(float *, int, int, ncclComm_t, cudaStream_t);

template <typename T>
void scale_all(T *g, int n, ncclComm_t comm, cudaStream_t stream) {
#pragma coconet region name(pattern) split reorder
  {
    ncclAllReduce(g, g, n, ncclFloat, ncclSum, comm, stream);
    scale<<<(n + 255) / 256, 256, 0, stream>>>(g, 0.5f, n);
  }
}

// INSTANCE: verify pattern: ok
// INSTANCE: verify layer_float: ok
// INSTANCE: verify mean_float: ok

// NONE: error: reorder: no pointwise kernel consumes the result of a split AllReduce; there is nothing to move between ReduceScatter and AllGather
// NONE: note: the AllReduce is followed by 'invoke_scale_bias(x, bias, scale, rows, cols, stream);', a statement coconet does not see into
// NONE: note: its call of 'invoke_scale_bias' depends on the parameters of the template the region is in, and coconet reads calls as they resolve, which this one does only in an instance: coconet reads such a region in each instance of its template that this file makes (an explicit instantiation `template class Layer<...>;` or a variable of that class), and this file makes none
