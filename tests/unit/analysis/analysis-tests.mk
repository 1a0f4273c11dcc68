# Kernel analysis (translator/analyze/analyze.c) on real CUDA through libclang:
# cmocka, one test per kernel of tests/unit/analysis/cases.h.
ANALYSIS_TEST := $(BUILD)/tests/test_analysis

$(ANALYSIS_TEST): tests/unit/analysis/test_analysis.c tests/unit/analysis/cases.h $(TRANSLATOR_LIB) $(PRAGMAS_LIB) | $(BUILD)/tests/
	$(CC) $(CFLAGS) $(LIBCLANG_CFLAGS) -Itranslator -Ipragmas $< $(TRANSLATOR_LIBS) -lcmocka -o $@

.PHONY: test-unit-analysis
TEST_TARGETS += test-unit-analysis
SANITIZE_TARGETS += test-unit-analysis
CHECK_TARGETS += test-unit-analysis

test-unit-analysis: $(ANALYSIS_TEST)
	@$(RECORD) unit-analysis $(ANALYSIS_TEST)
