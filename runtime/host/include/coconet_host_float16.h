/* coconet host backend: bit-exact conversions between float/double and the
 * small floating-point formats (half, bfloat16, fp8), shared by cuda_fp16.h,
 * cuda_bf16.h, cuda_fp8.h and the NCCL reductions.
 *
 * Rounding follows CUDA exactly: round-to-nearest-even unless a _rz/_rd/_ru
 * variant is asked for, overflow to infinity (to the largest finite value in
 * the directed modes that round toward zero), NaN to the canonical NaN
 * (0x7fff for half and bfloat16), and the fp8 types saturate to their largest
 * finite value (CUDA's __NV_SATFINITE). */
#ifndef COCONET_HOST_FLOAT16_H
#define COCONET_HOST_FLOAT16_H

#include <math.h>
#include <string.h>

namespace coconet_host {

enum round_mode { ROUND_NEAREST, ROUND_ZERO, ROUND_DOWN, ROUND_UP };

inline unsigned float_bits(float f) {
  unsigned u;
  memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(unsigned u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* |x| (finite, not negative) rounded to a binary format with EBITS exponent
 * and MBITS fraction bits, as sign-less bits; a result at or above the
 * all-ones exponent means overflow, which the caller resolves. */
template <int EBITS, int MBITS>
inline unsigned long long round_magnitude(double a, bool negative, int mode) {
  const int bias = (1 << (EBITS - 1)) - 1;
  const int emin = 1 - bias;
  if (a == 0.0) return 0;
  int e;
  frexp(a, &e);
  e -= 1; /* a = 1.f * 2^e */
  const int qexp = (e < emin ? emin : e) - MBITS;
  const double scaled = ldexp(a, -qexp); /* exact: a power-of-two scaling */
  const double whole = floor(scaled);
  const double frac = scaled - whole;
  unsigned long long q = (unsigned long long)whole;
  bool up = false;
  switch (mode) {
    case ROUND_NEAREST: up = frac > 0.5 || (frac == 0.5 && (q & 1)); break;
    case ROUND_ZERO: up = false; break;
    case ROUND_DOWN: up = negative && frac > 0.0; break;
    case ROUND_UP: up = !negative && frac > 0.0; break;
  }
  q += up;
  if (e < emin) return q; /* subnormal; q == 2^MBITS is the smallest normal */
  return ((unsigned long long)(e + bias) << MBITS) + (q - (1ull << MBITS));
}

/* x in an IEEE-style format with infinities (half, bfloat16, fp8 e5m2 without
 * saturation). */
template <int EBITS, int MBITS>
inline unsigned double_to_ieee(double x, int mode) {
  const unsigned sign_bit = 1u << (EBITS + MBITS);
  const unsigned inf = ((1u << EBITS) - 1) << MBITS;
  if (x != x) return sign_bit - 1;
  const bool negative = signbit(x);
  const unsigned sign = negative ? sign_bit : 0;
  const double a = fabs(x);
  if (isinf(a)) return sign | inf;
  const unsigned long long m = round_magnitude<EBITS, MBITS>(a, negative, mode);
  if (m >= inf) {
    const bool to_inf = mode == ROUND_NEAREST || (mode == ROUND_UP && !negative) || (mode == ROUND_DOWN && negative);
    return sign | (to_inf ? inf : inf - 1);
  }
  return sign | (unsigned)m;
}

/* float -> half, round to nearest even, on the bits (the fast common case). */
inline unsigned short float_to_half_rn(float f) {
  const unsigned x = float_bits(f);
  const unsigned sign = (x >> 16) & 0x8000u;
  const unsigned u = x & 0x7fffffffu;
  if (u >= 0x7f800000u) return u == 0x7f800000u ? (unsigned short)(sign | 0x7c00u) : (unsigned short)0x7fffu;
  if (u >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u); /* >= 65520 */
  if (u >= 0x38800000u) {                                           /* normal half */
    const unsigned r = (u - 0x38000000u + 0xfffu + ((u >> 13) & 1u)) >> 13;
    return (unsigned short)(sign | r);
  }
  if (u <= 0x33000000u) return (unsigned short)sign; /* <= 2^-25 */
  const unsigned shift = 126u - (u >> 23);
  const unsigned m = (u & 0x7fffffu) | 0x800000u;
  unsigned r = m >> shift;
  const unsigned rem = m & ((1u << shift) - 1u);
  const unsigned halfway = 1u << (shift - 1u);
  if (rem > halfway || (rem == halfway && (r & 1u))) r++;
  return (unsigned short)(sign | r);
}

/* half -> float is exact; NaNs become the positive canonical NaN, as in CUDA. */
inline float half_to_float(unsigned short h) {
  const unsigned sign = (unsigned)(h & 0x8000u) << 16;
  const unsigned e = (h >> 10) & 0x1fu;
  const unsigned m = h & 0x3ffu;
  if (e == 0x1f) return bits_float(m ? 0x7fffffffu : (sign | 0x7f800000u));
  if (e != 0) return bits_float(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return bits_float(sign);
  const float v = (float)m * 0x1p-24f;
  return sign ? -v : v;
}

inline unsigned short float_to_bf16_rn(float f) {
  const unsigned x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* d rounded to float with round-to-odd: a second rounding to any format of
 * at most 22 significant bits then gives the correctly rounded result. */
inline float double_to_float_odd(double d) {
  const float f = (float)d;
  if ((double)f == d || d != d) return f;
  if (float_bits(f) & 1u) return f;
  return nextafterf(f, d > (double)f ? INFINITY : -INFINITY);
}

/* An integer rounded to float with round-to-odd (exact below 2^24). */
inline float integer_to_float_odd(unsigned long long a, bool negative) {
  const int width = 64 - __builtin_clzll(a | 1);
  float f;
  if (width <= 24) {
    f = (float)a;
  } else {
    const int shift = width - 24;
    unsigned long long m = a >> shift;
    if (a & ((1ull << shift) - 1)) m |= 1;
    f = ldexpf((float)m, shift);
  }
  return negative ? -f : f;
}

inline float bf16_to_float(unsigned short b) { return bits_float((unsigned)b << 16); }

inline unsigned char double_to_e4m3_satfinite(double x) {
  if (x != x) return 0x7f;
  const unsigned char sign = signbit(x) ? 0x80 : 0;
  const double a = fabs(x);
  if (isinf(a)) return sign | 0x7e;
  const unsigned long long m = round_magnitude<4, 3>(a, sign != 0, ROUND_NEAREST);
  return sign | (unsigned char)(m > 0x7e ? 0x7e : m);
}

inline unsigned char double_to_e5m2_satfinite(double x) {
  if (x != x) return 0x7f;
  const unsigned char sign = signbit(x) ? 0x80 : 0;
  const double a = fabs(x);
  if (isinf(a)) return sign | 0x7b;
  const unsigned long long m = round_magnitude<5, 2>(a, sign != 0, ROUND_NEAREST);
  return sign | (unsigned char)(m > 0x7b ? 0x7b : m);
}

inline float e4m3_to_float(unsigned char b) {
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  const unsigned e = (b >> 3) & 0xfu;
  const unsigned m = b & 0x7u;
  if (e == 0xf && m == 0x7) return bits_float(0x7fffffffu);
  if (e == 0) return sign * ldexpf((float)m, -9);
  return sign * ldexpf((float)(8 + m), (int)e - 10);
}

inline float e5m2_to_float(unsigned char b) { return half_to_float((unsigned short)(b << 8)); }

/* a*b + c rounded once to a format of at most 11 significant bits: a*b is
 * exact in double, and the sum, rounded to odd in double, rounds correctly
 * afterwards (53 >= 2*11 + 2). */
inline double fma_to_odd(double a, double b, double c) {
  const double p = a * b;
  const double s = p + c;
  if (isinf(s) || s != s) return s;
  const double bb = s - p;
  const double err = (p - (s - bb)) + (c - bb); /* s + err == p + c exactly */
  if (err == 0.0) return s;
  unsigned long long bits;
  memcpy(&bits, &s, sizeof bits);
  if (bits & 1) return s;
  return nextafter(s, err > 0 ? INFINITY : -INFINITY);
}

}  // namespace coconet_host

#endif
