/* coconet host backend: the two fp8 types, as storage with CUDA's conversions
 * (round to nearest even, saturating to the largest finite value). */
#ifndef COCONET_HOST_CUDA_FP8_H
#define COCONET_HOST_CUDA_FP8_H

#include "coconet_host_float16.h"

typedef unsigned char __nv_fp8_storage_t;

struct __nv_fp8_e4m3 {
  __nv_fp8_storage_t __x;
  __nv_fp8_e4m3() = default;
  explicit __nv_fp8_e4m3(float f) : __x(coconet_host::double_to_e4m3_satfinite(f)) {}
  explicit __nv_fp8_e4m3(double d) : __x(coconet_host::double_to_e4m3_satfinite(d)) {}
  explicit operator float() const { return coconet_host::e4m3_to_float(__x); }
};

struct __nv_fp8_e5m2 {
  __nv_fp8_storage_t __x;
  __nv_fp8_e5m2() = default;
  explicit __nv_fp8_e5m2(float f) : __x(coconet_host::double_to_e5m2_satfinite(f)) {}
  explicit __nv_fp8_e5m2(double d) : __x(coconet_host::double_to_e5m2_satfinite(d)) {}
  explicit operator float() const { return coconet_host::e5m2_to_float(__x); }
};

#endif
