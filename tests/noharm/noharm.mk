# No-harm: pragma-free CUDA files pass through coconet byte for byte.
TEST_TARGETS += test-noharm
SANITIZE_TARGETS += test-noharm
CHECK_TARGETS += test-noharm
TEST_COST += 5:test-noharm 10:sanitize-test-noharm

test-noharm: $(BIN)/coconet
	@cd $(CURDIR) && $(RECORD) noharm tests/noharm/run.sh $(abspath $(BIN)/coconet)
