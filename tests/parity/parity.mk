# Parity of the report options with translation (tests/parity/parity.py): every
# golden input that a RUN line translates is run through translation and each
# report option; exit statuses and diagnostics must agree. Not in the sanitizer
# run (it runs the golden tests themselves).
TEST_TARGETS += test-parity
TEST_COST += 280:test-parity
.PHONY: test-parity
test-parity: $(BIN)/coconet
	@$(RECORD) parity python3 tests/parity/parity.py $(abspath $(BIN))/coconet $(CURDIR)
