// coconet host backend: COCONET_HOST_MEMCHECK=1, guard zones around device
// allocations.
//
// Each guarded allocation is its own mapping: an inaccessible page, the
// bytes before the buffer (filled with a pattern), the buffer, the bytes up
// to the next 256 (the pattern), an inaccessible page. The buffer ends at
// the second page, so a read or write past the 256-byte padding faults at
// once and the fault handler names the kernel and the buffer; a write into
// the patterned bytes is found when the kernel ends (and at cudaFree).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <string>

#include "host.h"

namespace coconet_host {

namespace {

const unsigned char PATTERN = 0xfd;

struct guarded {
  char *map;          // the whole mapping
  size_t map_size;
  size_t size;        // the buffer's bytes as asked for
  size_t padded;      // rounded up to 256
  unsigned long long id;  // 1 for the first guarded allocation, ...
  char site[96];      // where it was allocated ("file:line", or "")
};

std::map<const char *, guarded> table;  // by the buffer's address
unsigned long long allocated;
struct sigaction previous;

size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

char *lead(const guarded &g) { return g.map + page_size(); }  // the first patterned byte before the buffer

std::string name_of(const char *user, const guarded &g) {
  char text[256];
  snprintf(text, sizeof text, "device allocation #%llu (%zu bytes at %p%s%s)", g.id, g.size, (const void *)user,
           g.site[0] ? ", allocated at " : "", g.site);
  return text;
}

// The allocation whose guard pages (or patterned bytes) hold address a.
const std::pair<const char *const, guarded> *owner(const char *a) {
  for (const auto &e : table)
    if (a >= e.second.map && a < e.second.map + e.second.map_size) return &e;
  return nullptr;
}

void on_fault(int sig, siginfo_t *info, void *context) {
  const char *a = static_cast<const char *>(info->si_addr);
  const auto *e = owner(a);
  if (!e) {  // not ours: the previous handler, or the default action when the instruction runs again
    sigaction(SIGSEGV, &previous, nullptr);
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) previous.sa_sigaction(sig, info, context);
    return;
  }
  const char *user = e->first;
  const long offset = (long)(a - user);
  fatal("memcheck", "%s accessed byte %ld of %s: %s", launch_description(), offset, name_of(user, e->second).c_str(),
        offset < 0 ? "before its start" : "past its end");
}

void install_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &previous) != 0) fatal("memcheck", "cannot install the SIGSEGV handler");
}

// The first byte of g's patterned zones that changed, as an offset from the buffer; true if one did.
bool damaged(const char *user, const guarded &g, long *offset) {
  for (const char *p = lead(g); p < user; ++p)
    if ((unsigned char)*p != PATTERN) {
      *offset = (long)(p - user);
      return true;
    }
  for (const char *p = user + g.size; p < user + g.padded; ++p)
    if ((unsigned char)*p != PATTERN) {
      *offset = (long)(p - user);
      return true;
    }
  return false;
}

void verify_one(const char *user, const guarded &g, const char *who) {
  long offset;
  if (damaged(user, g, &offset))
    fatal("memcheck", "%s wrote byte %ld of %s: %s", who, offset, name_of(user, g).c_str(),
          offset < 0 ? "before its start" : "past its end");
}

}  // namespace

bool memcheck_enabled(void) {
  static int on = -1;
  if (on < 0) {
    const char *v = getenv("COCONET_HOST_MEMCHECK");
    on = v && strcmp(v, "1") == 0;
#ifdef COCONET_HOST_ASAN
    if (on) fatal("environment", "COCONET_HOST_MEMCHECK=1 with AddressSanitizer: use one or the other (ASan "
                                 "already finds out-of-bounds accesses to device memory)");
#endif
  }
  return on;
}

void *memcheck_alloc(size_t size, const char *site) {
  const size_t page = page_size(), padded = (size + 255) / 256 * 256, pages = (padded + page - 1) / page * page;
  const size_t map_size = page + pages + page;
  void *m = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  char *map = static_cast<char *>(m);
  if (mprotect(map, page, PROT_NONE) != 0 || mprotect(map + page + pages, page, PROT_NONE) != 0)
    fatal("memcheck", "mprotect failed");
  if (table.empty()) install_handler();
  guarded g = {map, map_size, size, padded, ++allocated, {0}};
  snprintf(g.site, sizeof g.site, "%s", site);
  char *user = map + page + (pages - padded);
  memset(lead(g), PATTERN, (size_t)(user - lead(g)));
  memset(user + size, PATTERN, padded - size);
  table[user] = g;
  return user;
}

bool memcheck_free(void *p, const char *who) {
  auto it = table.find(static_cast<const char *>(p));
  if (it == table.end()) return false;
  verify_one(it->first, it->second, who);
  munmap(it->second.map, it->second.map_size);
  table.erase(it);
  return true;
}

void memcheck_verify(const char *who) {
  for (const auto &e : table) verify_one(e.first, e.second, who);
}

}  // namespace coconet_host
