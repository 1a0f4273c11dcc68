# Golden tests: lit + FileCheck over tests/golden and the corpus of real-style
# kernels, tests/corpus (RUN/CHECK lines in each input).
TEST_TARGETS += test-golden

test-golden: $(BIN)/coconet
	@$(RECORD) golden $(LIT) -sv --param build=$(abspath $(BUILD)) --param llvm_bin=$(LLVM_BIN) tests/golden tests/corpus
