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

/* The VXLAN decapsulation ceiling of a datapath that pops tunnel headers
 * itself, as dpif-bpf's native tunneling does (tnl_pop): attached at the TC
 * ingress of the underlay port, it takes the outer Ethernet, IPv4, UDP and
 * VXLAN headers (50 bytes) off each frame and redirects the inner frame to
 * the egress of one device.  It checks nothing: every frame is taken to be
 * VXLAN over IPv4 without options, as the benchmark's generator sends.
 *
 * OUT_IFINDEX is a compile-time constant (clang -DOUT_IFINDEX=n). */

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#ifndef OUT_IFINDEX
#error "compile with -DOUT_IFINDEX=<ifindex of the output device>"
#endif

#define OUTER_LEN 50            /* Ethernet 14, IPv4 20, UDP 8, VXLAN 8. */
#define ETH_LEN 14

SEC("tc")
int
bench_tc_vxlan_pop(struct __sk_buff *skb)
{
    __u8 eth[ETH_LEN];

    /* bpf_skb_adjust_room() closes room right after the outer Ethernet
     * header: removing OUTER_LEN bytes there takes the outer IP, UDP and
     * VXLAN headers and the inner Ethernet header, which then goes where
     * the outer one was. */
    if (bpf_skb_load_bytes(skb, OUTER_LEN, eth, sizeof eth)
        || bpf_skb_adjust_room(skb, -OUTER_LEN, BPF_ADJ_ROOM_MAC, 0)
        || bpf_skb_store_bytes(skb, 0, eth, sizeof eth, 0)) {
        return TC_ACT_SHOT;
    }
    return bpf_redirect(OUT_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
