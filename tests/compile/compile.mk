# tests/compile: the examples and the no-harm inputs that have a main() compile and
# link with nvcc + NCCL + cuBLAS + MPI for sm_80 and sm_90, with no warning from nvcc
# or the host compiler; check_binaries.py then checks each binary holds both cubins
# and links libnccl. One nvcc run per program (both archs in one fat binary); a
# depfile per program, so only changed sources are recompiled.
#
# The annotated examples get EXAMPLE_PRAGMA_FLAGS (-Xcompiler -Wno-unknown-pragmas,
# see examples/examples.mk). The no-harm inputs do not: they only mention
# `#pragma coconet` in comments and strings, so g++ must see no pragma to warn about.

COMPILE_DIR      := $(BUILD)/compile
COMPILE_GENCODE  := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
COMPILE_STRICT   := -Werror all-warnings -Xcompiler -Werror
COMPILE_NVCCFLAGS = -O2 -std=c++17 -Xcompiler -Wall,-Wextra $(COMPILE_STRICT) $(COMPILE_GENCODE) $(EXAMPLE_MPI_CFLAGS)
NOHARM_MAIN_SRCS := $(shell grep -l '^int main' tests/noharm/inputs/*.cu 2>/dev/null)
COMPILE_BINS     := $(addprefix $(COMPILE_DIR)/,$(basename $(notdir $(EXAMPLE_SRCS) $(NOHARM_MAIN_SRCS))))

# $1 = source, $2 = extra nvcc flags.
define COMPILE_RULE
$(COMPILE_DIR)/$(basename $(notdir $1)): $1 | $(COMPILE_DIR)/
	$$(NVCC) $$(COMPILE_NVCCFLAGS) $2 -MMD -MP -MF $$@.d -MT $$@ $$< -o $$@ $$(EXAMPLE_LIBS)
endef
$(foreach s,$(EXAMPLE_SRCS),$(eval $(call COMPILE_RULE,$s,$(EXAMPLE_PRAGMA_FLAGS))))
$(foreach s,$(NOHARM_MAIN_SRCS),$(eval $(call COMPILE_RULE,$s,)))
-include $(COMPILE_BINS:=.d)

TEST_TARGETS += test-compile-examples
TEST_COST += 50:test-compile-examples
.PHONY: test-compile-examples
test-compile-examples:
	@$(RECORD) compile-examples $(SHELL) -c '$(MAKE) --no-print-directory $(COMPILE_BINS) && \
	  python3 tests/compile/check_binaries.py --arch 80 --arch 90 $(COMPILE_BINS)'
