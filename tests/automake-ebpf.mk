# Our test suites.  'make check' of the top-level wrapper runs check-ebpf,
# which runs, in order:
#
#   check-ebpf-unit     our unit suite (tests/ebpf-testsuite.at);
#   check-ovs-subset    the part of OVS's own unit suite that covers what we
#                       touch: the test files named in OVS_SUBSET_AT;
#   check-ebpf-system   our system suites (root only; they skip otherwise).
#
# All run with OVS's autotest framework and its macros.

EBPF_TESTSUITE_AT = \
	tests/ebpf-testsuite.at \
	tests/ebpf-build.at \
	tests/dpif-bpf-odp.at \
	tests/bpf-datapath.at
EBPF_TESTSUITE = $(srcdir)/tests/ebpf-testsuite
EXTRA_DIST += $(EBPF_TESTSUITE_AT) $(EBPF_TESTSUITE)

$(EBPF_TESTSUITE): package.m4 $(EBPF_TESTSUITE_AT) $(COMMON_MACROS_AT)
	$(AM_V_GEN)$(AUTOTEST) -I '$(srcdir)' -o $@.tmp $@.at
	$(AM_V_at)mv $@.tmp $@

if HAVE_BPF_DATAPATH
# Unit tests of the BPF programs (BPF_PROG_TEST_RUN), of the ODP <-> BPF
# translation and of the megaflow table, as ovstest modules.
tests_ovstest_SOURCES += \
	tests/test-bpf-datapath.c \
	tests/test-dpif-bpf-odp.c \
	tests/test-dpif-bpf-flow-table.c
endif

check-ebpf-unit: all tests/atlocal $(EBPF_TESTSUITE)
	$(SHELL) '$(EBPF_TESTSUITE)' -C tests AUTOTEST_PATH='$(AUTOTEST_PATH)' \
		$(TESTSUITEFLAGS)

# OVS's own tests of the code paths we build on: ODP key and action parsing
# and formatting (odp.at), dpctl commands (dpctl.at), the userspace
# datapath (dpif-netdev.at) and netdev types (netdev-type.at).
OVS_SUBSET_AT = odp.at dpctl.at dpif-netdev.at netdev-type.at
check-ovs-subset: all tests/atlocal $(TESTSUITE)
	@set -e; \
	numbers=`$(SHELL) '$(TESTSUITE)' -C tests -l | \
		awk -v files=' $(OVS_SUBSET_AT) ' \
		'$$1 ~ /^[0-9]+:$$/ { split($$2, at, ":"); \
		  if (index(files, " " at[1] " ")) { sub(":", "", $$1); \
		    printf "%s ", $$1 } }'`; \
	test -n "$$numbers" || { echo "no tests found in $(OVS_SUBSET_AT)"; exit 1; }; \
	$(SHELL) '$(TESTSUITE)' -C tests AUTOTEST_PATH='$(AUTOTEST_PATH)' \
		$(TESTSUITEFLAGS) $$numbers

# System suites: they create namespaces, veth pairs and datapaths, so each
# test skips (saying so) when not run as root.
SYSTEM_EBPF_TESTSUITE_AT = \
	tests/system-ebpf-testsuite.at \
	tests/system-ebpf-sandbox.at
SYSTEM_EBPF_TESTSUITE = $(srcdir)/tests/system-ebpf-testsuite
EXTRA_DIST += $(SYSTEM_EBPF_TESTSUITE_AT) $(SYSTEM_EBPF_TESTSUITE)

$(SYSTEM_EBPF_TESTSUITE): package.m4 $(SYSTEM_EBPF_TESTSUITE_AT) $(COMMON_MACROS_AT)
	$(AM_V_GEN)$(AUTOTEST) -I '$(srcdir)' -o $@.tmp $@.at
	$(AM_V_at)mv $@.tmp $@

# The BPF datapath's system suite: our tests (tests/system-bpf.at) and
# OVS's system tests (tests/system-traffic.at and the others of
# $(SYSTEM_TESTSUITE_AT), the packet-type-aware and route tests of the
# userspace suite) with datapath_type=bpf.
SYSTEM_BPF_TESTSUITE_AT = \
	tests/system-bpf-testsuite.at \
	tests/system-bpf-macros.at \
	tests/system-bpf.at \
	tests/system-kernel-features.at
SYSTEM_BPF_TESTSUITE = $(srcdir)/tests/system-bpf-testsuite
EXTRA_DIST += $(SYSTEM_BPF_TESTSUITE_AT) $(SYSTEM_BPF_TESTSUITE)

$(SYSTEM_BPF_TESTSUITE): package.m4 $(SYSTEM_TESTSUITE_AT) \
		tests/system-userspace-packet-type-aware.at \
		tests/system-route.at \
		$(SYSTEM_BPF_TESTSUITE_AT) $(COMMON_MACROS_AT)
	$(AM_V_GEN)$(AUTOTEST) -I '$(srcdir)' -o $@.tmp $@.at
	$(AM_V_at)mv $@.tmp $@

# Each system suite runs in a network namespace of its own
# (tests/run-in-private-netns): the conntrack tests empty the kernel's
# connection table between tests, and the suites' devices (br0,
# ovs-netdev, ovs-p0...) have fixed names, so that two runs on one host
# (two CI jobs) would otherwise collide.
EXTRA_DIST += tests/run-in-private-netns
check-bpf: all tests/atlocal $(SYSTEM_BPF_TESTSUITE) $(BPF_TEST_OBJS)
	$(SHELL) $(srcdir)/tests/run-in-private-netns \
		$(SHELL) '$(SYSTEM_BPF_TESTSUITE)' -C tests \
		AUTOTEST_PATH='$(AUTOTEST_PATH)' $(TESTSUITEFLAGS) -j1

# OVS's AF_XDP system suite against our netdev-afxdp, with the skips of
# tests/system-kernel-features.at.
SYSTEM_AFXDP_TRAFFIC_TESTSUITE_AT = \
	tests/system-afxdp-traffic-testsuite.at \
	tests/system-kernel-features.at
SYSTEM_AFXDP_TRAFFIC_TESTSUITE = $(srcdir)/tests/system-afxdp-traffic-testsuite
EXTRA_DIST += $(SYSTEM_AFXDP_TRAFFIC_TESTSUITE_AT) $(SYSTEM_AFXDP_TRAFFIC_TESTSUITE)

$(SYSTEM_AFXDP_TRAFFIC_TESTSUITE): package.m4 $(SYSTEM_TESTSUITE_AT) $(SYSTEM_AFXDP_TESTSUITE_AT) $(SYSTEM_AFXDP_TRAFFIC_TESTSUITE_AT) $(COMMON_MACROS_AT)
	$(AM_V_GEN)$(AUTOTEST) -I '$(srcdir)' -o $@.tmp $@.at
	$(AM_V_at)mv $@.tmp $@

check-afxdp-traffic: all tests/atlocal $(SYSTEM_AFXDP_TRAFFIC_TESTSUITE)
	$(SHELL) $(srcdir)/tests/run-in-private-netns \
		$(SHELL) '$(SYSTEM_AFXDP_TRAFFIC_TESTSUITE)' -C tests \
		AUTOTEST_PATH='$(AUTOTEST_PATH)' $(TESTSUITEFLAGS) -j1

# Our AF_XDP netdev's own system tests.
SYSTEM_AFXDP_OURS_TESTSUITE_AT = \
	tests/system-afxdp-ours-testsuite.at \
	tests/system-afxdp-ours.at
SYSTEM_AFXDP_OURS_TESTSUITE = $(srcdir)/tests/system-afxdp-ours-testsuite
EXTRA_DIST += $(SYSTEM_AFXDP_OURS_TESTSUITE_AT) $(SYSTEM_AFXDP_OURS_TESTSUITE)

$(SYSTEM_AFXDP_OURS_TESTSUITE): package.m4 $(SYSTEM_TESTSUITE_AT) $(SYSTEM_AFXDP_TESTSUITE_AT) $(SYSTEM_AFXDP_OURS_TESTSUITE_AT) $(COMMON_MACROS_AT)
	$(AM_V_GEN)$(AUTOTEST) -I '$(srcdir)' -o $@.tmp $@.at
	$(AM_V_at)mv $@.tmp $@

check-afxdp-ours: all tests/atlocal $(SYSTEM_AFXDP_OURS_TESTSUITE)
	$(SHELL) $(srcdir)/tests/run-in-private-netns \
		$(SHELL) '$(SYSTEM_AFXDP_OURS_TESTSUITE)' -C tests \
		AUTOTEST_PATH='$(AUTOTEST_PATH)' $(TESTSUITEFLAGS) -j1

check-ebpf-system: all tests/atlocal $(SYSTEM_EBPF_TESTSUITE)
	$(SHELL) $(srcdir)/tests/run-in-private-netns \
		$(SHELL) '$(SYSTEM_EBPF_TESTSUITE)' -C tests \
		AUTOTEST_PATH='$(AUTOTEST_PATH)' $(TESTSUITEFLAGS) -j1
if HAVE_BPF_DATAPATH
	$(MAKE) check-bpf
endif
if HAVE_AF_XDP
	$(MAKE) check-afxdp-ours
	$(MAKE) check-afxdp-traffic
endif

check-ebpf: check-ebpf-unit check-ovs-subset check-ebpf-system
.PHONY: check-bpf check-afxdp-ours check-afxdp-traffic check-ebpf check-ebpf-unit \
	check-ovs-subset check-ebpf-system
