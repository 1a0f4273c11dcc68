# The translator's layout (tests/layout/run.sh): translator/translator.h true in
# every line, headers included only from the same or an earlier stage, no file
# past the length the style allows. Calls into a later stage are refused by the
# build itself (translator/translator.mk links each stage against the ones
# before it alone).
TEST_TARGETS += test-layout
CHECK_TARGETS += test-layout

.PHONY: test-layout
test-layout:
	@$(RECORD) layout tests/layout/run.sh
