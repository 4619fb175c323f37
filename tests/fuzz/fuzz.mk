# libFuzzer harnesses (tests/fuzz/fuzz-NAME.c), one per untrusted input.
# Built with clang into build/fuzz, the library and the tool's objects with
# -fsanitize=fuzzer-no-link, so that no object mixes with the gcc trees.
#
#   make build-fuzz         build/fuzz/fuzz-NAME for every harness
#   make fuzz               each harness for FUZZ_SECONDS (600), one after
#                           another, then one summary line per harness
#   make fuzz-merge         folds what `make fuzz` found into the seed
#                           corpora, minimised (-merge=1)
#
# Corpora: tests/fuzz/corpus/NAME (in the tree, at most 1 MiB each); what a
# run finds goes to build/fuzz/corpus/NAME, crashes to build/fuzz/crashes/.
# tests/fuzz-corpus.test.sh runs every corpus once in `make test`.

FUZZ_O := build/fuzz
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -O1 -g -std=gnu11 -Wall -Wextra -Werror -pthread -D_GNU_SOURCE -Iinclude -Isrc \
	       -MMD -MP $(FUZZ_SAN) $(shell pkg-config --cflags json-c 2>/dev/null)

FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz-*.c))
FUZZ_NAMES := $(FUZZ_SRCS:tests/fuzz/fuzz-%.c=%)
FUZZ_BINS := $(FUZZ_NAMES:%=$(FUZZ_O)/fuzz-%)
FUZZ_UTIL_OBJS := $(patsubst %.c,$(FUZZ_O)/obj/%.o,$(filter-out $(FUZZ_SRCS),\
		  $(wildcard tests/fuzz/*.c)))
FUZZ_LIB := $(FUZZ_O)/libblkring.a
# The tool's objects but main, as the tool unit tests link them.
FUZZ_TOOL_LIB := $(FUZZ_O)/libtool.a

$(FUZZ_O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(LIB_SRCS:%.c=$(FUZZ_O)/obj/%.o)
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_TOOL_LIB): $(patsubst %.c,$(FUZZ_O)/obj/%.o,$(filter-out tools/main.c,$(TOOL_SRCS)))
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_O)/fuzz-%: $(FUZZ_O)/obj/tests/fuzz/fuzz-%.o $(FUZZ_UTIL_OBJS) $(FUZZ_TOOL_LIB) $(FUZZ_LIB)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(FUZZ_UTIL_OBJS) $(FUZZ_TOOL_LIB) \
		$(FUZZ_LIB) $(LDLIBS)

build-fuzz: $(FUZZ_BINS)

fuzz: build-fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run-fuzz.sh run $(FUZZ_NAMES)

fuzz-merge: build-fuzz
	@tests/fuzz/run-fuzz.sh merge $(FUZZ_NAMES)

.PHONY: build-fuzz fuzz fuzz-merge

-include $(shell find $(FUZZ_O)/obj -name '*.d' 2>/dev/null)
