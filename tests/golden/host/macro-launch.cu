// A launch spelled inside a macro's body cannot be rewritten in place for
// --target=host: an error that says so, exit 1, nothing written.
// RUN: rm -f %t.out
// RUN: %expect 1 %coconet --target=host %s -o %t.out 2>&1 | %FileCheck %s
// RUN: test ! -e %t.out
__global__ void k(float *x) { x[0] = 1; }
#define LAUNCH_K(x) k<<<1, 1>>>(x)

void f(float *x) {
  LAUNCH_K(x);
}
// CHECK: macro-launch.cu:10:3: error: --target=host: cannot lower this kernel launch: its '<<<' or '>>>' is not written in this file (a launch inside a macro?); write the launch out
// CHECK-NEXT: {{^  LAUNCH_K\(x\);$}}
// CHECK-NEXT: {{^  \^$}}
