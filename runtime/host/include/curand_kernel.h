/* coconet host backend: cuRAND's device API for the Philox4x32-10 generator,
 * implemented from the Philox definition (Salmon et al., SC'11) and cuRAND's
 * documented state semantics, so that a state made by curand_init(seed,
 * subsequence, offset) yields the GPU's numbers:
 *   - the 64-bit seed is the key; the 128-bit counter starts at
 *     subsequence * 2^64 and advances by offset / 4, with offset % 4 of the
 *     four 32-bit outputs of the first block skipped;
 *   - curand() returns the outputs in order x, y, z, w and then moves to the
 *     next counter; curand4() returns the next four outputs;
 *   - uniforms are u * 2^-32 + 2^-33 (never 0, possibly 1);
 *   - normals use the Box-Muller transform on two outputs and cache the second.
 * Raw outputs and uniforms are bit-identical to the GPU; normals agree to a
 * few ulp, because the GPU's logf and __sincosf are not the host's. */
#ifndef COCONET_HOST_CURAND_KERNEL_H
#define COCONET_HOST_CURAND_KERNEL_H

#include <math.h>

#include "curand.h"
#include "vector_types.h"

struct curandStatePhilox4_32_10 {
  uint4 ctr;
  uint4 output;
  uint2 key;
  unsigned int STATE;
  int boxmuller_flag;
  int boxmuller_flag_double;
  float boxmuller_extra;
  double boxmuller_extra_double;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

namespace coconet_host {

/* One Philox4x32-10 block: 10 rounds of two 32x32->64 multiplications with
 * the Weyl key schedule. */
inline uint4 philox4x32_10(uint4 c, uint2 k) {
  const unsigned m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  const unsigned w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k.x += w0;
      k.y += w1;
    }
    const unsigned long long p0 = (unsigned long long)m0 * c.x;
    const unsigned long long p1 = (unsigned long long)m1 * c.z;
    c = uint4{(unsigned)(p1 >> 32) ^ c.y ^ k.x, (unsigned)p1, (unsigned)(p0 >> 32) ^ c.w ^ k.y, (unsigned)p0};
  }
  return c;
}

/* The 128-bit counter plus n. */
inline void philox_advance(curandStatePhilox4_32_10_t *s, unsigned long long n) {
  unsigned long long lo = ((unsigned long long)s->ctr.y << 32 | s->ctr.x);
  unsigned long long hi = ((unsigned long long)s->ctr.w << 32 | s->ctr.z);
  const unsigned long long sum = lo + n;
  hi += sum < lo;
  lo = sum;
  s->ctr = uint4{(unsigned)lo, (unsigned)(lo >> 32), (unsigned)hi, (unsigned)(hi >> 32)};
}

inline void philox_refill(curandStatePhilox4_32_10_t *s) { s->output = philox4x32_10(s->ctr, s->key); }

inline unsigned philox_output(const curandStatePhilox4_32_10_t *s, unsigned i) {
  return i == 0 ? s->output.x : i == 1 ? s->output.y : i == 2 ? s->output.z : s->output.w;
}

inline float uniform_from_bits(unsigned x) { return x * 2.3283064e-10f + 2.3283064e-10f / 2.0f; }

inline double uniform_double_from_bits(unsigned x, unsigned y) {
  const unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << (53 - 32));
  return z * 1.1102230246251565e-16 + 1.1102230246251565e-16 / 2.0;
}

/* Box-Muller on two outputs; the angle uses the GPU's fused multiply-add. */
inline float2 box_muller(unsigned x, unsigned y) {
  const float two_pi_scale = 2.3283064e-10f * 6.2831855f;
  const float u = uniform_from_bits(x);
  const float v = fmaf((float)y, two_pi_scale, two_pi_scale / 2.0f);
  const float s = sqrtf(-2.0f * logf(u));
  return float2{sinf(v) * s, cosf(v) * s};
}

inline double2 box_muller_double(uint4 x) {
  const double u = uniform_double_from_bits(x.x, x.y);
  const unsigned long long zy = (unsigned long long)x.z ^ ((unsigned long long)x.w << (53 - 32));
  const double v = zy * (1.1102230246251565e-16 * 2.0) + 1.1102230246251565e-16;
  const double s = sqrt(-2.0 * log(u));
  return double2{sin(v * M_PI) * s, cos(v * M_PI) * s};
}

}  // namespace coconet_host

inline void skipahead(unsigned long long n, curandStatePhilox4_32_10_t *state) {
  state->STATE += (unsigned)(n & 3);
  n /= 4;
  if (state->STATE > 3) {
    n += 1;
    state->STATE -= 4;
  }
  coconet_host::philox_advance(state, n);
  coconet_host::philox_refill(state);
}

inline void skipahead_sequence(unsigned long long n, curandStatePhilox4_32_10_t *state) {
  unsigned long long hi = ((unsigned long long)state->ctr.w << 32 | state->ctr.z) + n;
  state->ctr.z = (unsigned)hi;
  state->ctr.w = (unsigned)(hi >> 32);
  coconet_host::philox_refill(state);
}

inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                        curandStatePhilox4_32_10_t *state) {
  state->ctr = uint4{0, 0, 0, 0};
  state->key = uint2{(unsigned)seed, (unsigned)(seed >> 32)};
  state->STATE = 0;
  state->boxmuller_flag = 0;
  state->boxmuller_flag_double = 0;
  state->boxmuller_extra = 0.0f;
  state->boxmuller_extra_double = 0.0;
  skipahead_sequence(subsequence, state);
  skipahead(offset, state);
}

inline unsigned int curand(curandStatePhilox4_32_10_t *state) {
  const unsigned r = coconet_host::philox_output(state, state->STATE++);
  if (state->STATE == 4) {
    coconet_host::philox_advance(state, 1);
    coconet_host::philox_refill(state);
    state->STATE = 0;
  }
  return r;
}

inline uint4 curand4(curandStatePhilox4_32_10_t *state) {
  const curandStatePhilox4_32_10_t old = *state;
  coconet_host::philox_advance(state, 1);
  coconet_host::philox_refill(state);
  unsigned r[4];
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned j = old.STATE + i;
    r[i] = j < 4 ? coconet_host::philox_output(&old, j) : coconet_host::philox_output(state, j - 4);
  }
  return uint4{r[0], r[1], r[2], r[3]};
}

inline float curand_uniform(curandStatePhilox4_32_10_t *state) {
  return coconet_host::uniform_from_bits(curand(state));
}

inline float4 curand_uniform4(curandStatePhilox4_32_10_t *state) {
  const uint4 x = curand4(state);
  return float4{coconet_host::uniform_from_bits(x.x), coconet_host::uniform_from_bits(x.y),
                coconet_host::uniform_from_bits(x.z), coconet_host::uniform_from_bits(x.w)};
}

inline double curand_uniform_double(curandStatePhilox4_32_10_t *state) {
  return curand(state) * 2.3283064365386963e-10 + 2.3283064365386963e-10;
}

inline double2 curand_uniform2_double(curandStatePhilox4_32_10_t *state) {
  const uint4 x = curand4(state);
  return double2{coconet_host::uniform_double_from_bits(x.x, x.y), coconet_host::uniform_double_from_bits(x.z, x.w)};
}

inline float curand_normal(curandStatePhilox4_32_10_t *state) {
  if (state->boxmuller_flag == 1) {
    state->boxmuller_flag = 0;
    return state->boxmuller_extra;
  }
  const unsigned x = curand(state);
  const unsigned y = curand(state);
  const float2 v = coconet_host::box_muller(x, y);
  state->boxmuller_extra = v.y;
  state->boxmuller_flag = 1;
  return v.x;
}

inline float2 curand_normal2(curandStatePhilox4_32_10_t *state) {
  const unsigned x = curand(state);
  const unsigned y = curand(state);
  return coconet_host::box_muller(x, y);
}

inline float4 curand_normal4(curandStatePhilox4_32_10_t *state) {
  const uint4 x = curand4(state);
  const float2 a = coconet_host::box_muller(x.x, x.y);
  const float2 b = coconet_host::box_muller(x.z, x.w);
  return float4{a.x, a.y, b.x, b.y};
}

inline double curand_normal_double(curandStatePhilox4_32_10_t *state) {
  if (state->boxmuller_flag_double == 1) {
    state->boxmuller_flag_double = 0;
    return state->boxmuller_extra_double;
  }
  const double2 v = coconet_host::box_muller_double(curand4(state));
  state->boxmuller_extra_double = v.y;
  state->boxmuller_flag_double = 1;
  return v.x;
}

inline double2 curand_normal2_double(curandStatePhilox4_32_10_t *state) {
  return coconet_host::box_muller_double(curand4(state));
}

inline float curand_log_normal(curandStatePhilox4_32_10_t *state, float mean, float stddev) {
  return expf(mean + stddev * curand_normal(state));
}

inline double curand_log_normal_double(curandStatePhilox4_32_10_t *state, double mean, double stddev) {
  return exp(mean + stddev * curand_normal_double(state));
}

#endif
