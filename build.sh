#!/bin/sh
# build.sh: the project's entry point on a fresh Debian 12 machine.
#
#   ./build.sh demo    install what is missing, build, run the sandbox demo
#   ./build.sh check   install what is missing, build, run the tests
#   ./build.sh build   install what is missing, build
#
# Each step is skipped when already done: a second run only rebuilds what
# changed.  Run as root (package installs, the demo and the system tests
# need it).  TESTSUITEFLAGS is passed to the test suites.

set -e
cd "$(dirname "$0")"

# Debian packages the build, the demo and the tests use.
PACKAGES="openvswitch-source autoconf automake libtool make gcc patch
  pkg-config python3 python3-sortedcontainers libssl-dev libcap-ng-dev
  clang llvm libbpf-dev libxdp-dev xdp-tools bpftool libnuma-dev
  linux-libc-dev iproute2 ethtool tcpdump iputils-ping netcat-openbsd
  procps kmod conntrack"

die() {
    echo "build.sh: error: $*" >&2
    exit 1
}

install_packages() {
    missing=
    for p in $PACKAGES; do
        dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null \
            | grep -q '^install ok installed$' || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    [ "$(id -u)" = 0 ] || die "missing Debian packages:$missing; install them" \
        "as root (apt-get install$missing) or run ./build.sh as root"
    echo "build.sh: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

mount_bpffs() {
    [ "$(id -u)" = 0 ] || return 0
    mountpoint -q /sys/fs/bpf 2>/dev/null \
        || mount -t bpf bpf /sys/fs/bpf 2>/dev/null \
        || echo "build.sh: note: could not mount bpffs on /sys/fs/bpf"
}

build() {
    if ! build-aux/prepare-ovs status; then
        ./boot.sh
        rm -f config.status
    fi
    if [ ! -f config.status ] || [ ! -f ovs/config.status ]; then
        ./configure
    fi
    # V=0: one line per file built; errors and warnings still show.
    make -j"$(($(nproc) + 1))" V=0
}

case $1 in
    demo|check|build) ;;
    *) echo "usage: $0 demo|check|build" >&2; exit 1 ;;
esac

install_packages
mount_bpffs
build
case $1 in
    demo) make demo ;;
    check) make check TESTSUITEFLAGS="${TESTSUITEFLAGS:--j$(nproc)}" ;;
esac
