# Mutation smoke test of the analysis (tests/mutation/run.py): 50 mutants of
# annotated files' kernels, each through coconet --verify=ir:2; coconet must
# never crash, hang or exit 1 without a located diagnostic. More mutants with
# `make soak` (tests/differential/differential.mk: 2,000). Under SANITIZE=1 too,
# 30 other mutants (seed 2): that is where a crash shows first. (120 and 60 until
# stop 49, 80 and 40 until stop 52: `make test`'s budget.)
MUTATION_DIR  := $(BUILD)/mutation
MUTATION_ARGS := $(if $(filter 1,$(SANITIZE)),--mutants 30 --seed 2,--mutants 50 --seed 1)
TEST_TARGETS += test-mutation
SANITIZE_TARGETS += test-mutation
TEST_COST += 70:test-mutation 60:sanitize-test-mutation
.PHONY: test-mutation
test-mutation: $(BIN)/coconet
	@$(RECORD) mutation python3 tests/mutation/run.py $(abspath $(BIN))/coconet $(MUTATION_DIR) $(MUTATION_ARGS)
