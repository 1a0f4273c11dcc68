# Unit tests of translator/output/diff.c (coconet --diff): exact output of small
# cases, and random files with random edits applied back with `patch -p0`.
#   make test-unit-diff      (also under SANITIZE=1)
# The test links diff.o and diag.o directly, so it builds while other
# translator files are being edited.
DIFF_TEST := $(BUILD)/tests/test_diff

$(OBJ)/tests/unit/diff/%.o: tests/unit/diff/%.c | $(OBJ)/tests/unit/diff/
	$(CC) $(CFLAGS) -MMD -MP $(LIBCLANG_CFLAGS) -Itranslator -Ipragmas -c $< -o $@

$(DIFF_TEST): $(OBJ)/tests/unit/diff/test_diff.o $(OBJ)/translator/output/diff.o $(LIB)/libcoconet_common.a | $(BUILD)/tests/
	$(CC) $(LDFLAGS) $^ -lcmocka -o $@

.SECONDARY: $(OBJ)/tests/unit/diff/test_diff.o $(OBJ)/tests/unit/diff/

.PHONY: test-unit-diff
TEST_TARGETS += test-unit-diff
SANITIZE_TARGETS += test-unit-diff
CHECK_TARGETS += test-unit-diff

test-unit-diff: $(DIFF_TEST)
	@$(RECORD) unit-diff $(DIFF_TEST)

-include $(OBJ)/tests/unit/diff/test_diff.d
