# Tests of the pragmas/ library: cmocka unit tests, and a libFuzzer target.
#   make test-unit-pragmas   the unit tests (also under SANITIZE=1)
#   make test-fuzz-pragmas   a short fuzz run (20000 inputs; built with ASan + UBSan)
#   make fuzz-pragmas        fuzz for PRAGMAS_FUZZ_TIME seconds (default 60),
#                            keeping the corpus in $(BUILD)/fuzz/pragmas
PRAGMAS_TEST      := $(BUILD)/tests/test_pragmas
PRAGMAS_FUZZER    := $(BUILD)/tests/fuzz_pragmas
PRAGMAS_FUZZ_TIME ?= 60
PRAGMAS_FUZZ_ARGS := tests/unit/pragmas/corpus -dict=tests/unit/pragmas/fuzz_pragmas.dict \
                     -artifact_prefix=$(BUILD)/fuzz/pragmas-
PRAGMAS_FUZZ_FLAGS := -std=c11 -O1 -g $(WARN) -D_GNU_SOURCE -Ipragmas \
                      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

$(PRAGMAS_TEST): tests/unit/pragmas/test_pragmas.c pragmas/pragma.h $(PRAGMAS_LIB) | $(BUILD)/tests/
	$(CC) $(CFLAGS) -Ipragmas $< $(PRAGMAS_LIB) -lcmocka $(LDFLAGS) -o $@

# The fuzzer compiles the library's sources itself, with coverage instrumentation.
$(PRAGMAS_FUZZER): tests/unit/pragmas/fuzz_pragmas.c $(PRAGMAS_SRCS) $(wildcard pragmas/*.h) | $(BUILD)/tests/
	$(LLVM_BIN)/clang $(PRAGMAS_FUZZ_FLAGS) $< $(PRAGMAS_SRCS) -o $@

.PHONY: test-unit-pragmas test-fuzz-pragmas fuzz-pragmas
TEST_TARGETS += test-unit-pragmas test-fuzz-pragmas
SANITIZE_TARGETS += test-unit-pragmas
CHECK_TARGETS += test-unit-pragmas test-fuzz-pragmas

test-unit-pragmas: $(PRAGMAS_TEST)
	@$(RECORD) unit-pragmas $(PRAGMAS_TEST)

# A fixed seed and a fresh corpus, so a failure reproduces. The log's last
# line ("Done 20000 runs ...") is shown, or its end when the run fails (the
# crashing input is saved as $(BUILD)/fuzz/pragmas-crash-*).
PRAGMAS_SMOKE := $(BUILD)/fuzz/pragmas-smoke
test-fuzz-pragmas: $(PRAGMAS_FUZZER) | $(BUILD)/fuzz/
	@rm -rf $(PRAGMAS_SMOKE) && mkdir -p $(PRAGMAS_SMOKE)
	@$(RECORD) fuzz-pragmas bash -c '$(PRAGMAS_FUZZER) $(PRAGMAS_SMOKE) $(PRAGMAS_FUZZ_ARGS) \
	  -seed=1 -runs=20000 >$(PRAGMAS_SMOKE).log 2>&1 && tail -n 1 $(PRAGMAS_SMOKE).log \
	  || { tail -n 40 $(PRAGMAS_SMOKE).log; exit 1; }'

fuzz-pragmas: $(PRAGMAS_FUZZER) | $(BUILD)/fuzz/pragmas/
	$(PRAGMAS_FUZZER) $(BUILD)/fuzz/pragmas $(PRAGMAS_FUZZ_ARGS) -max_total_time=$(PRAGMAS_FUZZ_TIME)
