# blkring build.  GNU make; every source file is found by wildcard, so adding
# a driver, a target, a tool file or a test needs no edit here.
#
#   make            library (static, shared, pkg-config) and build/blkring
#   make run        set up, build, run the main job on built-in null devices
#   make test       set up, build under ASan+UBSan and TSan, run every test
#   make install    PREFIX=/usr/local DESTDIR=   (make uninstall: the same, undone)
#   make man        the man pages, from docs/API.md (scripts/gen-man.py, scdoc)

# `make test` builds four trees: on every core, unless -j was given.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif

PREFIX ?= /usr/local
DESTDIR ?=
O ?= build
SAN ?=

VERSION := 0.2.0
SOMAJOR := 1

CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -fPIC -pthread -D_GNU_SOURCE -Iinclude -Isrc \
	  -MMD -MP $(shell pkg-config --cflags json-c 2>/dev/null)
# What libblkring itself needs (blkring.pc's Libs.private), and what the
# command, the tests and the benches add.
LIB_LDLIBS := -pthread -luring
LDLIBS := $(LIB_LDLIBS) -lisal -lcrypto -lxxhash $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c) -lm

ifeq ($(SAN),asan)
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(SAN),tsan)
CFLAGS += -O1 -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
endif

LIB_SRCS := $(sort $(wildcard src/*/*.c src/dm/targets/*.c))
TOOL_SRCS := $(sort $(wildcard tools/*.c))
TEST_SRCS := $(sort $(wildcard tests/test-*.c))
TEST_LIB_SRCS := $(sort $(filter-out tests/test-%.c,$(wildcard tests/*.c)))
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
BENCH_SRCS := $(sort $(wildcard bench/*.c))

LIB_OBJS := $(LIB_SRCS:%.c=$(O)/obj/%.o)
# Only BLKRING_API names leave the shared library, and calls inside it
# bind locally: the compiler inlines across what was interposable.
$(LIB_OBJS): CFLAGS += -fvisibility=hidden -fno-semantic-interposition
TOOL_OBJS := $(TOOL_SRCS:%.c=$(O)/obj/%.o)
TEST_LIB_OBJS := $(TEST_LIB_SRCS:%.c=$(O)/obj/%.o)
TESTS := $(TEST_SRCS:tests/%.c=$(O)/tests/%)
EXAMPLES := $(EXAMPLE_SRCS:examples/%.c=$(O)/examples/%)
# bench/nbd-raw.c is a libnbd client, bench/rbd-raw.c a librbd one: each
# built where its library's headers are.
BENCHES := $(filter-out $(if $(wildcard /usr/include/libnbd.h),,$(O)/bench/nbd-raw) \
	   $(if $(wildcard /usr/include/rbd/librbd.h),,$(O)/bench/rbd-raw), \
	   $(BENCH_SRCS:bench/%.c=$(O)/bench/%))
$(O)/bench/nbd-raw: LDLIBS += -lnbd
$(O)/bench/rbd-raw: LDLIBS += -lrbd -lrados

# Programs linked with the static library export the module interface
# (BLKRING__MODULE_API in src/lib/compiler.h), which loaded modules call.
EXE_LDFLAGS := -Wl,--export-dynamic-symbol='blkring__*'

# Drivers built as modules (src/drivers/modules/TYPE.c), each where its
# libraries are installed: $(O)/blkring-modules/TYPE.so, loaded by the
# registry on the first open of TYPE; installed in PREFIX/lib/blkring-modules.
MODULE_DIR := $(O)/blkring-modules
MODULE_LIBS_nbd := -lnbd
MODULE_LIBS_rbd := -lrbd -lrados
MODULES := $(if $(wildcard /usr/include/libnbd.h),$(MODULE_DIR)/nbd.so) \
	   $(if $(wildcard /usr/include/rbd/librbd.h),$(MODULE_DIR)/rbd.so)
$(O)/obj/src/drivers/registry.o: CFLAGS += \
	-DBLKRING_MODULE_DEFAULT_DIR='"$(PREFIX)/lib/blkring-modules"'
$(O)/obj/src/drivers/modules/%.o: CFLAGS += -fvisibility=hidden
# Its calls into the library stay undefined: they bind to the copy that
# loads it, never to a second one.
$(MODULE_DIR)/%.so: $(O)/obj/src/drivers/modules/%.o
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -o $@ $< $(MODULE_LIBS_$*)

STATIC := $(O)/libblkring.a
SHARED := $(O)/libblkring.so.$(VERSION)
TOOL := $(O)/blkring

all: $(STATIC) $(SHARED) $(TOOL) $(EXAMPLES) $(BENCHES) $(MODULES)

$(O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The command is a client of the public API: include/ only, never src/.
TOOL_CFLAGS = $(filter-out -Isrc,$(CFLAGS))
$(O)/obj/tools/%.o: tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -c -o $@ $<

$(STATIC): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJS) src/libblkring.map
	$(CC) -shared -Wl,-soname,libblkring.so.$(SOMAJOR) -Wl,--version-script=src/libblkring.map \
		$(LDFLAGS) -o $@ $(LIB_OBJS) $(LIB_LDLIBS)
	ln -sf libblkring.so.$(VERSION) $(O)/libblkring.so.$(SOMAJOR)
	ln -sf libblkring.so.$(SOMAJOR) $(O)/libblkring.so

# Pages from docs/API.md and the header; a call missing from either fails.
$(O)/man/.stamp: docs/API.md include/blkring.h scripts/gen-man.py
	@rm -rf $(O)/man
	python3 scripts/gen-man.py $(O)/man $(VERSION)
	@for f in $(O)/man/*.scd; do scdoc <"$$f" >"$${f%.scd}" || exit 1; done
	@rm -f $(O)/man/*.scd
	@touch $@

man: $(O)/man/.stamp

$(TOOL): $(TOOL_OBJS) $(STATIC)
	$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $(TOOL_OBJS) $(STATIC) $(LDLIBS)

# The nbdkit plugin (plugins/nbdkit/): a client of the public API as the
# command is, linked against libblkring.so alone, which it finds beside
# itself in the build tree and in PREFIX/lib once installed.  Part of
# `all` where nbdkit-plugin-dev is installed (scripts/setup.sh's list).
NBDKIT_PLUGIN := $(O)/nbdkit-blkring-plugin.so
PLUGIN_OBJS := $(patsubst %.c,$(O)/obj/%.o,$(sort $(wildcard plugins/nbdkit/*.c)))
NBDKIT_PLUGINDIR := $(shell pkg-config --variable=plugindir nbdkit 2>/dev/null)
PLUGIN_REL := $(patsubst $(shell pkg-config --variable=prefix nbdkit 2>/dev/null)/%,%,$(NBDKIT_PLUGINDIR))
PLUGIN_UP := $(subst $() ,/,$(patsubst %,..,$(subst /, ,$(PLUGIN_REL))))
$(O)/obj/plugins/%.o: plugins/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -fvisibility=hidden $(shell pkg-config --cflags nbdkit) -c -o $@ $<
$(NBDKIT_PLUGIN): $(PLUGIN_OBJS) $(SHARED)
	$(CC) -shared $(LDFLAGS) -Wl,-rpath,'$$ORIGIN:$$ORIGIN/$(PLUGIN_UP)/lib' -o $@ $(PLUGIN_OBJS) \
		-L$(O) -lblkring
ifneq ($(NBDKIT_PLUGINDIR),)
all: $(NBDKIT_PLUGIN)
endif

$(O)/tests/%: $(O)/obj/tests/%.o $(TEST_LIB_OBJS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $< $(TEST_LIB_OBJS) $(STATIC) $(LDLIBS)

# Tool unit tests (tests/test-tool-*.c) link the tool's objects, all but main.
TOOL_LIB_OBJS := $(filter-out $(O)/obj/tools/main.o,$(TOOL_OBJS))
$(O)/tests/test-tool-%: $(O)/obj/tests/test-tool-%.o $(TEST_LIB_OBJS) $(TOOL_LIB_OBJS) $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $< $(TEST_LIB_OBJS) $(TOOL_LIB_OBJS) $(STATIC) $(LDLIBS)

$(O)/examples/%: $(O)/obj/examples/%.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(STATIC) $(LDLIBS)

$(O)/bench/%: $(O)/obj/bench/%.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)

tests: $(TESTS) $(TOOL) $(MODULES)

# Sanitizer builds live in their own trees so objects never mix.
build-asan:
	@$(MAKE) --no-print-directory O=build/asan SAN=asan tests
build-tsan:
	@$(MAKE) --no-print-directory O=build/tsan SAN=tsan tests

setup:
	@scripts/setup.sh

setup-test:
	@scripts/setup.sh test

test: setup-test
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory build-asan
	@$(MAKE) --no-print-directory build-tsan
	@$(MAKE) --no-print-directory build-fuzz
	@tests/run-tests.sh build/asan build/tsan

run: setup
	@$(MAKE) --no-print-directory all
	@scripts/run-main.sh $(O)

LIBDIR := $(DESTDIR)$(PREFIX)/lib
MANDIR := $(DESTDIR)$(PREFIX)/share/man

# The .pc is written here, so it names the PREFIX of this install.
install: all man
	install -d $(DESTDIR)$(PREFIX)/include $(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/bin \
		$(MANDIR)/man3 $(MANDIR)/man7
	install -m 644 include/blkring.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(STATIC) $(LIBDIR)/
	install -m 755 $(SHARED) $(LIBDIR)/
	ln -sf libblkring.so.$(VERSION) $(LIBDIR)/libblkring.so.$(SOMAJOR)
	ln -sf libblkring.so.$(SOMAJOR) $(LIBDIR)/libblkring.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@LIBS_PRIVATE@|$(LIB_LDLIBS)|' blkring.pc.in >$(LIBDIR)/pkgconfig/blkring.pc
	chmod 644 $(LIBDIR)/pkgconfig/blkring.pc
	install -m 755 $(TOOL) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(O)/man/*.3 $(MANDIR)/man3/
	install -m 644 $(O)/man/*.7 $(MANDIR)/man7/
	$(if $(NBDKIT_PLUGINDIR),install -D -m 755 $(NBDKIT_PLUGIN) $(DESTDIR)$(PREFIX)/$(PLUGIN_REL)/nbdkit-blkring-plugin.so)
	$(if $(MODULES),install -D -m 755 -t $(LIBDIR)/blkring-modules $(MODULES))

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/blkring.h $(LIBDIR)/libblkring.a \
		$(LIBDIR)/libblkring.so $(LIBDIR)/libblkring.so.$(SOMAJOR) \
		$(LIBDIR)/libblkring.so.$(VERSION) $(LIBDIR)/pkgconfig/blkring.pc \
		$(DESTDIR)$(PREFIX)/bin/blkring $(MANDIR)/man7/blkring.7 $(MANDIR)/man3/blkring_*.3
	$(if $(NBDKIT_PLUGINDIR),rm -f $(DESTDIR)$(PREFIX)/$(PLUGIN_REL)/nbdkit-blkring-plugin.so)
	rm -rf $(LIBDIR)/blkring-modules

format:
	clang-format -i $(LIB_SRCS) $(TOOL_SRCS) $(TEST_SRCS) $(TEST_LIB_SRCS) $(EXAMPLE_SRCS) \
		$(BENCH_SRCS) include/*.h $(wildcard src/*/*.h tools/*.h tests/*.h bench/*.h)

clean:
	rm -rf build

include tests/fuzz/fuzz.mk
include tests/stress/stress.mk

.SECONDARY:

.PHONY: all tests build-asan build-tsan setup setup-test test run install uninstall man format clean

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
