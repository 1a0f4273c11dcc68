// debug_sync.h: an inference library's error check after each launch and collective
// (tests/corpus/error-checks.cu): sync_check_cuda_error() synchronizes the device and
// throws on a CUDA error when DEBUG_LEVEL is DEBUG, and reads the last error otherwise.
#pragma once
#include <cuda_runtime.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace engine {

inline const char *error_name(cudaError_t e) { return cudaGetErrorString(e); }

inline void syncAndCheck(const char *const file, int const line) {
  static char *level_name = std::getenv("DEBUG_LEVEL");
  if (level_name != nullptr) {
    static std::string level = std::string(level_name);
    if (level == "DEBUG") {
      cudaDeviceSynchronize();
      cudaError_t result = cudaGetLastError();
      if (result)
        throw std::runtime_error(std::string("CUDA runtime error: ") + error_name(result) + " " + file + ":" +
                                 std::to_string(line));
    }
  }
}

#ifdef COUNTED_CHECKS
int checks_made = 0;  // (a check that counts into a global the region's work could read: refused)
inline void countedCheck(const char *const file, int const line) {
  checks_made++;
  syncAndCheck(file, line);
}
#define sync_check_cuda_error() engine::countedCheck(__FILE__, __LINE__)
#else
#define sync_check_cuda_error() engine::syncAndCheck(__FILE__, __LINE__)
#endif

// A check of the stream the work runs on (its argument a variable of the program: refused).
inline void streamCheck(cudaStream_t stream) {
  cudaStreamSynchronize(stream);
  if (cudaGetLastError() != cudaSuccess) std::abort();
}

}  // namespace engine
