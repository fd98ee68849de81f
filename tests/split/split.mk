# Where calls' time went (tests/split/run.py, issue 33): on a CPU, on the
# run queue, blocked.  Included from the root Makefile after
# tests/targets/targets.mk:
#
#   make split-tests    runs the tests (root: they load BPF); ~40 s
#
# `make test` runs them too, from tests/suites.py.

.PHONY: split-tests
EXTRA_TESTS += split-tests

$(TT_DIR)/splitapp: tests/split/splitapp.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -fPIE -pie -o $@ $< -lpthread

test-targets: $(TT_DIR)/splitapp

split-tests: all $(TT_DIR)/splitapp $(TT_DIR)/guarded_static
	$(PYTHON) tests/split/run.py
