# Golden tests: lit + FileCheck over tests/golden and the corpus of real-style
# kernels, tests/corpus (RUN/CHECK lines in each input). The host backend's run
# environment (LeakSanitizer's suppressions of MPI under SANITIZE=1) reaches the
# programs that --verify=exec builds and runs.
TEST_TARGETS += test-golden

test-golden: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@$(RECORD) golden $(HOST_RUN_ENV) $(LIT) -sv --param build=$(abspath $(BUILD)) --param llvm_bin=$(LLVM_BIN) tests/golden tests/corpus
