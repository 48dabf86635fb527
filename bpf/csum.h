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

/* Checksum updates for the set-field actions.  The kernel helpers do the
 * incremental update (RFC 1624) and also keep skb->csum right for
 * CHECKSUM_COMPLETE packets and the pseudo-header sum of CHECKSUM_PARTIAL
 * ones (packets from local sockets on veth), which a hand-written update
 * of the header field would break. */

#ifndef BPF_CSUM_H
#define BPF_CSUM_H 1

#include <linux/bpf.h>
#include <linux/in.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/maps.h"
#include "bpf/parse.h"

#define OVS_BPF_IPV4_CSUM_OFF 10        /* In the IPv4 header. */

/* Offset of the checksum field in the L4 header of 'nw_proto' if the
 * packet has one covering a pseudo header (TCP, UDP, ICMPv6 over IPv6),
 * else -1.  'ipv6' selects the ICMPv6 case (ICMPv4 has no pseudo
 * header). */
static __always_inline int
ovs_bpf_l4_csum_off(__u8 nw_proto, bool ipv6)
{
    switch (nw_proto) {
    case IPPROTO_TCP:
        return 16;
    case IPPROTO_UDP:
        return 6;
    case OVS_BPF_IPPROTO_ICMPV6:
        return ipv6 ? 2 : -1;
    default:
        return -1;
    }
}

/* Minimum L4 header length for the checksum field to be there. */
static __always_inline __u32
ovs_bpf_l4_min_len(__u8 nw_proto)
{
    return nw_proto == IPPROTO_TCP ? 20 : 8;
}

/* True if the packet parsed into 's' has a complete L4 header of its
 * 'nw_proto' (not a later fragment, not truncated), which an update of its
 * checksum needs. */
static __always_inline bool
ovs_bpf_has_l4(struct __sk_buff *skb, const struct ovs_bpf_scratch *s)
{
    return s->l4_ofs && !(s->key.nw_frag & OVS_BPF_FRAG_LATER)
           && s->l4_ofs + ovs_bpf_l4_min_len(s->key.nw_proto) <= skb->len;
}

/* Flags for bpf_l4_csum_replace(): a UDP checksum of 0 means "none" and
 * stays 0, and a computed 0 is written as 0xffff (BPF_F_MARK_MANGLED_0). */
static __always_inline __u64
ovs_bpf_l4_csum_flags(__u8 nw_proto, bool pseudo)
{
    return (pseudo ? BPF_F_PSEUDO_HDR : 0)
           | (nw_proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0);
}

/* Updates the L4 checksum of 's's packet for a 4-byte change of a
 * pseudo-header field (an IPv4 address). */
static __always_inline int
ovs_bpf_l4_csum_pseudo4(struct __sk_buff *skb, const struct ovs_bpf_scratch *s,
                        bool ipv6, __be32 from, __be32 to)
{
    int off = ovs_bpf_l4_csum_off(s->key.nw_proto, ipv6);

    if (off < 0 || !ovs_bpf_has_l4(skb, s)) {
        return 0;
    }
    return bpf_l4_csum_replace(skb, s->l4_ofs + off, from, to,
                               ovs_bpf_l4_csum_flags(s->key.nw_proto, true)
                               | sizeof to);
}

/* Same for a 16-byte IPv6 address: the helper takes the checksum
 * difference (size 0 = 'to' is a difference). */
static __always_inline int
ovs_bpf_l4_csum_pseudo16(struct __sk_buff *skb,
                         const struct ovs_bpf_scratch *s,
                         __be32 *from, __be32 *to)
{
    int off = ovs_bpf_l4_csum_off(s->key.nw_proto, true);
    __s64 diff;

    if (off < 0 || !ovs_bpf_has_l4(skb, s)) {
        return 0;
    }
    diff = bpf_csum_diff(from, 16, to, 16, 0);
    if (diff < 0) {
        return diff;
    }
    return bpf_l4_csum_replace(skb, s->l4_ofs + off, 0, diff,
                               ovs_bpf_l4_csum_flags(s->key.nw_proto, true));
}

/* Updates the L4 checksum for a 2-byte change of the L4 header itself (a
 * port). */
static __always_inline int
ovs_bpf_l4_csum_port(struct __sk_buff *skb, const struct ovs_bpf_scratch *s,
                     __be16 from, __be16 to)
{
    int off = ovs_bpf_l4_csum_off(s->key.nw_proto, false);

    if (off < 0) {
        return 0;
    }
    return bpf_l4_csum_replace(skb, s->l4_ofs + off, from, to,
                               ovs_bpf_l4_csum_flags(s->key.nw_proto, false)
                               | sizeof to);
}

#endif /* BPF_CSUM_H */
