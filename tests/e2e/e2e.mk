# End to end: both examples, as written and scheduled, on the host backend
# under mpirun -np 1..4; their results must agree (tests/e2e/run.sh).
TEST_TARGETS += test-e2e

test-e2e: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@MPIRUN="$(HOST_MPIRUN)" RUN_ENV="$(HOST_RUN_ENV)" \
	  $(RECORD) e2e tests/e2e/run.sh $(abspath $(BIN)) $(abspath $(BUILD))/e2e
