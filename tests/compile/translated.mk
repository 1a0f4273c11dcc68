# tests/compile/translated.mk: what coconet generates compiles with nvcc 13 for
# sm_80 and sm_90, with no warning from nvcc or the host compiler. Each example
# is translated and linked into a program (NCCL, cuBLAS, MPI) for both; the golden
# codegen inputs (one schedule feature each, no main) and the corpus of
# real-style kernels (tests/corpus) are translated and compiled to objects for
# sm_90 (generated code has no per-architecture path: the examples' sm_80 build
# compiles the runtime's headers for it); the corpus's headers
# (tests/corpus/Inputs) are on both include paths. Outputs:
# $(BUILD)/compile/translated/NAME.cu, NAME (or NAME.o).

TRANSLATED_DIR      := $(BUILD)/compile/translated
TRANSLATED_INPUTS   := $(addprefix tests/golden/codegen/Inputs/,split.cu fusion.cu fuse.cu overlap.cu tail.cu) \
                       $(wildcard tests/corpus/*.cu)
TRANSLATED_NVCCFLAGS = $(EXAMPLE_NVCCFLAGS) -Werror all-warnings -Xcompiler -Werror -I runtime/include \
                      -I tests/corpus/Inputs
TRANSLATED_SM90     := -gencode arch=compute_90,code=sm_90
TRANSLATED_BINS     := $(addprefix $(TRANSLATED_DIR)/,$(EXAMPLE_NAMES))
TRANSLATED_OBJS     := $(addprefix $(TRANSLATED_DIR)/,$(notdir $(TRANSLATED_INPUTS:.cu=.o)))

# $1 = source: translate it (with MPI's include flags for the examples).
define TRANSLATED_SOURCE_RULE
$(TRANSLATED_DIR)/$(notdir $1): $1 $(BIN)/coconet | $(TRANSLATED_DIR)/
	$(BIN)/coconet $$< -o $$@ -- $(shell mpicxx --showme:compile 2>/dev/null) -Itests/corpus/Inputs
endef
$(foreach s,$(EXAMPLE_SRCS) $(TRANSLATED_INPUTS),$(eval $(call TRANSLATED_SOURCE_RULE,$s)))

$(TRANSLATED_DIR)/%: $(TRANSLATED_DIR)/%.cu runtime/include/coconet.h
	$(NVCC) $(TRANSLATED_NVCCFLAGS) -gencode arch=compute_80,code=sm_80 $(TRANSLATED_SM90) $< -o $@ $(EXAMPLE_LIBS)

$(TRANSLATED_DIR)/%.o: $(TRANSLATED_DIR)/%.cu runtime/include/coconet.h
	$(NVCC) $(TRANSLATED_NVCCFLAGS) $(TRANSLATED_SM90) -c $< -o $@

TEST_TARGETS += test-compile-translated
TEST_COST += 460:test-compile-translated
.PHONY: test-compile-translated
test-compile-translated:
	@$(RECORD) compile-translated $(MAKE) --no-print-directory $(TRANSLATED_BINS) $(TRANSLATED_OBJS)
