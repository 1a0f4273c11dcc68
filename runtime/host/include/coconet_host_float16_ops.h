/* coconet host backend: the arithmetic shared by __half and __nv_bfloat16.
 * No include guard: cuda_fp16.h and cuda_bf16.h each include it once, with
 *   COCONET_H, COCONET_H2       the scalar and pair types
 *   COCONET_TOF(x)              exact conversion to float
 *   COCONET_FROMF(f)            float -> COCONET_H, round to nearest even
 *   COCONET_FROMD(d)            double -> COCONET_H, round to nearest even
 *   COCONET_RAW(bits)           COCONET_H from its bit pattern
 * defined.  Each operation is computed in float (or, for fma, in double
 * rounded to odd) and rounded once, which equals the correctly rounded
 * result the GPU returns: float carries at least 2p+2 bits for both formats. */

inline COCONET_H __hadd(COCONET_H a, COCONET_H b) { return COCONET_FROMF(COCONET_TOF(a) + COCONET_TOF(b)); }
inline COCONET_H __hsub(COCONET_H a, COCONET_H b) { return COCONET_FROMF(COCONET_TOF(a) - COCONET_TOF(b)); }
inline COCONET_H __hmul(COCONET_H a, COCONET_H b) { return COCONET_FROMD((double)COCONET_TOF(a) * COCONET_TOF(b)); }
inline COCONET_H __hdiv(COCONET_H a, COCONET_H b) { return COCONET_FROMF(COCONET_TOF(a) / COCONET_TOF(b)); }
inline COCONET_H __hadd_rn(COCONET_H a, COCONET_H b) { return __hadd(a, b); }
inline COCONET_H __hsub_rn(COCONET_H a, COCONET_H b) { return __hsub(a, b); }
inline COCONET_H __hmul_rn(COCONET_H a, COCONET_H b) { return __hmul(a, b); }
inline COCONET_H __hfma(COCONET_H a, COCONET_H b, COCONET_H c) {
  return COCONET_FROMD(coconet_host::fma_to_odd(COCONET_TOF(a), COCONET_TOF(b), COCONET_TOF(c)));
}
inline COCONET_H __hneg(COCONET_H a) { return COCONET_RAW((unsigned short)(a.__x ^ 0x8000u)); }
inline COCONET_H __habs(COCONET_H a) { return COCONET_RAW((unsigned short)(a.__x & 0x7fffu)); }
inline bool __hisnan(COCONET_H a) { return COCONET_TOF(a) != COCONET_TOF(a); }
inline int __hisinf(COCONET_H a) {
  const float f = COCONET_TOF(a);
  return isinf(f) ? (f < 0 ? -1 : 1) : 0;
}

/* [0, 1] clamping; NaN becomes +0. */
inline COCONET_H coconet_host_saturate(COCONET_H a) {
  const float f = COCONET_TOF(a);
  return f > 0.0f ? (f < 1.0f ? a : COCONET_FROMF(1.0f)) : COCONET_FROMF(0.0f);
}
inline COCONET_H __hadd_sat(COCONET_H a, COCONET_H b) { return coconet_host_saturate(__hadd(a, b)); }
inline COCONET_H __hsub_sat(COCONET_H a, COCONET_H b) { return coconet_host_saturate(__hsub(a, b)); }
inline COCONET_H __hmul_sat(COCONET_H a, COCONET_H b) { return coconet_host_saturate(__hmul(a, b)); }
inline COCONET_H __hfma_sat(COCONET_H a, COCONET_H b, COCONET_H c) { return coconet_host_saturate(__hfma(a, b, c)); }
inline COCONET_H __hfma_relu(COCONET_H a, COCONET_H b, COCONET_H c) {
  const COCONET_H r = __hfma(a, b, c);
  if (__hisnan(r)) return COCONET_RAW(0x7fffu);
  return COCONET_TOF(r) < 0.0f ? COCONET_FROMF(0.0f) : r;
}

/* max/min: a NaN operand yields the other one; +0 counts as above -0. */
inline COCONET_H __hmax(COCONET_H a, COCONET_H b) {
  if (__hisnan(a)) return __hisnan(b) ? COCONET_RAW(0x7fffu) : b;
  if (__hisnan(b)) return a;
  const float x = COCONET_TOF(a), y = COCONET_TOF(b);
  if (x != y) return x > y ? a : b;
  return (a.__x & 0x8000u) ? b : a;
}
inline COCONET_H __hmin(COCONET_H a, COCONET_H b) {
  if (__hisnan(a)) return __hisnan(b) ? COCONET_RAW(0x7fffu) : b;
  if (__hisnan(b)) return a;
  const float x = COCONET_TOF(a), y = COCONET_TOF(b);
  if (x != y) return x < y ? a : b;
  return (a.__x & 0x8000u) ? a : b;
}
inline COCONET_H __hmax_nan(COCONET_H a, COCONET_H b) {
  return (__hisnan(a) || __hisnan(b)) ? COCONET_RAW(0x7fffu) : __hmax(a, b);
}
inline COCONET_H __hmin_nan(COCONET_H a, COCONET_H b) {
  return (__hisnan(a) || __hisnan(b)) ? COCONET_RAW(0x7fffu) : __hmin(a, b);
}

inline bool __heq(COCONET_H a, COCONET_H b) { return COCONET_TOF(a) == COCONET_TOF(b); }
inline bool __hne(COCONET_H a, COCONET_H b) {
  return COCONET_TOF(a) < COCONET_TOF(b) || COCONET_TOF(a) > COCONET_TOF(b);
}
inline bool __hlt(COCONET_H a, COCONET_H b) { return COCONET_TOF(a) < COCONET_TOF(b); }
inline bool __hle(COCONET_H a, COCONET_H b) { return COCONET_TOF(a) <= COCONET_TOF(b); }
inline bool __hgt(COCONET_H a, COCONET_H b) { return COCONET_TOF(a) > COCONET_TOF(b); }
inline bool __hge(COCONET_H a, COCONET_H b) { return COCONET_TOF(a) >= COCONET_TOF(b); }
inline bool __hequ(COCONET_H a, COCONET_H b) { return !__hne(a, b); }
inline bool __hneu(COCONET_H a, COCONET_H b) { return !__heq(a, b); }
inline bool __hltu(COCONET_H a, COCONET_H b) { return !__hge(a, b); }
inline bool __hleu(COCONET_H a, COCONET_H b) { return !__hgt(a, b); }
inline bool __hgtu(COCONET_H a, COCONET_H b) { return !__hle(a, b); }
inline bool __hgeu(COCONET_H a, COCONET_H b) { return !__hlt(a, b); }

/* Square root and division are correctly rounded; the transcendental
 * functions are the host's float functions rounded once (the GPU's
 * approximations can differ in the last bit). */
inline COCONET_H hsqrt(COCONET_H a) { return COCONET_FROMF(sqrtf(COCONET_TOF(a))); }
inline COCONET_H hrsqrt(COCONET_H a) { return COCONET_FROMD(1.0 / sqrt((double)COCONET_TOF(a))); }
inline COCONET_H hrcp(COCONET_H a) { return COCONET_FROMF(1.0f / COCONET_TOF(a)); }
inline COCONET_H hexp(COCONET_H a) { return COCONET_FROMF(expf(COCONET_TOF(a))); }
inline COCONET_H hexp2(COCONET_H a) { return COCONET_FROMF(exp2f(COCONET_TOF(a))); }
inline COCONET_H hexp10(COCONET_H a) { return COCONET_FROMF(exp10f(COCONET_TOF(a))); }
inline COCONET_H hlog(COCONET_H a) { return COCONET_FROMF(logf(COCONET_TOF(a))); }
inline COCONET_H hlog2(COCONET_H a) { return COCONET_FROMF(log2f(COCONET_TOF(a))); }
inline COCONET_H hlog10(COCONET_H a) { return COCONET_FROMF(log10f(COCONET_TOF(a))); }
inline COCONET_H hsin(COCONET_H a) { return COCONET_FROMF(sinf(COCONET_TOF(a))); }
inline COCONET_H hcos(COCONET_H a) { return COCONET_FROMF(cosf(COCONET_TOF(a))); }
inline COCONET_H htanh(COCONET_H a) { return COCONET_FROMF(tanhf(COCONET_TOF(a))); }
inline COCONET_H htrunc(COCONET_H a) { return COCONET_FROMF(truncf(COCONET_TOF(a))); }
inline COCONET_H hceil(COCONET_H a) { return COCONET_FROMF(ceilf(COCONET_TOF(a))); }
inline COCONET_H hfloor(COCONET_H a) { return COCONET_FROMF(floorf(COCONET_TOF(a))); }
inline COCONET_H hrint(COCONET_H a) { return COCONET_FROMF(rintf(COCONET_TOF(a))); }

inline COCONET_H operator+(const COCONET_H &a, const COCONET_H &b) { return __hadd(a, b); }
inline COCONET_H operator-(const COCONET_H &a, const COCONET_H &b) { return __hsub(a, b); }
inline COCONET_H operator*(const COCONET_H &a, const COCONET_H &b) { return __hmul(a, b); }
inline COCONET_H operator/(const COCONET_H &a, const COCONET_H &b) { return __hdiv(a, b); }
inline COCONET_H &operator+=(COCONET_H &a, const COCONET_H &b) { return a = __hadd(a, b); }
inline COCONET_H &operator-=(COCONET_H &a, const COCONET_H &b) { return a = __hsub(a, b); }
inline COCONET_H &operator*=(COCONET_H &a, const COCONET_H &b) { return a = __hmul(a, b); }
inline COCONET_H &operator/=(COCONET_H &a, const COCONET_H &b) { return a = __hdiv(a, b); }
inline COCONET_H operator+(const COCONET_H &a) { return a; }
inline COCONET_H operator-(const COCONET_H &a) { return __hneg(a); }
inline COCONET_H &operator++(COCONET_H &a) { return a = __hadd(a, COCONET_FROMF(1.0f)); }
inline COCONET_H &operator--(COCONET_H &a) { return a = __hsub(a, COCONET_FROMF(1.0f)); }
inline COCONET_H operator++(COCONET_H &a, int) {
  const COCONET_H old = a;
  ++a;
  return old;
}
inline COCONET_H operator--(COCONET_H &a, int) {
  const COCONET_H old = a;
  --a;
  return old;
}
inline bool operator==(const COCONET_H &a, const COCONET_H &b) { return __heq(a, b); }
inline bool operator!=(const COCONET_H &a, const COCONET_H &b) { return __hneu(a, b); }
inline bool operator<(const COCONET_H &a, const COCONET_H &b) { return __hlt(a, b); }
inline bool operator<=(const COCONET_H &a, const COCONET_H &b) { return __hle(a, b); }
inline bool operator>(const COCONET_H &a, const COCONET_H &b) { return __hgt(a, b); }
inline bool operator>=(const COCONET_H &a, const COCONET_H &b) { return __hge(a, b); }

inline COCONET_H atomicAdd(COCONET_H *p, COCONET_H v) {
  return coconet_host::atomic_update(p, [v](COCONET_H old) { return __hadd(old, v); });
}

/* ---- pairs ---------------------------------------------------------------- */

inline float __low2float(COCONET_H2 a) { return COCONET_TOF(a.x); }
inline float __high2float(COCONET_H2 a) { return COCONET_TOF(a.y); }
inline COCONET_H2 __lowhigh2highlow(COCONET_H2 a) { return COCONET_H2(a.y, a.x); }

#define COCONET_HOST_PAIRWISE2(NAME2, NAME)                                                  \
  inline COCONET_H2 NAME2(COCONET_H2 a, COCONET_H2 b) { return COCONET_H2(NAME(a.x, b.x), NAME(a.y, b.y)); }
COCONET_HOST_PAIRWISE2(__hadd2, __hadd)
COCONET_HOST_PAIRWISE2(__hsub2, __hsub)
COCONET_HOST_PAIRWISE2(__hmul2, __hmul)
COCONET_HOST_PAIRWISE2(__h2div, __hdiv)
COCONET_HOST_PAIRWISE2(__hadd2_rn, __hadd)
COCONET_HOST_PAIRWISE2(__hsub2_rn, __hsub)
COCONET_HOST_PAIRWISE2(__hmul2_rn, __hmul)
COCONET_HOST_PAIRWISE2(__hadd2_sat, __hadd_sat)
COCONET_HOST_PAIRWISE2(__hsub2_sat, __hsub_sat)
COCONET_HOST_PAIRWISE2(__hmul2_sat, __hmul_sat)
COCONET_HOST_PAIRWISE2(__hmax2, __hmax)
COCONET_HOST_PAIRWISE2(__hmin2, __hmin)
COCONET_HOST_PAIRWISE2(__hmax2_nan, __hmax_nan)
COCONET_HOST_PAIRWISE2(__hmin2_nan, __hmin_nan)
#undef COCONET_HOST_PAIRWISE2

inline COCONET_H2 __hfma2(COCONET_H2 a, COCONET_H2 b, COCONET_H2 c) {
  return COCONET_H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline COCONET_H2 __hfma2_sat(COCONET_H2 a, COCONET_H2 b, COCONET_H2 c) {
  return COCONET_H2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
inline COCONET_H2 __hfma2_relu(COCONET_H2 a, COCONET_H2 b, COCONET_H2 c) {
  return COCONET_H2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));
}
inline COCONET_H2 __hneg2(COCONET_H2 a) { return COCONET_H2(__hneg(a.x), __hneg(a.y)); }
inline COCONET_H2 __habs2(COCONET_H2 a) { return COCONET_H2(__habs(a.x), __habs(a.y)); }
inline COCONET_H2 __hisnan2(COCONET_H2 a) {
  return COCONET_H2(COCONET_FROMF(__hisnan(a.x) ? 1.0f : 0.0f), COCONET_FROMF(__hisnan(a.y) ? 1.0f : 0.0f));
}

/* Comparisons: __heq2 and friends give 1.0/0.0 per half, __hbeq2 and friends
 * whether both halves compare true. */
#define COCONET_HOST_COMPARE2(NAME2, BNAME2, NAME)                                        \
  inline COCONET_H2 NAME2(COCONET_H2 a, COCONET_H2 b) {                                   \
    return COCONET_H2(COCONET_FROMF(NAME(a.x, b.x) ? 1.0f : 0.0f),                        \
                      COCONET_FROMF(NAME(a.y, b.y) ? 1.0f : 0.0f));                       \
  }                                                                                       \
  inline bool BNAME2(COCONET_H2 a, COCONET_H2 b) { return NAME(a.x, b.x) && NAME(a.y, b.y); }
COCONET_HOST_COMPARE2(__heq2, __hbeq2, __heq)
COCONET_HOST_COMPARE2(__hne2, __hbne2, __hne)
COCONET_HOST_COMPARE2(__hlt2, __hblt2, __hlt)
COCONET_HOST_COMPARE2(__hle2, __hble2, __hle)
COCONET_HOST_COMPARE2(__hgt2, __hbgt2, __hgt)
COCONET_HOST_COMPARE2(__hge2, __hbge2, __hge)
COCONET_HOST_COMPARE2(__hequ2, __hbequ2, __hequ)
COCONET_HOST_COMPARE2(__hneu2, __hbneu2, __hneu)
COCONET_HOST_COMPARE2(__hltu2, __hbltu2, __hltu)
COCONET_HOST_COMPARE2(__hleu2, __hbleu2, __hleu)
COCONET_HOST_COMPARE2(__hgtu2, __hbgtu2, __hgtu)
COCONET_HOST_COMPARE2(__hgeu2, __hbgeu2, __hgeu)
#undef COCONET_HOST_COMPARE2

#define COCONET_HOST_MATH2(NAME2, NAME) \
  inline COCONET_H2 NAME2(COCONET_H2 a) { return COCONET_H2(NAME(a.x), NAME(a.y)); }
COCONET_HOST_MATH2(h2sqrt, hsqrt)
COCONET_HOST_MATH2(h2rsqrt, hrsqrt)
COCONET_HOST_MATH2(h2rcp, hrcp)
COCONET_HOST_MATH2(h2exp, hexp)
COCONET_HOST_MATH2(h2exp2, hexp2)
COCONET_HOST_MATH2(h2exp10, hexp10)
COCONET_HOST_MATH2(h2log, hlog)
COCONET_HOST_MATH2(h2log2, hlog2)
COCONET_HOST_MATH2(h2log10, hlog10)
COCONET_HOST_MATH2(h2sin, hsin)
COCONET_HOST_MATH2(h2cos, hcos)
COCONET_HOST_MATH2(h2tanh, htanh)
COCONET_HOST_MATH2(h2trunc, htrunc)
COCONET_HOST_MATH2(h2ceil, hceil)
COCONET_HOST_MATH2(h2floor, hfloor)
COCONET_HOST_MATH2(h2rint, hrint)
#undef COCONET_HOST_MATH2

inline COCONET_H2 operator+(const COCONET_H2 &a, const COCONET_H2 &b) { return __hadd2(a, b); }
inline COCONET_H2 operator-(const COCONET_H2 &a, const COCONET_H2 &b) { return __hsub2(a, b); }
inline COCONET_H2 operator*(const COCONET_H2 &a, const COCONET_H2 &b) { return __hmul2(a, b); }
inline COCONET_H2 operator/(const COCONET_H2 &a, const COCONET_H2 &b) { return __h2div(a, b); }
inline COCONET_H2 &operator+=(COCONET_H2 &a, const COCONET_H2 &b) { return a = __hadd2(a, b); }
inline COCONET_H2 &operator-=(COCONET_H2 &a, const COCONET_H2 &b) { return a = __hsub2(a, b); }
inline COCONET_H2 &operator*=(COCONET_H2 &a, const COCONET_H2 &b) { return a = __hmul2(a, b); }
inline COCONET_H2 &operator/=(COCONET_H2 &a, const COCONET_H2 &b) { return a = __h2div(a, b); }
inline COCONET_H2 operator+(const COCONET_H2 &a) { return a; }
inline COCONET_H2 operator-(const COCONET_H2 &a) { return __hneg2(a); }
inline bool operator==(const COCONET_H2 &a, const COCONET_H2 &b) { return __hbeq2(a, b); }
inline bool operator!=(const COCONET_H2 &a, const COCONET_H2 &b) { return __hbneu2(a, b); }
inline bool operator<(const COCONET_H2 &a, const COCONET_H2 &b) { return __hblt2(a, b); }
inline bool operator<=(const COCONET_H2 &a, const COCONET_H2 &b) { return __hble2(a, b); }
inline bool operator>(const COCONET_H2 &a, const COCONET_H2 &b) { return __hbgt2(a, b); }
inline bool operator>=(const COCONET_H2 &a, const COCONET_H2 &b) { return __hbge2(a, b); }

inline COCONET_H2 atomicAdd(COCONET_H2 *p, COCONET_H2 v) {
  return coconet_host::atomic_update(p, [v](COCONET_H2 old) { return __hadd2(old, v); });
}
