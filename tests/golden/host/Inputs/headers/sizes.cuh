// sizes.cuh: constants, included by the main file and by kernels.cuh.
#pragma once
enum { COUNT = 1000, THREADS = 128 };
