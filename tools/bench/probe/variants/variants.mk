# tools/bench/probe/variants: the loader built with bench-only switches of
# bpf/sds.bpf.c, for the cost breakdown of a function point (run.sh runs
# each beside sds-bpf on the nop5 site; bench.py reports the difference).
# Included by tools/bench/bench.mk, so `make bench` rebuilds them.
#
# Each variant is the whole tree's own rules run again in a build directory
# of its own, build/bench/variants/NAME/ (its vmlinux.h, .bpf.o, skeleton
# and loader objects), with SDS_BPF_VARIANT on the command line; the
# loader is build/bench/variants/NAME/sds-bpf.  No BPF source is copied.
# The variants are cumulative, so that their differences add up:
#
#   noclock    SDS_VARIANT_NOCLOCK: the entry's and the end's clock reads
#              are a constant (what measuring latency costs)
#   noframes   and SDS_VARIANT_NOFRAMES: no per-thread frame stack in
#              task storage either (what pairing entry and end costs)
#
# sds-bpf less noclock is the clock reads, noclock less noframes the frame
# stack, noframes less the bare pair the rest (slots, gauge, histogram,
# config).  A variant's latencies are all 0 and, without the clock, its
# per-second counts land in a second long gone: run.sh checks a variant's
# count on the calls completed (the gauges), not on the visits.

BENCH_VARIANTS := noclock noframes
VARIANT_DEFS_noclock  := -DSDS_VARIANT_NOCLOCK
VARIANT_DEFS_noframes := -DSDS_VARIANT_NOCLOCK -DSDS_VARIANT_NOFRAMES

VARIANT_DIR := $(BENCH_DIR)/variants
BENCH_BINS  += $(BENCH_VARIANTS:%=$(VARIANT_DIR)/%/sds-bpf)

# Always asked: the variant's own make knows what is out of date.
$(VARIANT_DIR)/%/sds-bpf: variants-force
	$(MAKE) --no-print-directory BUILD=$(VARIANT_DIR)/$* \
		BIN=$(VARIANT_DIR)/$* SDS_BPF_VARIANT='$(VARIANT_DEFS_$*)' $@

.PHONY: variants-force
variants-force:

# Inside a variant's own make: only there, and its switches are a
# prerequisite of its object (a change of switches rebuilds it).
ifneq ($(SDS_BPF_VARIANT),)
ifeq ($(findstring /bench/variants/,$(BUILD)),)
$(error SDS_BPF_VARIANT is for the builds of tools/bench/probe/variants, not $(BUILD))
endif
$(GEN)/sds.bpf.o: $(BUILD)/variant.flags
$(BUILD)/variant.flags: variants-force
	@mkdir -p $(@D)
	@echo '$(SDS_BPF_VARIANT)' | cmp -s - $@ || echo '$(SDS_BPF_VARIANT)' > $@
endif
