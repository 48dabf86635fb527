# The BPF datapath (datapath_type=bpf): the BPF object, compiled by clang
# and installed where ovs-vswitchd looks for it, and the dpif provider that
# loads it into the kernel (lib/dpif-bpf*).

EXTRA_DIST += bpf/datapath-abi.h

if HAVE_BPF_DATAPATH
lib_libopenvswitch_la_SOURCES += \
	lib/dpif-bpf.c \
	lib/dpif-bpf.h \
	lib/dpif-bpf-flow-table.c \
	lib/dpif-bpf-flow-table.h \
	lib/dpif-bpf-linux.c \
	lib/dpif-bpf-linux.h \
	lib/dpif-bpf-loader.c \
	lib/dpif-bpf-loader.h \
	lib/dpif-bpf-odp.c \
	lib/dpif-bpf-odp.h \
	lib/dpif-bpf-private.h \
	lib/dpif-bpf-upcall.c \
	lib/dpif-bpf-upcall.h

endif

# libbpf's print hook, shared by the BPF datapath and the AF_XDP netdev.
if HAVE_BPF_DATAPATH
lib_libopenvswitch_la_SOURCES += lib/ovs-libbpf-log.c lib/ovs-libbpf-log.h
else
if HAVE_AF_XDP
lib_libopenvswitch_la_SOURCES += lib/ovs-libbpf-log.c lib/ovs-libbpf-log.h
endif
endif

if HAVE_BPF_DATAPATH
# Where ovs-vswitchd finds the object: $(pkgdatadir)/bpf when installed,
# this build tree when run from it (tests, the sandbox demo).
bpfdir = $(pkgdatadir)/bpf
bpf_DATA = bpf/datapath.bpf.o
AM_CPPFLAGS += -DBPF_DATAPATH_BUILD_OBJ='"$(abs_top_builddir)/bpf/datapath.bpf.o"'

BPF_SRC = bpf/datapath.bpf.c
BPF_INC = \
	bpf/actions.h \
	bpf/actions-clone.h \
	bpf/actions-meta.h \
	bpf/actions-output.h \
	bpf/actions-set.h \
	bpf/actions-vlan.h \
	bpf/csum.h \
	bpf/datapath-abi.h \
	bpf/downcall.h \
	bpf/lookup.h \
	bpf/maps.h \
	bpf/parse.h \
	bpf/skb-csum.h \
	bpf/upcall.h
EXTRA_DIST += $(BPF_SRC) $(BPF_INC)
CLEANFILES += bpf/datapath.bpf.o

bpf/datapath.bpf.o: $(BPF_SRC) $(BPF_INC)
	$(AM_V_GEN)$(MKDIR_P) bpf && \
	$(BPF_CLANG) $(BPF_CFLAGS) -I$(srcdir) -c $(srcdir)/bpf/datapath.bpf.c -o $@
endif
