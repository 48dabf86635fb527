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


/* The ctnetlink requests of the BPF datapath's ct() slow path
 * (dpif-bpf-ct-slow.c) on one connection of the kernel's nf_conntrack:
 * look it up, create it (with its NAT binding), change it, delete it, and
 * re-create it with room for labels; and its TCP state as ctnetlink gives
 * and takes it. */

#include <config.h>

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
#include "ct-dpif.h"
#include "dpif-bpf-ct-slow-private.h"
#include "netlink.h"
#include "netlink-conntrack.h"
#include "netlink-socket.h"
#include "openvswitch/ofpbuf.h"
#include "util.h"

/* The TCP states of bpf/datapath-abi.h are the kernel's. */
#define OVS_BPF_TCP_STATE(NAME, TP)                                     \
    BUILD_ASSERT_DECL((int) OVS_BPF_TCPS_##NAME                         \
                      == (int) TCP_CONNTRACK_##NAME);
OVS_BPF_TCP_STATES
#undef OVS_BPF_TCP_STATE

static void ct_put_tcp_state(struct ofpbuf *, uint8_t state);

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
int
ct_slow_nl_get(const struct ct_dpif_tuple *t, uint16_t zone,
               struct ct_dpif_entry *e)
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

static void
ct_put_labels(struct ofpbuf *msg, const struct ct_slow_labels *l)
{
    if (l) {
        nl_msg_put_unspec(msg, CTA_LABELS, l->value, sizeof l->value);
        nl_msg_put_unspec(msg, CTA_LABELS_MASK, l->mask, sizeof l->mask);
    }
}

/* Creates the connection 'orig' in 'zone' with 'timeout' and 'mark', and
 * with the NAT binding that 'act' asks for if 'nat'. */
int
ct_slow_nl_create(const struct ct_dpif_tuple *orig, uint16_t zone,
                  uint32_t timeout, uint32_t mark,
                  const struct ovs_bpf_act_ct *act, bool nat,
                  const struct ct_slow_labels *labels)
{
    struct ct_dpif_tuple reply;
    struct ofpbuf msg;
    int error;

    if (!ct_slow_invert_tuple(orig, &reply)) {
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
            && !ct_slow_is_icmp(orig->l3_type, orig->ip_proto)) {
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
int
ct_slow_nl_update(const struct ct_dpif_tuple *orig, uint16_t zone,
                  uint32_t timeout, uint32_t status, uint32_t mark,
                  uint32_t mark_mask,
                  const struct ct_slow_labels *labels, int tcp_state)
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

int
ct_slow_nl_delete(const struct ct_dpif_tuple *orig, uint16_t zone)
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

/* TCP states (see "TCP connection states" in dpif-bpf-ct-slow.c). */

/* The kernel's TCP state, of the connection 'e' whose state BPF saw as
 * 'seen': ctnetlink's CTA_PROTOINFO_TCP_STATE, which
 * lib/netlink-conntrack.c gives as a CT_DPIF_TCPS_* state (SYN_SENT2 and
 * SYN_SENT are one there). */
uint8_t
ct_slow_tcp_state_of(const struct ct_dpif_entry *e, uint8_t seen)
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

/* Replaces the connection 'e' of 'zone', which has no room for labels (a
 * commit without labels made it in BPF, where bpf_skb_ct_alloc() adds no
 * extension), by one that ctnetlink creates, with the labels extension,
 * with its tuples, NAT binding (IPv4 or IPv6, as BPF makes them), mark and
 * status, TCP state, 'timeout' and 'labels'.  The kernel reports it as a
 * connection that ends and a new one (ctnetlink events, "conntrack -E"). */
int
ct_slow_nl_recreate(const struct ct_dpif_entry *e, uint16_t zone,
                    uint32_t timeout, uint32_t mark,
                    const struct ct_slow_labels *labels)
{
    const struct ct_dpif_tuple *r = &e->tuple_reply;
    bool snat = e->status & CT_DPIF_STATUS_SRC_NAT;
    bool dnat = e->status & CT_DPIF_STATUS_DST_NAT;
    bool ports = !ct_slow_is_icmp(r->l3_type, r->ip_proto);
    struct ct_dpif_tuple inv;
    struct ofpbuf msg;
    int error;

    if (!ct_slow_invert_tuple(&e->tuple_orig, &inv)) {
        return ENOSPC;
    }
    error = ct_slow_nl_delete(&e->tuple_orig, zone);
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
        uint8_t st = ct_slow_tcp_state_of(e, OVS_BPF_TCPS_NONE);

        if (st != OVS_BPF_TCPS_NONE) {
            ct_put_tcp_state(&msg, st);
        }
    }
    ct_put_labels(&msg, labels);
    error = nl_transact(NETLINK_NETFILTER, &msg, NULL);
    ofpbuf_uninit(&msg);
    if (!error && e->status & CT_DPIF_STATUS_SEEN_REPLY) {
        error = ct_slow_nl_update(&e->tuple_orig, zone, 0,
                                  IPS_CONFIRMED | IPS_SEEN_REPLY
                                  | (e->status & CT_DPIF_STATUS_ASSURED
                                     ? IPS_ASSURED : 0), 0, 0, NULL, -1);
    }
    return error;
}
