# The BPF datapath (datapath_type=bpf): the BPF object, compiled by clang
# and installed where ovs-vswitchd looks for it, and the dpif provider that
# loads it into the kernel (lib/dpif-bpf*).

EXTRA_DIST += bpf/datapath-abi.h

if HAVE_BPF_DATAPATH
lib_libopenvswitch_la_SOURCES += \
	lib/dpif-bpf.c \
	lib/dpif-bpf.h

# Where ovs-vswitchd finds the object: $(pkgdatadir)/bpf when installed,
# this build tree when run from it (tests, the sandbox demo).
bpfdir = $(pkgdatadir)/bpf
bpf_DATA = bpf/datapath.bpf.o
AM_CPPFLAGS += -DOVS_BPF_BUILD_OBJ='"$(abs_top_builddir)/bpf/datapath.bpf.o"'

BPF_SRC = bpf/datapath.bpf.c
BPF_INC = bpf/datapath-abi.h
EXTRA_DIST += $(BPF_SRC) $(BPF_INC)
CLEANFILES += bpf/datapath.bpf.o

bpf/datapath.bpf.o: $(BPF_SRC) $(BPF_INC)
	$(AM_V_GEN)$(MKDIR_P) bpf && \
	$(BPF_CLANG) $(BPF_CFLAGS) -I$(srcdir) -c $(srcdir)/bpf/datapath.bpf.c -o $@
endif
