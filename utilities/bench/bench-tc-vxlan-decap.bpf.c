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

/* The VXLAN decapsulation ceiling of a datapath that receives tunnels
 * through the kernel's VXLAN device, as dpif-bpf's tunnel ports without
 * native tunneling do: attached at the TC ingress of a VXLAN device in
 * collect_md ("external") mode, it reads the tunnel key of each frame the
 * device delivers (as a datapath must, to match on it) and redirects the
 * frame to the egress of one device.
 *
 * Compile-time constants (clang -D...): OUT_IFINDEX, the output device;
 * VNI, the only tunnel ID it takes. */

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#if !defined(OUT_IFINDEX) || !defined(VNI)
#error "compile with -DOUT_IFINDEX=<n> -DVNI=<n>"
#endif

SEC("tc")
int
bench_tc_vxlan_decap(struct __sk_buff *skb)
{
    struct bpf_tunnel_key key;

    if (bpf_skb_get_tunnel_key(skb, &key, sizeof key, 0)
        || key.tunnel_id != VNI) {
        return TC_ACT_SHOT;
    }
    return bpf_redirect(OUT_IFINDEX, 0);
}

char _license[] SEC("license") = "GPL";
