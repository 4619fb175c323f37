# Stress programs (tests/stress/stress-*.c), each built into
# $(O)/tests/test-stress-* so that `make test` (tests/run-tests.sh) runs
# their short version in the asan and tsan trees.  `make stress` builds
# those trees and runs them for STRESS_SECONDS each (split over a
# program's cases); STRESS_ASAN and STRESS_TSAN name other trees.
STRESS_SRCS := $(sort $(wildcard tests/stress/stress-*.c))
STRESS_LIB_SRCS := $(sort $(filter-out $(STRESS_SRCS),$(wildcard tests/stress/*.c)))
STRESS_LIB_OBJS := $(STRESS_LIB_SRCS:%.c=$(O)/obj/%.o)
STRESS_TESTS := $(STRESS_SRCS:tests/stress/stress-%.c=$(O)/tests/test-stress-%)

STRESS_SECONDS ?= 300
STRESS_ASAN ?= build/asan
STRESS_TSAN ?= build/tsan

# The programs include tests/test.h and tests/test-file-util.h.
$(O)/obj/tests/stress/%.o: CFLAGS += -Itests

$(O)/tests/test-stress-%: $(O)/obj/tests/stress/stress-%.o $(STRESS_LIB_OBJS) $(TEST_LIB_OBJS) \
			  $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $< $(STRESS_LIB_OBJS) $(TEST_LIB_OBJS) $(STATIC) $(LDLIBS)

tests: $(STRESS_TESTS)

stress:
	@$(MAKE) --no-print-directory O=$(STRESS_ASAN) SAN=asan tests
	@$(MAKE) --no-print-directory O=$(STRESS_TSAN) SAN=tsan tests
	@STRESS_SECONDS=$(STRESS_SECONDS) tests/stress/run.sh $(STRESS_ASAN) $(STRESS_TSAN)

.PHONY: stress
