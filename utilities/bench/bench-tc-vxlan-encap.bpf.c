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

/* The VXLAN encapsulation ceiling: the least work a TC-ingress datapath can
 * do to send a frame into a VXLAN tunnel through the kernel's VXLAN device,
 * as dpif-bpf's tunnel ports do: set the tunnel key of the packet and
 * redirect it to the egress of a VXLAN device in collect_md ("external")
 * mode, which encapsulates it and routes the result.
 *
 * Compile-time constants (clang -D...): VXLAN_IFINDEX, the VXLAN device;
 * REMOTE_IP, the remote endpoint as a host-order number; VNI. */

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#if !defined(VXLAN_IFINDEX) || !defined(REMOTE_IP) || !defined(VNI)
#error "compile with -DVXLAN_IFINDEX=<n> -DREMOTE_IP=<n> -DVNI=<n>"
#endif

SEC("tc")
int
bench_tc_vxlan_encap(struct __sk_buff *skb)
{
    struct bpf_tunnel_key key = {
        .tunnel_id = VNI,
        .remote_ipv4 = REMOTE_IP,
        .tunnel_ttl = 64,
    };

    /* As OVS's set(tunnel(...,flags(df|key))): don't fragment. */
    if (bpf_skb_set_tunnel_key(skb, &key, sizeof key,
                               BPF_F_ZERO_CSUM_TX | BPF_F_DONT_FRAGMENT)) {
        return TC_ACT_SHOT;
    }
    return bpf_redirect(VXLAN_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
