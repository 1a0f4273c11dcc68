// coconet host backend: logging by level and subsystem, fatal errors, MPI
// checks.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "host.h"

namespace coconet_host {

namespace {

struct log_config {
  bool ready;
  int level;
  int subsystems;
};

log_config config;

const struct {
  const char *name;
  int bit;
} subsystem_names[] = {
    {"INIT", SUB_INIT}, {"CUDA", SUB_CUDA},   {"LAUNCH", SUB_LAUNCH}, {"COLL", SUB_COLL},
    {"P2P", SUB_P2P},   {"SYMM", SUB_SYMM}, {"BLAS", SUB_BLAS},
};
const int all_subsystems = SUB_INIT | SUB_CUDA | SUB_LAUNCH | SUB_COLL | SUB_P2P | SUB_SYMM | SUB_BLAS;

int parse_level(const char *s) {
  if (!s || !*s || !strcasecmp(s, "WARN")) return LOG_WARN;
  if (!strcasecmp(s, "NONE")) return LOG_NONE;
  if (!strcasecmp(s, "INFO")) return LOG_INFO;
  if (!strcasecmp(s, "TRACE")) return LOG_TRACE;
  fprintf(stderr, "coconet-host: warning: COCONET_DEBUG=%s is not NONE, WARN, INFO or TRACE; using WARN\n", s);
  return LOG_WARN;
}

int parse_subsystems(const char *s) {
  if (!s || !*s) return all_subsystems;
  const bool exclude = s[0] == '^';
  int mask = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", exclude ? s + 1 : s);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strcasecmp(tok, "ALL")) {
      mask |= all_subsystems;
      continue;
    }
    bool known = false;
    for (const auto &sub : subsystem_names)
      if (!strcasecmp(tok, sub.name)) {
        mask |= sub.bit;
        known = true;
      }
    if (!known) fprintf(stderr, "coconet-host: warning: COCONET_DEBUG_SUBSYS: unknown subsystem %s\n", tok);
  }
  return exclude ? all_subsystems & ~mask : mask;
}

const char *level_name(int level) {
  return level == LOG_WARN ? "WARN" : level == LOG_INFO ? "INFO" : "TRACE";
}

const char *subsystem_name(int subsys) {
  for (const auto &sub : subsystem_names)
    if (sub.bit == subsys) return sub.name;
  return "?";
}

// "coconet-host[rank R]" (or [pid P] before MPI starts) into buf.
void format_prefix(char *buf, size_t size) {
  const int rank = world_rank();
  if (rank >= 0)
    snprintf(buf, size, "coconet-host[rank %d]", rank);
  else
    snprintf(buf, size, "coconet-host[pid %d]", (int)getpid());
}

}  // namespace

bool log_enabled(int level, int subsys) {
  if (!config.ready) {
    config.level = parse_level(getenv("COCONET_DEBUG"));
    config.subsystems = parse_subsystems(getenv("COCONET_DEBUG_SUBSYS"));
    config.ready = true;
  }
  return level <= config.level && (config.subsystems & subsys);
}

void log_message(int level, int subsys, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char prefix[64];
  format_prefix(prefix, sizeof prefix);
  fprintf(stderr, "%s %s %s: %s\n", prefix, level_name(level), subsystem_name(subsys), msg);
}

// Unchecked on purpose: fatal() itself asks for the rank.
int world_rank(void) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return -1;
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void fatal(const char *what, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char prefix[64];
  format_prefix(prefix, sizeof prefix);
  fprintf(stderr, "%s: error: %s: %s\n", prefix, what, msg);
  fflush(stderr);
  symm_cleanup();
  if (world_rank() >= 0) MPI_Abort(MPI_COMM_WORLD, 1);
  abort();
}

void mpi_check(int rc, const char *call, const char *file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", rc);
  fatal("MPI", "%s failed at %s:%d: %s", call, file, line, text);
}

size_t env_size(const char *name, size_t dflt) {
  const char *s = getenv(name);
  if (!s || !*s) return dflt;
  char *end = NULL;
  const unsigned long long v = strtoull(s, &end, 10);
  if (*end || v == 0) fatal("environment", "%s=%s is not a positive integer", name, s);
  return (size_t)v;
}

}  // namespace coconet_host

#ifdef COCONET_HOST_ASAN
// Under AddressSanitizer, keep dlopen'ed libraries (OpenMPI's components)
// loaded until exit, so that LeakSanitizer can name the library of each of
// their allocations and runtime/host/lsan.supp can suppress them.
extern "C" int dlclose(void *handle) {
  (void)handle;
  return 0;
}
#endif
