# tools/bench/overload: goodput and p99 of a guarded service offered 0.5x to
# 3x its dependency's capacity with no limit, the best static limit and each
# adaptive algorithm, and after the dependency slows 2x (issue 33;
# overload_bench.py; `make overload-bench`, root: it attaches).  Included by
# tools/bench/bench.mk.

.PHONY: overload-bench
overload-bench: all $(BUILD)/test/targets/overload
	$(PYTHON) tools/bench/overload/overload_bench.py
