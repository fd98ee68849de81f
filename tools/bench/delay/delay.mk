# tools/bench/delay: what the delay drills' tc egress program costs a
# packet of an unmarked socket (dl_egress.py, run by hand: docs/DELAY.md).
# Included by tools/bench/bench.mk.

# The hook alone: an empty tc program, attached by the script.
BENCH_BINS += $(BENCH_DIR)/dl_empty.bpf.o

$(BENCH_DIR)/dl_empty.bpf.o: tools/bench/delay/dl_empty.bpf.c $(GEN)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -I$(GEN) -c $< -o $@
