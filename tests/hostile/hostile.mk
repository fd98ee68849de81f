# Hostile-client tests (tests/hostile/run.py, issue 8: the loader's trust
# boundary).  Include from the root Makefile after libsds/libsds.mk.
#
#   make hostile-tests   builds every tests/hostile/*.c into
#                        build/test/hostile/NAME and runs the suite (root)
#
# Each program is linked with build/lib/libsds.a, so a copy of it staged
# in a world-readable temp dir runs as nobody whatever the checkout's modes.

BUILD   ?= build
CC      ?= gcc
PYTHON  ?= python3

HOSTILE_DIR  := $(BUILD)/test/hostile
HOSTILE_SRCS := $(wildcard tests/hostile/*.c)
HOSTILE_BINS := $(patsubst tests/hostile/%.c,$(HOSTILE_DIR)/%,$(HOSTILE_SRCS))

$(HOSTILE_DIR)/%: tests/hostile/%.c $(wildcard tests/hostile/*.h) $(BUILD)/lib/libsds.a \
		$(BUILD)/include/sds.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -I$(BUILD)/include \
		-Ibpf -Ilibsds -Icommon -o $@ $< $(BUILD)/lib/libsds.a -lpthread

# The loader under ASan/LSan/UBSan (t_asan.py): a leak or a bad access in
# what a client makes it do fails the suite.  SAN, the source lists and
# asan_objs (the ASan objects the unit tests link too) come from the root
# Makefile.
LOADER_ASAN := $(BUILD)/test/sds-bpf-asan
$(LOADER_ASAN): $(call asan_objs,$(COMMON_SRCS) $(LOADER_SRCS) $(LOADER_USRC))
	@mkdir -p $(@D)
	$(CC) -O1 -g $(SAN) -o $@ $^ $(LOADER_LIBS)

.PHONY: hostile-bins hostile-tests
hostile-bins: $(HOSTILE_BINS) $(LOADER_ASAN)
hostile-tests: all hostile-bins
	$(PYTHON) tests/hostile/run.py
