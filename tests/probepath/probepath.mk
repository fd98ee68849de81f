# The probe paths of function points (tests/probepath/run.py, issue 14):
# the same exact counts with SDS_PROBE_PATH=session and =pair.  Included
# from the root Makefile after tests/targets/targets.mk:
#
#   make probepath-tests    runs the tests (root: they load BPF)
#
# `make test` runs them too, from tests/suites.py.

.PHONY: probepath-tests
EXTRA_TESTS += probepath-tests

probepath-tests: all $(TEST_TARGETS)
	$(PYTHON) tests/probepath/run.py
