# The coconet translator: build/bin/coconet.
# Every translator/*.c except main.c goes into libcoconet_translator.a so unit
# tests can link the stages they test.
LIBCLANG_CFLAGS := -I$(LLVM_PREFIX)/include
LIBCLANG_LIBS   := -L$(LLVM_PREFIX)/lib -lclang -Wl,-rpath,$(LLVM_PREFIX)/lib
CJSON_CFLAGS    := -I/usr/include/cjson
CJSON_LIBS      := -lcjson

TRANSLATOR_SRCS := $(filter-out translator/main.c,$(wildcard translator/*.c))
TRANSLATOR_OBJS := $(TRANSLATOR_SRCS:%.c=$(OBJ)/%.o)
TRANSLATOR_LIB  := $(LIB)/libcoconet_translator.a
TRANSLATOR_LIBS := $(TRANSLATOR_LIB) $(PRAGMAS_LIB) $(LIBCLANG_LIBS) $(CJSON_LIBS) -lm

$(OBJ)/translator/%.o: translator/%.c | $(OBJ)/translator/
	$(CC) $(CFLAGS) -MMD -MP $(LIBCLANG_CFLAGS) $(CJSON_CFLAGS) -Ipragmas -c $< -o $@

$(TRANSLATOR_LIB): $(TRANSLATOR_OBJS) | $(LIB)/
	rm -f $@ && ar rcs $@ $^

$(BIN)/coconet: $(OBJ)/translator/main.o $(TRANSLATOR_LIB) $(PRAGMAS_LIB) | $(BIN)/
	$(CC) $(LDFLAGS) $< $(TRANSLATOR_LIBS) -o $@

all: $(BIN)/coconet

-include $(TRANSLATOR_OBJS:.o=.d) $(OBJ)/translator/main.d
