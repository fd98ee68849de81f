# tools/bench/loader: the loader as a program (its CPU and memory as its
# points grow, its tick under hostile clients, its probe-cost estimate);
# the scripts are run by tools/bench/probe/run.sh.  Included by
# tools/bench/bench.mk.

# The loader-cost benchmark's target (loader_cost.py).
BENCH_BINS += $(BUILD)/test/targets/target_many

# Tick lateness under hostile clients (hostile.py): its TARGET and victim
# is the hostile suite's loop_victim (tests/hostile/hostile.mk).
BENCH_BINS += $(BUILD)/test/hostile/loop_victim
