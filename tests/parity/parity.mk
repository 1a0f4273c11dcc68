# Parity of the report options with translation (tests/parity/parity.py): every
# golden input that a RUN line translates is run through translation and each
# report option; exit statuses and diagnostics must agree. Not under
# SANITIZE=1 (the sanitizer pass runs the golden tests themselves).
ifneq ($(SANITIZE),1)
TEST_TARGETS += test-parity
.PHONY: test-parity
test-parity: $(BIN)/coconet
	@$(RECORD) parity python3 tests/parity/parity.py $(abspath $(BIN))/coconet $(CURDIR)
endif
