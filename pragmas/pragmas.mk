# The pragmas/ library: parses and checks one `#pragma coconet` line.
# Plain C11 without dependencies; the translator links $(PRAGMAS_LIB) and
# compiles with -Ipragmas (pragma.h is the public header).
PRAGMAS_LIB  := $(LIB)/libcoconet_pragmas.a
PRAGMAS_SRCS := $(wildcard pragmas/*.c)
PRAGMAS_OBJS := $(PRAGMAS_SRCS:%.c=$(OBJ)/%.o)

$(OBJ)/pragmas/%.o: pragmas/%.c | $(OBJ)/pragmas/
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(PRAGMAS_LIB): $(PRAGMAS_OBJS) | $(LIB)/
	rm -f $@ && ar rcs $@ $^

all: $(PRAGMAS_LIB)

-include $(PRAGMAS_OBJS:.o=.d)
