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

/* The slow path of the BPF datapath's ct() action: ICMP, ICMPv6 and every
 * IP protocol but TCP and UDP, which the conntrack kfuncs refuse, and the
 * commits that write labels, which no kfunc can (bpf/ct-slow.h sends such
 * packets up, OVS_BPF_UPCALL_CT).
 *
 * The connections are the kernel's, in the same nf_conntrack table as
 * those the BPF programs make (so "dpctl/dump-conntrack", "flush-conntrack"
 * and "conntrack -L" see them), created, looked up and refreshed here
 * through ctnetlink.  The rules are those of the kernel's trackers
 * (nf_conntrack_proto_icmp.c, _icmpv6.c, _generic.c) as the kernel datapath
 * (net/openvswitch/conntrack.c) reports them in ct_state:
 *
 *   - An ICMP or ICMPv6 query (echo, timestamp, information, address mask,
 *     node information) is tracked by its addresses, type, code and
 *     identifier; its reply type is the reply direction.  Only a request
 *     starts a connection: a reply without one, and the types that have
 *     no reply (router advertisements, neighbour discovery...), are
 *     +trk+inv.
 *
 *   - An ICMP error (destination unreachable, time exceeded, parameter
 *     problem, source quench, redirect; ICMPv6 1 to 4) is +rel, with +rpl
 *     if it travels in the reply direction, when the packet it embeds is
 *     of a connection (of any protocol, TCP and UDP included); it has the
 *     mark and the original tuple of that connection.  Otherwise +inv.
 *     It never starts a connection.
 *
 *   - Any other protocol (SCTP, GRE, IGMP, VRRP...) is tracked by its
 *     addresses (and ports if it has them), as the generic tracker does.
 *
 *   - As the kernel datapath keeps a packet's connection across ct()
 *     actions of one zone (skb_nfct_cached()), a packet that a ct() of the
 *     same zone tracked already (its ct_state says +trk, its original
 *     tuple is known) finds its connection by that tuple, so that a
 *     second ct() after NAT finds the connection the first one used.
 *
 * The kernel's trackers never see these packets, so every packet of a
 * connection sets its timeout again: for ICMP and ICMPv6 (and TCP and
 * UDP, below), that of the timeout policy of its commit (icmp_first before
 * a reply, icmp_reply after, dpif-bpf-ct-tp.c), or the kernel's default,
 * nf_conntrack_icmp_timeout and _icmpv6_timeout (30 s); for the others
 * _generic_timeout (600 s), which ofproto-dpif gives no policy.
 *
 * NAT (IPv4 and IPv6, as in BPF): a commit with nat(src=...) or
 * nat(dst=...) makes the connection with its binding (CTA_NAT_SRC,
 * CTA_NAT_DST), to the action's range of addresses, which the kernel
 * chooses from; the kernel keeps an ICMP identifier unless it clashes.
 * The packets of a connection with a binding that go through a ct(nat)
 * are translated here, an ICMP error's embedded header too (as the
 * kernel's nf_nat_icmp_reply_translation() does); an error in the
 * original direction only with commit, as in the kernel datapath.
 *
 * TCP and UDP come here only for a commit with labels; they follow the
 * rules of the BPF ct() (bpf/actions-ct.h): the same timeouts (of the
 * connection's timeout policy, or the defaults), a TCP packet that cannot
 * start a connection (SYN-ACK, FIN, RST) is +trk+inv, and NAT translates
 * their ports too, within the action's port range (the kernel chooses;
 * ctnetlink has no "random" or "persistent").
 *
 * Labels.  A connection has labels only if the kernel gave it the labels
 * extension when it created it, which it does only while something in
 * the network namespace holds a reference to labels: the table that
 * dpif_bpf_ct_labels_enable() adds (dpif-bpf-ct-labels.c).  A commit with
 * labels then creates its connection here with CTA_LABELS, or writes them
 * into an existing one.  A connection that a commit without labels made
 * in BPF (bpf_skb_ct_alloc() adds no extension) has no room for them: it
 * is replaced by one that ctnetlink creates with the same tuples, NAT
 * binding, mark, status and timeout, and the labels.
 *
 * A packet for which the kernel refuses a new connection (the table is
 * full) is dropped, as in BPF.  An answer of ctnetlink that makes no sense
 * gives +trk+inv, and a log message. */

#include <config.h>

#include "dpif-bpf-ct-slow.h"

#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "csum.h"
#include "ct-dpif.h"
#include "dp-packet.h"
#include "dpif-bpf-ct-limit.h"
#include "dpif-bpf-ct-tp.h"
#include "netlink.h"
#include "netlink-conntrack.h"
#include "netlink-socket.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "packets.h"
#include "socket-util.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_ct_slow);

COVERAGE_DEFINE(dpif_bpf_ct_slow_path);
COVERAGE_DEFINE(dpif_bpf_ct_slow_invalid);
COVERAGE_DEFINE(dpif_bpf_ct_slow_error);
COVERAGE_DEFINE(dpif_bpf_ct_tcp_state);
COVERAGE_DEFINE(dpif_bpf_ct_tcp_state_error);

/* The TCP states of bpf/datapath-abi.h are the kernel's. */
#define OVS_BPF_TCP_STATE(NAME, TP)                                     \
    BUILD_ASSERT_DECL((int) OVS_BPF_TCPS_##NAME                         \
                      == (int) TCP_CONNTRACK_##NAME);
OVS_BPF_TCP_STATES
#undef OVS_BPF_TCP_STATE

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);

/* The kernel's default timeout, in seconds, of the protocols that have no
 * timeout policy (those of ICMP, TCP and UDP are in bpf/datapath-abi.h). */
#define CT_SLOW_GENERIC_TIMEOUT 600    /* nf_conntrack_generic_timeout */
/* Those of the BPF ct() for TCP and UDP (bpf/actions-ct.h). */
#define CT_SLOW_UDP_NEW 30             /* udp_timeout */
#define CT_SLOW_UDP_EST 120            /* udp_timeout_stream */
#define CT_SLOW_TCP_NEW 120            /* tcp_timeout_syn_sent */
#define CT_SLOW_TCP_EST 432000         /* tcp_timeout_established */
#define CT_SLOW_TCP_FIN 120            /* tcp_timeout_time_wait */
#define CT_SLOW_TCP_RST 10             /* tcp_timeout_close */

/* ct(commit) with labels: the value and the mask (of the action), as
 * ctnetlink's CTA_LABELS and CTA_LABELS_MASK take them. */
struct slow_labels {
    uint8_t value[16];
    uint8_t mask[16];
};

static uint8_t tcp_state_of(const struct ct_dpif_entry *, uint8_t seen);
static void ct_put_tcp_state(struct ofpbuf *, uint8_t state);
static void tcp_state_move(const struct dpif_bpf_obj *,
                           const struct ct_dpif_tuple *orig, uint16_t zone,
                           bool reply, const struct flow *,
                           const struct ct_dpif_entry *);

/* What ct() needs to know of a packet. */
struct slow_pkt {
    struct ct_dpif_tuple tuple;     /* The packet's own. */
    bool is_icmp;                   /* ICMP (IPv4) or ICMPv6. */
    bool is_error;                  /* An ICMP error... */
    struct ct_dpif_tuple inner;     /* ...and the packet it embeds. */
    uint8_t *inner_l3;              /* The embedded IP header. */
    uint8_t *inner_l4;              /* Its L4 header (8 bytes at least). */
};

static bool
is_icmp_proto(int af, uint8_t proto)
{
    return (af == AF_INET && proto == IPPROTO_ICMP)
           || (af == AF_INET6 && proto == IPPROTO_ICMPV6);
}

/* The ICMP type of the reply to a query of 'type', plus one; 0 if 'type' is
 * not a query or a reply (the kernel's invmap[]).  */
static uint8_t
icmp_invert_type(int af, uint8_t type)
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
static bool
icmp_is_request(int af, uint8_t type)
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
    if (is_icmp_proto(t->l3_type, proto)) {
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
static bool
parse_packet(struct dp_packet *packet, const struct flow *flow,
             struct slow_pkt *p)
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
    p->is_icmp = is_icmp_proto(af, flow->nw_proto);
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
static bool
invert_tuple(const struct ct_dpif_tuple *t, struct ct_dpif_tuple *inv)
{
    memset(inv, 0, sizeof *inv);
    inv->l3_type = t->l3_type;
    inv->ip_proto = t->ip_proto;
    inv->src = t->dst;
    inv->dst = t->src;
    if (is_icmp_proto(t->l3_type, t->ip_proto)) {
        uint8_t type = icmp_invert_type(t->l3_type, t->icmp_type);

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

static bool
tuple_equal(const struct ct_dpif_tuple *a, const struct ct_dpif_tuple *b)
{
    size_t alen = a->l3_type == AF_INET ? 4 : 16;

    return a->l3_type == b->l3_type && a->ip_proto == b->ip_proto
           && !memcmp(&a->src, &b->src, alen)
           && !memcmp(&a->dst, &b->dst, alen)
           && a->src_port == b->src_port && a->dst_port == b->dst_port;
}

/* ctnetlink. */

static void
ct_msg_start(struct ofpbuf *msg, int family, uint8_t cmd, uint32_t flags)
{
    struct nfgenmsg *nfm;

    nl_msg_put_nlmsghdr(msg, sizeof *nfm, NFNL_SUBSYS_CTNETLINK << 8 | cmd,
                        NLM_F_REQUEST | flags);
    nfm = nl_msg_put_uninit(msg, sizeof *nfm);
    nfm->nfgen_family = family;
    nfm->version = NFNETLINK_V0;
    nfm->res_id = 0;
}

/* Puts 't' as attribute 'type' (CTA_TUPLE_ORIG, CTA_TUPLE_REPLY).  Every
 * protocol but ICMP gets ports, zero if it has none: the kernel's trackers
 * that have ports want both attributes, the generic one ignores them. */
static void
ct_put_tuple(struct ofpbuf *msg, int type, const struct ct_dpif_tuple *t)
{
    size_t tuple_ofs = nl_msg_start_nested(msg, type);
    size_t ofs;

    ofs = nl_msg_start_nested(msg, CTA_TUPLE_IP);
    if (t->l3_type == AF_INET) {
        nl_msg_put_be32(msg, CTA_IP_V4_SRC, t->src.ip);
        nl_msg_put_be32(msg, CTA_IP_V4_DST, t->dst.ip);
    } else {
        nl_msg_put_in6_addr(msg, CTA_IP_V6_SRC, &t->src.in6);
        nl_msg_put_in6_addr(msg, CTA_IP_V6_DST, &t->dst.in6);
    }
    nl_msg_end_nested(msg, ofs);

    ofs = nl_msg_start_nested(msg, CTA_TUPLE_PROTO);
    nl_msg_put_u8(msg, CTA_PROTO_NUM, t->ip_proto);
    if (t->l3_type == AF_INET && t->ip_proto == IPPROTO_ICMP) {
        nl_msg_put_be16(msg, CTA_PROTO_ICMP_ID, t->icmp_id);
        nl_msg_put_u8(msg, CTA_PROTO_ICMP_TYPE, t->icmp_type);
        nl_msg_put_u8(msg, CTA_PROTO_ICMP_CODE, t->icmp_code);
    } else if (t->l3_type == AF_INET6 && t->ip_proto == IPPROTO_ICMPV6) {
        nl_msg_put_be16(msg, CTA_PROTO_ICMPV6_ID, t->icmp_id);
        nl_msg_put_u8(msg, CTA_PROTO_ICMPV6_TYPE, t->icmp_type);
        nl_msg_put_u8(msg, CTA_PROTO_ICMPV6_CODE, t->icmp_code);
    } else {
        nl_msg_put_be16(msg, CTA_PROTO_SRC_PORT, t->src_port);
        nl_msg_put_be16(msg, CTA_PROTO_DST_PORT, t->dst_port);
    }
    nl_msg_end_nested(msg, ofs);
    nl_msg_end_nested(msg, tuple_ofs);
}

/* Looks up the connection that has 't' as one of its tuples in 'zone'.
 * Returns 0 and fills 'e' if there is one, ENOENT if not, another errno
 * value on failure. */
static int
ct_get(const struct ct_dpif_tuple *t, uint16_t zone, struct ct_dpif_entry *e)
{
    struct ofpbuf msg, *reply = NULL;
    enum nl_ct_event_type type;
    int error;

    ofpbuf_init(&msg, 256);
    ct_msg_start(&msg, t->l3_type, IPCTNL_MSG_CT_GET, 0);
    ct_put_tuple(&msg, CTA_TUPLE_ORIG, t);
    nl_msg_put_be16(&msg, CTA_ZONE, htons(zone));
    error = nl_transact(NETLINK_NETFILTER, &msg, &reply);
    ofpbuf_uninit(&msg);
    if (!error) {
        if (!nl_ct_parse_entry(reply, e, &type)) {
            error = EPROTO;
        }
        ofpbuf_delete(reply);
    }
    return error;
}

/* Creates the connection 'orig' in 'zone' with 'timeout' and 'mark', and
 * with the NAT binding that 'act' asks for if 'nat'. */
static void
ct_put_labels(struct ofpbuf *msg, const struct slow_labels *l)
{
    if (l) {
        nl_msg_put_unspec(msg, CTA_LABELS, l->value, sizeof l->value);
        nl_msg_put_unspec(msg, CTA_LABELS_MASK, l->mask, sizeof l->mask);
    }
}

static int
ct_create(const struct ct_dpif_tuple *orig, uint16_t zone, uint32_t timeout,
          uint32_t mark, const struct ovs_bpf_act_ct *act, bool nat,
          const struct slow_labels *labels)
{
    struct ct_dpif_tuple reply;
    struct ofpbuf msg;
    int error;

    if (!invert_tuple(orig, &reply)) {
        return EINVAL;
    }
    ofpbuf_init(&msg, 512);
    ct_msg_start(&msg, orig->l3_type, IPCTNL_MSG_CT_NEW,
                 NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
    ct_put_tuple(&msg, CTA_TUPLE_ORIG, orig);
    ct_put_tuple(&msg, CTA_TUPLE_REPLY, &reply);
    nl_msg_put_be32(&msg, CTA_TIMEOUT, htonl(timeout));
    nl_msg_put_be16(&msg, CTA_ZONE, htons(zone));
    if (mark) {
        nl_msg_put_be32(&msg, CTA_MARK, htonl(mark));
    }
    if (nat) {
        /* The range of addresses and, for TCP and UDP (commits with
         * labels), the range of ports, as in BPF; no identifier range: an
         * ICMP identifier is kept unless it clashes, as the kernel datapath
         * does with ICMP.  ctnetlink has no "random" or "persistent": the
         * kernel's own choice within the ranges. */
        size_t ofs = nl_msg_start_nested(&msg,
                                         act->flags & OVS_BPF_CT_F_NAT_SRC
                                         ? CTA_NAT_SRC : CTA_NAT_DST);

        if (act->flags & OVS_BPF_CT_F_NAT_ZERO) {
            /* All-zero SNAT: the packet's own source address, which the
             * kernel keeps, changing the port (or ICMP identifier) only if
             * the tuple clashes. */
            if (orig->l3_type == AF_INET6) {
                nl_msg_put_in6_addr(&msg, CTA_NAT_V6_MINIP, &orig->src.in6);
                nl_msg_put_in6_addr(&msg, CTA_NAT_V6_MAXIP, &orig->src.in6);
            } else {
                nl_msg_put_be32(&msg, CTA_NAT_V4_MINIP, orig->src.ip);
                nl_msg_put_be32(&msg, CTA_NAT_V4_MAXIP, orig->src.ip);
            }
        } else if (act->flags & OVS_BPF_CT_F_NAT_IPV6) {
            struct in6_addr min, max;
            uint32_t carry = act->nat_addr_span;
            int i;

            /* The last address: the first plus the span, from the last
             * 32-bit word up. */
            memcpy(&min, act->nat_addr.ipv6, sizeof min);
            max = min;
            for (i = 12; i >= 0 && carry; i -= 4) {
                ovs_be32 w;
                uint32_t sum;

                memcpy(&w, &max.s6_addr[i], 4);
                sum = ntohl(w) + carry;
                carry = sum < ntohl(w);
                w = htonl(sum);
                memcpy(&max.s6_addr[i], &w, 4);
            }
            nl_msg_put_in6_addr(&msg, CTA_NAT_V6_MINIP, &min);
            nl_msg_put_in6_addr(&msg, CTA_NAT_V6_MAXIP, &max);
        } else {
            ovs_be32 min = act->nat_addr.ipv4;

            nl_msg_put_be32(&msg, CTA_NAT_V4_MINIP, min);
            nl_msg_put_be32(&msg, CTA_NAT_V4_MAXIP,
                            htonl(ntohl(min) + act->nat_addr_span));
        }
        if (act->nat_port_min
            && !is_icmp_proto(orig->l3_type, orig->ip_proto)) {
            size_t pofs = nl_msg_start_nested(&msg, CTA_NAT_PROTO);

            nl_msg_put_be16(&msg, CTA_PROTONAT_PORT_MIN,
                            htons(act->nat_port_min));
            nl_msg_put_be16(&msg, CTA_PROTONAT_PORT_MAX,
                            htons(act->nat_port_max));
            nl_msg_end_nested(&msg, pofs);
        }
        nl_msg_end_nested(&msg, ofs);
    }
    ct_put_labels(&msg, labels);
    error = nl_transact(NETLINK_NETFILTER, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
}

/* Changes the connection whose original tuple is 'orig' in 'zone': its
 * timeout, if 'timeout' is not zero; its status to 'status' (IPS_* bits
 * that may only be set), if not zero; its mark under 'mark_mask'; its
 * labels, if 'labels'; its TCP state, if 'tcp_state' is not negative.
 * ENOSPC: the connection has no room for labels. */
static int
ct_update(const struct ct_dpif_tuple *orig, uint16_t zone, uint32_t timeout,
          uint32_t status, uint32_t mark, uint32_t mark_mask,
          const struct slow_labels *labels, int tcp_state)
{
    struct ofpbuf msg;
    int error;

    if (!timeout && !status && !mark_mask && !labels && tcp_state < 0) {
        return 0;
    }
    ofpbuf_init(&msg, 256);
    ct_msg_start(&msg, orig->l3_type, IPCTNL_MSG_CT_NEW, NLM_F_ACK);
    ct_put_tuple(&msg, CTA_TUPLE_ORIG, orig);
    nl_msg_put_be16(&msg, CTA_ZONE, htons(zone));
    if (timeout) {
        nl_msg_put_be32(&msg, CTA_TIMEOUT, htonl(timeout));
    }
    if (status) {
        nl_msg_put_be32(&msg, CTA_STATUS, htonl(status));
    }
    if (mark_mask) {
        nl_msg_put_be32(&msg, CTA_MARK, htonl(mark & mark_mask));
        nl_msg_put_be32(&msg, CTA_MARK_MASK, htonl(mark_mask));
    }
    ct_put_labels(&msg, labels);
    if (tcp_state >= 0) {
        ct_put_tcp_state(&msg, tcp_state);
    }
    error = nl_transact(NETLINK_NETFILTER, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
}

static int
ct_delete(const struct ct_dpif_tuple *orig, uint16_t zone)
{
    struct ofpbuf msg;
    int error;

    ofpbuf_init(&msg, 256);
    ct_msg_start(&msg, orig->l3_type, IPCTNL_MSG_CT_DELETE, NLM_F_ACK);
    ct_put_tuple(&msg, CTA_TUPLE_ORIG, orig);
    nl_msg_put_be16(&msg, CTA_ZONE, htons(zone));
    error = nl_transact(NETLINK_NETFILTER, &msg, NULL);
    ofpbuf_uninit(&msg);
    return error;
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
nat_inner(struct slow_pkt *p, const uint8_t *end, bool src,
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
    if (is_icmp_proto(p->inner.l3_type, proto)) {
        set_be16(l4 + 4, t->icmp_id, l4 + 2);
    } else if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
        set_be16(src ? l4 : l4 + 2, src ? t->src_port : t->dst_port, csump);
    }
}

/* True if 'nat_packet()' can translate the ports of a packet of tuple 't'
 * (that of an ICMP error's embedded packet if 'inner') to those of 'other'
 * (the source port if 'src'): it rewrites ICMP identifiers and, in an
 * embedded header, TCP and UDP ports, not the ports of other protocols
 * (SCTP...), which the kernel keeps unless the translated tuple clashes. */
static bool
nat_ports_ok(const struct ct_dpif_tuple *t, bool inner, bool src,
             const struct ct_dpif_tuple *other)
{
    if (is_icmp_proto(t->l3_type, t->ip_proto)
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
static uint16_t
nat_packet(struct dp_packet *packet, struct slow_pkt *p,
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
        invert_tuple(other, &target);
        if (!l4 || end - l4 < (tcp ? TCP_HEADER_LEN : UDP_HEADER_LEN)) {
            return 0;
        }
    } else {
        invert_tuple(other, &target);
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

/* The connection's state in the packet's metadata. */

static void
set_md(struct pkt_metadata *md, uint16_t state, uint16_t zone,
       uint32_t mark, const ovs_u128 *labels,
       const struct ct_dpif_tuple *orig)
{
    ovs_be16 sport, dport;

    md->ct_state = state;
    md->ct_zone = zone;
    md->ct_mark = mark;
    if (labels) {
        md->ct_label = *labels;
    } else {
        memset(&md->ct_label, 0, sizeof md->ct_label);
    }
    memset(&md->ct_orig_tuple, 0, sizeof md->ct_orig_tuple);
    md->ct_orig_tuple_ipv6 = false;
    if (!orig) {
        return;
    }
    /* An ICMP connection's "ports" are its type and code, as in the
     * kernel datapath and lib/conntrack.c. */
    if (is_icmp_proto(orig->l3_type, orig->ip_proto)) {
        sport = htons(orig->icmp_type);
        dport = htons(orig->icmp_code);
    } else {
        sport = orig->src_port;
        dport = orig->dst_port;
    }
    if (orig->l3_type == AF_INET) {
        struct ovs_key_ct_tuple_ipv4 *t = &md->ct_orig_tuple.ipv4;

        t->ipv4_src = orig->src.ip;
        t->ipv4_dst = orig->dst.ip;
        t->src_port = sport;
        t->dst_port = dport;
        t->ipv4_proto = orig->ip_proto;
    } else {
        struct ovs_key_ct_tuple_ipv6 *t = &md->ct_orig_tuple.ipv6;

        md->ct_orig_tuple_ipv6 = true;
        memcpy(&t->ipv6_src, &orig->src.in6, sizeof t->ipv6_src);
        memcpy(&t->ipv6_dst, &orig->dst.in6, sizeof t->ipv6_dst);
        t->src_port = sport;
        t->dst_port = dport;
        t->ipv6_proto = orig->ip_proto;
    }
}

/* Sets 't' to the original tuple in 'md' as it is there: the ports of an
 * ICMP connection are its type and code. */
static void
md_tuple(const struct pkt_metadata *md, struct ct_dpif_tuple *t)
{
    memset(t, 0, sizeof *t);
    if (md->ct_orig_tuple_ipv6) {
        const struct ovs_key_ct_tuple_ipv6 *o = &md->ct_orig_tuple.ipv6;

        t->l3_type = AF_INET6;
        memcpy(&t->src.in6, &o->ipv6_src, sizeof t->src.in6);
        memcpy(&t->dst.in6, &o->ipv6_dst, sizeof t->dst.in6);
        t->ip_proto = o->ipv6_proto;
        t->src_port = o->src_port;
        t->dst_port = o->dst_port;
    } else {
        const struct ovs_key_ct_tuple_ipv4 *o = &md->ct_orig_tuple.ipv4;

        t->l3_type = AF_INET;
        t->src.ip = o->ipv4_src;
        t->dst.ip = o->ipv4_dst;
        t->ip_proto = o->ipv4_proto;
        t->src_port = o->src_port;
        t->dst_port = o->dst_port;
    }
}

/* Sets 't' to the original tuple of the connection that an earlier ct()
 * found for 'md''s packet 'p'.  Returns false if there is none to use. */
static bool
md_orig_tuple(const struct pkt_metadata *md, const struct slow_pkt *p,
              struct ct_dpif_tuple *t)
{
    ovs_be16 sport, dport;

    md_tuple(md, t);
    sport = t->src_port;
    dport = t->dst_port;
    if (!t->ip_proto || t->l3_type != p->tuple.l3_type) {
        return false;
    }
    if (is_icmp_proto(t->l3_type, t->ip_proto)) {
        /* The original tuple has the type and code, not the identifier:
         * the packet's, or that of the packet an error embeds (NAT keeps
         * it unless it clashed; if it did, the lookup fails and the
         * packet is looked up afresh). */
        const struct ct_dpif_tuple *pt = p->is_error ? &p->inner : &p->tuple;

        if (!is_icmp_proto(pt->l3_type, pt->ip_proto)) {
            return false;
        }
        /* The ports share their bytes with the ICMP fields (unions in
         * struct ct_dpif_tuple): cleared first, not after. */
        t->src_port = t->dst_port = 0;
        t->icmp_type = ntohs(sport);
        t->icmp_code = ntohs(dport);
        t->icmp_id = pt->icmp_id;
    }
    return true;
}

/* The timeout in seconds of connection 't' of 'zone' after its packet
 * 'flow', under timeout policy 'tp_id' (a commit's) or, if that is 0, the
 * policy that its commit gave it, as the BPF ct() chooses it
 * (bpf/actions-ct.h); 'replied' if a packet of its reply direction has
 * been seen, 'first' if the packet creates it. */
static uint32_t
timeout_of(const struct dpif_bpf_obj *obj, const struct ct_dpif_tuple *t,
           uint16_t zone, uint32_t tp_id, const struct flow *flow,
           bool replied, bool first)
{
    enum ovs_bpf_ct_tp_state st;

    if (t->ip_proto == IPPROTO_UDP) {
        st = first ? OVS_BPF_CT_TP_UDP_FIRST
             : replied ? OVS_BPF_CT_TP_UDP_MULTIPLE
             : OVS_BPF_CT_TP_UDP_SINGLE;
    } else if (t->ip_proto == IPPROTO_TCP) {
        st = (flow->tcp_flags & htons(TCP_RST) ? OVS_BPF_CT_TP_TCP_RST
              : flow->tcp_flags & htons(TCP_FIN) ? OVS_BPF_CT_TP_TCP_FIN
              : replied ? OVS_BPF_CT_TP_TCP_EST
              : OVS_BPF_CT_TP_TCP_NEW);
    } else if (is_icmp_proto(t->l3_type, t->ip_proto)) {
        st = replied ? OVS_BPF_CT_TP_ICMP_REPLY : OVS_BPF_CT_TP_ICMP_FIRST;
    } else {
        return CT_SLOW_GENERIC_TIMEOUT;
    }
    return dpif_bpf_ct_tp_timeout(obj, t, zone, tp_id, st);
}

/* The labels of a connection that had 'old' after a commit writes 'l' (if
 * not null) into them. */
static ovs_u128
labels_after(const ovs_u128 *old, const struct slow_labels *l)
{
    ovs_u128 new = *old;

    if (l) {
        uint8_t *b = (uint8_t *) &new;

        for (int i = 0; i < 16; i++) {
            b[i] = (b[i] & ~l->mask[i]) | (l->value[i] & l->mask[i]);
        }
    }
    return new;
}

/* Replaces the connection 'e' of 'zone', which has no room for labels (a
 * commit without labels made it in BPF, where bpf_skb_ct_alloc() adds no
 * extension), by one that ctnetlink creates, with the labels extension,
 * with its tuples, NAT binding (IPv4 or IPv6, as BPF makes them), mark and
 * status, TCP state, 'timeout' and 'labels'.  The kernel reports it as a
 * connection that ends and a new one (ctnetlink events, "conntrack -E"). */
static int
ct_recreate(const struct ct_dpif_entry *e, uint16_t zone, uint32_t timeout,
            uint32_t mark, const struct slow_labels *labels)
{
    const struct ct_dpif_tuple *r = &e->tuple_reply;
    bool snat = e->status & CT_DPIF_STATUS_SRC_NAT;
    bool dnat = e->status & CT_DPIF_STATUS_DST_NAT;
    bool ports = !is_icmp_proto(r->l3_type, r->ip_proto);
    struct ct_dpif_tuple inv;
    struct ofpbuf msg;
    int error;

    if (!invert_tuple(&e->tuple_orig, &inv)) {
        return ENOSPC;
    }
    error = ct_delete(&e->tuple_orig, zone);
    if (error && error != ENOENT) {
        return error;
    }

    ofpbuf_init(&msg, 512);
    ct_msg_start(&msg, e->tuple_orig.l3_type, IPCTNL_MSG_CT_NEW,
                 NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
    ct_put_tuple(&msg, CTA_TUPLE_ORIG, &e->tuple_orig);
    /* The reply tuple without NAT: the kernel's nf_nat_setup_info()
     * translates from it (the reverse of the reply tuple is what it takes
     * for the packet's current tuple), to what the old one had. */
    ct_put_tuple(&msg, CTA_TUPLE_REPLY, &inv);
    nl_msg_put_be32(&msg, CTA_TIMEOUT, htonl(timeout));
    nl_msg_put_be16(&msg, CTA_ZONE, htons(zone));
    if (mark) {
        nl_msg_put_be32(&msg, CTA_MARK, htonl(mark));
    }
    for (int i = 0; i < 2; i++) {
        /* The binding to exactly what the reply tuple says: for SNAT its
         * destination, for DNAT its source. */
        bool src = i == 0;
        const union ct_dpif_inet_addr *ip = src ? &r->dst : &r->src;
        ovs_be16 port = src ? r->dst_port : r->src_port;
        size_t ofs, pofs;

        if (!(src ? snat : dnat)) {
            continue;
        }
        ofs = nl_msg_start_nested(&msg, src ? CTA_NAT_SRC : CTA_NAT_DST);
        if (r->l3_type == AF_INET6) {
            nl_msg_put_in6_addr(&msg, CTA_NAT_V6_MINIP, &ip->in6);
            nl_msg_put_in6_addr(&msg, CTA_NAT_V6_MAXIP, &ip->in6);
        } else {
            nl_msg_put_be32(&msg, CTA_NAT_V4_MINIP, ip->ip);
            nl_msg_put_be32(&msg, CTA_NAT_V4_MAXIP, ip->ip);
        }
        if (ports) {
            pofs = nl_msg_start_nested(&msg, CTA_NAT_PROTO);
            nl_msg_put_be16(&msg, CTA_PROTONAT_PORT_MIN, port);
            nl_msg_put_be16(&msg, CTA_PROTONAT_PORT_MAX, port);
            nl_msg_end_nested(&msg, pofs);
        }
        nl_msg_end_nested(&msg, ofs);
    }
    if (e->tuple_orig.ip_proto == IPPROTO_TCP) {
        /* Its TCP state (see "TCP connection states" below). */
        uint8_t st = tcp_state_of(e, OVS_BPF_TCPS_NONE);

        if (st != OVS_BPF_TCPS_NONE) {
            ct_put_tcp_state(&msg, st);
        }
    }
    ct_put_labels(&msg, labels);
    error = nl_transact(NETLINK_NETFILTER, &msg, NULL);
    ofpbuf_uninit(&msg);
    if (!error && e->status & CT_DPIF_STATUS_SEEN_REPLY) {
        error = ct_update(&e->tuple_orig, zone, 0,
                          IPS_CONFIRMED | IPS_SEEN_REPLY
                          | (e->status & CT_DPIF_STATUS_ASSURED
                             ? IPS_ASSURED : 0), 0, 0, NULL, -1);
    }
    return error;
}

/* Runs the ct() action 'act', with labels 'lbl' if it sets them (else
 * NULL), on 'packet', whose headers 'flow' describes
 * and whose metadata holds the conntrack fields that the packet had
 * before the action: sets them as the action does.  Returns true if the
 * packet goes on to the actions after the ct(), false if it is dropped
 * (a new connection could not be committed). */
bool
dpif_bpf_ct_slow_execute(const struct dpif_bpf_obj *obj,
                         const struct ovs_bpf_act_ct *act,
                         const struct ovs_bpf_act_ct_label *lbl,
                         struct dp_packet *packet, const struct flow *flow)
{
    struct pkt_metadata *md = &packet->md;
    uint16_t prev_state = md->ct_state;
    bool commit = act->flags & OVS_BPF_CT_F_COMMIT;
    bool found = false, reply = false, related = false, cached = false;
    const struct ct_dpif_tuple *orig;
    uint16_t state = CS_TRACKED;
    uint16_t zone = act->zone;
    const struct slow_labels *labels = NULL;
    ovs_u128 label = OVS_U128_ZERO;
    struct slow_labels l;
    struct ct_dpif_entry e;
    struct slow_pkt p;
    uint32_t mark = 0;
    int error;

    COVERAGE_INC(dpif_bpf_ct_slow_path);
    if (commit && lbl) {
        memcpy(l.value, lbl->label, sizeof l.value);
        memcpy(l.mask, lbl->mask, sizeof l.mask);
        labels = &l;
    }
    memset(&e, 0, sizeof e);
    if (!parse_packet(packet, flow, &p)) {
        goto invalid;
    }

    /* The connection that an earlier ct() of this zone found for the
     * packet, as the kernel datapath keeps it in the skb. */
    if ((prev_state & (CS_TRACKED | CS_INVALID)) == CS_TRACKED
        && md->ct_zone == zone) {
        struct ct_dpif_tuple t;

        if (md_orig_tuple(md, &p, &t)
            && ((prev_state & CS_RELATED) || t.ip_proto == p.tuple.ip_proto)) {
            error = ct_get(&t, zone, &e);
            if (!error) {
                found = cached = true;
                reply = prev_state & CS_REPLY_DIR;
                related = prev_state & CS_RELATED;
            } else if (error != ENOENT) {
                goto error;
            }
        }
    }
    if (!found && p.is_error) {
        /* The error travels the way the reverse of the packet it embeds
         * would (nf_conntrack_inet_error()). */
        struct ct_dpif_tuple inv;

        if (!invert_tuple(&p.inner, &inv)) {
            goto invalid;
        }
        error = ct_get(&inv, zone, &e);
        if (error == ENOENT) {
            goto invalid;
        } else if (error) {
            goto error;
        }
        found = related = true;
        reply = !tuple_equal(&inv, &e.tuple_orig);
    } else if (!found && p.is_icmp
               && !icmp_invert_type(p.tuple.l3_type, p.tuple.icmp_type)) {
        /* An ICMP type without a reply (router and neighbour discovery,
         * MLD...) has no connection: the kernel's trackers leave it
         * untracked, and ctnetlink refuses its tuple (EINVAL). */
        goto invalid;
    } else if (!found) {
        error = ct_get(&p.tuple, zone, &e);
        if (!error) {
            found = true;
            reply = !tuple_equal(&p.tuple, &e.tuple_orig);
        } else if (error != ENOENT) {
            goto error;
        }
    }

    if (found && reply && !related && commit
        && (act->flags & OVS_BPF_CT_F_FORCE)) {
        /* ct(force_commit) in the reply direction: a new connection in
         * this packet's direction replaces it. */
        error = ct_delete(&e.tuple_orig, zone);
        if (error && error != ENOENT) {
            goto error;
        }
        ct_dpif_entry_uninit(&e);
        memset(&e, 0, sizeof e);
        found = cached = reply = false;
    }

    if (found) {
        bool replied = e.status & CT_DPIF_STATUS_SEEN_REPLY;
        uint32_t mask = commit ? act->mark_mask : 0;
        uint32_t status = 0;

        if (related) {
            state |= CS_RELATED | (reply ? CS_REPLY_DIR : 0);
        } else if (reply) {
            state |= CS_ESTABLISHED | CS_REPLY_DIR;
            if (!replied) {
                /* ctnetlink sets these bits only; CONFIRMED must be
                 * there, as it is. */
                status = IPS_CONFIRMED | IPS_SEEN_REPLY
                         | (e.status & CT_DPIF_STATUS_ASSURED
                            ? IPS_ASSURED : 0);
            }
        } else {
            state |= replied ? CS_ESTABLISHED : CS_NEW;
        }
        uint32_t timeout = timeout_of(obj, &e.tuple_orig, zone, 0, flow,
                                      replied || reply, false);

        mark = (e.mark & ~mask) | (act->mark & mask);
        label = labels_after(&e.labels, labels);
        /* An error does not keep its connection alive. */
        error = ct_update(&e.tuple_orig, zone, related ? 0 : timeout,
                          status, act->mark, mask, labels, -1);
        if (error == ENOSPC && labels) {
            /* Made in BPF, without room for labels. */
            error = ct_recreate(&e, zone, timeout, mark, labels);
            if (!error && status) {
                error = ct_update(&e.tuple_orig, zone, 0, status, 0, 0,
                                  NULL, -1);
            }
        }
        if (error == ENOENT) {
            /* It expired since the lookup: the state above was true
             * when the packet was looked up. */
            VLOG_DBG_RL(&rl, "connection expired during ct()");
        } else if (error) {
            goto error;
        }
        orig = &e.tuple_orig;
    } else {
        bool nat = (act->flags & (OVS_BPF_CT_F_NAT_SRC
                                  | OVS_BPF_CT_F_NAT_DST))
                   && ((p.tuple.l3_type == AF_INET6)
                       == !!(act->flags & OVS_BPF_CT_F_NAT_IPV6)
                       || act->flags & OVS_BPF_CT_F_NAT_ZERO);

        if (p.is_error || (p.is_icmp && !icmp_is_request(p.tuple.l3_type,
                                                         p.tuple.icmp_type))) {
            /* Only a request starts an ICMP connection. */
            goto invalid;
        }
        if (p.tuple.ip_proto == IPPROTO_TCP
            && (flow->tcp_flags & htons(TCP_FIN | TCP_RST)
                || ((flow->tcp_flags & htons(TCP_SYN | TCP_ACK))
                    == htons(TCP_SYN | TCP_ACK)))) {
            /* As in BPF: a TCP packet that cannot start a connection. */
            goto invalid;
        }
        state |= CS_NEW;
        orig = &p.tuple;
        if (commit) {
            int reserved = dpif_bpf_ct_limit_reserve(obj, zone);

            if (reserved < 0) {
                /* The zone is at its limit (dpif-bpf-ct-limit.c). */
                COVERAGE_INC(dpif_bpf_ct_slow_error);
                VLOG_DBG_RL(&rl, "ct(commit): zone %"PRIu16" is full", zone);
                return false;
            }
            mark = act->mark & act->mark_mask;
            label = labels_after(&label, labels);
            error = ct_create(&p.tuple, zone,
                              timeout_of(obj, &p.tuple, zone, act->tp_id,
                                         flow, false, true),
                              mark, act, nat, labels);
            if (!error) {
                dpif_bpf_ct_tp_conn_set(obj, &p.tuple, zone, act->tp_id);
            } else if (reserved > 0) {
                dpif_bpf_ct_limit_unreserve(obj, zone);
            }
            if (error && error != EEXIST) {
                /* As in BPF and the kernel datapath: no connection, no
                 * packet (the table is full, or NAT found no tuple). */
                COVERAGE_INC(dpif_bpf_ct_slow_error);
                VLOG_DBG_RL(&rl, "ct(commit): cannot create a connection "
                            "(%s)", ovs_strerror(error));
                return false;
            }
            /* EEXIST: another handler thread committed it since the
             * lookup, which is what commit asks for. */
            if (nat || error == EEXIST) {
                bool exists = error == EEXIST;

                /* Its NAT binding, as the kernel chose it. */
                error = ct_get(&p.tuple, zone, &e);
                if (error) {
                    goto error;
                }
                found = true;
                if (!tuple_equal(&p.tuple, &e.tuple_orig)) {
                    goto invalid;
                }
                orig = &e.tuple_orig;
                if (exists) {
                    /* Someone else's: its mark and labels, and ours. */
                    mark = (e.mark & ~act->mark_mask)
                           | (act->mark & act->mark_mask);
                    label = labels_after(&e.labels, labels);
                    if (labels) {
                        error = ct_update(&e.tuple_orig, zone, 0, 0,
                                          act->mark, act->mark_mask, labels,
                                          -1);
                        if (error) {
                            goto error;
                        }
                    }
                }
            }
        }
    }

    if (found && (act->flags & OVS_BPF_CT_F_NAT)
        && e.status & (CT_DPIF_STATUS_SRC_NAT | CT_DPIF_STATUS_DST_NAT)) {
        if (cached && prev_state & (CS_SRC_NAT | CS_DST_NAT)) {
            /* An earlier ct() translated it already. */
            state |= prev_state & (CS_SRC_NAT | CS_DST_NAT);
        } else if (!related || reply || commit) {
            /* An error in the original direction is translated only by a
             * commit, as in the kernel datapath (ovs_ct_nat()). */
            uint16_t cs = nat_packet(packet, &p, &e, reply);

            if (!cs) {
                VLOG_WARN_RL(&rl, "ct(nat): cannot translate the ports of "
                             "protocol %"PRIu8": the packet is +trk+inv",
                             p.tuple.ip_proto);
                goto invalid;
            }
            state |= cs;
        }
    }
    if (p.tuple.ip_proto == IPPROTO_TCP && (found || commit)
        && !(cached && prev_state & CS_ESTABLISHED)) {
        /* The TCP state, as BPF moves it, from the entry's (or NONE, for a
         * connection just made here).  A connection that an earlier ct()
         * of the packet found established saw the packet already (the
         * moves from the states before ESTABLISHED are the same if made
         * twice). */
        tcp_state_move(obj, orig, zone, reply, flow, found ? &e : NULL);
    }
    set_md(md, state, zone, mark, &label, orig);
    ct_dpif_entry_uninit(&e);
    return true;

error:
    COVERAGE_INC(dpif_bpf_ct_slow_error);
    VLOG_WARN_RL(&rl, "ctnetlink failed for ct() (%s): the packet is "
                 "+trk+inv", ovs_strerror(error));
invalid:
    COVERAGE_INC(dpif_bpf_ct_slow_invalid);
    set_md(md, CS_TRACKED | CS_INVALID, zone, 0, NULL, NULL);
    ct_dpif_entry_uninit(&e);
    return true;
}

/* TCP connection states.
 *
 * The kernel's TCP tracker never sees the packets of the BPF datapath, so
 * the BPF ct() finds the move of each packet's connection to another TCP
 * state itself (ovs_bpf_tcp_next() of bpf/datapath-abi.h, on the state it
 * reads from the connection) and sends the few packets that move one (the
 * SYN, the SYN-ACK, the ACK that ends the handshake, the FINs, the last
 * ACK, an RST) up: no kfunc writes the state.  The state is written here,
 * through ctnetlink, with its timeout, before the packet goes on, so that
 * the next packet of the connection finds it. */

/* The kernel's TCP state, of the connection 'e' whose state BPF saw as
 * 'seen': ctnetlink's CTA_PROTOINFO_TCP_STATE, which
 * lib/netlink-conntrack.c gives as a CT_DPIF_TCPS_* state (SYN_SENT2 and
 * SYN_SENT are one there). */
static uint8_t
tcp_state_of(const struct ct_dpif_entry *e, uint8_t seen)
{
    if (e->protoinfo.proto != IPPROTO_TCP) {
        return OVS_BPF_TCPS_NONE;
    }
    switch (e->protoinfo.tcp.state_orig) {
    case CT_DPIF_TCPS_SYN_SENT:
        return (seen == OVS_BPF_TCPS_SYN_SENT2 ? OVS_BPF_TCPS_SYN_SENT2
                : OVS_BPF_TCPS_SYN_SENT);
    case CT_DPIF_TCPS_SYN_RECV:
        return OVS_BPF_TCPS_SYN_RECV;
    case CT_DPIF_TCPS_ESTABLISHED:
        return OVS_BPF_TCPS_ESTABLISHED;
    case CT_DPIF_TCPS_FIN_WAIT_1:
        return OVS_BPF_TCPS_FIN_WAIT;
    case CT_DPIF_TCPS_CLOSE_WAIT:
        return OVS_BPF_TCPS_CLOSE_WAIT;
    case CT_DPIF_TCPS_LAST_ACK:
        return OVS_BPF_TCPS_LAST_ACK;
    case CT_DPIF_TCPS_TIME_WAIT:
        return OVS_BPF_TCPS_TIME_WAIT;
    case CT_DPIF_TCPS_CLOSING:
        return OVS_BPF_TCPS_CLOSE;
    case CT_DPIF_TCPS_CLOSED:
    default:
        return OVS_BPF_TCPS_NONE;
    }
}

/* The timeout policy state of TCP state 'st'. */
static enum ovs_bpf_ct_tp_state
tcp_tp_state(uint8_t st)
{
    switch (st) {
#define OVS_BPF_TCP_STATE(NAME, TP) \
    case OVS_BPF_TCPS_##NAME: return OVS_BPF_CT_TP_##TP;
    OVS_BPF_TCP_STATES
#undef OVS_BPF_TCP_STATE
    default:
        return OVS_BPF_CT_TP_TCP_NEW;
    }
}

/* Puts TCP state 'st' (CTA_PROTOINFO_TCP_STATE). */
static void
ct_put_tcp_state(struct ofpbuf *msg, uint8_t st)
{
    size_t info = nl_msg_start_nested(msg, CTA_PROTOINFO);
    size_t tcp = nl_msg_start_nested(msg, CTA_PROTOINFO_TCP);

    nl_msg_put_u8(msg, CTA_PROTOINFO_TCP_STATE, st);
    nl_msg_end_nested(msg, tcp);
    nl_msg_end_nested(msg, info);
}

/* Writes TCP state 'next' (a state, OVS_BPF_TCPS_KEEP or _REOPEN) into
 * connection 'orig' of 'zone', with its timeout, if it is another state
 * than 'cur'.  Returns 0 or an errno value. */
static int
tcp_state_write(const struct dpif_bpf_obj *obj,
                const struct ct_dpif_tuple *orig, uint16_t zone, uint8_t cur,
                uint8_t next)
{
    if (next >= OVS_BPF_N_TCPS || next == cur) {
        return 0;
    }
    COVERAGE_INC(dpif_bpf_ct_tcp_state);
    return ct_update(orig, zone,
                     dpif_bpf_ct_tp_timeout(obj, orig, zone, 0,
                                            tcp_tp_state(next)),
                     0, 0, 0, NULL, next);
}

/* Logs 'error' of tcp_state_write(), unless it is ENOENT: the connection
 * ended since its packet saw it (flushed, or expired), which leaves
 * nothing to write. */
static void
tcp_state_error(int error)
{
    if (error && error != ENOENT) {
        COVERAGE_INC(dpif_bpf_ct_tcp_state_error);
        VLOG_WARN_RL(&rl, "cannot write the TCP state of a connection "
                     "(%s)", ovs_strerror(error));
    }
}

/* Moves the TCP state of connection 'orig' of 'zone', whose entry is 'e'
 * (NULL: one just created here, in state NONE), by its packet 'flow' in
 * the 'reply' direction or the original one: the ct slow path's part of
 * what BPF does (commits with labels). */
static void
tcp_state_move(const struct dpif_bpf_obj *obj,
               const struct ct_dpif_tuple *orig, uint16_t zone, bool reply,
               const struct flow *flow, const struct ct_dpif_entry *e)
{
    uint8_t cur = e ? tcp_state_of(e, OVS_BPF_TCPS_NONE) : OVS_BPF_TCPS_NONE;

    tcp_state_error(tcp_state_write(obj, orig, zone, cur,
                                    ovs_bpf_tcp_next(cur, reply,
                                                     ntohs(flow->tcp_flags))));
}

/* The packet 'packet', whose metadata holds what the BPF ct() set, and
 * whose TCP flags are those of 'flow', moves its connection from state
 * 'old' to 'new', as BPF saw it: writes the state, and its timeout (of
 * the connection's timeout policy, or the kernel's default), into the
 * connection.  Handler threads write one at a time, each from the state
 * that the connection has then (another thread may have moved it since
 * BPF read it: the FINs of a simultaneous close). */
void
dpif_bpf_ct_tcp_state(const struct dpif_bpf_obj *obj, uint8_t old,
                      uint8_t new, const struct dp_packet *packet,
                      const struct flow *flow)
{
    static struct ovs_mutex mutex = OVS_MUTEX_INITIALIZER;
    const struct pkt_metadata *md = &packet->md;
    struct ct_dpif_tuple orig;
    struct ct_dpif_entry e;
    uint8_t cur, next;
    int error;

    md_tuple(md, &orig);
    if ((md->ct_state & (CS_TRACKED | CS_INVALID)) != CS_TRACKED
        || old >= OVS_BPF_N_TCPS || new >= OVS_BPF_N_TCPS
        || orig.ip_proto != IPPROTO_TCP) {
        COVERAGE_INC(dpif_bpf_ct_tcp_state_error);
        return;
    }
    memset(&e, 0, sizeof e);
    ovs_mutex_lock(&mutex);
    error = ct_get(&orig, md->ct_zone, &e);
    if (!error) {
        cur = tcp_state_of(&e, old);
        next = (cur == old ? new
                : ovs_bpf_tcp_next(cur, !!(md->ct_state & CS_REPLY_DIR),
                                   ntohs(flow->tcp_flags)));
        error = tcp_state_write(obj, &e.tuple_orig, md->ct_zone, cur, next);
    }
    ovs_mutex_unlock(&mutex);
    tcp_state_error(error);
    ct_dpif_entry_uninit(&e);
}
