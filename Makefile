# coconet: a source-to-source translator for CUDA C + NCCL.
# The two commands a newcomer needs:  make demo   and   make test
# Each layer keeps its rules in its own fragment (*/NAME.mk), included below.

.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD    ?= build
# SANITIZE=1 builds everything with clang 16 under ASan + UBSan into build/asan.
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

ifeq ($(SANITIZE),1)
  BUILD    := build/asan
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

# Test levels register their targets here (see tests/tests.mk). A level whose work
# is nvcc's, not the translator's or the runtime's, also joins SANITIZE_SKIP: the
# sanitizer run leaves it out (CI has 90 minutes on 2 cores for both runs).
TEST_TARGETS :=
SANITIZE_SKIP :=

.PHONY: all deps check-cuda test test-quick sanitize demo bench bench-frontend clean
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

# `make test` builds and runs every level, then the sanitizer run.
test: deps
	@$(MAKE) --no-print-directory test-quick
	@$(MAKE) --no-print-directory sanitize

# Every test target runs through tests/record.sh, which logs PASS/FAIL lines to
# $(RESULTS); the summary ends with the plain 'N passed, N failed' line.
RESULTS := $(BUILD)/test-results.txt
export COCONET_TEST_RESULTS = $(abspath $(RESULTS))
RECORD := tests/record.sh

test-quick: all
	@mkdir -p $(BUILD); rm -f $(RESULTS); touch $(RESULTS)
	@$(MAKE) --no-print-directory -k $(if $(SANITIZE),$(filter-out $(SANITIZE_SKIP),$(TEST_TARGETS)),$(TEST_TARGETS)); \
	  tests/summary.sh $(RESULTS)

sanitize: deps
	@$(MAKE) --no-print-directory SANITIZE=1 test-quick

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
