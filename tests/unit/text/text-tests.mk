# common/text.c on its own (text_wrap, which every generated line goes through).
TEXT_TEST := $(BUILD)/tests/test_text

$(TEXT_TEST): tests/unit/text/test_text.c $(LIB)/libcoconet_common.a | $(BUILD)/tests/
	$(CC) $(CFLAGS) -Itranslator $< $(LIB)/libcoconet_common.a -lcmocka -o $@

.PHONY: test-unit-text
TEST_TARGETS += test-unit-text
SANITIZE_TARGETS += test-unit-text
CHECK_TARGETS += test-unit-text

test-unit-text: $(TEXT_TEST)
	@$(RECORD) unit-text $(TEXT_TEST)
