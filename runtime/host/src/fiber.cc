// coconet host backend: fibers, the execution contexts of COCONET_HOST_SYNC
// threads.  A fiber has its own mmap'ed stack with a guard page below it; the
// switch saves the callee-saved registers on the current stack and swaps stack
// pointers (x86-64 System V).  Under AddressSanitizer every switch is
// announced with __sanitizer_start/finish_switch_fiber.
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host.h"

#ifdef COCONET_HOST_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#error "the coconet host backend's fiber switch is written for x86-64"
#endif

// void coconet_host_fiber_switch(void **save_sp, void *next_sp):
// pushes rbp, rbx, r12-r15, stores rsp in *save_sp, loads next_sp, pops the
// same registers from there and returns into the other context.
extern "C" void coconet_host_fiber_switch(void **save_sp, void *next_sp);
__asm__(
    ".text\n"
    ".globl coconet_host_fiber_switch\n"
    ".type coconet_host_fiber_switch, @function\n"
    "coconet_host_fiber_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size coconet_host_fiber_switch, .-coconet_host_fiber_switch\n");

namespace coconet_host {

namespace {

std::vector<fiber> pool;
void *scheduler_sp;
#ifdef COCONET_HOST_ASAN
const void *scheduler_stack_bottom;
size_t scheduler_stack_size;
const size_t default_stack_kb = 1024;
#else
const size_t default_stack_kb = 256;
#endif

fiber new_fiber(size_t stack_size) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  void *base = mmap(NULL, stack_size + page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) fatal("kernel launch", "cannot map a %zu-byte fiber stack", stack_size);
  if (mprotect(base, page, PROT_NONE) != 0) fatal("kernel launch", "cannot protect a fiber stack's guard page");
  fiber f = {};
  f.stack = static_cast<char *>(base) + page;
  f.stack_size = stack_size;
  return f;
}

}  // namespace

fiber *fiber_pool(unsigned n) {
  if (pool.size() < n) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = (env_size("COCONET_HOST_STACK_KB", default_stack_kb) * 1024 + page - 1) / page * page;
    while (pool.size() < n) pool.push_back(new_fiber(bytes));
    COCONET_INFO(SUB_LAUNCH, "fiber pool: %zu stacks of %zu KiB", pool.size(), bytes / 1024);
  }
  return pool.data();
}

void fiber_prepare(fiber *f, void (*entry)(void)) {
  const uintptr_t top = ((uintptr_t)(f->stack + f->stack_size)) & ~(uintptr_t)15;
  void **sp = reinterpret_cast<void **>(top);
  *--sp = nullptr;                          // entry's (never used) return address
  *--sp = reinterpret_cast<void *>(entry);  // where the first switch returns to
  for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp, rbx, r12-r15
  f->sp = sp;
}

void fiber_switch_in(fiber *f) {
#ifdef COCONET_HOST_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f->stack, f->stack_size);
#endif
  coconet_host_fiber_switch(&scheduler_sp, f->sp);
#ifdef COCONET_HOST_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void fiber_switch_out(fiber *f) {
#ifdef COCONET_HOST_ASAN
  __sanitizer_start_switch_fiber(&f->asan_fake, scheduler_stack_bottom, scheduler_stack_size);
#endif
  coconet_host_fiber_switch(&f->sp, scheduler_sp);
#ifdef COCONET_HOST_ASAN
  __sanitizer_finish_switch_fiber(f->asan_fake, &scheduler_stack_bottom, &scheduler_stack_size);
#endif
}

void fiber_exit(fiber *f) {
#ifdef COCONET_HOST_ASAN
  __sanitizer_start_switch_fiber(nullptr, scheduler_stack_bottom, scheduler_stack_size);
#endif
  coconet_host_fiber_switch(&f->sp, scheduler_sp);
  __builtin_unreachable();
}

void fiber_started(void) {
#ifdef COCONET_HOST_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &scheduler_stack_bottom, &scheduler_stack_size);
#endif
}

}  // namespace coconet_host
