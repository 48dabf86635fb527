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

/* The TC ceiling: the least work a TC-ingress datapath can do per packet,
 * redirect every frame to the egress of one device.  A datapath attached at
 * TC ingress is compared with this.
 *
 * OUT_IFINDEX is a compile-time constant (clang -DOUT_IFINDEX=n): the
 * benchmark compiles this file for the ifindex it just created, so the
 * ceiling pays for no map lookup. */

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#ifndef OUT_IFINDEX
#error "compile with -DOUT_IFINDEX=<ifindex of the output device>"
#endif

SEC("tc")
int
bench_tc_redirect(struct __sk_buff *skb)
{
    return bpf_redirect(OUT_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
