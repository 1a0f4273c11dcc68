# The documentation's console sessions, run as written (tests/readme/run.sh):
# the README's quick start and docs/getting-started.md; every other console
# block of the docs is marked illustrative, with why (tests/readme/markers.py). Each fenced block
# marked `<!-- doc-test -->` holds `$ COMMAND` lines and the output they must
# print (`...` stands for any lines); the commands run in a scratch copy of the
# repository root where build/bin is $(BIN), with mpirun as the host tests run it.
TEST_TARGETS += test-readme
TEST_COST += 15:test-readme
DOC_TEST_FILES := README.md docs/getting-started.md
# Every console block of these is marked run (doc-test) or illustrative (tests/readme/markers.py).
DOC_FILES := README.md $(wildcard docs/*.md examples/*/README.md runtime/host/README.md)

.PHONY: test-readme
test-readme: $(BIN)/coconet $(BIN)/coconet-cc $(HOST_LIB)
	@python3 tests/readme/markers.py $(DOC_FILES)
	@MPIRUN="$(HOST_MPIRUN)" RUN_ENV="$(HOST_RUN_ENV)" \
	  $(RECORD) readme tests/readme/run.sh $(abspath $(BIN)) $(DOC_TEST_FILES)
