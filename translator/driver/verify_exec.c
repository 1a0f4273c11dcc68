// verify_exec.c: --verify[=N], translation validation by running the
// user's own code. The IR interpreter (--verify=ir) checks the transformation
// of what extraction saw; this checks the extraction too. For each region a
// harness program is generated that holds the whole file translated for the
// host backend and, appended, one function that
//   - declares the region's free variables (the locals and parameters of the
//     enclosing function that the region reads, and what their initial values
//     are computed from) with the types libclang gives them;
//   - runs, for 3 random inputs, the region as written (its text, launches
//     lowered for the host backend) and as scheduled (the generated block),
//     both as lambdas over those variables, each time from the same state:
//     buffers filled at random (the same on every rank where the layout is
//     replicated or shard, different where it is local), sizes and scalars
//     drawn once per input, handles (communicator, streams, events, cuBLAS)
//     made by the harness;
//   - compares every buffer after the two runs (shard buffers on this rank's
//     slice and the tail; scratch buffers not at all) and every host variable
//     of arithmetic type.
// The harness is built with coconet-cc --target=host and run under mpirun
// for 1..N ranks; its report (runtime/host/include/coconet_verify.h) is read
// back and summed up like --verify=ir's.
#include "verify_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

//
// Building and running
//

static char *self_dir(void) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return strdup(".");
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  if (slash) *slash = '\0';
  return strdup(buf);
}

// Quote a word for the shell.
static void shell_word(FILE *f, const char *w) {
  fputc('\'', f);
  for (; *w; w++) {
    if (*w == '\'') fputs("'\\''", f);
    else fputc(*w, f);
  }
  fputs("' ", f);
}

// Run a shell command; its output (stdout and stderr) into *out (malloc'd). Returns the exit status.
static int run(const char *cmd, char **out) {
  char *full = xasprintf("%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  free(full);
  if (!p) {
    *out = strdup(strerror(errno));
    return -1;
  }
  size_t len = 0, cap = 4096;
  *out = malloc(cap);
  if (!*out) COCONET_BUG("out of memory");
  size_t got;
  while ((got = fread(*out + len, 1, cap - len - 1, p)) > 0) {
    len += got;
    if (cap - len < 1024) {
      cap *= 2;
      *out = realloc(*out, cap);
      if (!*out) COCONET_BUG("out of memory");
    }
  }
  (*out)[len] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void tail_lines(const char *text, int max) {
  int lines = 0;
  const char *p = text + strlen(text);
  while (p > text && lines <= max) {
    p--;
    if (*p == '\n') lines++;
  }
  fprintf(stderr, "%s%s", p == text ? "" : "...\n", p == text ? p : p + 1);
}

// A compiler's output, first errors first: its lines that say "error" (at
// most max), then how many more lines it said; all of it when no line does.
static void compiler_errors(const char *text, int max) {
  int shown = 0, rest = 0;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char *line = strndup(p, len);
    if (!line) COCONET_BUG("out of memory");
    // The linker's "undefined reference to" lines name what is missing ("ld returned 1" does not).
    if (strstr(line, "error") || strstr(line, "undefined reference") || strstr(line, "multiple definition")) {
      if (shown++ < max) fprintf(stderr, "%s\n", line);
      else rest++;
    } else {
      rest++;
    }
    free(line);
    p = e ? e + 1 : p + len;
  }
  if (!shown) {
    tail_lines(text, 25);
    return;
  }
  if (rest) fprintf(stderr, "... (and %d more lines of the compiler's output)\n", rest);
}

// The flags the user gave that the harness's compiler needs: -I, -D, -U,
// -isystem, -include, and what links (-fopenmp, -L, -l).
static void user_flags(FILE *f, const Options *o) {
  for (int i = 0; i < o->nclang_args; i++) {
    const char *a = o->clang_args[i];
    bool sep = (strcmp(a, "-I") == 0 || strcmp(a, "-D") == 0 || strcmp(a, "-U") == 0 || strcmp(a, "-isystem") == 0 ||
                strcmp(a, "-include") == 0) && i + 1 < o->nclang_args;
    if (sep) {
      shell_word(f, a);
      shell_word(f, o->clang_args[++i]);
    } else if (strncmp(a, "-I", 2) == 0 || strncmp(a, "-D", 2) == 0 || strncmp(a, "-U", 2) == 0 ||
               strncmp(a, "-isystem", 8) == 0 || strcmp(a, "-fopenmp") == 0 || (strncmp(a, "-L", 2) == 0 && a[2]) ||
               (strncmp(a, "-l", 2) == 0 && a[2])) {
      shell_word(f, a);
    }
  }
}

// The first mismatch a report names for region `index`, copied into first (kept when already set).
static void read_mismatch(const char *text, int index, char *first, size_t cap) {
  char key[64];
  snprintf(key, sizeof key, "coconet-verify: region %d mismatch ", index);
  const char *m = strstr(text, key);
  if (!m || first[0]) return;
  m += strlen(key);
  const char *nl = strchr(m, '\n');
  snprintf(first, cap, "%.*s", (int)(nl ? (size_t)(nl - m) : strlen(m)), m);
}

static double buffer_ulp(const char *text, int index, const char *tname) {
  double best = -1;
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    char name[256];
    int region, type;
    double ulp;
    if (sscanf(line, "coconet-verify: region %d buffer %255s %d %lf", &region, name, &type, &ulp) == 4 &&
        region == index && strcmp(name, tname) == 0 && ulp > best)
      best = ulp;
    line = nl ? nl + 1 : NULL;
  }
  return best;
}


// The runs of region `index` in a report that took the path the schedule is for (-1: not counted).
static long paths_taken(const char *text, int index) {
  char key[64];
  snprintf(key, sizeof key, "coconet-verify: region %d paths ", index);
  const char *at = text ? strstr(text, key) : NULL;
  return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

// Region v's lines; 1 when it was not checked after all (no run took the path its schedule is for).
static int report_region(const Verified *v, char **reports, int ran) {
  const IrRegion *r = v->r;
  for (const IrTensor *t = r->tensors; t; t = t->next) {
    double worst = -1;
    for (int np = 1; np <= ran; np++)
      if (reports[np]) {
        double u = buffer_ulp(reports[np], v->index, t->name);
        if (u > worst) worst = u;
      }
    const char *kind = t->scratch ? "scratch" : t->shard ? "shard" : t->written ? "output" : "input";
    if (t->scratch)
      printf("verify %s: scratch '%s' (%s): not compared\n", r->name, t->name, ir_type_name(t->type));
    else
      printf("verify %s: %s '%s' (%s): max %.0f ULP apart over 1..%d ranks x %d inputs%s\n", r->name, kind,
             t->name, ir_type_name(t->type), worst < 0 ? 0 : worst, ran, TRIALS,
             t->shard ? " (this rank's slice and the tail)" : "");
  }
  // Buffers the harness gave to pointers the IR does not know.
  char key[64];
  snprintf(key, sizeof key, "coconet-verify: region %d buffer ", v->index);
  for (const char *line = reports[ran] ? strstr(reports[ran], key) : NULL; line; line = strstr(line + 1, key)) {
    char name[256];
    if (sscanf(line + strlen(key), "%255s", name) != 1 || ir_tensor_find(r, name)) continue;
    double worst = 0;
    for (int np = 1; np <= ran; np++) {
      double u = reports[np] ? buffer_ulp(reports[np], v->index, name) : 0;
      if (u > worst) worst = u;
    }
    printf("verify %s: memory '%s' (used where coconet does not look): max %.0f ULP apart over 1..%d ranks x %d "
           "inputs\n", r->name, name, worst, ran, TRIALS);
  }
  long taken = -1;
  for (int np = 1; np <= ran; np++) {
    long t = reports[np] ? paths_taken(reports[np], v->index) : -1;
    if (t >= 0) taken = (taken < 0 ? 0 : taken) + t;
  }
  for (const IrAssume *a = r->assumes; a; a = a->next)
    if (a->guard)
      printf("verify %s: run with %s (the region runs %s only then: the schedule's branch, taken in %ld of %d runs; "
             "the others run the region as written)\n", r->name, a->test, a->kernel, taken < 0 ? 0 : taken,
             ran * TRIALS);
    else if (a->launcher)
      printf("verify %s: run with %s ('%s' launches '%s' then: the schedule's branch, taken in %ld of %d runs; the "
             "others run the region as written)\n", r->name, a->test, a->launcher, a->kernel, taken < 0 ? 0 : taken,
             ran * TRIALS);
    else if (a->divisor)
      printf("verify %s: run with %s (kernel '%s' reads its rows %d elements at a time: the schedule's branch, taken "
             "in %ld of %d runs; the others run the region as written)\n", r->name, a->test, a->kernel, a->divisor,
             taken < 0 ? 0 : taken, ran * TRIALS);
    else
      printf("verify %s: run with %s (the schedule's branch; the other runs the region as written)\n", r->name,
             a->test);
  if (v->stopped) printf("verify %s: NOT CHECKED: %s\n", r->name, v->first);
  else if (taken == 0 && !v->failed) {
    printf("verify %s: NOT CHECKED: no input took the path the schedule is for (its conditions never held for the "
           "sizes the harness chose, the numbers they compare with included): the region ran as written both "
           "times\n", r->name);
    return 1;
  }
  else if (v->failed) printf("verify %s: MISMATCH: %s\n", r->name, v->first);
  else if (v->reassociated)
    printf("verify %s: ok (the region as written and as scheduled agree within %ld ULP, or where a sum in "
           "another order rounds differently within 1e-5 (f32), 1e-12 (f64) of the buffer's largest magnitude)\n",
           r->name, v->ulp);
  else printf("verify %s: ok (the region as written and as scheduled agree within %ld ULP)\n", r->name, v->ulp);
  return 0;
}

static char *build_command(const Options *o, const Frontend *fe, const char *src, const char *exe) {
  char *dir = strdup(fe->src.path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else strcpy(dir, ".");
  char *bin = self_dir();
  char *cc = getenv("COCONET_VERIFY_CC") ? strdup(getenv("COCONET_VERIFY_CC")) : xasprintf("%s/coconet-cc", bin);
  char *inc = xasprintf("-I%s", dir);
  char *cmd = NULL;
  size_t len = 0;
  FILE *c = open_memstream(&cmd, &len);
  if (!c) COCONET_BUG("out of memory");
  shell_word(c, cc);
  // -g0: coconet-cc's default debug information is a third of a harness's build time, and no
  // one steps through a harness (a failure prints its output).
  fputs("--target=host -O1 -g0 -Wno-unused ", c);
  shell_word(c, inc);
  user_flags(c, o);
  shell_word(c, src);
  fputs("-o ", c);
  shell_word(c, exe);
  fclose(c);
  free(inc);
  free(cc);
  free(bin);
  free(dir);
  return cmd;
}

static char *mpirun_command(void) {
  const char *mpirun = getenv("COCONET_VERIFY_MPIRUN");
  return mpirun ? strdup(mpirun) : xasprintf("mpirun --oversubscribe%s", geteuid() == 0 ? " --allow-run-as-root" : "");
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// What the commands building and running the harness depend on besides its
// bytes: the build command less the temporary directory, how mpirun is run, and
// the COCONET_ variables of the environment (the host runtime reads some) but
// those naming the test run's own files and COCONET_VERIFY_CC, which the build
// command names already (the sanitizer run sets it to the plain build's
// coconet-cc, the one the plain run finds beside itself: their keys agree).
static char *commands_key(const Options *o, const char *build, const char *dir, bool fused) {
  static const char *const own[] = {"COCONET_VERIFY_CACHE=", "COCONET_CACHE=", "COCONET_CACHE_KEEP=",
                                    "COCONET_TEST_RESULTS=", "COCONET_COLOR=", "COCONET_VERIFY_CC="};
  extern char **environ;
  char *key = NULL;
  size_t len = 0;
  FILE *k = open_memstream(&key, &len);
  if (!k) COCONET_BUG("out of memory");
  size_t dl = strlen(dir);
  for (const char *p = build; *p;) {
    if (!strncmp(p, dir, dl)) {
      fputs("<tmp>", k);
      p += dl;
    } else {
      fputc(*p++, k);
    }
  }
  char *mpirun = mpirun_command();
  const char *timeout = getenv("COCONET_VERIFY_TIMEOUT");
  fprintf(k, "\n%s\n%s\n%d %d\n", mpirun, timeout ? timeout : "", o->verify_exec, fused);
  free(mpirun);
  int n = 0;
  for (char **e = environ; *e; e++) n++;
  char **vars = calloc((size_t)n + 1, sizeof *vars);
  if (!vars) COCONET_BUG("out of memory");
  int m = 0;
  for (char **e = environ; *e; e++) {
    bool skip = strncmp(*e, "COCONET_", 8) != 0;
    for (size_t i = 0; i < sizeof own / sizeof *own && !skip; i++) skip = !strncmp(*e, own[i], strlen(own[i]));
    if (!skip) vars[m++] = *e;
  }
  qsort(vars, (size_t)m, sizeof *vars, by_name);
  for (int i = 0; i < m; i++) fprintf(k, "%s\n", vars[i]);
  free(vars);
  fclose(k);
  return key;
}

// Run the harness for 1..N ranks; *ran gets the largest count that ran. With
// fused kernels (which the harness's symmetric buffers let run), N ranks run
// once more in LSA domains of one rank, on the NCCL path; their mismatches
// count, their ULP figures are not reported. 0, or 1 after a failure (reported).
static int run_harness(const Options *o, const char *exe, Verified *vs, int nv, char **reports, int *ran, bool fused,
                       VerifyCache *vc) {
  const char *timeout = getenv("COCONET_VERIFY_TIMEOUT") ? getenv("COCONET_VERIFY_TIMEOUT") : "300";
  char *mpirun = mpirun_command();
  int status = 0;
  *ran = 0;
  // The harness runs on this machine: Open MPI's ob1 messaging over shared memory. Its default
  // also probes network transports (the cm layer), 0.2 s of every run. Other MPIs ignore this.
  setenv("OMPI_MCA_pml", "ob1", 0);
  int last = o->verify_exec + (fused && o->verify_exec > 1);
  for (int pass = 1; pass <= last && status == 0; pass++) {
    bool nccl_path = pass > o->verify_exec;
    int np = nccl_path ? o->verify_exec : pass;
    char *cmd = xasprintf("%stimeout %s %s -np %d '%s'", nccl_path ? "COCONET_HOST_LSA_SIZE=1 " : "", timeout,
                          mpirun, np, exe);
    char *out = NULL;
    int rc = vcache_run(vc, cmd, &out, run);
    if (rc != 0 && rc != 124 && !strstr(out, "coconet-verify:") && !strstr(out, "coconet-host")) {
      // Nothing of the harness's: mpirun itself failed (it does, now and then, on a loaded machine).
      fprintf(stderr, "coconet: note: --verify: mpirun exited %d before the harness said anything with %d ranks; "
              "running it once more\n", rc, np);
      free(out);
      rc = vcache_run(vc, cmd, &out, run);
    }
    free(cmd);
    if (nccl_path) {
      free(reports[0]);
      reports[0] = out;  // kept for the messages below, not for the ULP figures
    } else {
      *ran = np;
      reports[np] = out;
    }
    bool any = false, stopped = false;
    for (int i = 0; i < nv; i++) {
      if (vs[i].index < 0) continue;
      read_mismatch(out, vs[i].index, vs[i].first, sizeof vs[i].first);
      vs[i].failed |= vs[i].first[0] != '\0';
      any |= vs[i].failed;
      char done[64];
      snprintf(done, sizeof done, "coconet-verify: region %d done %d %d ", vs[i].index, np, TRIALS);
      if (!strstr(out, done) && !vs[i].failed) {
        snprintf(vs[i].first, sizeof vs[i].first, "the harness stopped before the region finished with %d ranks%s (a "
                 "crash, a hang or the time limit)", np, nccl_path ? " on the NCCL path" : "");
        vs[i].failed = vs[i].stopped = stopped = true;
        status = 1;
      }
    }
    if ((rc != 0 && rc != 1) || stopped) {
      printf("verify: the harness failed with %d ranks%s (exit %d%s); it said:\n", np,
           nccl_path ? " on the NCCL path (COCONET_HOST_LSA_SIZE=1)" : "", rc,
           rc == 124 ? ": timed out, see COCONET_VERIFY_TIMEOUT" : "");
      fflush(stdout);
      tail_lines(out, 25);
      status = 1;
    }
    if (any) status = 1;
  }
  free(mpirun);
  return status;
}

int verify_exec(const Options *o, const Frontend *fe, const VerifyItem *items, int nitems, const char *host_text) {
  const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char *dir = xasprintf("%s/coconet-verify-XXXXXX", tmp);  // mkdtemp fills in the X's
  if (!mkdtemp(dir)) {
    fprintf(stderr, "coconet: error: --verify: cannot make a directory in '%s': %s\n", tmp, strerror(errno));
    free(dir);
    return 1;
  }
  char *src = xasprintf("%s/harness.cpp", dir), *exe = xasprintf("%s/harness", dir);
  FILE *f = fopen(src, "w");
  if (!f) COCONET_BUG("cannot write '%s': %s", src, strerror(errno));
  // A fused kernel runs only on symmetric buffers: the harness allocates them so, and
  // run_harness also runs the NCCL path (ranks in LSA domains of one).
  bool fused = false;
  for (int k = 0; k < nitems; k++) fused |= items[k].scheduled && strstr(items[k].scheduled, "coconet_fused_ready(");
  if (fused) fputs("#define COCONET_VERIFY_SYMMETRIC 1\n", f);
  fputs("#include <coconet_verify.h>\n#include <type_traits>\n#define main coconet_verify_user_main\n", f);
  fputs(host_text, f);
  harness_write_globals(f, fe);
  Edit *lowered = NULL;
  int status = host_lower(fe, &lowered) ? 1 : 0;
  int nv = nitems, n = 0;
  Verified *vs = calloc((size_t)nv + 1, sizeof *vs);
  if (!vs) COCONET_BUG("out of memory");
  for (int k = 0; k < nv; k++) vs[k].index = -1;  // a region after one the harness cannot run is not written
  for (int i = 0; i < nitems && status == 0; i++) {
    const IrRegion *r = items[i].r;
    vs[i] = (Verified){.r = r, .index = n, .ulp = r->overlap_chunks > 1 ? 16 : 0,  // chunked GEMMs may round differently
                       .reassociated = ir_sched_reassociates(r)};
    if (harness_write_region(f, items[i].fe, items[i].fr, r, lowered, items[i].scheduled, &vs[i])) {
      vs[i].index = -1;
      status = 1;
    } else {
      n++;
    }
  }
  fputs("\n#undef main\nint main(int argc, char **argv) {\n  coconet_verify_ctx coconet_verify_cx;\n"
        "  coconet_verify_begin(&argc, &argv, &coconet_verify_cx);\n  long coconet_verify_mismatches = 0;\n", f);
  for (int k = 0; k < n; k++) fprintf(f, "  coconet_verify_mismatches += coconet_verify_region_%d(coconet_verify_cx);\n", k);
  fputs("  return coconet_verify_end(&coconet_verify_cx, coconet_verify_mismatches);\n}\n", f);
  if (fclose(f) != 0) COCONET_BUG("cannot write '%s'", src);
  edits_free(lowered);
  char *reports[65] = {0};
  int ran = 0;
  if (n > 0) {
    char *cmd = build_command(o, fe, src, exe), *out = NULL, *key = commands_key(o, cmd, dir, fused);
    VerifyCache *vc = vcache_open(src, key);
    if (vcache_run(vc, cmd, &out, run) != 0) {
      fprintf(stderr, "coconet: error: --verify: the harness does not build (%s%s); the compiler said:\n", src,
              getenv("COCONET_VERIFY_KEEP") ? "" : ", kept with COCONET_VERIFY_KEEP=1");
      compiler_errors(out, 12);
      status = 1;
    } else if (run_harness(o, exe, vs, nv, reports, &ran, fused, vc)) {
      status = 1;
    }
    vcache_close(vc);
    free(out);
    free(key);
    free(cmd);
  }
  for (int k = 0; k < nv; k++)
    if (vs[k].index >= 0 && ran > 0 && report_region(&vs[k], reports, ran)) status = 1;
  fflush(stdout);
  for (int k = 0; k <= 64; k++) free(reports[k]);
  free(vs);
  if (!getenv("COCONET_VERIFY_KEEP")) {
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "coconet: warning: --verify: cannot remove '%s'\n", dir);
    free(cmd);
  }
  free(src);
  free(exe);
  free(dir);
  return status;
}
