// ktrace.cc: per-kernel GPU times of a CUDA program, from CUPTI's activity records.
//
//   CUDA_INJECTION64_PATH=ktrace.so KTRACE_OUT=FILE ./program ...
//
// The CUDA driver loads this library when the program initialises CUDA and calls
// InitializeInjection (the mechanism of NVIDIA's cupti_trace_injection sample), which
// turns on kernel activity records. At exit every kernel name gets one line in FILE
// (stderr without KTRACE_OUT), appended:
//   ktrace kernel=NAME launches=N total_ns=T min_ns=M max_ns=X
// NAME is demangled and cut at its '(' (the parameter list). Times are the GPU's
// start-to-end of each launch.
#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

struct Stat {
  unsigned long long launches = 0, total = 0, min = ~0ULL, max = 0;
};

std::mutex mu;
std::map<std::string, Stat> *stats;
bool printed;

void report_error(const char *what, CUptiResult r) {
  const char *msg = nullptr;
  cuptiGetResultString(r, &msg);
  fprintf(stderr, "ktrace: %s failed: %s\n", what, msg ? msg : "?");
}

std::string short_name(const char *mangled) {
  int status = 0;
  char *d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : mangled;
  free(d);
  size_t paren = s.find('(');
  if (paren != std::string::npos) s.resize(paren);
  return s;
}

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = 8u << 20;
  *buffer = static_cast<uint8_t *>(aligned_alloc(64, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t valid) {
  CUpti_Activity *rec = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    const CUpti_ActivityKernel10 *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(rec);
    if (!k->name || k->end < k->start) continue;
    Stat &s = (*stats)[short_name(k->name)];
    unsigned long long t = k->end - k->start;
    s.launches++;
    s.total += t;
    if (t < s.min) s.min = t;
    if (t > s.max) s.max = t;
  }
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  if (dropped) fprintf(stderr, "ktrace: %zu records dropped\n", dropped);
  free(buffer);
}

void at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(mu);
  if (printed) return;
  printed = true;
  const char *path = getenv("KTRACE_OUT");
  FILE *f = path && *path ? fopen(path, "a") : stderr;
  if (!f) f = stderr;
  for (const auto &kv : *stats)
    fprintf(f, "ktrace kernel=%s launches=%llu total_ns=%llu min_ns=%llu max_ns=%llu\n", kv.first.c_str(),
            kv.second.launches, kv.second.total, kv.second.min, kv.second.max);
  if (f != stderr) fclose(f);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static bool done = false;
  if (done) return 1;
  done = true;
  stats = new std::map<std::string, Stat>;
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    report_error("cuptiActivityRegisterCallbacks", r);
    return 0;
  }
  r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    report_error("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
    return 0;
  }
  atexit(at_exit);
  return 1;
}
