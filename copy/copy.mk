# sds-copy (issue 12): the traffic copy server and replay.  Included by
# the root Makefile; BUILD, CC, OBJ, BIN, PYTHON, WARN come from there.
#
#   make build/bin/sds-copy   the program (copy/*.c + the common codecs)
#   make copy-tests           tests/copy/run.py (root)
#   make copy-bench           tools/bench/copy/copy.py and diff_bench (replay
#                             --diff's pairs/s); also run by make bench
#
# Its own object rule: sds-copy needs no BPF skeleton.

COPY_SRCS   := $(wildcard copy/*.c copy/diff/*.c) common/copyrec.c common/hbpost.c common/names.c common/sdsjson.c common/tokfile.c common/trust.c
COPY_OBJS   := $(patsubst %.c,$(OBJ)/copy-prog/%.o,$(COPY_SRCS))
COPY_LIBS   := -ljansson -lcurl -lpthread
COPY_BENCH  := $(BUILD)/bench/copy_load
DIFF_BENCH  := $(BUILD)/bench/diff_bench

$(OBJ)/copy-prog/%.o: %.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Ibpf -Icommon -Icopy -Icopy/diff -I$(BUILD)/gen $(CFLAGS) $(WARN) -std=gnu11 -MMD -MP -c $< -o $@

$(BIN)/sds-copy: $(COPY_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(COPY_LIBS)

-include $(COPY_OBJS:.o=.d)

$(COPY_BENCH): tools/bench/copy/copy_load.c common/copyrec.c common/names.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Ibpf -Icommon -O2 -g $(WARN) -std=gnu11 -o $@ $^

# replay --diff's comparisons per second (issue 37): copy/diff/diff.c alone.
$(DIFF_BENCH): tools/bench/copy/diff_bench.c copy/diff/diff.c copy/diff/diff.h
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Icopy/diff -O2 -g $(WARN) -std=gnu11 -o $@ tools/bench/copy/diff_bench.c copy/diff/diff.c -ljansson

EXTRA_TESTS += copy-tests

.PHONY: copy-tests copy-bench
copy-tests: $(BIN)/sds-copy
	$(PYTHON) tests/copy/run.py

copy-bench: $(BIN)/sds-copy $(COPY_BENCH) $(DIFF_BENCH)
	$(PYTHON) tools/bench/copy/copy.py
	$(DIFF_BENCH)

# `make bench` runs copy-bench last (root Makefile), keeping its table.

# Unit tests of the copy server's pure modules (tests/unit/copy/test_copy_*.c):
# linked with those and the codecs, not with the loader's modules (the
# root Makefile's rules for the units leave them to this one).
COPY_PURE := copy/wrr.c copy/frame.c copy/diff/diff.c common/copyrec.c common/names.c
$(TBUILD)/unit/test_copy_%: tests/unit/copy/test_copy_%.c $(COPY_PURE) $(wildcard copy/*.h copy/diff/*.h common/*.h common/*/*.h)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Ibpf -Icommon -Icopy -Icopy/diff -O1 -g $(WARN) -std=gnu11 $(SAN) \
		-o $@ $< $(COPY_PURE) -lcmocka -ljansson
