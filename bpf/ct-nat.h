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

/* NAT for the ct() action (bpf/actions-ct.h), IPv4 and IPv6 TCP and UDP.
 *
 * The kernel keeps the NAT binding of a connection: bpf_ct_set_nat_info()
 * (net/netfilter/nf_nat_bpf.c) on a connection allocated by
 * bpf_skb_ct_alloc() and not yet inserted runs nf_nat_setup_info() with
 * one address (a union nf_inet_addr, so IPv4 or IPv6) and at most one
 * port, which rewrites the reply tuple of the entry (a port of 0 keeps the
 * packet's port if the translated tuple is unique, or picks a free one) and
 * sets IPS_SRC_NAT or IPS_DST_NAT.  A range of addresses or ports is ours
 * to choose from: the commit (bpf/actions-ct.h) tries candidates that
 * ovs_bpf_ct_nat_candidate() gives.  The kernel does not mangle packets at
 * TC: ovs_bpf_ct_nat_rewrite() rewrites them from the entry's tuples. */

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

/* A translation to apply: the packet's new addresses (IPv4 in [0]) and
 * ports, and the CS_*_NAT bit of ct_state. */
struct ovs_bpf_ct_nat {
    __be32 src[4];
    __be32 dst[4];
    __be16 sport;
    __be16 dport;
    __u8 cs;
};

/* How many candidates of a range a commit tries (bpf/actions-ct.h): each
 * try is an allocation and an insertion in the kernel's table, and the
 * verifier walks the loop that many times.  The kernel's own search
 * (nf_nat_l4proto_unique_tuple()) gives up after 128 tries of ports that
 * it only looks up; a range whose first 16 candidates are all taken is
 * almost full, and its new connection is dropped as on exhaustion. */
#define OVS_BPF_CT_NAT_TRIES 16

/* Sets '*addr' and '*port' (host order, 0 for any) to candidate 'i' of the
 * range of 'act' for the packet 'k' of IP version 'ipv6'.  Candidates go
 * through the ports of the range first, from a starting point that is the
 * packet's flow hash 'hash' (the same for every packet of the flow) or a
 * random number with OVS_BPF_CT_F_NAT_RANDOM, and then to the next address;
 * the first address is chosen by a hash of the packet's addresses (of its
 * source only with OVS_BPF_CT_F_NAT_PERSISTENT), as the kernel's
 * find_best_ips_proto() does, so that one client keeps one address.
 * Returns false if the range has fewer than 'i' + 1 candidates. */
static __always_inline bool
ovs_bpf_ct_nat_candidate(const struct ovs_bpf_act_ct *act,
                         const struct ovs_bpf_flow_key *k, bool ipv6,
                         __u32 hash, __u32 i,
                         union nf_inet_addr___ovs *addr, __u16 *port)
{
    __u64 naddrs = (__u64) act->nat_addr_span + 1;
    __u32 nports = 1, ahash, aoff, carry;
    __u64 off;
    int j;

    if (act->nat_port_min) {
        nports = (__u32) act->nat_port_max - act->nat_port_min + 1;
    }
    if ((__u64) i >= naddrs * nports) {
        return false;
    }
    *port = act->nat_port_min ? act->nat_port_min + (hash + i) % nports : 0;

    if (ipv6) {
        __u32 w[4];

        __builtin_memcpy(w, k->ipv6_src, 16);
        ahash = w[0] ^ w[1] ^ w[2] ^ w[3];
        if (!(act->flags & OVS_BPF_CT_F_NAT_PERSISTENT)) {
            __builtin_memcpy(w, k->ipv6_dst, 16);
            ahash ^= (w[0] ^ w[1] ^ w[2] ^ w[3]) * 0x9e3779b1u;
        }
    } else {
        ahash = k->ipv4_src;
        if (!(act->flags & OVS_BPF_CT_F_NAT_PERSISTENT)) {
            ahash ^= k->ipv4_dst * 0x9e3779b1u;
        }
    }
    ahash *= 0x9e3779b1u;       /* Spreads neighbouring addresses. */
    off = ((__u64) (ahash >> 8) + i / nports) % naddrs;

    __builtin_memset(addr, 0, sizeof *addr);
    if (act->flags & OVS_BPF_CT_F_NAT_ZERO) {
        /* All-zero SNAT: the packet's source address, whose port the
         * kernel changes only if the tuple clashes. */
        if (ipv6) {
            __builtin_memcpy(addr->ip6, k->ipv6_src, 16);
        } else {
            addr->ip = k->ipv4_src;
        }
        return true;
    }
    if (!ipv6) {
        addr->ip = bpf_htonl(bpf_ntohl(act->nat_addr.ipv4) + (__u32) off);
        return true;
    }
    /* A 128-bit addition of 'off' (less than 2**32) to the first address,
     * from the last 32-bit word up. */
    __builtin_memcpy(addr->ip6, act->nat_addr.ipv6, 16);
    carry = (__u32) off;
#pragma unroll
    for (j = 3; j >= 0; j--) {
        __u32 w = bpf_ntohl(addr->ip6[j]);

        aoff = w + carry;
        carry = aoff < w;
        addr->ip6[j] = bpf_htonl(aoff);
    }
    return true;
}

static __always_inline bool
ovs_bpf_ct_nat_ipv6_eq(const __be32 *a, const __be32 *b)
{
    return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}

/* Rewrites the IPv6 address at 'off' in the IPv6 header of 's''s packet,
 * whose copy in the key is 'key_addr', to 'new', with the L4 checksum
 * (there is no IPv6 header checksum).  Returns nonzero on failure. */
static __always_inline int
ovs_bpf_ct_nat_ipv6_addr(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                         __u32 off, __u8 *key_addr, const __be32 *new)
{
    __be32 old[4];

    __builtin_memcpy(old, key_addr, 16);
    if (ovs_bpf_ct_nat_ipv6_eq(old, new)) {
        return 0;
    }
    if (bpf_skb_store_bytes(skb, s->l3_ofs + off, new, 16, 0)
        || ovs_bpf_l4_csum_pseudo16(skb, s, old, (__be32 *) new) < 0) {
        return -1;
    }
    __builtin_memcpy(key_addr, new, 16);
    return 0;
}

/* Rewrites the addresses and the TCP or UDP ports of 's's packet (an
 * unfragmented IPv4 or IPv6 TCP or UDP packet, as ct() checked) as 'nat'
 * says, with the IPv4 and L4 checksums, and the key as OVS's datapaths
 * update it after NAT.  Returns nonzero on failure. */
static __always_inline int
ovs_bpf_ct_nat_rewrite(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       const struct ovs_bpf_ct_nat *nat)
{
    struct ovs_bpf_flow_key *k = &s->key;
    __u32 l3 = s->l3_ofs;
    __be16 old;

    if (!ovs_bpf_has_l4(skb, s)
        || !ovs_bpf_may_write(s, s->l4_ofs + ovs_bpf_l4_min_len(k->nw_proto))) {
        return -1;
    }
    if (ovs_bpf_is_ipv6(s)) {
        /* With a routing header, the pseudo-header has the final
         * destination, not this one: as set(ipv6(dst=...)) does, the
         * checksum is left alone then. */
        if (ovs_bpf_ct_nat_ipv6_addr(skb, s, 8, k->ipv6_src, nat->src)) {
            return -1;
        }
        if (s->ipv6_rh) {
            __be32 old6[4];

            __builtin_memcpy(old6, k->ipv6_dst, 16);
            if (!ovs_bpf_ct_nat_ipv6_eq(old6, nat->dst)) {
                if (bpf_skb_store_bytes(skb, l3 + 24, nat->dst, 16, 0)) {
                    return -1;
                }
                __builtin_memcpy(k->ipv6_dst, nat->dst, 16);
            }
        } else if (ovs_bpf_ct_nat_ipv6_addr(skb, s, 24, k->ipv6_dst,
                                            nat->dst)) {
            return -1;
        }
    } else if (!ovs_bpf_is_ipv4(s)
               || ovs_bpf_set_ipv4_addr(skb, s, l3 + 12, k->ipv4_src,
                                        nat->src[0], 0xffffffff,
                                        &k->ipv4_src)
               || ovs_bpf_set_ipv4_addr(skb, s, l3 + 16, k->ipv4_dst,
                                        nat->dst[0], 0xffffffff,
                                        &k->ipv4_dst)) {
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
