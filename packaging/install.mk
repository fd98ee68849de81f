# packaging/install.mk - make install / make uninstall (docs/INSTALL.md).
# Included by the root Makefile, which defines BUILD, BIN and PRODUCTS;
# libsds/libsds.mk defines the libsds products and LIBSDS_VERSION.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc] ...
#   make uninstall (the same variables)
#
# What goes where (PREFIX-relative unless absolute):
#
#   sbin/sds-bpf sbin/sds-admin sbin/sds-copy         0755
#   lib/libsds.so.$(LIBSDS_VERSION)                   0644, soname libsds.so.0
#   lib/libsds.so.0 -> libsds.so.$(LIBSDS_VERSION), lib/libsds.so -> libsds.so.0
#   lib/libsds.a  include/sds.h include/sds.hpp       0644
#   include/sds_ext.h                                 0644
#   lib/pkgconfig/sds.pc                              0644, prefix=$(PREFIX)
#   share/sds-admin/web/*                             0644, the dashboard
#   lib/systemd/system/sds-admin.service, sds-bpf@.service   0644
#   share/man/man8/sds-bpf.8 sds-admin.8 sds-copy.8,
#     man3/libsds.3, man5/sds-strategies.5        0644 (build/man, man/man.mk)
#   share/bash-completion/completions/sds-bpf     0644
#   $(SYSCONFDIR)/sds/admin.conf                      0640 (its OPTIONS may name
#                                                     the database), conffile
#   $(SYSCONFDIR)/sds/apps/example.conf,
#     strategies/example.json                         0644, conffiles
#
# Conffiles (the files under $(SYSCONFDIR)) are treated as Debian treats
# them: install never overwrites one the operator changed (it says so and
# leaves it), and uninstall removes one only if it is still what install
# wrote; the operator's own files there (apps/APP.conf, the tokens) are
# never touched.  Directories are removed when empty.
#
# The units and the conffiles are written from templates in packaging/,
# with @SBINDIR@ and @SYSCONFDIR@ replaced.  Without DESTDIR, install and
# uninstall run ldconfig (the new libsds.so.0 is found at once).

PREFIX     ?= /usr/local
DESTDIR    ?=
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
# /etc whatever the PREFIX: the units read their confs there, as the
# loader keeps /run/sds and /var/lib/sds whatever the PREFIX.
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
MANDIR     ?= $(DATADIR)/man
# Where bash-completion looks for a command's completion by its name.
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
INSTALL    ?= install
LDCONFIG   ?= ldconfig

# Bad paths stop make before anything is built or written: one line.
INSTALL_DIRVARS := PREFIX SBINDIR LIBDIR INCLUDEDIR DATADIR SYSCONFDIR UNITDIR \
		   MANDIR BASHCOMPDIR
ifneq ($(filter install uninstall,$(MAKECMDGOALS)),)
$(foreach v,$(INSTALL_DIRVARS),$(if $(filter-out 1,$(words $($(v)))),\
	$(error $(v) must be one absolute path, not '$($(v))')))
$(foreach v,$(INSTALL_DIRVARS),$(if $(filter /%,$($(v))),,\
	$(error $(v) must be an absolute path, not '$($(v))')))
endif

LIBSDS_SO_REAL := libsds.so.$(LIBSDS_VERSION)
INSTALL_WEB    := $(notdir $(wildcard admin/web/*))
INSTALL_UNITS  := sds-admin.service sds-bpf@.service
INSTALL_ETC    := admin.conf apps/example.conf strategies/example.json
# build/man/NAME.SECTION -> $(MANDIR)/manSECTION/NAME.SECTION
INSTALL_MAN    := $(foreach p,$(MAN_PAGES),man$(subst .,,$(suffix $(p)))/$(notdir $(p)))

# In the .pc a directory under PREFIX is written as ${prefix}/...
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

# $(call subst_in,SRC): SRC with @SBINDIR@ and @SYSCONFDIR@ replaced, on stdout.
subst_in = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $(1)

# What install builds first: every product.  tests/install/install.mk's
# install-stage, whose own prerequisites are these, runs install with
# INSTALL_DEPS= so that its make only copies (it builds nothing, and so
# never writes build/ beside the make that runs it).
INSTALL_DEPS = $(PRODUCTS)

.PHONY: install uninstall
install: $(INSTALL_DEPS)
	$(INSTALL) -d -m 0755 $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(DATADIR)/sds-admin/web \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/sds/apps \
		$(DESTDIR)$(SYSCONFDIR)/sds/strategies \
		$(addprefix $(DESTDIR)$(MANDIR)/,$(sort $(dir $(INSTALL_MAN)))) \
		$(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 0755 $(BIN)/sds-bpf $(BIN)/sds-admin $(BIN)/sds-copy $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 0644 $(LIBSDS_SO0) $(DESTDIR)$(LIBDIR)/$(LIBSDS_SO_REAL)
	ln -sfn $(LIBSDS_SO_REAL) $(DESTDIR)$(LIBDIR)/libsds.so.0
	ln -sfn libsds.so.0 $(DESTDIR)$(LIBDIR)/libsds.so
	$(INSTALL) -m 0644 $(LIBSDS_A) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 0644 $(LIBSDS_HEADER) $(LIBSDS_HPP) $(LIBSDS_EXT_H) $(DESTDIR)$(INCLUDEDIR)/
	printf '%s\n' \
		'prefix=$(PREFIX)' \
		'includedir=$(call pc_dir,$(INCLUDEDIR))' \
		'libdir=$(call pc_dir,$(LIBDIR))' \
		'' \
		'Name: sds' \
		'Description: libsds, the guard of sds-bpf (service downgrade with eBPF)' \
		'Version: $(SDS_VERSION)' \
		'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -lsds' \
		'Libs.private: -lpthread' > $(DESTDIR)$(LIBDIR)/pkgconfig/sds.pc.tmp
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/sds.pc.tmp
	mv $(DESTDIR)$(LIBDIR)/pkgconfig/sds.pc.tmp $(DESTDIR)$(LIBDIR)/pkgconfig/sds.pc
	$(INSTALL) -m 0644 $(addprefix admin/web/,$(INSTALL_WEB)) $(DESTDIR)$(DATADIR)/sds-admin/web/
	@set -e; for m in $(INSTALL_MAN); do \
		$(INSTALL) -m 0644 $(MAN_DIR)/$${m#*/} $(DESTDIR)$(MANDIR)/$$m; \
	done
	$(INSTALL) -m 0644 packaging/bash-completion/sds-bpf $(DESTDIR)$(BASHCOMPDIR)/sds-bpf
	@set -e; for u in $(INSTALL_UNITS); do \
		$(call subst_in,packaging/systemd/$$u.in) > $(DESTDIR)$(UNITDIR)/$$u.tmp; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.tmp; \
		mv $(DESTDIR)$(UNITDIR)/$$u.tmp $(DESTDIR)$(UNITDIR)/$$u; \
		echo "installed $(DESTDIR)$(UNITDIR)/$$u"; \
	done
	@set -e; for f in $(INSTALL_ETC); do \
		dst=$(DESTDIR)$(SYSCONFDIR)/sds/$$f; \
		$(call subst_in,packaging/etc/$$f) > $$dst.sds-new; \
		case $$f in admin.conf) chmod 0640 $$dst.sds-new;; *) chmod 0644 $$dst.sds-new;; esac; \
		if [ -e $$dst ] && ! cmp -s $$dst.sds-new $$dst; then \
			rm -f $$dst.sds-new; \
			echo "kept $$dst: changed since it was installed (the new one is packaging/etc/$$f)"; \
		else \
			mv $$dst.sds-new $$dst; echo "installed $$dst"; \
		fi; \
	done
	@if [ -z "$(DESTDIR)" ]; then $(LDCONFIG) || true; fi

# Exactly what install wrote; conffiles only while unchanged.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(SBINDIR)/,sds-bpf sds-admin sds-copy)
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,$(LIBSDS_SO_REAL) libsds.so.0 libsds.so libsds.a)
	rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/sds.pc
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,sds.h sds.hpp sds_ext.h)
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/sds-admin/web/,$(INSTALL_WEB))
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(INSTALL_UNITS))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/,$(INSTALL_MAN))
	rm -f $(DESTDIR)$(BASHCOMPDIR)/sds-bpf
	@set -e; for f in $(INSTALL_ETC); do \
		dst=$(DESTDIR)$(SYSCONFDIR)/sds/$$f; \
		[ -e $$dst ] || continue; \
		if $(call subst_in,packaging/etc/$$f) | cmp -s - $$dst; then \
			rm -f $$dst; echo "removed $$dst"; \
		else \
			echo "kept $$dst: changed since it was installed"; \
		fi; \
	done
	-@rmdir $(DESTDIR)$(DATADIR)/sds-admin/web $(DESTDIR)$(DATADIR)/sds-admin \
		$(DESTDIR)$(SYSCONFDIR)/sds/apps $(DESTDIR)$(SYSCONFDIR)/sds/strategies \
		$(DESTDIR)$(SYSCONFDIR)/sds 2>/dev/null || true
	@if [ -z "$(DESTDIR)" ]; then $(LDCONFIG) || true; fi
