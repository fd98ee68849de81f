# libsds (libsds/): included by the root Makefile, which defines BUILD,
# OBJ, TBUILD, CC, CFLAGS, CPPFLAGS and WARN, and runs PRODUCTS and
# EXTRA_TESTS.
#
#   build/include/sds.h            the public header
#   build/include/sds.hpp          the C++17 header (header only, over sds.h)
#   build/include/sds_ext.h        what an extension (plugin) builds against
#   build/lib/libsds.a             static library
#   build/lib/libsds.so(.0)        shared library, soname libsds.so.0
#   build/lib/pkgconfig/sds.pc     pkg-config --cflags --libs [--static] sds
#
# One set of objects serves both libraries: -fPIC (so libsds.a can go
# into a PIE, a non-PIE or a user's own shared object) and
# -fvisibility=hidden (only the API and the four probe sites are
# exported).  TLS uses descriptors (gnu2): the thread's frame stack costs
# an indirect call that returns a constant in the .so, and the linker
# relaxes it to a %fs offset in an executable.  Tests build their own
# objects under build/test/libsds, never over these.

AR            ?= ar
STRIP         ?= strip
OBJDUMP       ?= objdump
PKG_CONFIG    ?= pkg-config

LIBSDS_OBJDIR := $(OBJ)/libsds
LIBSDS_CSRCS  := libsds/sds.c libsds/guard.c libsds/client.c \
		 libsds/conn.c libsds/repair.c common/names.c \
		 libsds/balance.c libsds/balance_hash.c libsds/lb.c libsds/lb_ext.c \
		 libsds/ext_balancer.c common/ext/ext.c common/ext/ext_load.c common/trust.c
LIBSDS_HDRS   := $(wildcard libsds/*.h) bpf/sds_flags.h bpf/sds_types.h bpf/sds_keys.h \
		 common/names.h common/ext/ext.h common/ext/ext_int.h common/trust.h
LIBSDS_OBJS   := $(patsubst %.c,$(LIBSDS_OBJDIR)/%.o,$(LIBSDS_CSRCS)) \
		 $(LIBSDS_OBJDIR)/libsds/sites.o
LIBSDS_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -pthread -fPIC \
		 -fvisibility=hidden -mtls-dialect=gnu2
LIBSDS_INC    := -Ilibsds

LIBSDS_HEADER := $(BUILD)/include/sds.h
LIBSDS_HPP    := $(BUILD)/include/sds.hpp
LIBSDS_EXT_H  := $(BUILD)/include/sds_ext.h
LIBSDS_A      := $(BUILD)/lib/libsds.a
LIBSDS_SO0    := $(BUILD)/lib/libsds.so.0
LIBSDS_SO     := $(BUILD)/lib/libsds.so
LIBSDS_PC     := $(BUILD)/lib/pkgconfig/sds.pc
# The real name of the .so (an ABI number, not the release: SDS_VERSION).
LIBSDS_VERSION := 0.1.0

PRODUCTS += $(LIBSDS_HEADER) $(LIBSDS_HPP) $(LIBSDS_EXT_H) $(LIBSDS_A) $(LIBSDS_SO0) $(LIBSDS_SO) $(LIBSDS_PC)

$(filter %.o,$(patsubst %.c,$(LIBSDS_OBJDIR)/%.o,$(LIBSDS_CSRCS))): \
		$(LIBSDS_OBJDIR)/%.o: %.c $(LIBSDS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIBSDS_INC) $(LIBSDS_CFLAGS) -c $< -o $@

$(LIBSDS_OBJDIR)/libsds/sites.o: libsds/sites.S
	@mkdir -p $(@D)
	$(CC) -c $< -o $@

$(LIBSDS_HEADER): libsds/sds.h
	@mkdir -p $(@D)
	cp $< $@

$(LIBSDS_HPP): libsds/sds.hpp
	@mkdir -p $(@D)
	cp $< $@

# What a plugin (a balancing policy, a wrapper) builds against.
$(LIBSDS_EXT_H): libsds/sds_ext.h
	@mkdir -p $(@D)
	cp $< $@

$(LIBSDS_A): $(LIBSDS_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# -Bsymbolic-functions: the library's own calls of its sites go straight
# to them, not through the PLT where another object could interpose.
$(LIBSDS_SO0): $(LIBSDS_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared -pthread -Wl,-soname,libsds.so.0 -Wl,-Bsymbolic-functions \
		-Wl,--no-undefined -Wl,-z,noexecstack -Wl,-z,relro,-z,now $(LDFLAGS) \
		-o $@ $^

$(LIBSDS_SO): $(LIBSDS_SO0)
	ln -sf $(notdir $<) $@

# The prefix is the build directory (absolute): the .pc describes the
# libraries where they are built.  -rpath lets a program linked against
# the .so run from the build tree.
$(LIBSDS_PC): libsds/libsds.mk $(SDS_VERSION_H)
	@mkdir -p $(@D)
	printf '%s\n' \
		'prefix=$(abspath $(BUILD))' \
		'includedir=$${prefix}/include' \
		'libdir=$${prefix}/lib' \
		'' \
		'Name: sds' \
		'Description: libsds, the guard of sds-bpf (service downgrade with eBPF)' \
		'Version: $(SDS_VERSION)' \
		'Cflags: -I$${includedir}' \
		'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lsds' \
		'Libs.private: -lpthread' > $@.tmp
	mv $@.tmp $@

.PHONY: libsds
libsds: $(PRODUCTS)

include tests/libsds/libsds.mk
