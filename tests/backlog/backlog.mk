# The heartbeat backlog across loader restarts (tests/backlog/run.py,
# issue 11).  Included from the root Makefile:
#
#   make backlog-tests    runs the tests (root: they load BPF)

PYTHON  ?= python3

EXTRA_TESTS += backlog-tests

.PHONY: backlog-tests
backlog-tests: all $(TEST_TARGETS)
	$(PYTHON) tests/backlog/run.py
