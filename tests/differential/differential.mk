# The differential random-program test (tests/differential/run.py): random
# regions (gen.py), each refused with a located diagnostic or run equal as
# written and as scheduled on the host backend at np = 1..4. 6 files of 24
# regions in make test (seeds 1..6, 10 until stop 52: the budget; COCONET_DIFF_SEED moves them), the first 2
# in make check (test-differential-small); `make soak
# SOAK_SECONDS=N` generates new files for N seconds (default 600) from a seed
# taken from the clock, then 2,000 mutants of tests/mutation. Not in the
# sanitizer run (its work is the harness builds and runs).
DIFF_DIR := $(BUILD)/differential
SOAK_SECONDS ?= 600

TEST_TARGETS += test-differential
CHECK_TARGETS += test-differential-small
TEST_COST += 100:test-differential 30:test-differential-small
.PHONY: test-differential test-differential-small soak
test-differential: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@$(TRANSLATOR_RUN_ENV) $(RECORD) differential python3 tests/differential/run.py $(abspath $(BIN))/coconet \
	  $(DIFF_DIR) --files 6 --regions 24
test-differential-small: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@$(TRANSLATOR_RUN_ENV) $(RECORD) differential-small python3 tests/differential/run.py \
	  $(abspath $(BIN))/coconet $(DIFF_DIR)/small --files 2 --regions 24

soak: all
	python3 tests/differential/run.py $(abspath $(BIN))/coconet $(DIFF_DIR)/soak --seconds $(SOAK_SECONDS) \
	  --regions 24 --seed $$(date +%s)
	python3 tests/mutation/run.py $(abspath $(BIN))/coconet $(BUILD)/mutation/soak --mutants 2000 --seed $$(date +%s)
