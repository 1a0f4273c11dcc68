/* coconet host backend: CUDA's built-in vector types (char1 .. double4, dim3)
 * with CUDA's sizes and alignments, usable from C and C++. */
#ifndef COCONET_HOST_VECTOR_TYPES_H
#define COCONET_HOST_VECTOR_TYPES_H

#include "coconet_host_defines.h"

/* T1, T2 and T4 are aligned to their size (at most 16 bytes), T3 to T. */
#define COCONET_HOST_VECTOR_TYPES(T, N, A2, A4)                                  \
  typedef struct __attribute__((aligned(sizeof(T)))) N##1 { T x; } N##1;       \
  typedef struct __attribute__((aligned(A2))) N##2 { T x, y; } N##2;           \
  typedef struct N##3 { T x, y, z; } N##3;                                       \
  typedef struct __attribute__((aligned(A4))) N##4 { T x, y, z, w; } N##4;

COCONET_HOST_VECTOR_TYPES(signed char, char, 2, 4)
COCONET_HOST_VECTOR_TYPES(unsigned char, uchar, 2, 4)
COCONET_HOST_VECTOR_TYPES(short, short, 4, 8)
COCONET_HOST_VECTOR_TYPES(unsigned short, ushort, 4, 8)
COCONET_HOST_VECTOR_TYPES(int, int, 8, 16)
COCONET_HOST_VECTOR_TYPES(unsigned int, uint, 8, 16)
COCONET_HOST_VECTOR_TYPES(long, long, 16, 16)
COCONET_HOST_VECTOR_TYPES(unsigned long, ulong, 16, 16)
COCONET_HOST_VECTOR_TYPES(long long, longlong, 16, 16)
COCONET_HOST_VECTOR_TYPES(unsigned long long, ulonglong, 16, 16)
COCONET_HOST_VECTOR_TYPES(float, float, 8, 16)
COCONET_HOST_VECTOR_TYPES(double, double, 16, 16)

#undef COCONET_HOST_VECTOR_TYPES

/* Grid and block shapes: unset dimensions are 1. */
typedef struct dim3 {
  unsigned int x, y, z;
#ifdef __cplusplus
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
#endif
} dim3;

#endif
