# Mutation smoke test of the analysis (tests/mutation/run.py): 120 mutants of
# annotated files' kernels, each through coconet --verify=ir:2; coconet must
# never crash, hang or exit 1 without a located diagnostic. More mutants with
# `make soak` (tests/differential/differential.mk). Under SANITIZE=1 too, 60
# other mutants (seed 2): that is where a crash shows first.
MUTATION_DIR  := $(BUILD)/mutation
MUTATION_ARGS := $(if $(filter 1,$(SANITIZE)),--mutants 60 --seed 2,--mutants 120 --seed 1)
TEST_TARGETS += test-mutation
SANITIZE_TARGETS += test-mutation
TEST_COST += 330:test-mutation 240:sanitize-test-mutation
.PHONY: test-mutation
test-mutation: $(BIN)/coconet
	@$(RECORD) mutation python3 tests/mutation/run.py $(abspath $(BIN))/coconet $(MUTATION_DIR) $(MUTATION_ARGS)
