/* coconet host backend: __half and __half2 with CUDA's conversions (bit-exact,
 * see coconet_host_float16.h) and arithmetic (computed in float, rounded once:
 * the same correctly rounded results as the GPU). */
#ifndef COCONET_HOST_CUDA_FP16_H
#define COCONET_HOST_CUDA_FP16_H

#include "coconet_host_device.h"
#include "coconet_host_float16.h"
#include "vector_types.h"

typedef struct __half_raw {
  unsigned short x;
} __half_raw;

typedef struct __half2_raw {
  unsigned short x, y;
} __half2_raw;

struct __align__(2) __half {
  unsigned short __x;
  __half() = default;
  constexpr __half(const __half_raw &r) : __x(r.x) {}
  __half(float f) : __x(coconet_host::float_to_half_rn(f)) {}
  __half(double d) : __x(coconet_host::float_to_half_rn(coconet_host::double_to_float_odd(d))) {}
  __half(short v) : __half((float)v) {}
  __half(unsigned short v) : __half((float)v) {}
  __half(int v) : __half(coconet_host::integer_to_float_odd(v < 0 ? 0ull - (unsigned long long)v : v, v < 0)) {}
  __half(unsigned v) : __half(coconet_host::integer_to_float_odd(v, false)) {}
  __half(long v) : __half(coconet_host::integer_to_float_odd(v < 0 ? 0ull - (unsigned long long)v : v, v < 0)) {}
  __half(unsigned long v) : __half(coconet_host::integer_to_float_odd(v, false)) {}
  __half(long long v)
      : __half(coconet_host::integer_to_float_odd(v < 0 ? 0ull - (unsigned long long)v : v, v < 0)) {}
  __half(unsigned long long v) : __half(coconet_host::integer_to_float_odd(v, false)) {}
  operator float() const { return coconet_host::half_to_float(__x); }
  operator __half_raw() const { return __half_raw{__x}; }
};

struct __align__(4) __half2 {
  __half x, y;
  __half2() = default;
  constexpr __half2(const __half &a, const __half &b) : x(a), y(b) {}
  constexpr __half2(const __half2_raw &r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
  operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};

typedef __half half;
typedef __half2 half2;

inline __half __ushort_as_half(unsigned short u) { return __half(__half_raw{u}); }
inline __half __short_as_half(short s) { return __ushort_as_half((unsigned short)s); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline short __half_as_short(__half h) { return (short)h.__x; }

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half_rz(float f) {
  return __ushort_as_half((unsigned short)coconet_host::double_to_ieee<5, 10>(f, coconet_host::ROUND_ZERO));
}
inline __half __float2half_rd(float f) {
  return __ushort_as_half((unsigned short)coconet_host::double_to_ieee<5, 10>(f, coconet_host::ROUND_DOWN));
}
inline __half __float2half_ru(float f) {
  return __ushort_as_half((unsigned short)coconet_host::double_to_ieee<5, 10>(f, coconet_host::ROUND_UP));
}
inline __half __double2half(double d) { return __half(d); }
inline float __half2float(__half h) { return coconet_host::half_to_float(h.__x); }
inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
inline float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __halves2half2(__half lo, __half hi) { return __half2(lo, hi); }
inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
inline __half2 __half2half2(__half h) { return __half2(h, h); }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
inline __half2 __low2half2(__half2 a) { return __half2(a.x, a.x); }
inline __half2 __high2half2(__half2 a) { return __half2(a.y, a.y); }

inline __half __int2half_rn(int v) { return __half(v); }
inline __half __uint2half_rn(unsigned v) { return __half(v); }
inline __half __short2half_rn(short v) { return __half(v); }
inline __half __ushort2half_rn(unsigned short v) { return __half(v); }
inline __half __ll2half_rn(long long v) { return __half(v); }
inline __half __ull2half_rn(unsigned long long v) { return __half(v); }

#define COCONET_HOST_HALF_TO_INT(IN, I)                                                                      \
  inline I __half2##IN##_rn(__half h) { return coconet_host::saturate_to<I>(std::nearbyint(__half2float(h))); } \
  inline I __half2##IN##_rz(__half h) { return coconet_host::saturate_to<I>(std::trunc(__half2float(h))); }     \
  inline I __half2##IN##_rd(__half h) { return coconet_host::saturate_to<I>(std::floor(__half2float(h))); }     \
  inline I __half2##IN##_ru(__half h) { return coconet_host::saturate_to<I>(std::ceil(__half2float(h))); }
COCONET_HOST_HALF_TO_INT(int, int)
COCONET_HOST_HALF_TO_INT(uint, unsigned)
COCONET_HOST_HALF_TO_INT(short, short)
COCONET_HOST_HALF_TO_INT(ushort, unsigned short)
COCONET_HOST_HALF_TO_INT(ll, long long)
COCONET_HOST_HALF_TO_INT(ull, unsigned long long)
#undef COCONET_HOST_HALF_TO_INT
/* To 8 bits, as CUDA's: toward zero, saturated. */
inline signed char __half2char_rz(__half h) {
  return coconet_host::saturate_to<signed char>(std::trunc(__half2float(h)));
}
inline unsigned char __half2uchar_rz(__half h) {
  return coconet_host::saturate_to<unsigned char>(std::trunc(__half2float(h)));
}

#define COCONET_H __half
#define COCONET_H2 __half2
#define COCONET_TOF(h) coconet_host::half_to_float((h).__x)
#define COCONET_FROMF(f) __half(static_cast<float>(f))
#define COCONET_FROMD(d) __half(static_cast<double>(d))
#define COCONET_RAW(bits) __ushort_as_half(bits)
#include "coconet_host_float16_ops.h"
#undef COCONET_H
#undef COCONET_H2
#undef COCONET_TOF
#undef COCONET_FROMF
#undef COCONET_FROMD
#undef COCONET_RAW

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7c00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7fffU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7bffU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3c00U)

#endif
