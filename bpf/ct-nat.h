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

/* NAT for the ct() action (bpf/actions-ct.h), IPv4 TCP and UDP.
 *
 * The kernel keeps the NAT binding of a connection: bpf_ct_set_nat_info()
 * (net/netfilter/nf_nat_bpf.c) on a connection allocated by
 * bpf_skb_ct_alloc() and not yet inserted runs nf_nat_setup_info() with
 * one address and at most one port, which rewrites the reply tuple of the
 * entry (a port of 0 keeps the packet's port if the translated tuple is
 * unique, or picks a free one) and sets IPS_SRC_NAT or IPS_DST_NAT.  The
 * kernel does not mangle packets at TC: the functions here rewrite them
 * from the entry's tuples. */

#ifndef BPF_CT_NAT_H
#define BPF_CT_NAT_H 1

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions-set.h"
#include "bpf/csum.h"

/* include/uapi/linux/netfilter/nf_conntrack_common.h. */
#define OVS_BPF_IPS_SRC_NAT (1 << 4)
#define OVS_BPF_IPS_DST_NAT (1 << 5)

/* The CS_* NAT bits of OVS's lib/packets.h. */
#define OVS_BPF_CS_SRC_NAT (1 << 6)
#define OVS_BPF_CS_DST_NAT (1 << 7)

/* The parts of the kernel's union nf_inet_addr and struct
 * nf_conntrack_tuple that are read (CO-RE, see struct nf_conn___ovs). */
union nf_inet_addr___ovs {
    __be32 ip;
    __be32 ip6[4];
} __attribute__((preserve_access_index));

union nf_conntrack_man_proto___ovs {
    __be16 all;
} __attribute__((preserve_access_index));

struct nf_conntrack_man___ovs {
    union nf_inet_addr___ovs u3;
    union nf_conntrack_man_proto___ovs u;
} __attribute__((preserve_access_index));

/* The kernel's 'dst' member is an anonymous struct with the same fields:
 * CO-RE matches members by name, so a named one serves. */
struct nf_conntrack_tuple___ovs {
    struct nf_conntrack_man___ovs src;
    struct nf_conntrack_man___ovs dst;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple_hash___ovs {
    struct nf_conntrack_tuple___ovs tuple;
} __attribute__((preserve_access_index));

/* enum nf_nat_manip_type. */
enum nf_nat_manip_type___ovs {
    OVS_BPF_NF_NAT_MANIP_SRC,
    OVS_BPF_NF_NAT_MANIP_DST,
};

/* A translation to apply: the packet's new addresses and ports, and the
 * CS_*_NAT bit of ct_state. */
struct ovs_bpf_ct_nat {
    __be32 src;
    __be32 dst;
    __be16 sport;
    __be16 dport;
    __u8 cs;
};

/* Rewrites the IPv4 addresses and the TCP or UDP ports of 's's packet (an
 * unfragmented IPv4 TCP or UDP packet, as ct() checked) as 'nat' says,
 * with the IPv4 and L4 checksums, and the key as OVS's datapaths update it
 * after NAT.  Returns nonzero on failure. */
static __always_inline int
ovs_bpf_ct_nat_rewrite(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       const struct ovs_bpf_ct_nat *nat)
{
    struct ovs_bpf_flow_key *k = &s->key;
    __u32 l3 = s->l3_ofs;
    __be16 old;

    if (!ovs_bpf_is_ipv4(s) || !ovs_bpf_has_l4(skb, s)
        || !ovs_bpf_may_write(s, s->l4_ofs + ovs_bpf_l4_min_len(k->nw_proto))) {
        return -1;
    }
    if (ovs_bpf_set_ipv4_addr(skb, s, l3 + 12, k->ipv4_src, nat->src,
                              0xffffffff, &k->ipv4_src)
        || ovs_bpf_set_ipv4_addr(skb, s, l3 + 16, k->ipv4_dst, nat->dst,
                                 0xffffffff, &k->ipv4_dst)) {
        return -1;
    }
    old = k->tp_src;
    if (old != nat->sport) {
        if (bpf_skb_store_bytes(skb, s->l4_ofs, &nat->sport, 2, 0)
            || ovs_bpf_l4_csum_port(skb, s, old, nat->sport)) {
            return -1;
        }
        k->tp_src = nat->sport;
    }
    old = k->tp_dst;
    if (old != nat->dport) {
        if (bpf_skb_store_bytes(skb, s->l4_ofs + 2, &nat->dport, 2, 0)
            || ovs_bpf_l4_csum_port(skb, s, old, nat->dport)) {
            return -1;
        }
        k->tp_dst = nat->dport;
    }
    return 0;
}

#endif /* BPF_CT_NAT_H */
