# tests/cleanroot: the Debian packages on a clean Debian 12 root and the
# units under a real systemd (systemd-nspawn --boot), issue 17.  Included
# by the root Makefile.
#
#   make cleanroot-tests   make deb, then tests/cleanroot/mkroot.sh (the
#                          cached roots in build/cleanroot: debootstrap
#                          the first time, a few minutes; fails, saying
#                          why, without root, debootstrap or the mirror),
#                          then tests/cleanroot/run.py (root)
#
# The packages are the ones of build/deb that tests/deb reads too: make
# test builds them once (make deb, in its build phase); neither runner
# calls make.

CLEANROOT_DIR := $(BUILD)/cleanroot
EXTRA_TESTS += cleanroot-tests

.PHONY: cleanroot-tests
cleanroot-tests: deb
	sh tests/cleanroot/mkroot.sh $(CLEANROOT_DIR)
	$(PYTHON) tests/cleanroot/run.py
