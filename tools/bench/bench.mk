# tools/bench: the benchmarks (make bench), one folder for each thing
# measured (tools/bench/README.md).  Included by the root Makefile; defines
# BENCH_BINS (make bench-bins) and includes each folder's rules.

BUILD   ?= build
GEN     ?= $(BUILD)/gen
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool

BENCH_DIR  := $(BUILD)/bench
BENCH_WARN := -Wall -Wextra -Wno-unused-parameter
BENCH_BINS :=

# baseline/ first: the bare probes' skeletons the others build against.
include tools/bench/baseline/baseline.mk tools/bench/probe/probe.mk \
	tools/bench/multilink/multilink.mk tools/bench/guard/guard.mk \
	tools/bench/copy/copy.mk tools/bench/loader/loader.mk \
	tools/bench/exact/exact.mk tools/bench/failfast/failfast.mk \
	tools/bench/lb/lb.mk tools/bench/overload/overload.mk \
	tools/bench/split/split.mk tools/bench/census/census.mk \
	tools/bench/delay/delay.mk tools/bench/keys/keys.mk
