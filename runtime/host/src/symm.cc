// coconet host backend: symmetric memory over POSIX shared memory.
//
// ncclMemAlloc makes one segment per allocation, named
// /coconet-host.<pid>.<n>, and maps it; ncclCommWindowRegister exchanges the
// segment names and offsets of a window and maps every peer's segment, so that
// coconet_host_peer_ptr can hand out a peer's address of the same window.
// The names are unlinked by ncclMemFree, at exit, and before a fatal error;
// a rank killed from outside can leave /dev/shm/coconet-host.* behind.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host.h"

namespace coconet_host {

namespace {

// One ncclMemAlloc allocation of this process.
struct segment {
  char *base;
  size_t size;
  char name[64];  // empty once unlinked
};

std::vector<segment> segments;
unsigned long long segment_counter;

// What a rank tells the others about its part of a window.
struct window_info {
  char name[64];
  unsigned long long offset;        // of the window in the segment
  unsigned long long size;          // of the window
  unsigned long long segment_size;  // of the whole segment
};

segment *find_segment(const void *p, size_t size) {
  const char *c = static_cast<const char *>(p);
  for (segment &s : segments)
    if (c >= s.base && c + size <= s.base + s.size) return &s;
  return nullptr;
}

void unmap_peers(ncclWindow_vidmem *w) {
  for (size_t r = 0; r < w->maps.size(); ++r)
    if (w->maps[r]) munmap(w->maps[r], w->map_sizes[r]);
}

}  // namespace

void symm_cleanup(void) {
  for (segment &s : segments)
    if (s.name[0]) {
      shm_unlink(s.name);
      s.name[0] = '\0';
    }
}

void windows_release(ncclComm_t comm) {
  for (ncclWindow_vidmem *w : comm->windows) {
    unmap_peers(w);
    delete w;
  }
  comm->windows.clear();
}

}  // namespace coconet_host

using namespace coconet_host;

ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (!ptr || !size) return nccl_error(ncclInvalidArgument, "ncclMemAlloc: NULL pointer or zero size");
  if (segments.empty()) atexit(symm_cleanup);
  segment s = {};
  s.size = (size + NCCL_WIN_REQUIRED_ALIGNMENT - 1) / NCCL_WIN_REQUIRED_ALIGNMENT * NCCL_WIN_REQUIRED_ALIGNMENT;
  snprintf(s.name, sizeof s.name, "/coconet-host.%d.%llu", (int)getpid(), segment_counter++);
  int fd = shm_open(s.name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Only a process with this pid names segments so: this one is left by a
    // dead process (killed before it could unlink it) that had the same pid.
    COCONET_WARN(SUB_SYMM, "ncclMemAlloc: removing %s, left by an earlier process with this pid", s.name);
    shm_unlink(s.name);
    fd = shm_open(s.name, O_CREAT | O_EXCL | O_RDWR, 0600);
  }
  if (fd < 0) return nccl_error(ncclSystemError, "ncclMemAlloc: shm_open(%s): %s", s.name, strerror(errno));
  if (ftruncate(fd, (off_t)s.size) != 0) {
    close(fd);
    shm_unlink(s.name);
    return nccl_error(ncclSystemError, "ncclMemAlloc: cannot size %s to %zu bytes (is /dev/shm large enough?)",
                      s.name, s.size);
  }
  void *base = mmap(nullptr, s.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    shm_unlink(s.name);
    return nccl_error(ncclSystemError, "ncclMemAlloc: cannot map %s: %s", s.name, strerror(errno));
  }
  s.base = static_cast<char *>(base);
  memset(s.base, 0xff, s.size);
  segments.push_back(s);
  *ptr = base;
  COCONET_INFO(SUB_SYMM, "ncclMemAlloc: %zu bytes at %p (%s)", s.size, base, s.name);
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void *ptr) {
  for (size_t i = 0; i < segments.size(); ++i) {
    segment &s = segments[i];
    if (s.base != ptr) continue;
    munmap(s.base, s.size);
    if (s.name[0]) shm_unlink(s.name);
    segments.erase(segments.begin() + (long)i);
    return ncclSuccess;
  }
  return nccl_error(ncclInvalidArgument, "ncclMemFree: %p was not returned by ncclMemAlloc", ptr);
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags) {
  (void)winFlags;
  if (!comm || !win) return nccl_error(ncclInvalidArgument, "ncclCommWindowRegister: NULL argument");
  const segment *s = find_segment(buff, size);
  if (!s)
    fatal("ncclCommWindowRegister",
          "[%p, +%zu) is not inside an ncclMemAlloc allocation; the host backend shares only ncclMemAlloc memory",
          buff, size);
  window_info mine = {};
  snprintf(mine.name, sizeof mine.name, "%s", s->name);
  mine.offset = (unsigned long long)(static_cast<char *>(buff) - s->base);
  mine.size = size;
  mine.segment_size = s->size;
  std::vector<window_info> all(comm->nranks);
  COCONET_MPI_CHECK(MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all.data(), (int)sizeof mine, MPI_BYTE,
                                  comm->mpi));
  ncclWindow_vidmem *w = new ncclWindow_vidmem();
  w->base = static_cast<char *>(buff);
  w->size = size;
  w->peers.resize(comm->nranks);
  w->peer_sizes.resize(comm->nranks);
  w->maps.resize(comm->nranks);
  w->map_sizes.resize(comm->nranks);
  lsa_domain(comm, &w->lsa_base, &w->lsa_size);
  for (int r = 0; r < comm->nranks; ++r) {
    w->peer_sizes[r] = all[r].size;
    if (r == comm->rank) {
      w->peers[r] = w->base;
      continue;
    }
    const int fd = shm_open(all[r].name, O_RDWR, 0);
    if (fd < 0)
      fatal("ncclCommWindowRegister", "cannot open rank %d's segment %s: %s", r, all[r].name, strerror(errno));
    void *map = mmap(nullptr, all[r].segment_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) fatal("ncclCommWindowRegister", "cannot map rank %d's segment %s", r, all[r].name);
    w->maps[r] = map;
    w->map_sizes[r] = all[r].segment_size;
    w->peers[r] = static_cast<char *>(map) + all[r].offset;
  }
  comm->windows.push_back(w);
  *win = w;
  COCONET_INFO(SUB_SYMM, "ncclCommWindowRegister: comm %p window %p, %zu bytes at %p", (void *)comm, (void *)w, size,
               buff);
  return ncclSuccess;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  if (!comm) return nccl_error(ncclInvalidArgument, "ncclCommWindowDeregister: comm is NULL");
  for (size_t i = 0; i < comm->windows.size(); ++i) {
    if (comm->windows[i] != win) continue;
    unmap_peers(win);
    delete win;
    comm->windows.erase(comm->windows.begin() + (long)i);
    return ncclSuccess;
  }
  return nccl_error(ncclInvalidArgument, "ncclCommWindowDeregister: window %p is not registered on comm %p",
                    (void *)win, (void *)comm);
}

extern "C" void *coconet_host_peer_ptr(ncclComm_t comm, void *local_ptr, int peer) {
  if (!comm) fatal("coconet_host_peer_ptr", "comm is NULL");
  if (peer < 0 || peer >= comm->nranks)
    fatal("coconet_host_peer_ptr", "peer %d is not a rank of a %d-rank communicator", peer, comm->nranks);
  const char *p = static_cast<const char *>(local_ptr);
  for (const ncclWindow_vidmem *w : comm->windows) {
    if (p < w->base || p >= w->base + w->size) continue;
    const size_t offset = (size_t)(p - w->base);
    if (offset >= w->peer_sizes[peer])
      fatal("coconet_host_peer_ptr", "offset %zu is beyond rank %d's %zu-byte window", offset, peer,
            w->peer_sizes[peer]);
    return w->peers[peer] + offset;
  }
  fatal("coconet_host_peer_ptr", "%p is not inside a window registered on comm %p", local_ptr, (void *)comm);
}
