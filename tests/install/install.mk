# tests/install: make install and make uninstall into a DESTDIR, the
# installed products at work (issue 17; docs/INSTALL.md).  Included by
# the root Makefile.
#
#   make install-tests   tests/install/run.py (root): the exact file list
#                        and modes, the soname links, a program built
#                        with the installed pkg-config file, the installed
#                        sds-admin's dashboard, systemd-analyze verify on
#                        the units, the loader under the unit's
#                        capabilities and command line, uninstall, bad
#                        PREFIX

EXTRA_TESTS += install-tests

.PHONY: install-tests
install-tests: all test-targets
	$(PYTHON) tests/install/run.py
