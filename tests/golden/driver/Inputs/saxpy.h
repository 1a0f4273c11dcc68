// Included with quotes from saxpy.cu: found beside the original, not the translation.
#ifndef SAXPY_H
#define SAXPY_H
enum { SAXPY_N = 1000 };
#ifndef SAXPY_SCALE
#define SAXPY_SCALE 2.0f
#endif
#endif
