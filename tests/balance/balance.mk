# Balancing over providers fed by the loader's counts (tests/balance/run.py,
# issue 13).  Included from the root Makefile:
#
#   make balance-tests    runs the tests (root: they load BPF)

PYTHON  ?= python3

EXTRA_TESTS += balance-tests

.PHONY: balance-tests
balance-tests: all $(TEST_TARGETS)
	$(PYTHON) tests/balance/run.py
