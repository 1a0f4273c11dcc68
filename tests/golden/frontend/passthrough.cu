// A file without a coconet pragma is copied byte for byte, without libclang,
// even when comments and strings mention "#pragma coconet region split".
// RUN: %coconet %s -o %t.out
// RUN: cmp %s %t.out
// RUN: %coconet %s | cmp %s -
// RUN: cp %s %t.inplace && touch -d '2001-01-01' %t.inplace
// RUN: %coconet -i %t.inplace && cmp %s %t.inplace
// RUN: test "$(stat -c %%Y %t.inplace)" = "$(date -d 2001-01-01 +%%s)"
// RUN: %coconet --check %s | %FileCheck %s
// RUN: %coconet --diff %s | count 0
// The next line would not even parse: libclang never sees this file.
this is not C++ at all {{{
/* #pragma coconet region split */
const char *s = "#pragma coconet region";
const char *r = R"x(
#pragma coconet region )" still raw
)x";
#define X 1 /*
#pragma coconet region
*/
// #pragma coconet region split \
#pragma coconet region
int digits = 1'000'000;
// CHECK: passthrough.cu: 0 regions
