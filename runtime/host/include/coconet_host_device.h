/* coconet host backend: what kernels call.  Barriers and warp collectives go
 * to the fiber scheduler in the runtime (they abort under COCONET_HOST_SIMPLE);
 * atomics are real atomic instructions (they stay correct on symmetric memory
 * shared between ranks); the math intrinsics compute IEEE results (the GPU's
 * approximate fast-math intrinsics such as __expf are evaluated exactly). */
#ifndef COCONET_HOST_DEVICE_H
#define COCONET_HOST_DEVICE_H

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "device_launch_parameters.h"

namespace coconet_host {

enum barrier_kind { BARRIER_SYNC, BARRIER_COUNT, BARRIER_AND, BARRIER_OR };

enum warp_kind {
  WARP_SYNC,
  WARP_SHFL,
  WARP_SHFL_UP,
  WARP_SHFL_DOWN,
  WARP_SHFL_XOR,
  WARP_BALLOT,
  WARP_ANY,
  WARP_ALL,
  WARP_MATCH_ANY,
  WARP_MATCH_ALL,
  WARP_REDUCE_ADD,
  WARP_REDUCE_MIN,
  WARP_REDUCE_MAX,
  WARP_REDUCE_AND,
  WARP_REDUCE_OR,
  WARP_REDUCE_XOR,
};

/* A block-wide barrier; returns the count/and/or of the predicates. */
int block_barrier(int kind, int predicate);
/* A warp collective among the lanes of mask; value and result are raw bits.
 * arg is the source lane, delta or lane mask of shuffles and 1 for signed
 * reductions; width is the shuffle width. */
unsigned long long warp_collective(int kind, unsigned mask, unsigned long long value, int arg, int width);
unsigned warp_active_mask(void);
[[noreturn]] void device_trap(const char *what);
void device_nanosleep(unsigned ns);
long long device_clock64(void);
unsigned long long device_globaltimer(void);

template <class T>
inline unsigned long long to_bits(const T &v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp shuffles and votes move trivially copyable values of at most 8 bytes");
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <class T>
inline T from_bits(unsigned long long bits) {
  T v;
  memcpy(&v, &bits, sizeof(T));
  return v;
}

/* Atomically replaces *p by f(*p); returns the old value.  Works for any
 * trivially copyable type of 2, 4 or 8 bytes (compares bit patterns). */
template <class T, class F>
inline T atomic_update(T *p, F f) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T desired = f(old);
  while (!__atomic_compare_exchange(p, &old, &desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) desired = f(old);
  return old;
}

/* Saturating float-to-integer conversion as the GPU does it (NaN gives 0). */
template <class I, class F>
inline I saturate_to(F x) {
  if (x != x) return 0;
  if (x <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (x >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

}  // namespace coconet_host

/* ---- barriers, warp collectives, fences ---------------------------------- */

inline void __syncthreads(void) { coconet_host::block_barrier(coconet_host::BARRIER_SYNC, 0); }
inline int __syncthreads_count(int predicate) {
  return coconet_host::block_barrier(coconet_host::BARRIER_COUNT, predicate != 0);
}
inline int __syncthreads_and(int predicate) {
  return coconet_host::block_barrier(coconet_host::BARRIER_AND, predicate != 0);
}
inline int __syncthreads_or(int predicate) {
  return coconet_host::block_barrier(coconet_host::BARRIER_OR, predicate != 0);
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  coconet_host::warp_collective(coconet_host::WARP_SYNC, mask, 0, 0, warpSize);
}

template <class T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  return coconet_host::from_bits<T>(
      coconet_host::warp_collective(coconet_host::WARP_SHFL, mask, coconet_host::to_bits(var), srcLane, width));
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return coconet_host::from_bits<T>(coconet_host::warp_collective(coconet_host::WARP_SHFL_UP, mask,
                                                                   coconet_host::to_bits(var), (int)delta, width));
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return coconet_host::from_bits<T>(coconet_host::warp_collective(coconet_host::WARP_SHFL_DOWN, mask,
                                                                   coconet_host::to_bits(var), (int)delta, width));
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
  return coconet_host::from_bits<T>(coconet_host::warp_collective(coconet_host::WARP_SHFL_XOR, mask,
                                                                   coconet_host::to_bits(var), laneMask, width));
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return (unsigned)coconet_host::warp_collective(coconet_host::WARP_BALLOT, mask, predicate != 0, 0, warpSize);
}
inline int __any_sync(unsigned mask, int predicate) {
  return (int)coconet_host::warp_collective(coconet_host::WARP_ANY, mask, predicate != 0, 0, warpSize);
}
inline int __all_sync(unsigned mask, int predicate) {
  return (int)coconet_host::warp_collective(coconet_host::WARP_ALL, mask, predicate != 0, 0, warpSize);
}
inline unsigned __activemask(void) { return coconet_host::warp_active_mask(); }

template <class T>
inline unsigned __match_any_sync(unsigned mask, T value) {
  return (unsigned)coconet_host::warp_collective(coconet_host::WARP_MATCH_ANY, mask, coconet_host::to_bits(value), 0,
                                                 warpSize);
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int *pred) {
  unsigned r = (unsigned)coconet_host::warp_collective(coconet_host::WARP_MATCH_ALL, mask,
                                                       coconet_host::to_bits(value), 0, warpSize);
  *pred = r != 0;
  return r;
}

#define COCONET_HOST_WARP_REDUCE(NAME, KIND)                                                             \
  inline unsigned NAME(unsigned mask, unsigned value) {                                                  \
    return (unsigned)coconet_host::warp_collective(coconet_host::KIND, mask, value, 0, warpSize);        \
  }                                                                                                      \
  inline int NAME(unsigned mask, int value) {                                                            \
    return (int)coconet_host::warp_collective(coconet_host::KIND, mask, (unsigned)value, 1, warpSize);   \
  }
COCONET_HOST_WARP_REDUCE(__reduce_add_sync, WARP_REDUCE_ADD)
COCONET_HOST_WARP_REDUCE(__reduce_min_sync, WARP_REDUCE_MIN)
COCONET_HOST_WARP_REDUCE(__reduce_max_sync, WARP_REDUCE_MAX)
#undef COCONET_HOST_WARP_REDUCE
inline unsigned __reduce_and_sync(unsigned mask, unsigned value) {
  return (unsigned)coconet_host::warp_collective(coconet_host::WARP_REDUCE_AND, mask, value, 0, warpSize);
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned value) {
  return (unsigned)coconet_host::warp_collective(coconet_host::WARP_REDUCE_OR, mask, value, 0, warpSize);
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned value) {
  return (unsigned)coconet_host::warp_collective(coconet_host::WARP_REDUCE_XOR, mask, value, 0, warpSize);
}

inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

[[noreturn]] inline void __trap(void) { coconet_host::device_trap("__trap()"); }
[[noreturn]] inline void __brkpt(void) { coconet_host::device_trap("__brkpt()"); }
inline void __nanosleep(unsigned ns) { coconet_host::device_nanosleep(ns); }
inline long long clock64(void) { return coconet_host::device_clock64(); }
inline unsigned long long __globaltimer(void) { return coconet_host::device_globaltimer(); }

/* ---- atomics ------------------------------------------------------------- */

inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline float atomicAdd(float *p, float v) {
  return coconet_host::atomic_update(p, [v](float old) { return old + v; });
}
inline double atomicAdd(double *p, double v) {
  return coconet_host::atomic_update(p, [v](double old) { return old + v; });
}
inline int atomicSub(int *p, int v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicSub(unsigned *p, unsigned v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }

inline int atomicExch(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicExch(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
inline unsigned long long atomicExch(unsigned long long *p, unsigned long long v) {
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
inline float atomicExch(float *p, float v) {
  float old;
  __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);
  return old;
}

#define COCONET_HOST_ATOMIC_MINMAX(T)                                                            \
  inline T atomicMin(T *p, T v) {                                                                \
    return coconet_host::atomic_update(p, [v](T old) { return v < old ? v : old; });             \
  }                                                                                              \
  inline T atomicMax(T *p, T v) {                                                                \
    return coconet_host::atomic_update(p, [v](T old) { return v > old ? v : old; });             \
  }
COCONET_HOST_ATOMIC_MINMAX(int)
COCONET_HOST_ATOMIC_MINMAX(unsigned)
COCONET_HOST_ATOMIC_MINMAX(long long)
COCONET_HOST_ATOMIC_MINMAX(unsigned long long)
#undef COCONET_HOST_ATOMIC_MINMAX

inline unsigned atomicInc(unsigned *p, unsigned limit) {
  return coconet_host::atomic_update(p, [limit](unsigned old) { return old >= limit ? 0u : old + 1; });
}
inline unsigned atomicDec(unsigned *p, unsigned limit) {
  return coconet_host::atomic_update(p, [limit](unsigned old) { return (old == 0 || old > limit) ? limit : old - 1; });
}

#define COCONET_HOST_ATOMIC_CAS(T)                                                                       \
  inline T atomicCAS(T *p, T compare, T val) {                                                           \
    __atomic_compare_exchange_n(p, &compare, val, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);            \
    return compare;                                                                                      \
  }
COCONET_HOST_ATOMIC_CAS(int)
COCONET_HOST_ATOMIC_CAS(unsigned)
COCONET_HOST_ATOMIC_CAS(unsigned long long)
COCONET_HOST_ATOMIC_CAS(unsigned short)
#undef COCONET_HOST_ATOMIC_CAS

#define COCONET_HOST_ATOMIC_BITS(T)                                                              \
  inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }           \
  inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
COCONET_HOST_ATOMIC_BITS(int)
COCONET_HOST_ATOMIC_BITS(unsigned)
COCONET_HOST_ATOMIC_BITS(unsigned long long)
#undef COCONET_HOST_ATOMIC_BITS

/* atomicAdd_block, atomicAdd_system, ...: one address space, same operation. */
#define COCONET_HOST_ATOMIC_SCOPES(NAME)                                                         \
  template <class T, class... A>                                                                 \
  inline auto NAME##_block(T *p, A... a) -> decltype(NAME(p, a...)) { return NAME(p, a...); }    \
  template <class T, class... A>                                                                 \
  inline auto NAME##_system(T *p, A... a) -> decltype(NAME(p, a...)) { return NAME(p, a...); }
COCONET_HOST_ATOMIC_SCOPES(atomicAdd)
COCONET_HOST_ATOMIC_SCOPES(atomicSub)
COCONET_HOST_ATOMIC_SCOPES(atomicExch)
COCONET_HOST_ATOMIC_SCOPES(atomicMin)
COCONET_HOST_ATOMIC_SCOPES(atomicMax)
COCONET_HOST_ATOMIC_SCOPES(atomicInc)
COCONET_HOST_ATOMIC_SCOPES(atomicDec)
COCONET_HOST_ATOMIC_SCOPES(atomicCAS)
COCONET_HOST_ATOMIC_SCOPES(atomicAnd)
COCONET_HOST_ATOMIC_SCOPES(atomicOr)
COCONET_HOST_ATOMIC_SCOPES(atomicXor)
#undef COCONET_HOST_ATOMIC_SCOPES

/* ---- loads and stores with cache hints ------------------------------------ */

template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; }
template <class T> inline T __ldca(const T *p) { return *p; }
template <class T> inline T __ldcs(const T *p) { return *p; }
template <class T> inline T __ldlu(const T *p) { return *p; }
template <class T> inline T __ldcv(const T *p) { return *p; }
template <class T> inline void __stwb(T *p, T v) { *p = v; }
template <class T> inline void __stcg(T *p, T v) { *p = v; }
template <class T> inline void __stcs(T *p, T v) { *p = v; }
template <class T> inline void __stwt(T *p, T v) { *p = v; }

/* ---- min and max, as CUDA overloads them ---------------------------------- */

#define COCONET_HOST_MINMAX(R, A, B)                                         \
  inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; }              \
  inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
COCONET_HOST_MINMAX(int, int, int)
COCONET_HOST_MINMAX(unsigned, unsigned, unsigned)
COCONET_HOST_MINMAX(unsigned, int, unsigned)
COCONET_HOST_MINMAX(unsigned, unsigned, int)
COCONET_HOST_MINMAX(long, long, long)
COCONET_HOST_MINMAX(unsigned long, unsigned long, unsigned long)
COCONET_HOST_MINMAX(unsigned long, long, unsigned long)
COCONET_HOST_MINMAX(unsigned long, unsigned long, long)
COCONET_HOST_MINMAX(long long, long long, long long)
COCONET_HOST_MINMAX(unsigned long long, unsigned long long, unsigned long long)
COCONET_HOST_MINMAX(unsigned long long, long long, unsigned long long)
COCONET_HOST_MINMAX(unsigned long long, unsigned long long, long long)
#undef COCONET_HOST_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

/* ---- bit reinterpretation and integer intrinsics --------------------------- */

inline float __int_as_float(int x) { return coconet_host::from_bits<float>((unsigned)x); }
inline int __float_as_int(float x) { return (int)(unsigned)coconet_host::to_bits(x); }
inline float __uint_as_float(unsigned x) { return coconet_host::from_bits<float>(x); }
inline unsigned __float_as_uint(float x) { return (unsigned)coconet_host::to_bits(x); }
inline double __longlong_as_double(long long x) { return coconet_host::from_bits<double>((unsigned long long)x); }
inline long long __double_as_longlong(double x) { return (long long)coconet_host::to_bits(x); }
inline int __double2hiint(double x) { return (int)(unsigned)(coconet_host::to_bits(x) >> 32); }
inline int __double2loint(double x) { return (int)(unsigned)coconet_host::to_bits(x); }
inline double __hiloint2double(int hi, int lo) {
  return coconet_host::from_bits<double>(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);
}

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long bytes = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= (unsigned)((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return (unsigned)((((unsigned long long)hi << 32 | lo) << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
  return (unsigned)((((unsigned long long)hi << 32 | lo) << (shift < 32 ? shift : 32)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) >> (shift & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) >> (shift < 32 ? shift : 32));
}
inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
inline unsigned __umulhi(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x * y) >> 32); }
inline long long __mul64hi(long long x, long long y) { return (long long)(((__int128)x * y) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
inline int __mul24(int x, int y) {
  long long a = (int)((unsigned)x << 8) >> 8, b = (int)((unsigned)y << 8) >> 8;
  return (int)(unsigned)(a * b);
}
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline unsigned __sad(int x, int y, unsigned z) { return (unsigned)(x > y ? (long long)x - y : (long long)y - x) + z; }
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return (x > y ? x - y : y - x) + z; }
inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x + y) >> 1); }
inline unsigned __urhadd(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x + y + 1) >> 1); }

/* ---- conversions ------------------------------------------------------------ */

#define COCONET_HOST_FLOAT_TO_INT(F, FN, I, IN)                                                   \
  inline I __##FN##2##IN##_rn(F x) { return coconet_host::saturate_to<I>(std::nearbyint(x)); }   \
  inline I __##FN##2##IN##_rz(F x) { return coconet_host::saturate_to<I>(std::trunc(x)); }       \
  inline I __##FN##2##IN##_rd(F x) { return coconet_host::saturate_to<I>(std::floor(x)); }       \
  inline I __##FN##2##IN##_ru(F x) { return coconet_host::saturate_to<I>(std::ceil(x)); }
COCONET_HOST_FLOAT_TO_INT(float, float, int, int)
COCONET_HOST_FLOAT_TO_INT(float, float, unsigned, uint)
COCONET_HOST_FLOAT_TO_INT(float, float, long long, ll)
COCONET_HOST_FLOAT_TO_INT(float, float, unsigned long long, ull)
COCONET_HOST_FLOAT_TO_INT(double, double, int, int)
COCONET_HOST_FLOAT_TO_INT(double, double, unsigned, uint)
COCONET_HOST_FLOAT_TO_INT(double, double, long long, ll)
COCONET_HOST_FLOAT_TO_INT(double, double, unsigned long long, ull)
#undef COCONET_HOST_FLOAT_TO_INT
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline float __ll2float_rn(long long x) { return (float)x; }
inline float __ull2float_rn(unsigned long long x) { return (float)x; }
inline double __int2double_rn(int x) { return (double)x; }
inline double __uint2double_rn(unsigned x) { return (double)x; }
inline double __ll2double_rn(long long x) { return (double)x; }
inline double __ull2double_rn(unsigned long long x) { return (double)x; }
inline float __double2float_rn(double x) { return (float)x; }

/* ---- float math ---------------------------------------------------------------
 * Correctly rounded operations stay correctly rounded; fast-math intrinsics
 * (__expf, __fdividef, rsqrtf, ...) return the accurate host result, so they
 * can differ from a GPU in the last bits. */

inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float *s, float *c) { sincosf(x, s, c); }
inline float __frsqrt_rn(float x) { return (float)(1.0 / sqrt((double)x)); }
inline float rsqrtf(float x) { return (float)(1.0 / sqrt((double)x)); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return (float)(1.0 / cbrt((double)x)); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float sinpif(float x) { return (float)sin(M_PI * (double)x); }
inline float cospif(float x) { return (float)cos(M_PI * (double)x); }
inline void sincospif(float x, float *s, float *c) {
  *s = sinpif(x);
  *c = cospif(x);
}
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospi(double x, double *s, double *c) {
  *s = sinpi(x);
  *c = cospi(x);
}
inline float normcdff(float x) { return (float)(0.5 * erfc(-(double)x * M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline float rhypotf(float x, float y) { return (float)(1.0 / hypot((double)x, (double)y)); }
inline float norm3df(float a, float b, float c) {
  return (float)sqrt((double)a * a + (double)b * b + (double)c * c);
}
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline float norm4df(float a, float b, float c, float d) {
  return (float)sqrt((double)a * a + (double)b * b + (double)c * c + (double)d * d);
}
inline float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }

#endif
