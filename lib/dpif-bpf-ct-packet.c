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


/* The packets of the BPF datapath's ct() slow path (dpif-bpf-ct-slow.c):
 * their connection tuples, as the kernel's trackers make them, and their
 * NAT, as the kernel's nf_nat_packet() does it. */

#include <config.h>

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "csum.h"
#include "ct-dpif.h"
#include "dp-packet.h"
#include "dpif-bpf-ct-slow-private.h"
#include "flow.h"
#include "packets.h"
#include "util.h"

/* Connection tuples. */

bool
ct_slow_is_icmp(int af, uint8_t proto)
{
    return (af == AF_INET && proto == IPPROTO_ICMP)
           || (af == AF_INET6 && proto == IPPROTO_ICMPV6);
}

/* The ICMP type of the reply to a query of 'type', plus one; 0 if 'type' is
 * not a query or a reply (the kernel's invmap[]).  */
uint8_t
ct_slow_icmp_invert_type(int af, uint8_t type)
{
    if (af == AF_INET) {
        switch (type) {
        case ICMP4_ECHO_REQUEST: return ICMP4_ECHO_REPLY + 1;
        case ICMP4_ECHO_REPLY: return ICMP4_ECHO_REQUEST + 1;
        case 13: return 14 + 1;         /* Timestamp. */
        case 14: return 13 + 1;
        case 15: return 16 + 1;         /* Information. */
        case 16: return 15 + 1;
        case 17: return 18 + 1;         /* Address mask. */
        case 18: return 17 + 1;
        }
    } else {
        switch (type) {
        case ICMP6_ECHO_REQUEST: return ICMP6_ECHO_REPLY + 1;
        case ICMP6_ECHO_REPLY: return ICMP6_ECHO_REQUEST + 1;
        case 139: return 140 + 1;       /* Node information. */
        case 140: return 139 + 1;
        }
    }
    return 0;
}

/* True if an ICMP packet of 'type' may start a connection (the kernel's
 * valid_new[]). */
bool
ct_slow_icmp_is_request(int af, uint8_t type)
{
    return af == AF_INET
           ? (type == ICMP4_ECHO_REQUEST || type == 13 || type == 15
              || type == 17)
           : type == ICMP6_ECHO_REQUEST || type == 139;
}

static bool
icmp_is_error(int af, uint8_t type)
{
    return af == AF_INET
           ? (type == ICMP4_DST_UNREACH || type == 4 || type == 5
              || type == ICMP4_TIME_EXCEEDED || type == 12)
           : type >= 1 && type <= 4;
}

/* Fills the L4 part of 't' (protocol 'proto') from the 'len' bytes at
 * 'l4'.  Returns false if they are too few. */
static bool
l4_to_tuple(struct ct_dpif_tuple *t, uint8_t proto, const uint8_t *l4,
            size_t len)
{
    t->ip_proto = proto;
    if (ct_slow_is_icmp(t->l3_type, proto)) {
        if (len < 8) {
            return false;
        }
        t->icmp_type = l4[0];
        t->icmp_code = l4[1];
        memcpy(&t->icmp_id, l4 + 4, 2);
    } else if (proto == IPPROTO_TCP || proto == IPPROTO_UDP
               || proto == IPPROTO_SCTP || proto == IPPROTO_UDPLITE
               || proto == IPPROTO_DCCP) {
        if (len < 4) {
            return false;
        }
        memcpy(&t->src_port, l4, 2);
        memcpy(&t->dst_port, l4 + 2, 2);
    }
    return true;
}

/* Parses the IP header at 'l3' ('len' bytes to the end of the packet) into
 * 't' and '*l4p'.  Returns false if it is not a whole unfragmented header
 * with 8 bytes of L4. */
static bool
ip_to_tuple(struct ct_dpif_tuple *t, int af, uint8_t *l3, size_t len,
            uint8_t **l4p)
{
    size_t hlen;
    uint8_t proto;

    memset(t, 0, sizeof *t);
    t->l3_type = af;
    if (af == AF_INET) {
        const struct ip_header *ip = ALIGNED_CAST(const struct ip_header *,
                                                  l3);

        if (len < IP_HEADER_LEN) {
            return false;
        }
        hlen = IP_IHL(ip->ip_ihl_ver) * 4;
        if (hlen < IP_HEADER_LEN || len < hlen
            || IP_IS_FRAGMENT(ip->ip_frag_off)) {
            return false;
        }
        t->src.ip = get_16aligned_be32(&ip->ip_src);
        t->dst.ip = get_16aligned_be32(&ip->ip_dst);
        proto = ip->ip_proto;
    } else {
        const struct ovs_16aligned_ip6_hdr *ip6 = (const void *) l3;

        if (len < IPV6_HEADER_LEN) {
            return false;
        }
        hlen = IPV6_HEADER_LEN;
        memcpy(&t->src.in6, &ip6->ip6_src, sizeof t->src.in6);
        memcpy(&t->dst.in6, &ip6->ip6_dst, sizeof t->dst.in6);
        proto = ip6->ip6_ctlun.ip6_un1.ip6_un1_nxt;
    }
    *l4p = l3 + hlen;
    return l4_to_tuple(t, proto, l3 + hlen, len - hlen);
}

/* Sets 'p' from 'packet', whose headers 'flow' describes.  Returns false
 * if the packet cannot be tracked: truncated (an IPv6 packet whose
 * extension headers do not parse, for one), or an ICMP error whose
 * embedded header cannot be read. */
bool
ct_slow_parse_packet(struct dp_packet *packet, const struct flow *flow,
                     struct ct_slow_pkt *p)
{
    uint8_t *l3 = dp_packet_l3(packet);
    uint8_t *l4 = dp_packet_l4(packet);
    uint8_t *end = dp_packet_tail(packet);
    int af;

    memset(p, 0, sizeof *p);
    af = flow->dl_type == htons(ETH_TYPE_IP) ? AF_INET
         : flow->dl_type == htons(ETH_TYPE_IPV6) ? AF_INET6 : 0;
    if (!af || !l3 || flow->nw_frag) {
        return false;
    }

    p->tuple.l3_type = af;
    if (af == AF_INET) {
        p->tuple.src.ip = flow->nw_src;
        p->tuple.dst.ip = flow->nw_dst;
    } else {
        p->tuple.src.in6 = flow->ipv6_src;
        p->tuple.dst.in6 = flow->ipv6_dst;
    }
    p->tuple.ip_proto = flow->nw_proto;
    p->is_icmp = ct_slow_is_icmp(af, flow->nw_proto);
    if (!l4) {
        /* flow_extract() sets the L4 offset of every IP packet whose
         * network headers it could parse, whatever the protocol: without
         * it, the packet (an IPv6 first fragment that ends inside an
         * extension header, for one) has no L4 header that conntrack could
         * find, and dpif-netdev's conntrack (conn_key_extract()) and the
         * kernel's (nf_conntrack_in()) do not track it: +trk+inv, not a
         * generic connection of the addresses. */
        return false;
    }
    if (!l4_to_tuple(&p->tuple, flow->nw_proto, l4, end - l4)) {
        return false;
    }
    if (p->is_icmp && icmp_is_error(af, p->tuple.icmp_type)) {
        p->is_error = true;
        p->inner_l3 = l4 + 8;
        if (!ip_to_tuple(&p->inner, af, p->inner_l3, end - p->inner_l3,
                         &p->inner_l4)) {
            return false;
        }
    }
    return true;
}

/* Sets '*inv' to the tuple of the reply to a packet of tuple 't'.  Returns
 * false if there is none (an ICMP type without a reply). */
bool
ct_slow_invert_tuple(const struct ct_dpif_tuple *t, struct ct_dpif_tuple *inv)
{
    memset(inv, 0, sizeof *inv);
    inv->l3_type = t->l3_type;
    inv->ip_proto = t->ip_proto;
    inv->src = t->dst;
    inv->dst = t->src;
    if (ct_slow_is_icmp(t->l3_type, t->ip_proto)) {
        uint8_t type = ct_slow_icmp_invert_type(t->l3_type, t->icmp_type);

        if (!type) {
            return false;
        }
        inv->icmp_type = type - 1;
        inv->icmp_code = t->icmp_code;
        inv->icmp_id = t->icmp_id;
    } else {
        inv->src_port = t->dst_port;
        inv->dst_port = t->src_port;
    }
    return true;
}

bool
ct_slow_tuple_equal(const struct ct_dpif_tuple *a,
                    const struct ct_dpif_tuple *b)
{
    size_t alen = a->l3_type == AF_INET ? 4 : 16;

    return a->l3_type == b->l3_type && a->ip_proto == b->ip_proto
           && !memcmp(&a->src, &b->src, alen)
           && !memcmp(&a->dst, &b->dst, alen)
           && a->src_port == b->src_port && a->dst_port == b->dst_port;
}

/* NAT of the packet. */

/* Updates the (possibly unaligned) checksum at 'csump' for a 32-bit field
 * that changes from 'old' to 'new'.  A 16-bit field passes as a 32-bit one
 * whose upper half is zero: the one's complement sum is the same. */
static void
csum_update32(uint8_t *csump, ovs_be32 old, ovs_be32 new)
{
    ovs_be16 c;

    memcpy(&c, csump, 2);
    c = recalc_csum32(c, old, new);
    memcpy(csump, &c, 2);
}

static void
csum_update16(uint8_t *csump, ovs_be16 old, ovs_be16 new)
{
    csum_update32(csump, htonl(ntohs(old)), htonl(ntohs(new)));
}

/* The checksum of the L4 header of protocol 'proto' at 'l4' that covers
 * the pseudo-header, if the packet has it (a UDP one only if in use). */
static uint8_t *
l4_csum_field(uint8_t proto, uint8_t *l4, const uint8_t *end)
{
    if (proto == IPPROTO_UDP && end - l4 >= 8) {
        return l4[6] || l4[7] ? l4 + 6 : NULL;
    } else if (proto == IPPROTO_TCP && end - l4 >= 18) {
        return l4 + 16;
    }
    return NULL;
}

/* Sets the 16-bit field at 'field' to 'new', and the checksum at 'csump'
 * (if not NULL) accordingly. */
static void
set_be16(uint8_t *field, ovs_be16 new, uint8_t *csump)
{
    ovs_be16 old;

    memcpy(&old, field, 2);
    if (old != new) {
        if (csump) {
            csum_update16(csump, old, new);
        }
        memcpy(field, &new, 2);
    }
}

/* Translates the embedded header of the ICMP error 'p' with tuple 't':
 * its source (address and port or identifier) if 'src', else its
 * destination.  The checksum of the embedded L4 header is updated as far
 * as it is there (an error quotes the start of the packet only), as the
 * kernel does. */
static void
nat_inner(struct ct_slow_pkt *p, const uint8_t *end, bool src,
          const struct ct_dpif_tuple *t)
{
    uint8_t *l4 = p->inner_l4;
    uint8_t proto = p->inner.ip_proto;
    uint8_t *csump = l4_csum_field(proto, l4, end);

    if (p->inner.l3_type == AF_INET) {
        struct ip_header *ip = ALIGNED_CAST(struct ip_header *,
                                            p->inner_l3);
        ovs_16aligned_be32 *addrp = src ? &ip->ip_src : &ip->ip_dst;
        ovs_be32 old = get_16aligned_be32(addrp);
        ovs_be32 new = src ? t->src.ip : t->dst.ip;

        if (old != new) {
            ip->ip_csum = recalc_csum32(ip->ip_csum, old, new);
            if (csump) {
                csum_update32(csump, old, new);
            }
            put_16aligned_be32(addrp, new);
        }
    } else {
        struct ovs_16aligned_ip6_hdr *ip6 = (void *) p->inner_l3;
        union ovs_16aligned_in6_addr *addrp = src ? &ip6->ip6_src
                                                  : &ip6->ip6_dst;
        const struct in6_addr *new = src ? &t->src.in6 : &t->dst.in6;

        if (proto == IPPROTO_ICMPV6 && end - l4 >= 4) {
            csump = l4 + 2;     /* Its pseudo-header has the addresses. */
        }
        if (memcmp(addrp, new, sizeof *new)) {
            if (csump) {
                ovs_be16 c;

                memcpy(&c, csump, 2);
                c = recalc_csum128(c, addrp->be32, new);
                memcpy(csump, &c, 2);
            }
            memcpy(addrp, new, sizeof *new);
        }
    }
    if (ct_slow_is_icmp(p->inner.l3_type, proto)) {
        set_be16(l4 + 4, t->icmp_id, l4 + 2);
    } else if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
        set_be16(src ? l4 : l4 + 2, src ? t->src_port : t->dst_port, csump);
    }
}

/* True if ct_slow_nat_packet() can translate the ports of a packet of
 * tuple 't' (that of an ICMP error's embedded packet if 'inner') to those
 * of 'other' (the source port if 'src'): it rewrites ICMP identifiers and,
 * in an embedded header, TCP and UDP ports, not the ports of other
 * protocols (SCTP...), which the kernel keeps unless the translated tuple
 * clashes. */
static bool
nat_ports_ok(const struct ct_dpif_tuple *t, bool inner, bool src,
             const struct ct_dpif_tuple *other)
{
    if (ct_slow_is_icmp(t->l3_type, t->ip_proto)
        || (inner && (t->ip_proto == IPPROTO_TCP
                      || t->ip_proto == IPPROTO_UDP))) {
        return true;
    }
    return src ? t->src_port == other->src_port
               : t->dst_port == other->dst_port;
}

/* Translates 'packet' (parsed into 'p'), a packet of connection 'e' with a
 * NAT binding, in the 'reply' direction or the original one, as
 * the kernel's nf_nat_packet() and nf_nat_icmp_reply_translation() do.
 * Returns the CS_*_NAT bit of ct_state, or 0 (and leaves the packet as it
 * is) if it cannot translate the packet's ports. */
uint16_t
ct_slow_nat_packet(struct dp_packet *packet, struct ct_slow_pkt *p,
                   const struct ct_dpif_entry *e, bool reply)
{
    bool snat = e->status & CT_DPIF_STATUS_SRC_NAT;
    bool manip_src = snat != reply;
    const struct ct_dpif_tuple *other = reply ? &e->tuple_orig
                                              : &e->tuple_reply;
    struct ip_header *ip = dp_packet_l3(packet);
    uint8_t *l4 = dp_packet_l4(packet);
    uint8_t *end = dp_packet_tail(packet);
    bool tcp = p->tuple.ip_proto == IPPROTO_TCP;
    bool ports = !p->is_icmp && (tcp || p->tuple.ip_proto == IPPROTO_UDP);
    struct ct_dpif_tuple target;

    /* The new source of the packet is the other direction's destination,
     * and the other way round; the embedded header of an error takes the
     * other direction's tuple as it is. */
    if (p->is_error) {
        if (!nat_ports_ok(&p->inner, true, !manip_src, other)) {
            return 0;
        }
    } else if (ports) {
        /* TCP and UDP (commits with labels): their ports are translated
         * below, as BPF does, with the L4 checksum. */
        ct_slow_invert_tuple(other, &target);
        if (!l4 || end - l4 < (tcp ? TCP_HEADER_LEN : UDP_HEADER_LEN)) {
            return 0;
        }
    } else {
        ct_slow_invert_tuple(other, &target);
        if (!nat_ports_ok(&p->tuple, false, manip_src, &target)) {
            return 0;
        }
    }

    /* The packet becomes the reverse of the other direction's tuple. */
    if (p->tuple.l3_type == AF_INET6) {
        struct ovs_16aligned_ip6_hdr *ip6 = dp_packet_l3(packet);

        /* The L4 checksum (ICMPv6's too) covers the addresses.  (A
         * routing header, whose final destination the pseudo-header
         * would have, is not looked for.) */
        if (manip_src) {
            packet_set_ipv6_addr(packet, p->tuple.ip_proto,
                                 ip6->ip6_src.be32, &other->dst.in6, true);
        } else {
            packet_set_ipv6_addr(packet, p->tuple.ip_proto,
                                 ip6->ip6_dst.be32, &other->src.in6, true);
        }
    } else if (manip_src) {
        packet_set_ipv4_addr(packet, &ip->ip_src, other->dst.ip);
    } else {
        packet_set_ipv4_addr(packet, &ip->ip_dst, other->src.ip);
    }
    if (p->is_error) {
        /* The embedded packet, which went the other way, gets the
         * opposite translation; the ICMP checksum covers it all (and, for
         * ICMPv6, the pseudo-header). */
        uint32_t partial = 0;
        ovs_be16 c;

        nat_inner(p, end, !manip_src, other);
        memset(l4 + 2, 0, 2);
        if (p->tuple.l3_type == AF_INET6) {
            struct ovs_16aligned_ip6_hdr *ip6 = dp_packet_l3(packet);

            partial = csum_continue(partial, &ip6->ip6_src,
                                    sizeof ip6->ip6_src);
            partial = csum_continue(partial, &ip6->ip6_dst,
                                    sizeof ip6->ip6_dst);
            partial = csum_add32(partial, htonl(end - l4));
            partial = csum_add16(partial, htons(IPPROTO_ICMPV6));
        }
        c = csum_finish(csum_continue(partial, l4, end - l4));
        memcpy(l4 + 2, &c, 2);
    } else if (p->is_icmp && l4 && end - l4 >= 8) {
        set_be16(l4 + 4, other->icmp_id, l4 + 2);
    } else if (ports) {
        ovs_be16 sport = manip_src ? target.src_port : p->tuple.src_port;
        ovs_be16 dport = manip_src ? p->tuple.dst_port : target.dst_port;

        if (tcp) {
            packet_set_tcp_port(packet, sport, dport);
        } else {
            packet_set_udp_port(packet, sport, dport);
        }
    }
    return manip_src ? CS_SRC_NAT : CS_DST_NAT;
}
