#!/bin/sh
# Makes the OVS tree (ovs/: the pinned tarball, patches/, our files) and the
# build system of our wrapper.  Then: ./configure && make.
set -e
cd "$(dirname "$0")"
build-aux/prepare-ovs prepare
# --no-recursive: prepare-ovs already regenerated ovs/'s build system.
autoreconf --install --force --no-recursive
