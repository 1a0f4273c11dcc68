// beside-log.h: the logger of tests/golden/host/beside-logs.cu, a singleton whose
// constructor is defined in another file (beside-logger.cpp).
#pragma once
#include <cstdio>

namespace engine {

extern int g_rank;

class Log {
 public:
  static Log &get() {
    static Log instance;
    return instance;
  }
  bool on() const { return on_; }

 private:
  Log();
  bool on_;
};

}  // namespace engine

#define ENGINE_DEBUG(...)                                 \
  do {                                                    \
    if (engine::Log::get().on() && engine::g_rank == 0) { \
      std::printf(__VA_ARGS__);                           \
      std::printf("\n");                                  \
    }                                                     \
  } while (0)
