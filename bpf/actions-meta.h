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

/* Actions on packet metadata: recirc, hash, set priority, set mark. */

#ifndef BPF_ACTIONS_META_H
#define BPF_ACTIONS_META_H 1

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"

/* enum ovs_hash_alg of OVS's datapath ABI. */
#define OVS_BPF_HASH_ALG_L4 0
#define OVS_BPF_HASH_ALG_SYM_L4 1

/* OVS_BPF_ACTION_RECIRC: look the packet up again with a new recirc_id,
 * keeping in_port and dp_hash (ovs_bpf_recirc()).  Recirculation replaces
 * the actions in the scratch area, so it must be the last action (as
 * ofproto emits it); the kernel datapath would clone the packet otherwise.
 * The program before a RECIRC slot does it itself (ovs_bpf_run_actions()),
 * without a tail call to this one, which stays in the 'tailcalls' array
 * for every action type to have its program. */
static __always_inline int
ovs_bpf_act_recirc__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                     struct ovs_bpf_action *a, __u32 idx)
{
    return ovs_bpf_recirc(skb, s, a->u.recirc.id);
}

/* Murmur3's 32-bit finaliser: spreads 'h' over all bits. */
static __always_inline __u32
ovs_bpf_hash_finish(__u32 h)
{
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

/* A hash of key 'k' that is the same in both directions of a connection,
 * from the fields of OVS's flow_hash_symmetric_l3l4() (without UDP ports),
 * which ovs-vswitchd uses for the same action: for IPv4 and IPv6, the XOR
 * of the addresses, the protocol and, for TCP and SCTP packets that are
 * not fragments, the XOR of the ports (not ICMP's type and code, which the
 * key keeps as ports: an echo request and its reply differ); for other
 * packets, the XOR of the Ethernet addresses, the VLAN IDs and the
 * ethertype. */
static __always_inline __u32
ovs_bpf_hash_sym_l4(const struct ovs_bpf_flow_key *k)
{
    __u32 h;
    int i;

    if (k->eth_type == bpf_htons(0x0800)) {
        h = k->ipv4_src ^ k->ipv4_dst;
    } else if (k->eth_type == bpf_htons(0x86dd)) {
        h = 0;
#pragma unroll
        for (i = 0; i < 16; i += 4) {
            h ^= *(__u32 *) (k->ipv6_src + i) ^ *(__u32 *) (k->ipv6_dst + i);
        }
    } else {
        const __u16 *d = (const __u16 *) k->eth_dst;
        const __u16 *src = (const __u16 *) k->eth_src;

        h = ovs_bpf_hash_finish((d[0] ^ src[0]) | ((d[1] ^ src[1]) << 16));
        h = ovs_bpf_hash_finish(h ^ (d[2] ^ src[2])
                                ^ ((k->vlans[0].tci ^ k->vlans[1].tci)
                                   & bpf_htons(0x0fff)) << 16);
        return ovs_bpf_hash_finish(h ^ k->eth_type);
    }
    h = ovs_bpf_hash_finish(h ^ k->eth_type);
    if (!k->nw_frag
        && (k->nw_proto == IPPROTO_TCP || k->nw_proto == IPPROTO_SCTP)) {
        h ^= k->tp_src ^ k->tp_dst;
    }
    return ovs_bpf_hash_finish(h ^ (k->nw_proto << 16));
}

/* OVS_BPF_ACTION_HASH: dp_hash for later recirculations.
 *
 *  - OVS_HASH_ALG_L4: the skb's flow hash (the kernel's 5-tuple hash,
 *    computed if the driver did not provide one), mixed with the basis,
 *    as the kernel datapath does.
 *  - OVS_HASH_ALG_SYM_L4: ovs_bpf_hash_sym_l4(), the hash that OVS's
 *    select groups use by default.
 *
 * The values differ from ovs-vswitchd's for the same packet; that is
 * fine because dp_hash is only matched after the datapath has set it.
 * 0 is reserved for "not set", so a hash of 0 becomes 1. */
static __always_inline int
ovs_bpf_act_hash__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                   struct ovs_bpf_action *a, __u32 idx)
{
    __u32 h;

    if (a->u.hash.alg == OVS_BPF_HASH_ALG_SYM_L4) {
        h = ovs_bpf_hash_sym_l4(&s->key);
    } else {
        h = bpf_get_hash_recalc(skb);
    }
    h = ovs_bpf_hash_finish(h ^ a->u.hash.basis);
    s->key.dp_hash = h ? h : 1;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_SET_PRIORITY and, with 'mark', _SET_MARK (masked).  Also
 * run by the lookup program (see ovs_bpf_run_leading_step()).  Cannot
 * fail: returns true. */
static __always_inline bool
ovs_bpf_set_meta(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                 const struct ovs_bpf_act_meta *m, bool mark)
{
    __u32 v;

    if (mark) {
        v = (skb->mark & ~m->mask) | (m->value & m->mask);
        skb->mark = v;
        s->key.skb_mark = v;
    } else {
        v = (skb->priority & ~m->mask) | (m->value & m->mask);
        skb->priority = v;
        s->key.skb_priority = v;
    }
    return true;
}

#endif /* BPF_ACTIONS_META_H */
