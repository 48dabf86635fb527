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

/* SET_TUNNEL: set(tunnel(...)), kept for the outputs to tunnel ports that
 * follow (bpf/tunnel.h applies it), and POP_ETH, for the outputs to layer
 * 3 tunnel ports (VXLAN-GPE) that follow. */

#ifndef BPF_ACTIONS_TUNNEL_H
#define BPF_ACTIONS_TUNNEL_H 1

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <linux/if_ether.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"

/* OVS_BPF_ACTION_SET_TUNNEL: the slot's outer headers, in the layout of
 * struct bpf_tunnel_key, in the scratch area.  Nothing is done to the
 * packet yet: an output to a port that is not a tunnel ignores it, as in
 * the kernel datapath. */
static __always_inline int
ovs_bpf_act_set_tunnel__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                         struct ovs_bpf_action *a, __u32 idx)
{
    const struct ovs_bpf_act_tunnel *t;
    struct bpf_tunnel_key *tk;

    t = &a->u.tunnel;
    tk = &s->tun_key;
    __builtin_memset(tk, 0, sizeof *tk);
    tk->tunnel_id = (__u32) bpf_be64_to_cpu(t->tun_id);
    if (t->flags & BPF_F_TUNINFO_IPV6) {
        __builtin_memcpy(tk->remote_ipv6, t->ipv6_dst, 16);
        __builtin_memcpy(tk->local_ipv6, t->ipv6_src, 16);
    } else {
        tk->remote_ipv4 = bpf_ntohl(t->ipv4_dst);
        tk->local_ipv4 = bpf_ntohl(t->ipv4_src);
    }
    tk->tunnel_tos = t->tos;
    tk->tunnel_ttl = t->ttl;
    s->tun_flags = t->flags;
    s->tun_valid = 1;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_POP_ETH: the packet is from now on a layer 3 packet,
 * which only an output to a layer 3 port may follow (the translation sees
 * to it).  The bytes stay as they are: the redirect to the port's device,
 * which has no link layer, takes off what is in front of the network
 * header (see ovs_bpf_output()).  As the kernel datapath, refuses a packet
 * with a VLAN tag; and a packet that is neither IPv4 nor IPv6 (skb's
 * protocol), which no layer 3 device here can send.  (Removing the bytes
 * here would need bpf_skb_adjust_room(), which only opens or closes room
 * behind the Ethernet header, and the same redirect would then take off
 * the first bytes of the IP header.) */
static __always_inline int
ovs_bpf_act_pop_eth__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                      struct ovs_bpf_action *a, __u32 idx)
{
    if (skb->vlan_present || skb->cb[OVS_BPF_CB_NO_ETH]
        || (skb->protocol != bpf_htons(ETH_P_IP)
            && skb->protocol != bpf_htons(ETH_P_IPV6))) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH);
    }
    skb->cb[OVS_BPF_CB_NO_ETH] = 1;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

#endif /* BPF_ACTIONS_TUNNEL_H */
