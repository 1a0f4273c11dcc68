# The coconet translator: build/bin/coconet (translator/translator.h is its map).
#
# Each stage folder is a static library, libcoconet_STAGE.a, and the stages run
# in TRANSLATOR_STAGES' order: a stage calls only its own files and the stages
# before it. The build proves it: each library is linked whole against the
# libraries before it alone ($(OBJ)/translator/STAGE.linked), so a call into a
# later stage is an undefined reference and the build stops there.
# driver/main.c stays out of the libraries so that unit tests can link any
# prefix of the stages (TRANSLATOR_LIBS: all of them, the last stage first).
LIBCLANG_CFLAGS := -I$(LLVM_PREFIX)/include
LIBCLANG_LIBS   := -L$(LLVM_PREFIX)/lib -lclang -Wl,-rpath,$(LLVM_PREFIX)/lib
CJSON_CFLAGS    := -I/usr/include/cjson
CJSON_LIBS      := -lcjson

TRANSLATOR_STAGES := common front ir analyze transform interp codegen output driver
TRANSLATOR_MAIN   := $(OBJ)/translator/driver/main.o
TRANSLATOR_CFLAGS := $(LIBCLANG_CFLAGS) $(CJSON_CFLAGS) -Itranslator -Ipragmas
# The libraries of stages $1 (a list), the last first, as a link line wants them.
translator_libs = $(foreach s,$(shell printf '%s\n' $1 | tac),$(LIB)/libcoconet_$s.a)
# The stages before stage $1 in list $2.
stages_before = $(if $(filter $1,$(firstword $2)),,$(firstword $2) $(call stages_before,$1,$(wordlist 2,99,$2)))
TRANSLATOR_LIB  := $(call translator_libs,$(TRANSLATOR_STAGES))
TRANSLATOR_LIBS := $(TRANSLATOR_LIB) $(PRAGMAS_LIB) $(LIBCLANG_LIBS) $(CJSON_LIBS) -lm
TRANSLATOR_OBJS :=

$(OBJ)/translator/%.o: translator/%.c | $(OBJ)/translator/
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP $(TRANSLATOR_CFLAGS) -c $< -o $@

$(OBJ)/translator/link-main.o: | $(OBJ)/translator/
	printf 'int main(void) { return 0; }\n' | $(CC) $(CFLAGS) -x c -c - -o $@

# $(call translator_stage,STAGE,STAGES BEFORE IT)
define translator_stage
TRANSLATOR_$1_OBJS := $$(patsubst %.c,$$(OBJ)/%.o,$$(filter-out translator/driver/main.c,$$(wildcard translator/$1/*.c)))
TRANSLATOR_OBJS += $$(TRANSLATOR_$1_OBJS)

$$(LIB)/libcoconet_$1.a: $$(TRANSLATOR_$1_OBJS) | $$(LIB)/
	rm -f $$@ && ar rcs $$@ $$^

$$(OBJ)/translator/$1.linked: $$(LIB)/libcoconet_$1.a $$(call translator_libs,$2) $$(OBJ)/translator/link-main.o $$(PRAGMAS_LIB)
	@echo "link translator/$1 against the stages before it"
	@$$(CC) $$(LDFLAGS) $$(OBJ)/translator/link-main.o -Wl,--whole-archive $$< -Wl,--no-whole-archive \
	  $$(call translator_libs,$2) $$(PRAGMAS_LIB) $$(LIBCLANG_LIBS) $$(CJSON_LIBS) -lm -o $$@.bin \
	  || { echo "translator/$1 calls a later stage (see the undefined references above;" \
	            "translator/translator.mk)" >&2; exit 1; }
	@rm -f $$@.bin && touch $$@

all: $$(OBJ)/translator/$1.linked
endef
$(foreach s,$(TRANSLATOR_STAGES),$(eval $(call translator_stage,$s,$(call stages_before,$s,$(TRANSLATOR_STAGES)))))

$(BIN)/coconet: $(TRANSLATOR_MAIN) $(TRANSLATOR_LIB) $(PRAGMAS_LIB) | $(BIN)/
	$(CC) $(LDFLAGS) $< $(TRANSLATOR_LIBS) -o $@

all: $(BIN)/coconet

-include $(TRANSLATOR_OBJS:.o=.d) $(TRANSLATOR_MAIN:.o=.d)
