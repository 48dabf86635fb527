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

/* MPLS encapsulation of whole Ethernet frames: add_mpls with push_eth,
 * pop_eth with pop_mpls to Ethernet.
 *
 * OpenFlow's encap(mpls),encap(ethernet) of an Ethernet frame reaches the
 * datapath as add_mpls(...) without the L3 flag (the label goes in front of
 * the Ethernet header) then push_eth(...), and decap(),decap() of such a
 * packet as pop_eth,pop_mpls(eth_type=0x6558) then a recirculation: in
 * between, the packet has no Ethernet header, which the BPF programs cannot
 * carry, so the translator turns each pair into one slot that does both
 * (struct ovs_bpf_act_add_mpls_eth), as for NSH: the frame becomes
 * [new MACs][MPLS type][LSE][old frame] and back, with the helpers of
 * bpf/encap-eth.h (see there for how skb->protocol follows: MPLS after the
 * push, the inner ethertype after the pop).
 *
 * A GSO packet (TCP over the MPLS path, say) goes up to ovs-vswitchd as a
 * slow path packet when the pair is the flow's first action, as for NSH
 * (bpf/encap-eth.h says why and how).
 *
 * Limits, each counted as a failure of the action (the packet is
 * dropped): a GSO packet elsewhere, a push or pop inside a clone() whose
 * packet is restored afterwards, VLAN tags in the bytes of the outer
 * header of a pop, a pop of a label that is not the bottom of the stack
 * (ovs-vswitchd pops with type 0x6558 only the last label), an inner frame
 * shorter than 34 bytes (bpf_skb_adjust_room()'s minimum), a failing
 * helper. */

#ifndef BPF_ACTIONS_MPLS_ETH_H
#define BPF_ACTIONS_MPLS_ETH_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/actions-mpls.h"
#include "bpf/encap-eth.h"
#include "bpf/maps.h"
#include "bpf/parse.h"

#define OVS_BPF_MPLS_HLEN 4

/* OVS_BPF_ACTION_ADD_MPLS_ETH. */
static __always_inline int
ovs_bpf_act_add_mpls_eth__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                           struct ovs_bpf_action *a, __u32 idx)
{
    const struct ovs_bpf_act_add_mpls_eth *p = &a->u.add_mpls_eth;
    struct ovs_bpf_flow_key *k = &s->key;
    __be16 eth_type = p->eth_type;
    __be32 lse = p->lse;

    if (ovs_bpf_encap_eth_gso_up(skb, s, idx)) {
        return TC_ACT_SHOT;
    }
    if (s->clone_active || skb->gso_size
        || !ovs_bpf_eth_type_mpls(eth_type)
        || ovs_bpf_encap_eth_push(skb, p->eth_dst, p->eth_src, eth_type,
                                  OVS_BPF_MPLS_HLEN)
        || bpf_skb_store_bytes(skb, ETH_HLEN, &lse, OVS_BPF_MPLS_HLEN, 0)
        || ovs_bpf_encap_eth_proto(skb)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_ADD_MPLS_ETH);
    }

    /* The key of the new packet: as the parser leaves it for MPLS. */
    ovs_bpf_mpls_new_key(skb, s, eth_type, ETH_HLEN);
    __builtin_memcpy(k->eth_dst, p->eth_dst, 6);
    __builtin_memcpy(k->eth_src, p->eth_src, 6);
    __builtin_memset(k->vlans, 0, sizeof k->vlans);
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_POP_ETH_MPLS.  The flow matched an MPLS ethertype
 * (ovs-vswitchd's decap() of MPLS needs it), so a packet that is not MPLS
 * here is a failure. */
static __always_inline int
ovs_bpf_act_pop_eth_mpls__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                           struct ovs_bpf_action *a, __u32 idx)
{
    __u8 inner[ETH_HLEN];
    __be32 lse;

    (void) a;
    if (!ovs_bpf_eth_type_mpls(s->key.eth_type)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH_MPLS);
    }
    if (ovs_bpf_encap_eth_gso_up(skb, s, idx)) {
        return TC_ACT_SHOT;
    }
    if (s->clone_active || skb->gso_size || s->l3_ofs != ETH_HLEN
        || bpf_skb_load_bytes(skb, ETH_HLEN, &lse, OVS_BPF_MPLS_HLEN)
        || !(lse & bpf_htonl(OVS_BPF_MPLS_BOS))
        || bpf_skb_load_bytes(skb, ETH_HLEN + OVS_BPF_MPLS_HLEN, inner,
                              ETH_HLEN)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH_MPLS);
    }
    if (ovs_bpf_encap_eth_pop(skb, s, OVS_BPF_MPLS_HLEN, inner)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH_MPLS);
    }
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

#endif /* BPF_ACTIONS_MPLS_ETH_H */
