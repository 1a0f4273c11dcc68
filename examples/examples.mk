# examples/: annotated CUDA + NCCL programs (each folder has a README.md).
#
# Other layers reuse the lists and flags below (golden, compile and end-to-end tests).
#   EXAMPLE_SRCS        the annotated sources
#   EXAMPLE_NAMES       their base names (adam row_linear adamw tp_norm lamb pipeline adamw_clip)
#   EXAMPLE_NVCCFLAGS   nvcc flags to compile an example (or its translation)
#   EXAMPLE_MPI_CFLAGS  MPI's include flags, in nvcc's syntax
#   EXAMPLE_LIBS        libraries to link: NCCL, cuBLAS, MPI
#
# `make examples-cuda` builds each original, untranslated, with nvcc into
# $(BUILD)/examples/cuda/NAME (EXAMPLE_ARCH, default -arch=sm_80, picks the GPU).
# It is not part of `all`: nvcc is slow and not every machine has it.

EXAMPLE_SRCS  := examples/adam/adam.cu examples/megatron/row_linear.cu examples/adamw/adamw.cu \
                 examples/tp_norm/tp_norm.cu examples/lamb/lamb.cu examples/pipeline/pipeline.cu \
                 examples/adamw_clip/adamw_clip.cu
EXAMPLE_NAMES := $(basename $(notdir $(EXAMPLE_SRCS)))

# mpicxx's flags rewritten for nvcc: -I becomes -isystem (Open MPI's C++ binding
# headers warn under -Wextra), -Wl,X becomes -Xlinker X, -L/-l/-D pass as they
# are, anything else (-pthread) goes to the host compiler.
EXAMPLE_COMMA := ,
example_nvcc_flag = $(strip \
  $(if $(filter -I%,$1),-isystem $(patsubst -I%,%,$1), \
  $(if $(filter -L% -l% -D%,$1),$1, \
  $(if $(filter -Wl$(EXAMPLE_COMMA)%,$1),-Xlinker $(patsubst -Wl$(EXAMPLE_COMMA)%,%,$1), \
  -Xcompiler $1))))
EXAMPLE_MPI_CFLAGS  := $(foreach f,$(shell mpicxx --showme:compile 2>/dev/null),$(call example_nvcc_flag,$f))
EXAMPLE_MPI_LDFLAGS := $(foreach f,$(shell mpicxx --showme:link 2>/dev/null),$(call example_nvcc_flag,$f))

# nvcc itself says nothing about `#pragma coconet`, but it hands the pragma to the
# host compiler, and g++ -Wall warns "ignoring '#pragma coconet region'
# [-Wunknown-pragmas]". Builds of annotated sources with host warnings on need:
EXAMPLE_PRAGMA_FLAGS := -Xcompiler -Wno-unknown-pragmas

EXAMPLE_NVCCFLAGS := -O2 -std=c++17 -Xcompiler -Wall,-Wextra $(EXAMPLE_PRAGMA_FLAGS) $(EXAMPLE_MPI_CFLAGS)
EXAMPLE_LIBS      := -lnccl -lcublas $(EXAMPLE_MPI_LDFLAGS)
EXAMPLE_ARCH      ?= -arch=sm_80

EXAMPLE_CUDA_DIR  := $(BUILD)/examples/cuda
EXAMPLE_CUDA_BINS := $(addprefix $(EXAMPLE_CUDA_DIR)/,$(EXAMPLE_NAMES))

.PHONY: examples-cuda
examples-cuda: $(EXAMPLE_CUDA_BINS)

# One rule per example: $(EXAMPLE_CUDA_DIR)/NAME from examples/DIR/NAME.cu, with a
# depfile so that only changed examples are rebuilt.
define EXAMPLE_CUDA_RULE
$(EXAMPLE_CUDA_DIR)/$(basename $(notdir $1)): $1 | $(EXAMPLE_CUDA_DIR)/
	$$(NVCC) $$(EXAMPLE_NVCCFLAGS) $$(EXAMPLE_ARCH) -MMD -MP -MF $$@.d -MT $$@ $$< -o $$@ $$(EXAMPLE_LIBS)
endef
$(foreach s,$(EXAMPLE_SRCS),$(eval $(call EXAMPLE_CUDA_RULE,$s)))
-include $(EXAMPLE_CUDA_BINS:=.d)
