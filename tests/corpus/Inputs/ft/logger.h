// logger.h: the library's logger (tests/corpus/ft-layernorm.cu): a singleton
// whose level the constructor reads once; FT_LOG_DEBUG(fmt, ...) prints
// "[FT][DEBUG] " and the message when the level allows.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace fastertransformer {

template <typename... Args>
std::string fmtstr(const std::string &format, Args... args) {
  int size = std::snprintf(nullptr, 0, format.c_str(), args...) + 1;
  std::string out(size > 0 ? size : 1, '\0');
  std::snprintf(&out[0], out.size(), format.c_str(), args...);
  out.resize(out.size() - 1);
  return out;
}

class Logger {
 public:
  enum Level { DEBUG = 10, INFO = 20, ERROR = 40 };

  static Logger &getLogger() {
    thread_local Logger instance;
    return instance;
  }
  Logger(Logger const &) = delete;
  void operator=(Logger const &) = delete;

  template <typename... Args>
  void log(const Level level, const std::string format, const Args &...args) {
    if (level_ <= level) {
      std::string logstr = fmtstr("[FT][DEBUG] " + format + "\n", args...);
      std::fprintf(stdout, "%s", logstr.c_str());
    }
  }
  int getLevel() const { return level_; }

 private:
  Level level_ = INFO;
  Logger();
};

// (the library defines it in logger.cc)
inline Logger::Logger() {
  const char *env = std::getenv("FT_LOG_LEVEL");
  if (env && std::strcmp(env, "DEBUG") == 0) level_ = DEBUG;
}

}  // namespace fastertransformer

#define FT_LOG(level, ...)                                                    \
  do {                                                                        \
    if (fastertransformer::Logger::getLogger().getLevel() <= level) {         \
      fastertransformer::Logger::getLogger().log(level, __VA_ARGS__);         \
    }                                                                         \
  } while (0)
#define FT_LOG_DEBUG(...) FT_LOG(fastertransformer::Logger::DEBUG, __VA_ARGS__)
