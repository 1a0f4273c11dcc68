# End to end: the examples, as written and scheduled, on the host backend under
# mpirun -np 1..4; their results must agree, and --verify=4 passes on each
# region (tests/e2e/run.sh). Under SANITIZE=1 a sample: 2 ranks, --verify=2.
TEST_TARGETS += test-e2e
SANITIZE_TARGETS += test-e2e
TEST_COST += 105:test-e2e 145:sanitize-test-e2e
E2E_SAMPLE := $(if $(filter 1,$(SANITIZE)),E2E_RANKS=2 E2E_VERIFY_RANKS=2)

test-e2e: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@$(TRANSLATOR_RUN_ENV) MPIRUN="$(HOST_MPIRUN)" RUN_ENV="$(HOST_RUN_ENV)" $(E2E_SAMPLE) \
	  $(RECORD) e2e tests/e2e/run.sh $(abspath $(BIN)) $(abspath $(BUILD))/e2e
