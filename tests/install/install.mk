# tests/install: make install and make uninstall into a DESTDIR, the
# installed products at work (issue 17; docs/INSTALL.md).  Included by
# the root Makefile.
#
#   make install-stage   every run of make install / make uninstall the
#                        suite checks, done once into $(INSTALL_STAGE)
#                        (below); part of make test's build phase
#   make install-tests   install-stage and test-targets, then
#                        tests/install/run.py (root): the exact file list
#                        and modes, the soname links, a program built
#                        with the installed pkg-config file, the installed
#                        sds-admin's dashboard, systemd-analyze verify on
#                        the units, the loader under the unit's
#                        capabilities and command line, uninstall, the
#                        conffiles an operator changed, bad PREFIX
#
# The runner never calls make: it checks what install-stage wrote, and
# runs the installed products from copies of $(INSTALL_STAGE)/usr in its
# own temp dirs.

EXTRA_TESTS += install-tests

INSTALL_STAGE := $(BUILD)/install-stage
IST           := $(abspath $(INSTALL_STAGE))
# make install or uninstall after install-stage's prerequisites are
# built: it only copies (INSTALL_DEPS=, packaging/install.mk), quietly.
# The bad PREFIX cases run as a make of their own (no MAKEFLAGS), as an
# operator's would: make stops while reading the makefiles.
IST_MAKE       = $(MAKE) -s --no-print-directory INSTALL_DEPS=

# What each part of $(INSTALL_STAGE) is:
#   usr/             install DESTDIR=usr PREFIX=/usr (usr.out: its lines)
#   prefix/, etc/    install PREFIX=prefix SYSCONFDIR=etc, no DESTDIR
#   gone/            the same into gone/prefix and gone/etc, then uninstall
#   uninstalled/     install DESTDIR=uninstalled PREFIX=/usr, then
#                    uninstall (uninstalled.out: uninstall's lines)
#   conffiles/       install, then what an operator does: a line added
#                    to etc/sds/apps/example.conf (conffiles.changed: the
#                    file then) and an apps/shop.conf of the operator's;
#                    install again (conffiles.install.out), uninstall
#                    (conffiles.uninstall.out)
#   bad/GOAL-N.{rc,out,err}   GOAL (install, uninstall) with the Nth bad
#                    PREFIX: 'usr', '', '/usr /opt' (DESTDIR=bad/dest)
.PHONY: install-stage install-tests
install-stage: $(PRODUCTS)
	rm -rf $(IST)
	mkdir -p $(IST)/bad
	+$(IST_MAKE) install DESTDIR=$(IST)/usr PREFIX=/usr >$(IST)/usr.out
	+$(IST_MAKE) install PREFIX=$(IST)/prefix SYSCONFDIR=$(IST)/etc LDCONFIG=: >/dev/null
	+$(IST_MAKE) install PREFIX=$(IST)/gone/prefix SYSCONFDIR=$(IST)/gone/etc LDCONFIG=: >/dev/null
	+$(IST_MAKE) uninstall PREFIX=$(IST)/gone/prefix SYSCONFDIR=$(IST)/gone/etc LDCONFIG=: >/dev/null
	+$(IST_MAKE) install DESTDIR=$(IST)/uninstalled PREFIX=/usr >/dev/null
	+$(IST_MAKE) uninstall DESTDIR=$(IST)/uninstalled PREFIX=/usr >$(IST)/uninstalled.out
	+$(IST_MAKE) install DESTDIR=$(IST)/conffiles PREFIX=/usr >/dev/null
	echo '# changed by the operator' >>$(IST)/conffiles/etc/sds/apps/example.conf
	cp $(IST)/conffiles/etc/sds/apps/example.conf $(IST)/conffiles/etc/sds/apps/shop.conf
	cp $(IST)/conffiles/etc/sds/apps/example.conf $(IST)/conffiles.changed
	+$(IST_MAKE) install DESTDIR=$(IST)/conffiles PREFIX=/usr >$(IST)/conffiles.install.out
	+$(IST_MAKE) uninstall DESTDIR=$(IST)/conffiles PREFIX=/usr >$(IST)/conffiles.uninstall.out
	@for g in install uninstall; do \
		n=0; for p in usr '' '/usr /opt'; do \
			rc=0; env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
				$(MAKE) -s --no-print-directory $$g DESTDIR=$(IST)/bad/dest PREFIX="$$p" \
				>$(IST)/bad/$$g-$$n.out 2>$(IST)/bad/$$g-$$n.err || rc=$$?; \
			echo $$rc >$(IST)/bad/$$g-$$n.rc; n=$$((n + 1)); \
		done; \
	done

install-tests: install-stage test-targets
	$(PYTHON) tests/install/run.py
