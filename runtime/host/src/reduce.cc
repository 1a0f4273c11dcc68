// coconet host backend: NCCL data types and the rank-order reductions.
//
// Every element is combined as ((v0 op v1) op v2) op ... in rank order, in
// the type's compute type: the type itself for integers (sums and products
// wrap modulo 2^bits), float for float32 and for the 16- and 8-bit floats
// (rounded once at the end, to nearest even; fp8 saturates), double for
// float64.  Avg divides the sum by nranks at the end (truncating for
// integers); PreMulSum multiplies each rank's value by that rank's scalar,
// in the compute type, before summing.  Max and min follow fmax/fmin for
// floating types (a NaN operand is ignored unless all are NaN).
#include <string.h>

#include <type_traits>

#include "host.h"

namespace coconet_host {

namespace {

// Storage type S, compute type A, and the conversions between them.
template <ncclDataType_t D>
struct dtype_traits;

#define COCONET_HOST_PLAIN_TYPE(D, T)             \
  template <>                                     \
  struct dtype_traits<D> {                        \
    using S = T;                                  \
    using A = T;                                  \
    static A load(S v) { return v; }              \
    static S store(A v) { return v; }             \
  };
COCONET_HOST_PLAIN_TYPE(ncclInt8, int8_t)
COCONET_HOST_PLAIN_TYPE(ncclUint8, uint8_t)
COCONET_HOST_PLAIN_TYPE(ncclInt32, int32_t)
COCONET_HOST_PLAIN_TYPE(ncclUint32, uint32_t)
COCONET_HOST_PLAIN_TYPE(ncclInt64, int64_t)
COCONET_HOST_PLAIN_TYPE(ncclUint64, uint64_t)
COCONET_HOST_PLAIN_TYPE(ncclFloat32, float)
COCONET_HOST_PLAIN_TYPE(ncclFloat64, double)
#undef COCONET_HOST_PLAIN_TYPE

template <>
struct dtype_traits<ncclFloat16> {
  using S = unsigned short;
  using A = float;
  static A load(S v) { return half_to_float(v); }
  static S store(A v) { return float_to_half_rn(v); }
};

template <>
struct dtype_traits<ncclBfloat16> {
  using S = unsigned short;
  using A = float;
  static A load(S v) { return bf16_to_float(v); }
  static S store(A v) { return float_to_bf16_rn(v); }
};

template <>
struct dtype_traits<ncclFloat8e4m3> {
  using S = unsigned char;
  using A = float;
  static A load(S v) { return e4m3_to_float(v); }
  static S store(A v) { return double_to_e4m3_satfinite(v); }
};

template <>
struct dtype_traits<ncclFloat8e5m2> {
  using S = unsigned char;
  using A = float;
  static A load(S v) { return e5m2_to_float(v); }
  static S store(A v) { return double_to_e5m2_satfinite(v); }
};

// Arithmetic in the compute type; integers wrap.
template <class A>
A add(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    using U = typename std::make_unsigned<A>::type;
    return (A)(U)((U)a + (U)b);
  } else {
    return a + b;
  }
}

template <class A>
A mul(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    using U = typename std::make_unsigned<A>::type;
    return (A)(U)((unsigned long long)(U)a * (U)b);
  } else {
    return a * b;
  }
}

template <class A>
A maximum(A a, A b) {
  if constexpr (std::is_integral<A>::value)
    return a > b ? a : b;
  else
    return std::fmax(a, b);
}

template <class A>
A minimum(A a, A b) {
  if constexpr (std::is_integral<A>::value)
    return a < b ? a : b;
  else
    return std::fmin(a, b);
}

template <ncclDataType_t D, class Combine>
void reduce_with(const void *in, size_t stride, int nranks, size_t count, const reduction &red, void *out,
                 Combine combine) {
  using T = dtype_traits<D>;
  using S = typename T::S;
  using A = typename T::A;
  const S *src = static_cast<const S *>(in);
  S *dst = static_cast<S *>(out);
  std::vector<A> scale;
  for (unsigned long long bits : red.scalars) {
    S s;
    memcpy(&s, &bits, sizeof s);
    scale.push_back(T::load(s));
  }
  for (size_t i = 0; i < count; ++i) {
    A acc = T::load(src[i]);
    if (!scale.empty()) acc = mul(acc, scale[0]);
    for (int r = 1; r < nranks; ++r) {
      A v = T::load(src[(size_t)r * stride + i]);
      if (!scale.empty()) v = mul(v, scale[r]);
      acc = combine(acc, v);
    }
    if (red.op == ncclAvg) acc = acc / (A)nranks;
    dst[i] = T::store(acc);
  }
}

template <ncclDataType_t D>
void reduce_typed(const void *in, size_t stride, int nranks, size_t count, const reduction &red, void *out) {
  using A = typename dtype_traits<D>::A;
  switch (red.op) {
    case ncclProd: reduce_with<D>(in, stride, nranks, count, red, out, mul<A>); break;
    case ncclMax: reduce_with<D>(in, stride, nranks, count, red, out, maximum<A>); break;
    case ncclMin: reduce_with<D>(in, stride, nranks, count, red, out, minimum<A>); break;
    default: reduce_with<D>(in, stride, nranks, count, red, out, add<A>); break;
  }
}

}  // namespace

size_t dtype_size(ncclDataType_t dtype) {
  switch (dtype) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
  }
}

const char *dtype_name(ncclDataType_t dtype) {
  switch (dtype) {
    case ncclInt8: return "int8";
    case ncclUint8: return "uint8";
    case ncclInt32: return "int32";
    case ncclUint32: return "uint32";
    case ncclInt64: return "int64";
    case ncclUint64: return "uint64";
    case ncclFloat16: return "float16";
    case ncclFloat32: return "float32";
    case ncclFloat64: return "float64";
    case ncclBfloat16: return "bfloat16";
    case ncclFloat8e4m3: return "fp8e4m3";
    case ncclFloat8e5m2: return "fp8e5m2";
    default: return "invalid";
  }
}

const char *redop_name(ncclRedOp_t op) {
  switch (op) {
    case ncclSum: return "sum";
    case ncclProd: return "prod";
    case ncclMax: return "max";
    case ncclMin: return "min";
    case ncclAvg: return "avg";
    default: return "premulsum";
  }
}

void reduce_ranks(const void *in, size_t stride, int nranks, size_t count, ncclDataType_t dtype,
                  const reduction &red, void *out) {
  switch (dtype) {
    case ncclInt8: reduce_typed<ncclInt8>(in, stride, nranks, count, red, out); break;
    case ncclUint8: reduce_typed<ncclUint8>(in, stride, nranks, count, red, out); break;
    case ncclInt32: reduce_typed<ncclInt32>(in, stride, nranks, count, red, out); break;
    case ncclUint32: reduce_typed<ncclUint32>(in, stride, nranks, count, red, out); break;
    case ncclInt64: reduce_typed<ncclInt64>(in, stride, nranks, count, red, out); break;
    case ncclUint64: reduce_typed<ncclUint64>(in, stride, nranks, count, red, out); break;
    case ncclFloat16: reduce_typed<ncclFloat16>(in, stride, nranks, count, red, out); break;
    case ncclFloat32: reduce_typed<ncclFloat32>(in, stride, nranks, count, red, out); break;
    case ncclFloat64: reduce_typed<ncclFloat64>(in, stride, nranks, count, red, out); break;
    case ncclBfloat16: reduce_typed<ncclBfloat16>(in, stride, nranks, count, red, out); break;
    case ncclFloat8e4m3: reduce_typed<ncclFloat8e4m3>(in, stride, nranks, count, red, out); break;
    case ncclFloat8e5m2: reduce_typed<ncclFloat8e5m2>(in, stride, nranks, count, red, out); break;
    default: fatal("reduction", "invalid data type %d", (int)dtype);
  }
}

}  // namespace coconet_host
