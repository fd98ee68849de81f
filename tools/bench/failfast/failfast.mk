# tools/bench/failfast: what fail-fast's cgroup programs cost a connect(2)
# (ff_connect.py, run by hand: docs/FAILFAST.md).  Included by
# tools/bench/bench.mk.

BENCH_BINS += $(BENCH_DIR)/bench-ff-connect

$(BENCH_DIR)/bench-ff-connect: tools/bench/failfast/ff_connect.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(BENCH_WARN) -o $@ $<

# The hook alone: an empty cgroup/connect4 program, attached by the script.
BENCH_BINS += $(BENCH_DIR)/ff_empty.bpf.o

$(BENCH_DIR)/ff_empty.bpf.o: tools/bench/failfast/ff_empty.bpf.c $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -c $< -o $@

# What the semaphore and token bucket add to a :failfast= point's probe
# (ff_limit.py, part of make bench): bench-keys' kb_fn, three copies.
.PHONY: ff-limit-bench
ff-limit-bench: all $(BENCH_DIR)/bench-keys
	$(PYTHON) tools/bench/failfast/ff_limit.py
