# rules.mk: the build rules every example's Makefile includes after setting
# NAME (the program), SRC (its .cu) and LIBS (beyond MPI). See any example's
# Makefile for the targets. BUILD=DIR puts the programs and their depfiles in
# DIR (made if missing) instead of the example's folder, so that trying an
# example does not write into the checkout.
HERE := $(patsubst %/,%,$(dir $(abspath $(firstword $(MAKEFILE_LIST)))))
BUILD ?= .
OUT := $(patsubst %/,%,$(BUILD))/$(NAME)
SRC := $(abspath $(SRC))
COCONET_CC ?= $(or $(wildcard $(abspath $(HERE)/../../build/bin/coconet-cc)),$(shell command -v coconet-cc 2>/dev/null),coconet-cc)

ARCH      ?= sm_90
NVCCFLAGS ?= -O2 -std=c++17 -Xcompiler -Wall,-Wextra,-Wno-unknown-pragmas
NP        ?= 4
ARGS      ?=
MPIRUN    ?= mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
RUN_ENV   ?= env OMPI_MCA_mpi_yield_when_idle=1

# MPI's flags in nvcc's syntax: -I becomes -isystem (Open MPI's headers warn under
# -Wextra), -Wl,X becomes -Xlinker X, -L/-l/-D stay, anything else goes to the host
# compiler. coconet-cc hands -I/-isystem/-D to coconet too, which parses mpi.h.
comma := ,
nvcc_flag = $(if $(filter -I%,$1),-isystem $(patsubst -I%,%,$1),$(if $(filter -L% -l% -D%,$1),$1,$(if $(filter -Wl$(comma)%,$1),-Xlinker $(patsubst -Wl$(comma)%,%,$1),-Xcompiler $1)))
MPI_CFLAGS  := $(foreach f,$(shell mpicxx --showme:compile 2>/dev/null),$(call nvcc_flag,$f))
MPI_LDFLAGS := $(foreach f,$(shell mpicxx --showme:link 2>/dev/null),$(call nvcc_flag,$f))

# A rebuild follows changes of the source (depfiles name the original .cu) and of coconet-cc.
CC_DEP := $(wildcard $(COCONET_CC))
.PHONY: all baseline host host-baseline run run-host run-host-baseline compare-host clean
BUILD_CMD = @mkdir -p $(dir $@) && $(COCONET_CC) $1 $(NVCCFLAGS) $(MPI_CFLAGS) -MMD -MP -MF $@.d -MT $@ $(SRC) \
  -o $@ $(LIBS) $(MPI_LDFLAGS)
BASELINE := --coconet-flags=--schedule=none

all: $(OUT)
baseline: $(OUT)-baseline
host: $(OUT)-host
host-baseline: $(OUT)-host-baseline

$(OUT): $(SRC) $(CC_DEP)
	$(call BUILD_CMD,-arch=$(ARCH))
$(OUT)-baseline: $(SRC) $(CC_DEP)
	$(call BUILD_CMD,$(BASELINE) -arch=$(ARCH))
$(OUT)-host: $(SRC) $(CC_DEP)
	$(call BUILD_CMD,--target=host)
$(OUT)-host-baseline: $(SRC) $(CC_DEP)
	$(call BUILD_CMD,--target=host $(BASELINE))

run: $(OUT)
	$(MPIRUN) -np $(NP) $(abspath $(OUT)) $(ARGS)
run-host: $(OUT)-host
	$(RUN_ENV) $(MPIRUN) -np $(NP) $(abspath $(OUT))-host $(ARGS)
run-host-baseline: $(OUT)-host-baseline
	$(RUN_ENV) $(MPIRUN) -np $(NP) $(abspath $(OUT))-host-baseline $(ARGS)
compare-host: $(OUT)-host $(OUT)-host-baseline
	@echo "as written: $$($(RUN_ENV) $(MPIRUN) -np $(NP) $(abspath $(OUT))-host-baseline $(ARGS) | grep checksum=)"
	@echo "scheduled:  $$($(RUN_ENV) $(MPIRUN) -np $(NP) $(abspath $(OUT))-host $(ARGS) | grep checksum=)"

clean:
	rm -f $(OUT) $(OUT)-baseline $(OUT)-host $(OUT)-host-baseline $(OUT).d $(OUT)-baseline.d $(OUT)-host.d \
	  $(OUT)-host-baseline.d

-include $(wildcard $(OUT)*.d)
