# Unit tests of the translator's middle (translator/ir*.c, transform*.c,
# interp*.c, cost.c, dot.c): cmocka programs, one per area, and the property
# test (random regions x every legal schedule, checked by the interpreter).
#   make test-unit-ir          all of them (also under SANITIZE=1)
# They link the IR objects and diag.o directly, so they build even while other
# translator files are being edited.
IR_TEST_NAMES := ir_basic ir_transform ir_cost ir_interp ir_property
IR_TEST_BINS  := $(IR_TEST_NAMES:%=$(BUILD)/tests/ir/test_%)
# The middle of the translator alone: no libclang.
IR_TEST_OBJS  := $(call translator_libs,common ir transform interp)
IR_TEST_UTIL  := $(OBJ)/tests/unit/ir/ir_test_util.o

$(OBJ)/tests/unit/ir/%.o: tests/unit/ir/%.c | $(OBJ)/tests/unit/ir/
	$(CC) $(CFLAGS) -MMD -MP -Itranslator -c $< -o $@

$(BUILD)/tests/ir/test_%: $(OBJ)/tests/unit/ir/test_%.o $(IR_TEST_UTIL) $(IR_TEST_OBJS) | $(BUILD)/tests/ir/
	$(CC) $(LDFLAGS) $^ -lcmocka -lm -o $@

# Objects and directories made by pattern rules are kept (not intermediate).
.SECONDARY: $(IR_TEST_NAMES:%=$(OBJ)/tests/unit/ir/test_%.o) $(IR_TEST_UTIL) \
            $(BUILD)/tests/ir/ $(OBJ)/tests/unit/ir/

.PHONY: test-unit-ir
TEST_TARGETS += test-unit-ir
SANITIZE_TARGETS += test-unit-ir
CHECK_TARGETS += test-unit-ir

test-unit-ir: $(IR_TEST_BINS)
	@status=0; for t in $(IR_TEST_NAMES); do \
	  $(RECORD) unit-$$t $(BUILD)/tests/ir/test_$$t || status=1; done; exit $$status

-include $(wildcard $(OBJ)/tests/unit/ir/*.d)
