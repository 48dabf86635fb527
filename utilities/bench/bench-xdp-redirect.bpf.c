/*
 * Copyright (c) 2026 The ovs-ebpf authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

/* The XDP ceiling: redirect every frame to one device from the XDP hook,
 * before any socket buffer exists.  A datapath whose packets enter through
 * XDP (AF_XDP ports) is compared with this.
 *
 * OUT_IFINDEX is a compile-time constant (clang -DOUT_IFINDEX=n), as in
 * bench-tc-redirect.bpf.c.  A veth target accepts redirected frames only
 * while its peer has NAPI: the benchmark's sink veth has GRO on. */

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef OUT_IFINDEX
#error "compile with -DOUT_IFINDEX=<ifindex of the output device>"
#endif

SEC("xdp")
int
bench_xdp_redirect(struct xdp_md *ctx)
{
    return bpf_redirect(OUT_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
