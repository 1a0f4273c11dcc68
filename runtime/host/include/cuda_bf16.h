/* coconet host backend: __nv_bfloat16 and __nv_bfloat162 with CUDA's
 * conversions (bit-exact, see coconet_host_float16.h) and arithmetic
 * (computed in float or double, rounded once, as the GPU rounds). */
#ifndef COCONET_HOST_CUDA_BF16_H
#define COCONET_HOST_CUDA_BF16_H

#include "coconet_host_device.h"
#include "coconet_host_float16.h"
#include "vector_types.h"

typedef struct __nv_bfloat16_raw {
  unsigned short x;
} __nv_bfloat16_raw;

typedef struct __nv_bfloat162_raw {
  unsigned short x, y;
} __nv_bfloat162_raw;

struct __align__(2) __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw &r) : __x(r.x) {}
  __nv_bfloat16(float f) : __x(coconet_host::float_to_bf16_rn(f)) {}
  __nv_bfloat16(double d) : __x(coconet_host::float_to_bf16_rn(coconet_host::double_to_float_odd(d))) {}
  __nv_bfloat16(short v) : __nv_bfloat16((float)v) {}
  __nv_bfloat16(unsigned short v) : __nv_bfloat16((float)v) {}
  __nv_bfloat16(int v)
      : __nv_bfloat16(coconet_host::integer_to_float_odd(v < 0 ? 0ull - (unsigned long long)v : v, v < 0)) {}
  __nv_bfloat16(unsigned v) : __nv_bfloat16(coconet_host::integer_to_float_odd(v, false)) {}
  __nv_bfloat16(long v)
      : __nv_bfloat16(coconet_host::integer_to_float_odd(v < 0 ? 0ull - (unsigned long long)v : v, v < 0)) {}
  __nv_bfloat16(unsigned long v) : __nv_bfloat16(coconet_host::integer_to_float_odd(v, false)) {}
  __nv_bfloat16(long long v)
      : __nv_bfloat16(coconet_host::integer_to_float_odd(v < 0 ? 0ull - (unsigned long long)v : v, v < 0)) {}
  __nv_bfloat16(unsigned long long v) : __nv_bfloat16(coconet_host::integer_to_float_odd(v, false)) {}
  operator float() const { return coconet_host::bf16_to_float(__x); }
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
};

struct __align__(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
  constexpr __nv_bfloat162(const __nv_bfloat162_raw &r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
  operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.__x, y.__x}; }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16(__nv_bfloat16_raw{u}); }
inline __nv_bfloat16 __short_as_bfloat16(short s) { return __ushort_as_bfloat16((unsigned short)s); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  return __ushort_as_bfloat16((unsigned short)coconet_host::double_to_ieee<8, 7>(f, coconet_host::ROUND_ZERO));
}
inline __nv_bfloat16 __float2bfloat16_rd(float f) {
  return __ushort_as_bfloat16((unsigned short)coconet_host::double_to_ieee<8, 7>(f, coconet_host::ROUND_DOWN));
}
inline __nv_bfloat16 __float2bfloat16_ru(float f) {
  return __ushort_as_bfloat16((unsigned short)coconet_host::double_to_ieee<8, 7>(f, coconet_host::ROUND_UP));
}
inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
inline float __bfloat162float(__nv_bfloat16 h) { return coconet_host::bf16_to_float(h.__x); }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b));
}
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __nv_bfloat162(__nv_bfloat16(f.x), __nv_bfloat16(f.y)); }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{__bfloat162float(h.x), __bfloat162float(h.y)}; }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi) { return __nv_bfloat162(lo, hi); }
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 h) { return __nv_bfloat162(h, h); }
inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162(a.x, a.x); }
inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162(a.y, a.y); }

inline __nv_bfloat16 __int2bfloat16_rn(int v) { return __nv_bfloat16(v); }
inline __nv_bfloat16 __uint2bfloat16_rn(unsigned v) { return __nv_bfloat16(v); }
inline __nv_bfloat16 __short2bfloat16_rn(short v) { return __nv_bfloat16(v); }
inline __nv_bfloat16 __ushort2bfloat16_rn(unsigned short v) { return __nv_bfloat16(v); }
inline __nv_bfloat16 __ll2bfloat16_rn(long long v) { return __nv_bfloat16(v); }
inline __nv_bfloat16 __ull2bfloat16_rn(unsigned long long v) { return __nv_bfloat16(v); }

#define COCONET_HOST_BF16_TO_INT(IN, I)                                                     \
  inline I __bfloat162##IN##_rn(__nv_bfloat16 h) {                                           \
    return coconet_host::saturate_to<I>(std::nearbyint(__bfloat162float(h)));                \
  }                                                                                          \
  inline I __bfloat162##IN##_rz(__nv_bfloat16 h) {                                           \
    return coconet_host::saturate_to<I>(std::trunc(__bfloat162float(h)));                    \
  }                                                                                          \
  inline I __bfloat162##IN##_rd(__nv_bfloat16 h) {                                           \
    return coconet_host::saturate_to<I>(std::floor(__bfloat162float(h)));                    \
  }                                                                                          \
  inline I __bfloat162##IN##_ru(__nv_bfloat16 h) {                                           \
    return coconet_host::saturate_to<I>(std::ceil(__bfloat162float(h)));                     \
  }
COCONET_HOST_BF16_TO_INT(int, int)
COCONET_HOST_BF16_TO_INT(uint, unsigned)
COCONET_HOST_BF16_TO_INT(short, short)
COCONET_HOST_BF16_TO_INT(ushort, unsigned short)
COCONET_HOST_BF16_TO_INT(ll, long long)
COCONET_HOST_BF16_TO_INT(ull, unsigned long long)
#undef COCONET_HOST_BF16_TO_INT
/* To 8 bits, as CUDA's: toward zero, saturated. */
inline signed char __bfloat162char_rz(__nv_bfloat16 h) {
  return coconet_host::saturate_to<signed char>(std::trunc(__bfloat162float(h)));
}
inline unsigned char __bfloat162uchar_rz(__nv_bfloat16 h) {
  return coconet_host::saturate_to<unsigned char>(std::trunc(__bfloat162float(h)));
}

#define COCONET_H __nv_bfloat16
#define COCONET_H2 __nv_bfloat162
#define COCONET_TOF(h) coconet_host::bf16_to_float((h).__x)
#define COCONET_FROMF(f) __nv_bfloat16(static_cast<float>(f))
#define COCONET_FROMD(d) __nv_bfloat16(static_cast<double>(d))
#define COCONET_RAW(bits) __ushort_as_bfloat16(bits)
#include "coconet_host_float16_ops.h"
#undef COCONET_H
#undef COCONET_H2
#undef COCONET_TOF
#undef COCONET_FROMF
#undef COCONET_FROMD
#undef COCONET_RAW

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7f80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7fffU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7f7fU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3f80U)

#endif
