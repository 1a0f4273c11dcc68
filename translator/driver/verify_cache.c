// verify_cache.c: COCONET_VERIFY_CACHE=DIR, one test run's memo of --verify's
// harness builds and runs. `make test` runs the golden suite twice at once, the
// plain translator and its sanitizer build; both write the same harness and
// build and run it the same way, and only the translator differs. The first to
// reach a harness builds and runs it and records each command's exit status
// and output in DIR; the other waits for that record and replays it. The key
// is the harness's bytes and the commands' text, so a harness that differs in
// one byte runs again. Nothing else is in the key (the user's headers, the
// host runtime): the directory is for one run of one tree, and the Makefile
// empties it when the run begins (the `run_levels` recipe).
#include "verify_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { WAIT_LIMIT_S = 900 };  // a holder slower than this: run it here as well

typedef struct Entry {
  int rc;
  char *out;
} Entry;

struct VerifyCache {
  char *path, *lock;          // the record and its lock, DIR/KEY and DIR/KEY.lock
  bool replay;                // the record was read: commands are answered from it
  bool held;                  // this process holds the lock: it runs and records
  Entry *entries;
  int n, cap, next;
};

static void hash_bytes(uint64_t h[2], const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h[0] = (h[0] ^ (unsigned char)p[i]) * 0x100000001b3ull;
    h[1] = (h[1] ^ (unsigned char)p[i]) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0;
  FILE *m = open_memstream(&buf, &cap);
  if (!m) COCONET_BUG("out of memory");
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, got, m);
  fclose(f);
  fclose(m);
  *len = cap;
  return buf;
}

static void add(VerifyCache *c, int rc, char *out) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 8;
    c->entries = realloc(c->entries, (size_t)c->cap * sizeof *c->entries);
    if (!c->entries) COCONET_BUG("out of memory");
  }
  c->entries[c->n++] = (Entry){rc, out};
}

// The record: per command, "RC LEN\n" and LEN bytes of output. false: none, or torn.
static bool load(VerifyCache *c) {
  size_t len;
  char *text = read_all(c->path, &len);
  if (!text) return false;
  const char *p = text, *end = text + len;
  while (p < end) {
    int rc;
    size_t n;
    int used;
    if (sscanf(p, "%d %zu\n%n", &rc, &n, &used) != 2 || (size_t)(end - p - used) < n) {
      free(text);
      return false;
    }
    p += used;
    char *out = malloc(n + 1);
    if (!out) COCONET_BUG("out of memory");
    memcpy(out, p, n);
    out[n] = '\0';
    add(c, rc, out);
    p += n;
  }
  free(text);
  return true;
}

// Take the lock: a file holding our pid, linked into place whole. 1: taken,
// 0: a live process holds it, -1: the cache cannot be used.
static int take_lock(const VerifyCache *c) {
  char *mine = xasprintf("%s.%ld", c->lock, (long)getpid());
  FILE *f = fopen(mine, "w");
  if (!f) {
    free(mine);
    return -1;
  }
  fprintf(f, "%ld\n", (long)getpid());
  fclose(f);
  int taken = link(mine, c->lock) == 0 ? 1 : errno == EEXIST ? 0 : -1;
  unlink(mine);
  free(mine);
  if (taken != 0) return taken;
  FILE *held = fopen(c->lock, "r");
  long pid = 0;
  if (held) {
    if (fscanf(held, "%ld", &pid) != 1) pid = 0;
    fclose(held);
  }
  if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {  // its holder died
    unlink(c->lock);
    return take_lock(c);
  }
  return 0;
}

VerifyCache *vcache_open(const char *harness, const char *commands) {
  const char *dir = getenv("COCONET_VERIFY_CACHE");
  if (!dir || !*dir) return NULL;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return NULL;
  size_t len;
  char *bytes = read_all(harness, &len);
  if (!bytes) return NULL;
  uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  hash_bytes(h, bytes, len);
  hash_bytes(h, commands, strlen(commands) + 1);
  free(bytes);
  VerifyCache *c = calloc(1, sizeof *c);
  if (!c) COCONET_BUG("out of memory");
  c->path = xasprintf("%s/%016llx%016llx", dir, (unsigned long long)h[0], (unsigned long long)h[1]);
  c->lock = xasprintf("%s.lock", c->path);
  for (time_t start = time(NULL); time(NULL) - start < WAIT_LIMIT_S;) {
    if (load(c)) {
      c->replay = true;
      return c;
    }
    int taken = take_lock(c);
    if (taken == 1) {
      c->held = true;
      return c;
    }
    if (taken < 0) break;
    usleep(100 * 1000);
  }
  vcache_close(c);
  return NULL;
}

int vcache_run(VerifyCache *c, const char *cmd, char **out, int (*run)(const char *, char **)) {
  if (!c) return run(cmd, out);
  if (c->replay) {
    if (c->next == c->n) COCONET_BUG("--verify's cache record %s ends before the command %s", c->path, cmd);
    Entry *e = &c->entries[c->next++];
    *out = strdup(e->out);
    if (!*out) COCONET_BUG("out of memory");
    return e->rc;
  }
  int rc = run(cmd, out);
  add(c, rc, strdup(*out));
  return rc;
}

void vcache_close(VerifyCache *c) {
  if (!c) return;
  if (c->held && c->n > 0) {
    char *tmp = xasprintf("%s.%ld.tmp", c->path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (f) {
      for (int i = 0; i < c->n; i++) fprintf(f, "%d %zu\n%s", c->entries[i].rc, strlen(c->entries[i].out),
                                             c->entries[i].out);
      if (fclose(f) == 0) rename(tmp, c->path);
      else unlink(tmp);
    }
    free(tmp);
  }
  if (c->held) unlink(c->lock);
  for (int i = 0; i < c->n; i++) free(c->entries[i].out);
  free(c->entries);
  free(c->path);
  free(c->lock);
  free(c);
}
