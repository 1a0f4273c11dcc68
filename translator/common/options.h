// options.h: the command line as the stages read it (driver/main.c parses
// it): the input, the output, the target, the checks asked for.
#ifndef COCONET_OPTIONS_H
#define COCONET_OPTIONS_H

#include <stdbool.h>

#define COCONET_VERSION "0.1.0"


typedef enum { TARGET_CUDA, TARGET_HOST } Target;
typedef enum { DUMP_NONE, DUMP_IR, DUMP_JSON } DumpKind;

typedef struct Options {
  const char *input;           // the .cu file
  const char *output;          // -o FILE; NULL or "-" = stdout
  bool in_place;               // -i
  bool diff;                   // --diff
  bool check;                  // --check: analyze, write nothing
  Target target;               // --target=cuda|host
  DumpKind dump;               // --dump=ir|json
  const char *dot_file;        // --emit-dot=FILE
  bool explain;                // --explain
  int verify_ranks;            // --verify=ir[:N]: the IR interpreter for 1..N ranks; 0 = off
  int verify_exec;             // --verify[=N]: run the user's code for 1..N ranks; 0 = off
  bool schedule_none;          // --schedule=none
  const char *model_file;      // --model=FILE (cost model parameters)
  const char *compdb_dir;      // -p DIR
  const char *depfile;         // -MF FILE (with -MD)
  bool make_depfile;           // -MD
  bool line_directives;        // --line-directives
  const char *const *clang_args;  // everything after `--`
  int nclang_args;
} Options;

#endif
