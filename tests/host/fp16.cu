// Host backend: half, bfloat16 and fp8 conversions and arithmetic against an
// independent oracle (the sorted table of every finite value of the format,
// rounded by comparing distances in long double), the compiler's _Float16
// conversions, and Philox4x32-10 / cuRAND against published known answers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <curand_kernel.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "check.h"

enum { RN, RZ, RD, RU };

// Every finite non-negative value of a small binary format, in order.
struct oracle {
  unsigned sign_bit, inf_bits, nan_bits;
  bool saturate;  // fp8: overflow gives the largest finite value
  std::vector<long double> values;
  std::vector<unsigned> bits;

  oracle(int ebits, int mbits, bool has_inf, unsigned nan, bool sat) {
    sign_bit = 1u << (ebits + mbits);
    inf_bits = has_inf ? ((1u << ebits) - 1) << mbits : 0;
    nan_bits = nan;
    saturate = sat;
    const int bias = (1 << (ebits - 1)) - 1;
    for (unsigned b = 0; b < sign_bit; ++b) {
      const unsigned e = b >> mbits, m = b & ((1u << mbits) - 1);
      const bool special = has_inf ? e == (1u << ebits) - 1 : b == sign_bit - 1;
      if (special) continue;
      values.push_back(e == 0 ? ldexpl(m, 1 - bias - mbits) : ldexpl((1u << mbits) + m, (int)e - bias - mbits));
      bits.push_back(b);
    }
  }

  unsigned round(long double x, int mode) const {
    if (isnan(x)) return nan_bits;
    const bool neg = signbit(x);
    const unsigned s = neg ? sign_bit : 0;
    const long double a = fabsl(x), max = values.back();
    const bool away = (mode == RU && !neg) || (mode == RD && neg);
    if (a > max) {
      if (saturate) return s | bits.back();
      if (isinf(a)) return s | inf_bits;
      if (mode == RN) return s | (a >= max + (max - values[values.size() - 2]) / 2 ? inf_bits : bits.back());
      return s | (away ? inf_bits : bits.back());
    }
    const size_t i = (size_t)(std::upper_bound(values.begin(), values.end(), a) - values.begin()) - 1;
    if (values[i] == a) return s | bits[i];
    const long double below = a - values[i], above = values[i + 1] - a;
    size_t pick;
    if (mode == RN)
      pick = below < above ? i : above < below ? i + 1 : (bits[i] & 1) ? i + 1 : i;
    else
      pick = away ? i + 1 : i;
    return s | bits[pick];
  }

  long double value(unsigned b) const {
    const long double v = values[std::lower_bound(bits.begin(), bits.end(), b & (sign_bit - 1)) - bits.begin()];
    return (b & sign_bit) ? -v : v;
  }
  bool finite(unsigned b) const { return std::binary_search(bits.begin(), bits.end(), b & (sign_bit - 1)); }
};

static const oracle half_oracle(5, 10, true, 0x7fff, false);
static const oracle bf16_oracle(8, 7, true, 0x7fff, false);
static const oracle e4m3_oracle(4, 3, false, 0x7f, true);
static const oracle e5m2_oracle(5, 2, true, 0x7f, true);

static unsigned fbits(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}

static float bitsf(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static unsigned short hb(__half h) { return __half_as_ushort(h); }
static unsigned short bb(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }

// Floats that probe every rounding decision of a format: every value, the
// midpoints between neighbours and their float neighbours, plus a spread of
// all float bit patterns.
static std::vector<float> probes(const oracle &o) {
  std::vector<float> out;
  for (size_t i = 0; i + 1 < o.values.size(); ++i) {
    const float m = (float)((o.values[i] + o.values[i + 1]) / 2);
    for (float f : {(float)o.values[i], m, nextafterf(m, 0.0f), nextafterf(m, INFINITY)}) {
      out.push_back(f);
      out.push_back(-f);
    }
  }
  for (unsigned u = 0; u < 0xfffff000u; u += 4099) out.push_back(bitsf(u));
  out.push_back(INFINITY);
  out.push_back(-INFINITY);
  return out;
}

static void test_half_conversions(void) {
  int bad = 0, bad_round_trip = 0;
  for (unsigned b = 0; b < 0x10000; ++b) {
    const float f = __half2float(__ushort_as_half((unsigned short)b));
    const bool nan = (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    if (nan) {
      bad += fbits(f) != 0x7fffffffu;
    } else if ((b & 0x7fff) == 0x7c00) {
      bad += !isinf(f) || signbit(f) != (bool)(b & 0x8000);
    } else {
      bad += (long double)f != half_oracle.value(b) || signbit(f) != (bool)(b & 0x8000);
    }
    _Float16 g;
    const unsigned short bs = (unsigned short)b;
    memcpy(&g, &bs, 2);
    if (!nan) bad += fbits((float)g) != fbits(f);
    bad_round_trip += hb(__float2half(f)) != (nan ? 0x7fff : b);
  }
  CHECK_MSG(bad == 0, "%d half->float conversions differ", bad);
  CHECK_MSG(bad_round_trip == 0, "%d half->float->half round trips differ", bad_round_trip);

  const std::vector<float> fs = probes(half_oracle);
  int wrong[4] = {0, 0, 0, 0}, wrong_f16 = 0;
  for (float f : fs) {
    wrong[RN] += hb(__float2half_rn(f)) != half_oracle.round(f, RN);
    wrong[RZ] += hb(__float2half_rz(f)) != half_oracle.round(f, RZ);
    wrong[RD] += hb(__float2half_rd(f)) != half_oracle.round(f, RD);
    wrong[RU] += hb(__float2half_ru(f)) != half_oracle.round(f, RU);
    const _Float16 g = (_Float16)f;
    unsigned short gb;
    memcpy(&gb, &g, 2);
    if (!isnan(f)) wrong_f16 += gb != hb(__float2half_rn(f));
  }
  CHECK_MSG(wrong[RN] + wrong[RZ] + wrong[RD] + wrong[RU] == 0,
            "float->half of %zu floats: %d rn, %d rz, %d rd, %d ru wrong", fs.size(), wrong[RN], wrong[RZ], wrong[RD],
            wrong[RU]);
  CHECK_MSG(wrong_f16 == 0, "%d float->half results differ from the compiler's _Float16", wrong_f16);

  // double -> half rounds once (a float in between would round twice).
  int bad_double = 0;
  for (size_t i = 0; i + 1 < half_oracle.values.size(); i += 7) {
    const double m = (double)((half_oracle.values[i] + half_oracle.values[i + 1]) / 2);
    for (double d : {m, m + ldexp(m, -40), m - ldexp(m, -40), -m - ldexp(m, -45)})
      bad_double += hb(__double2half(d)) != half_oracle.round(d, RN);
  }
  CHECK_MSG(bad_double == 0, "%d double->half conversions wrong", bad_double);

  CHECK(hb(__int2half_rn(65519)) == 0x7bff && hb(__int2half_rn(65520)) == 0x7c00 && hb(__int2half_rn(-3)) == 0xc200);
  CHECK(hb(__ull2half_rn(2049)) == half_oracle.round(2049, RN));
  CHECK(__half2int_rz(__float2half(-2.75f)) == -2 && __half2int_rn(__float2half(2.5f)) == 2);
  CHECK(__half2int_rd(__float2half(-2.25f)) == -3 && __half2int_ru(__float2half(2.25f)) == 3);
  CHECK(__half2uint_rz(__float2half(-1.0f)) == 0u && __half2int_rz(CUDART_INF_FP16) == INT_MAX);
  CHECK(__half2int_rn(CUDART_NAN_FP16) == 0 && __half2short_rz(__float2half(40000.0f)) == 32767);
}

static void test_bf16_conversions(void) {
  int bad = 0;
  for (unsigned b = 0; b < 0x10000; ++b) {
    const float f = __bfloat162float(__ushort_as_bfloat16((unsigned short)b));
    bad += fbits(f) != b << 16;
    const bool nan = (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    bad += bb(__float2bfloat16(f)) != (nan ? 0x7fff : b);
  }
  CHECK_MSG(bad == 0, "%d bfloat16 round trips differ", bad);
  const std::vector<float> fs = probes(bf16_oracle);
  int wrong[4] = {0, 0, 0, 0};
  for (float f : fs) {
    wrong[RN] += bb(__float2bfloat16_rn(f)) != bf16_oracle.round(f, RN);
    wrong[RZ] += bb(__float2bfloat16_rz(f)) != bf16_oracle.round(f, RZ);
    wrong[RD] += bb(__float2bfloat16_rd(f)) != bf16_oracle.round(f, RD);
    wrong[RU] += bb(__float2bfloat16_ru(f)) != bf16_oracle.round(f, RU);
  }
  CHECK_MSG(wrong[RN] + wrong[RZ] + wrong[RD] + wrong[RU] == 0,
            "float->bf16 of %zu floats: %d rn, %d rz, %d rd, %d ru wrong", fs.size(), wrong[RN], wrong[RZ], wrong[RD],
            wrong[RU]);
  int bad_double = 0;
  for (size_t i = 0; i + 1 < bf16_oracle.values.size(); i += 5) {
    const double m = (double)((bf16_oracle.values[i] + bf16_oracle.values[i + 1]) / 2);
    for (double d : {m, m + ldexp(m, -30), m - ldexp(m, -30)})
      bad_double += bb(__double2bfloat16(d)) != bf16_oracle.round(d, RN);
  }
  CHECK_MSG(bad_double == 0, "%d double->bf16 conversions wrong", bad_double);
  const long long trap = (1ll << 60) + (1ll << 52) + 1;  // one above a bfloat16 midpoint
  CHECK(bb(__ll2bfloat16_rn(trap)) == bf16_oracle.round((long double)trap, RN));
  CHECK(bb(__ll2bfloat16_rn(-trap)) == bf16_oracle.round(-(long double)trap, RN));
}

// A random finite value of the format with an exponent field in [elo, ehi].
static unsigned random_bits(unsigned mbits, unsigned elo, unsigned ehi, unsigned sign_bit) {
  const unsigned e = elo + (unsigned)rand() % (ehi - elo + 1);
  const unsigned m = (unsigned)rand() & ((1u << mbits) - 1);
  return (rand() & 1 ? sign_bit : 0) | e << mbits | m;
}

static void test_arithmetic(void) {
  srand(12345);
  int wrong_half = 0, wrong_bf16 = 0;
  for (int i = 0; i < 200000; ++i) {
    const unsigned a = random_bits(10, 0, 30, 0x8000), b = random_bits(10, 0, 30, 0x8000),
                   c = random_bits(10, 0, 30, 0x8000);
    const __half ha = __ushort_as_half((unsigned short)a), hb_ = __ushort_as_half((unsigned short)b),
                 hc = __ushort_as_half((unsigned short)c);
    const long double x = half_oracle.value(a), y = half_oracle.value(b), z = half_oracle.value(c);
    wrong_half += hb(__hadd(ha, hb_)) != half_oracle.round(x + y, RN);
    wrong_half += hb(__hsub(ha, hb_)) != half_oracle.round(x - y, RN);
    wrong_half += hb(__hmul(ha, hb_)) != half_oracle.round(x * y, RN);
    if (y != 0) wrong_half += hb(__hdiv(ha, hb_)) != half_oracle.round(x / y, RN);
    wrong_half += hb(__hfma(ha, hb_, hc)) != half_oracle.round(x * y + z, RN);
    if (x >= 0) wrong_half += hb(hsqrt(ha)) != half_oracle.round(sqrtl(x), RN);
    wrong_half += hb(ha * hb_ + hc) != hb(__hadd(__hmul(ha, hb_), hc));

    // bfloat16 operands whose exponents are close enough for exact long double sums.
    const unsigned eb = 69 + (unsigned)rand() % 117;
    const unsigned p = random_bits(7, eb, eb + 20, 0x8000), q = random_bits(7, eb - 20, eb + 20, 0x8000),
                   r = random_bits(7, 2 * eb - 127 - 10, 2 * eb - 127 + 10, 0x8000);
    const __nv_bfloat16 bp = __ushort_as_bfloat16((unsigned short)p), bq = __ushort_as_bfloat16((unsigned short)q),
                        br = __ushort_as_bfloat16((unsigned short)r);
    const long double u = bf16_oracle.value(p), v = bf16_oracle.value(q), w = bf16_oracle.value(r);
    wrong_bf16 += bb(__hadd(bp, bq)) != bf16_oracle.round(u + v, RN);
    wrong_bf16 += bb(__hmul(bp, bq)) != bf16_oracle.round(u * v, RN);
    if (v != 0) wrong_bf16 += bb(__hdiv(bp, bq)) != bf16_oracle.round(u / v, RN);
    wrong_bf16 += bb(__hfma(bp, bq, br)) != bf16_oracle.round(u * v + w, RN);
  }
  CHECK_MSG(wrong_half == 0, "%d half operations wrong", wrong_half);
  CHECK_MSG(wrong_bf16 == 0, "%d bfloat16 operations wrong", wrong_bf16);

  const __half one = __float2half(1.0f), two = __float2half(2.0f), nan = CUDART_NAN_FP16;
  CHECK(hb(__hmax(one, nan)) == hb(one) && hb(__hmin(nan, two)) == hb(two) && hb(__hmax(nan, nan)) == 0x7fff);
  CHECK(hb(__hmax_nan(one, nan)) == 0x7fff && hb(__hmax(__float2half(-0.0f), __float2half(0.0f))) == 0);
  CHECK(hb(__hneg(one)) == 0xbc00 && hb(__habs(__float2half(-2.0f))) == 0x4000);
  CHECK(__hisinf(CUDART_INF_FP16) == 1 && __hisinf(__hneg(CUDART_INF_FP16)) == -1 && __hisnan(nan));
  CHECK(__hlt(one, two) && !__hlt(one, nan) && __hltu(one, nan) && one != two && one < two);
  CHECK(hb(__hadd_sat(one, two)) == 0x3c00 && hb(__hadd_sat(nan, one)) == 0);
  const __half2 h2 = __floats2half2_rn(1.5f, -2.0f);
  const float2 back = __half22float2(__hadd2(h2, h2));
  CHECK(back.x == 3.0f && back.y == -4.0f && __high2float(__lowhigh2highlow(h2)) == 1.5f);
  CHECK(__hbeq2(h2, __halves2half2(__float2half(1.5f), __float2half(-2.0f))));
  __half acc = __float2half(0.0f);
  for (int i = 0; i < 3000; ++i) acc += one;
  CHECK(__half2float(acc) == 2048.0f);
  const __nv_bfloat162 b2 = __floats2bfloat162_rn(1.0f, 3.0f);
  CHECK(__high2float(__hmul2(b2, b2)) == 9.0f && __bfloat162float(__low2bfloat16(b2)) == 1.0f);
}

static void test_fp8(void) {
  int bad = 0;
  for (unsigned b = 0; b < 256; ++b) {
    __nv_fp8_e4m3 a;
    a.__x = (unsigned char)b;
    const float f = (float)a;
    if ((b & 0x7f) == 0x7f)
      bad += !isnan(f);
    else
      bad += (long double)f != e4m3_oracle.value(b);
    __nv_fp8_e5m2 c;
    c.__x = (unsigned char)b;
    const float g = (float)c;
    if ((b & 0x7c) == 0x7c)
      bad += (b & 3) ? !isnan(g) : !isinf(g);
    else
      bad += (long double)g != e5m2_oracle.value(b);
  }
  CHECK_MSG(bad == 0, "%d fp8 decodings wrong", bad);
  int wrong = 0;
  for (unsigned u = 0; u < 0xff800000u; u += 65521) {
    const float f = bitsf(u);
    wrong += __nv_fp8_e4m3(f).__x != e4m3_oracle.round(f, RN);
    wrong += __nv_fp8_e5m2(f).__x != e5m2_oracle.round(f, RN);
  }
  for (float f : {464.0f, 470.0f, 1e9f, -1e9f, INFINITY, 57344.0f, 61440.0f, 0.0009765625f, 0.001953125f})
    wrong += __nv_fp8_e4m3(f).__x != e4m3_oracle.round(f, RN) || __nv_fp8_e5m2(f).__x != e5m2_oracle.round(f, RN);
  CHECK_MSG(wrong == 0, "%d float->fp8 conversions wrong", wrong);
  CHECK(__nv_fp8_e4m3(1e9f).__x == 0x7e && __nv_fp8_e5m2(-INFINITY).__x == 0xfb);
}

static bool same4(uint4 a, unsigned x, unsigned y, unsigned z, unsigned w) {
  return a.x == x && a.y == y && a.z == z && a.w == w;
}

static void test_philox(void) {
  // Random123's known-answer vectors for philox4x32-10 (counter, key, result).
  CHECK(same4(coconet_host::philox4x32_10(uint4{0, 0, 0, 0}, uint2{0, 0}), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu,
              0x9b00dbd8u));
  CHECK(same4(coconet_host::philox4x32_10(uint4{~0u, ~0u, ~0u, ~0u}, uint2{~0u, ~0u}), 0x408f276du, 0x41c83b0eu,
              0xa20bc7c6u, 0x6d5451fdu));
  CHECK(same4(coconet_host::philox4x32_10(uint4{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                          uint2{0xa4093822u, 0x299f31d0u}),
              0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));

  // curand_init: key = seed, counter = subsequence * 2^64 + offset / 4,
  // skipping offset % 4 outputs of the first block.
  const unsigned long long seed = 0x0123456789abcdefull;
  const uint2 key{0x89abcdefu, 0x01234567u};
  curandStatePhilox4_32_10_t st;
  curand_init(seed, 0, 0, &st);
  const uint4 b0 = coconet_host::philox4x32_10(uint4{0, 0, 0, 0}, key);
  const uint4 b1 = coconet_host::philox4x32_10(uint4{1, 0, 0, 0}, key);
  unsigned got[6];
  for (unsigned &g : got) g = curand(&st);
  CHECK(got[0] == b0.x && got[1] == b0.y && got[2] == b0.z && got[3] == b0.w && got[4] == b1.x && got[5] == b1.y);

  curand_init(seed, 3, 6, &st);
  const uint4 c1 = coconet_host::philox4x32_10(uint4{1, 0, 3, 0}, key);
  const uint4 c2 = coconet_host::philox4x32_10(uint4{2, 0, 3, 0}, key);
  CHECK(curand(&st) == c1.z);
  CHECK(same4(curand4(&st), c1.w, c2.x, c2.y, c2.z));
  CHECK(curand(&st) == c2.w);

  curand_init(seed, (1ull << 32) + 7, (1ull << 40) + 5, &st);
  const uint4 d = coconet_host::philox4x32_10(uint4{1, 1u << 6, 7, 1}, key);
  CHECK(curand(&st) == d.y);
  skipahead(2, &st);
  CHECK(curand(&st) == coconet_host::philox4x32_10(uint4{2, 1u << 6, 7, 1}, key).x);
  skipahead_sequence(1, &st);
  CHECK(curand(&st) == coconet_host::philox4x32_10(uint4{2, 1u << 6, 8, 1}, key).y);

  // Uniforms: u * 2^-32 + 2^-33 rounded once; in (0, 1].
  curand_init(7, 11, 0, &st);
  curandStatePhilox4_32_10_t raw = st;
  int bad = 0;
  for (int i = 0; i < 1000; ++i) {
    const unsigned u = curand(&raw);
    const float expect = (float)((double)(float)u * 0x1p-32 + 0x1p-33);
    const float got_u = curand_uniform(&st);
    bad += got_u != expect || got_u <= 0.0f || got_u > 1.0f;
  }
  CHECK(bad == 0);
  curand_init(7, 11, 0, &st);
  raw = st;
  const float4 u4 = curand_uniform4(&st);
  CHECK(u4.x == curand_uniform(&raw) && u4.y == curand_uniform(&raw) && u4.z == curand_uniform(&raw) &&
        u4.w == curand_uniform(&raw));

  // Normals: Box-Muller on two outputs, the second one cached.
  curand_init(99, 0, 1, &st);
  raw = st;
  bad = 0;
  for (int i = 0; i < 500; ++i) {
    const unsigned x = curand(&raw), y = curand(&raw);
    const double u = (double)(float)((double)(float)x * 0x1p-32 + 0x1p-33);
    const double v = (double)fmaf((float)y, 2.3283064e-10f * 6.2831855f, 2.3283064e-10f * 6.2831855f / 2.0f);
    const double r = sqrt(-2.0 * log(u));
    const float n0 = curand_normal(&st), n1 = curand_normal(&st);
    bad += fabs(n0 - r * sin(v)) > 4e-6 * (1 + r) || fabs(n1 - r * cos(v)) > 4e-6 * (1 + r);
  }
  CHECK_MSG(bad == 0, "%d normal pairs off", bad);
  curand_init(99, 0, 1, &st);
  raw = st;
  const float4 n4 = curand_normal4(&st);
  const float2 p0 = curand_normal2(&raw), p1 = curand_normal2(&raw);
  CHECK(n4.x == p0.x && n4.y == p0.y && n4.z == p1.x && n4.w == p1.y);
  const double2 dd = curand_uniform2_double(&st);
  CHECK(dd.x > 0.0 && dd.x <= 1.0 && dd.y > 0.0 && dd.y <= 1.0);
}

// Per-thread generators in a kernel, the usual way: subsequence = thread id.
__global__ void fill_uniform(unsigned long long seed, float *out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t st;
  curand_init(seed, (unsigned long long)i, 0, &st);
  out[i] = curand_uniform(&st);
}

static void test_curand_kernel(void) {
  float *out;
  cudaMallocManaged(&out, 300 * sizeof(float));
  coconet_host_launch(COCONET_HOST_SIMPLE, fill_uniform, 3, 128, 0, 0, 42ull, out, 300);
  int bad = 0;
  for (int i = 0; i < 300; ++i) {
    const unsigned x = coconet_host::philox4x32_10(uint4{0, 0, (unsigned)i, 0}, uint2{42, 0}).x;
    bad += out[i] != (float)((double)(float)x * 0x1p-32 + 0x1p-33);
  }
  CHECK(bad == 0);
  cudaFree(out);
}

int main(void) {
  test_half_conversions();
  test_bf16_conversions();
  test_arithmetic();
  test_fp8();
  test_philox();
  test_curand_kernel();
  return check_summary("host fp16/bf16/fp8/philox");
}
