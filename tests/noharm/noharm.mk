# No-harm: pragma-free CUDA files pass through coconet byte for byte.
TEST_TARGETS += test-noharm

test-noharm: $(BIN)/coconet
	@cd $(CURDIR) && $(RECORD) noharm tests/noharm/run.sh $(abspath $(BIN)/coconet)
