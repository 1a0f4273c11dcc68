# Golden tests: lit + FileCheck over tests/golden and the corpus of real-style
# kernels, tests/corpus (RUN/CHECK lines in each input). The translator runs in
# TRANSLATOR_RUN_ENV: the programs --verify builds and runs get the host
# backend's run environment.
#
# Under SANITIZE=1 the translator and coconet-cc are the ASan + UBSan builds, and
# --verify's harnesses are built by the plain build's coconet-cc
# (COCONET_VERIFY_CC) and run without sanitizers: the runtime's own code is the
# sanitizer run's host tests, fused and e2e levels, and an MPI program under ASan
# runs several times slower (its LeakSanitizer needs the slow unwinder). The two
# levels run at once and share --verify's memo (COCONET_VERIFY_CACHE): the
# sanitizer level takes its tests in random order, so that it does not reach
# each harness just when the plain level does and wait for its run (a clean
# clone has no test times, and both levels took the same, lexical order).
TEST_TARGETS += test-golden
SANITIZE_TARGETS += test-golden
CHECK_TARGETS += test-golden
TEST_COST += 860:test-golden 980:sanitize-test-golden
GOLDEN_ORDER := $(if $(filter 1,$(SANITIZE)),--order=random)
GOLDEN_VERIFY_CC := $(if $(filter 1,$(SANITIZE)),COCONET_VERIFY_CC=$(abspath $(PLAIN_BUILD))/bin/coconet-cc)

test-golden: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	$(if $(GOLDEN_VERIFY_CC),@$(MAKE) --no-print-directory SANITIZE= all)
	@$(RECORD) golden $(TRANSLATOR_RUN_ENV) $(GOLDEN_VERIFY_CC) $(LIT) -sv $(GOLDEN_ORDER) --param build=$(abspath $(BUILD)) \
	  --param llvm_bin=$(LLVM_BIN) tests/golden tests/corpus
