# -*- autoconf -*-
# Copyright (c) 2026 The ovs-ebpf authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at:
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

dnl OVS_CHECK_BPF_DATAPATH
dnl
dnl Checks what the BPF datapath (datapath_type=bpf) needs: clang able to
dnl compile for -target bpf against the kernel UAPI and libbpf headers,
dnl bpftool, and libbpf with TC attach and perf buffer support.  Defines
dnl HAVE_BPF_DATAPATH, the conditional of the same name, BPF_CLANG,
dnl BPF_CFLAGS and BPFTOOL.  --disable-bpf-datapath builds without it.
AC_DEFUN([OVS_CHECK_BPF_DATAPATH], [
  AC_ARG_ENABLE(
    [bpf-datapath],
    [AS_HELP_STRING([--disable-bpf-datapath],
                    [Build without the BPF datapath (datapath_type=bpf)])],
    [case "${enableval}" in
       (yes | no) ;;
       (*) AC_MSG_ERROR([bad value ${enableval} for --enable-bpf-datapath]) ;;
     esac],
    [enable_bpf_datapath=yes])

  BPF_DATAPATH_ENABLE=false
  if test "$enable_bpf_datapath" = yes; then
    AC_CHECK_PROGS([BPF_CLANG], [clang clang-14], [none])
    if test "$BPF_CLANG" = none; then
      AC_MSG_ERROR([clang not found; the BPF datapath needs it: apt-get install clang llvm (or --disable-bpf-datapath)])
    fi

    dnl Debian keeps <asm/types.h> in the multiarch directory, which clang
    dnl does not search for -target bpf.
    multiarch=`$CC -print-multiarch 2>/dev/null`
    BPF_CFLAGS="-O2 -g -target bpf -mcpu=v3 -Wall -Wno-unused-function"
    if test -n "$multiarch" && test -d "/usr/include/$multiarch"; then
      BPF_CFLAGS="$BPF_CFLAGS -I/usr/include/$multiarch"
    fi

    AC_CACHE_CHECK([whether $BPF_CLANG compiles BPF programs],
      [ovs_cv_bpf_clang_works], [
      cat > conftest.bpf.c <<_OVS_EOF
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("tc") int prog(struct __sk_buff *skb) { return skb->len ? 0 : 1; }
char _license[[]] SEC("license") = "GPL";
_OVS_EOF
      if $BPF_CLANG $BPF_CFLAGS -c conftest.bpf.c -o conftest.bpf.o \
           >&AS_MESSAGE_LOG_FD 2>&1; then
        ovs_cv_bpf_clang_works=yes
      else
        ovs_cv_bpf_clang_works=no
      fi
      rm -f conftest.bpf.c conftest.bpf.o])
    if test "$ovs_cv_bpf_clang_works" != yes; then
      AC_MSG_ERROR([$BPF_CLANG cannot compile BPF programs (see config.log): apt-get install clang llvm libbpf-dev linux-libc-dev])
    fi

    dnl The loader includes a skeleton of the object (bpftool gen skeleton).
    AC_PATH_PROG([BPFTOOL], [bpftool], [none], [$PATH:/usr/sbin:/sbin])
    if test "$BPFTOOL" = none; then
      AC_MSG_ERROR([bpftool not found; the BPF datapath needs it: apt-get install bpftool (or --disable-bpf-datapath)])
    fi

    AC_CHECK_HEADER([bpf/libbpf.h], [],
      [AC_MSG_ERROR([bpf/libbpf.h not found; the BPF datapath needs libbpf: apt-get install libbpf-dev])])
    AC_SEARCH_LIBS([bpf_tc_attach], [bpf], [],
      [AC_MSG_ERROR([libbpf with bpf_tc_attach (>= 0.6) not found: apt-get install libbpf-dev])])
    AC_SEARCH_LIBS([perf_buffer__consume_buffer], [bpf], [],
      [AC_MSG_ERROR([libbpf with perf_buffer__consume_buffer (>= 0.4) not found: apt-get install libbpf-dev])])

    AC_DEFINE([HAVE_BPF_DATAPATH], [1],
              [Define to 1 if the BPF datapath is built.])
    BPF_DATAPATH_ENABLE=true
  fi
  AC_SUBST([BPF_CLANG])
  AC_SUBST([BPF_CFLAGS])
  AC_SUBST([BPFTOOL])
  AM_CONDITIONAL([HAVE_BPF_DATAPATH], [test "$BPF_DATAPATH_ENABLE" = true])
])
