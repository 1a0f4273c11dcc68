# Golden tests: lit + FileCheck over tests/golden and the corpus of real-style
# kernels, tests/corpus (RUN/CHECK lines in each input). The translator runs in
# TRANSLATOR_RUN_ENV: the programs --verify builds and runs get the host
# backend's run environment.
#
# `make test` runs this level once, under SANITIZE=1 (SANITIZE_ONLY): the
# translator and coconet-cc are the ASan + UBSan builds, and --verify's harnesses
# are built by the plain build's coconet-cc (COCONET_VERIFY_CC) and run without
# sanitizers: the runtime's own code is the sanitizer run's host tests, fused and
# e2e levels, and an MPI program under ASan runs several times slower (its
# LeakSanitizer needs the slow unwinder). The plain translator reads every golden
# input in the parity level (and the corpus in compile-translated); `make check`
# and `make test-quick` run this level plain.
TEST_TARGETS += test-golden
SANITIZE_TARGETS += test-golden
SANITIZE_ONLY += test-golden
CHECK_TARGETS += test-golden
TEST_COST += 410:test-golden 880:sanitize-test-golden
GOLDEN_VERIFY_CC := $(if $(filter 1,$(SANITIZE)),COCONET_VERIFY_CC=$(abspath $(PLAIN_BUILD))/bin/coconet-cc)

test-golden: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	$(if $(GOLDEN_VERIFY_CC),@$(MAKE) --no-print-directory SANITIZE= all)
	@$(RECORD) golden $(TRANSLATOR_RUN_ENV) $(GOLDEN_VERIFY_CC) $(LIT) -sv --param build=$(abspath $(BUILD)) \
	  --param llvm_bin=$(LLVM_BIN) tests/golden tests/corpus
