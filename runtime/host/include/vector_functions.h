/* coconet host backend: make_float4() and the other vector constructors. */
#ifndef COCONET_HOST_VECTOR_FUNCTIONS_H
#define COCONET_HOST_VECTOR_FUNCTIONS_H

#include "vector_types.h"

#define COCONET_HOST_MAKE_VECTORS(T, N)                                                          \
  static inline N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }                            \
  static inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }              \
  static inline N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; } \
  static inline N##4 make_##N##4(T x, T y, T z, T w) {                                          \
    N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;                                        \
  }

COCONET_HOST_MAKE_VECTORS(signed char, char)
COCONET_HOST_MAKE_VECTORS(unsigned char, uchar)
COCONET_HOST_MAKE_VECTORS(short, short)
COCONET_HOST_MAKE_VECTORS(unsigned short, ushort)
COCONET_HOST_MAKE_VECTORS(int, int)
COCONET_HOST_MAKE_VECTORS(unsigned int, uint)
COCONET_HOST_MAKE_VECTORS(long, long)
COCONET_HOST_MAKE_VECTORS(unsigned long, ulong)
COCONET_HOST_MAKE_VECTORS(long long, longlong)
COCONET_HOST_MAKE_VECTORS(unsigned long long, ulonglong)
COCONET_HOST_MAKE_VECTORS(float, float)
COCONET_HOST_MAKE_VECTORS(double, double)

#undef COCONET_HOST_MAKE_VECTORS

#endif
