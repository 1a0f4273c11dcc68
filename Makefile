# coconet: a source-to-source translator for CUDA C + NCCL.
# The two commands a newcomer needs:  make demo   and   make test
# Each layer keeps its rules in its own fragment (*/NAME.mk), included below.

.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD    ?= build
# SANITIZE=1 builds everything with clang 16 under ASan + UBSan into $(ASAN_BUILD).
SANITIZE ?=

LLVM_CONFIG ?= $(firstword $(wildcard /usr/lib/llvm-16/bin/llvm-config) llvm-config-16 llvm-config)
LLVM_PREFIX := $(shell $(LLVM_CONFIG) --prefix 2>/dev/null || echo /usr/lib/llvm-16)
LLVM_BIN    := $(LLVM_PREFIX)/bin
FILECHECK   ?= $(LLVM_BIN)/FileCheck
LIT         ?= python3 $(LLVM_PREFIX)/build/utils/lit/lit.py

# CUDA: CUDA_HOME, else nvcc on PATH, else /usr/local/cuda.
NVCC_ON_PATH := $(shell command -v nvcc 2>/dev/null)
CUDA_HOME ?= $(if $(NVCC_ON_PATH),$(patsubst %/bin/nvcc,%,$(realpath $(NVCC_ON_PATH))),/usr/local/cuda)
NVCC      := $(CUDA_HOME)/bin/nvcc

PLAIN_BUILD := $(BUILD)
ASAN_BUILD  := build/asan
ifeq ($(SANITIZE),1)
  BUILD    := $(ASAN_BUILD)
  CC       := $(LLVM_BIN)/clang
  CXX      := $(LLVM_BIN)/clang++
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g
  export ASAN_OPTIONS := detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS := print_stacktrace=1
else
  CC       := cc
  CXX      := c++
  SANFLAGS :=
endif

WARN     := -Wall -Wextra -Werror
CFLAGS   := -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE $(SANFLAGS)
CXXFLAGS := -std=c++17 -O2 -g $(WARN) $(SANFLAGS)
LDFLAGS  := $(SANFLAGS)

BIN := $(BUILD)/bin
LIB := $(BUILD)/lib
OBJ := $(BUILD)/obj

# Test levels register their targets here, each in its own fragment (tests/*/*.mk):
#   TEST_TARGETS      every level, on the plain build
#   SANITIZE_TARGETS  the levels that run again built with clang 16 under ASan + UBSan:
#                     the translator's and the runtime's own code, not nvcc's
#   SANITIZE_ONLY     of those, the ones `make test` runs only so (the longest: its plain
#                     run would check the same again; test-quick and check run it plain)
#   TEST_COST         SECONDS:TARGET, what a level takes on the 2-core machine (a
#                     sanitizer run's target as sanitize-TARGET): the longest start first
#   CHECK_TARGETS     the inner loop, `make check`
TEST_TARGETS :=
SANITIZE_TARGETS :=
SANITIZE_ONLY :=
TEST_COST :=
CHECK_TARGETS :=

.PHONY: all deps check-cuda test test-quick sanitize sanitize-build check demo bench bench-frontend clean
all:

# Each layer's rules, one owner per fragment, included in dependency order
# (libraries before the tests that link them: prerequisites expand at once).
include $(sort $(wildcard mk/*.mk))
include $(sort $(wildcard pragmas/*.mk))
include $(sort $(wildcard translator/*.mk translator/*/*.mk))
include $(sort $(wildcard runtime/*.mk runtime/*/*.mk))
include $(sort $(wildcard examples/*.mk))
include $(sort $(wildcard tests/*/*.mk tests/*/*/*.mk))

$(BUILD)/%/:
	@mkdir -p $@

# Every test target runs through tests/record.sh, which logs PASS/FAIL lines to
# $(RESULTS) (build/asan/ has the sanitizer run's); the summary lists the slowest,
# the wall time (a warning past TEST_BUDGET_S), and ends with 'N passed, N failed'.
RESULTS := $(BUILD)/test-results.txt
export COCONET_TEST_RESULTS = $(abspath $(RESULTS))
RECORD := tests/record.sh
ifeq ($(SANITIZE),1)
  export COCONET_TEST_TAG := asan/
endif

# Levels run TEST_JOBS at a time (both cores of CI's machine), the longest first,
# each one's output printed whole when it ends (tests/run-levels.py).
TEST_JOBS     ?= 2
TEST_BUDGET_S ?= 1800
SANITIZE_RUNS := $(SANITIZE_TARGETS:%=sanitize-%)
test_by_cost   = $(shell printf '%s\n' $(filter $(addprefix %:,$1),$(TEST_COST)) | sort -t: -k1,1rn | cut -d: -f2) \
                 $(filter-out $(foreach c,$(TEST_COST),$(lastword $(subst :, ,$c))),$1)
# $(call run_levels,TARGETS,START): build, run TARGETS, summarize since START. The
# levels share one memo of --verify's harness runs (COCONET_VERIFY_CACHE, emptied
# here): the golden suite's plain and sanitizer runs write the same harnesses. They
# also share one cache of precompiled headers (COCONET_CACHE, kept between runs),
# large enough for every flag set the tests use (about 80, 11 MB each): with the
# default 32 the levels evicted each other's entries and built them again (3 s
# each, 7 s under ASan's allocator).
VERIFY_CACHE := $(abspath $(PLAIN_BUILD))/verify-cache
TEST_PCH_CACHE := $(abspath $(PLAIN_BUILD))/cache
define run_levels
@$(MAKE) --no-print-directory -j$(TEST_JOBS) -Otarget all $(if $(filter sanitize-%,$1),sanitize-build)
@mkdir -p $(BUILD) $(ASAN_BUILD); rm -rf $(RESULTS) $(ASAN_BUILD)/test-results.txt $(VERIFY_CACHE)
@COCONET_VERIFY_CACHE=$(VERIFY_CACHE) COCONET_CACHE=$(TEST_PCH_CACHE) COCONET_CACHE_KEEP=256 \
  tests/run-levels.py "$(MAKE)" $(TEST_JOBS) $(call test_by_cost,$1); \
  tests/summary.sh --started $2 --budget $(TEST_BUDGET_S) $(RESULTS) $(ASAN_BUILD)/test-results.txt
endef

# `make test`: the dependency check, both builds, every level and the sanitizer
# levels side by side (SANITIZE_ONLY's under the sanitizer only); at most 30 minutes
# on the 2-core machine.
test: TEST_START := $(shell date +%s)
test: deps
	$(call run_levels,$(filter-out $(SANITIZE_ONLY),$(TEST_TARGETS)) $(SANITIZE_RUNS),$(TEST_START))

test-quick: TEST_START := $(shell date +%s)
test-quick:
	$(call run_levels,$(TEST_TARGETS),$(TEST_START))

sanitize: TEST_START := $(shell date +%s)
sanitize: deps
	$(call run_levels,$(SANITIZE_RUNS),$(TEST_START))

# The inner loop for people changing the translator: at most 5 minutes.
check: TEST_START := $(shell date +%s)
check:
	$(call run_levels,$(CHECK_TARGETS),$(TEST_START))

sanitize-build:
	@$(MAKE) --no-print-directory SANITIZE=1 all

.PHONY: $(SANITIZE_RUNS)
$(SANITIZE_RUNS): sanitize-%: sanitize-build
	@$(MAKE) --no-print-directory SANITIZE=1 $*

demo: deps
	@$(MAKE) --no-print-directory all
	@HOST_MPIRUN="$(HOST_MPIRUN)" HOST_RUN_ENV="$(HOST_RUN_ENV)" mk/demo.sh $(BUILD)

# Benchmarks print figures measured side by side in one run (bench/*.sh) and append
# them to bench/RESULTS.md. The GPU benchmark is bench/gpu/prepare.sh here, then
# bench/gpu/run.sh on a machine with a GPU (bench/README.md).
BENCH_TARGETS := bench-frontend bench-cc bench-host bench-host-examples bench-host-checks
.PHONY: bench-host-examples bench-cc bench-host-checks
bench-frontend: all
	bench/frontend.sh $(abspath $(BUILD))
bench-cc: all
	bench/cc.sh $(abspath $(BUILD))
bench-host-checks: all
	@HOST_MPIRUN="$(HOST_MPIRUN)" HOST_RUN_ENV="$(HOST_RUN_ENV)" bench/host-checks.sh $(abspath $(BUILD))
bench-host-examples: all
	@HOST_MPIRUN="$(HOST_MPIRUN)" HOST_RUN_ENV="$(HOST_RUN_ENV)" bench/host.sh $(abspath $(BUILD))

bench: all
	@$(MAKE) --no-print-directory $(BENCH_TARGETS)

clean:
	rm -rf build
