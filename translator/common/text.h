// text.h: small helpers on C text and memory that every stage uses.
#ifndef COCONET_TEXT_H
#define COCONET_TEXT_H

#include <stdbool.h>
#include <stddef.h>

// The blanks of C source text.
#define TEXT_BLANKS " \t\n\r"

// A character of a C identifier: [A-Za-z0-9_].
bool text_ident_char(char c);
// "f.cu" of "dir/f.cu" ("?" for NULL), for messages naming a file.
const char *text_base_name(const char *path);
// Whether s is one C identifier (not empty, no leading digit).
bool text_is_identifier(const char *s);
// Whether C text spells name as a whole identifier outside comments and literals
// (in preprocessor lines and inactive #if branches too).
bool text_has_ident(const char *text, const char *name);
// Calls each(name, len, data) for every identifier of C text outside comments and literals
// (not a number), in order, until a call returns true; returns whether one did.
bool text_each_ident(const char *text, bool (*each)(const char *name, size_t len, void *data), void *data);
// in without any of the characters in drop, into out (which may be in; it
// holds strlen(in) + 1 bytes).
void text_drop(char *out, const char *in, const char *drop);
// in without any of the characters in drop (malloc'd).
char *text_without(const char *in, const char *drop);
// Generated code as a reviewer reads it: each line of text longer than width
// columns broken after a ", " between tokens (never in a string or character
// literal, a comment or a preprocessor line), the rest indented under the
// innermost open parenthesis or 4 past the line's indent; a line that is only
// a // comment is broken between words into // lines. A line with no ", "
// before column width breaks after the first one past it; lines that cannot be
// broken stay as they are. Returns a malloc'd copy.
char *text_wrap(const char *text, int width);
// The edit distance of two short words (insertions, deletions, substitutions;
// at most 31 characters of each are compared): for did-you-mean messages.
int text_distance(const char *a, const char *b);
// calloc that never returns NULL (running out of memory is an internal error),
// also for n == 0.
void *xcalloc(size_t n, size_t size);

// The position of identifier `name` as a whole word in text, or NULL.
const char *text_find_word(const char *text, const char *name);
// s without blanks (TEXT_BLANKS) at either end, in place; returns s.
char *text_trim(char *s);
// s without the parentheses around all of it ("((n*m))" -> "n*m"), in place (as it is when it
// holds a quote: a literal may hold a parenthesis); returns s.
char *text_unwrap(char *s);
// s on one line, in place: each line break and the blanks around it one space; returns s.
char *text_one_line(char *s);

// A growing C string: s is NULL until the first add, then always terminated (n bytes, room
// for cap).
typedef struct Text {
  char *s;
  size_t n, cap;
} Text;
void text_add(Text *t, const char *s);
void text_addn(Text *t, const char *s, size_t k);  // k bytes of s

#endif
