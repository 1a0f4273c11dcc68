/* coconet host backend: device intrinsics live with the rest of the runtime. */
#include "cuda_runtime.h"
