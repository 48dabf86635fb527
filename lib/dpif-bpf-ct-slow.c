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
 * gives +trk+inv, and a log message.
 *
 * This file has the action and the TCP state moves; the packets' tuples and
 * NAT are in dpif-bpf-ct-packet.c, the ctnetlink requests in
 * dpif-bpf-ct-nl.c. */

#include <config.h>

#include "dpif-bpf-ct-slow.h"

#include <errno.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "ct-dpif.h"
#include "dp-packet.h"
#include "dpif-bpf-ct-limit.h"
#include "dpif-bpf-ct-slow-private.h"
#include "dpif-bpf-ct-tp.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "packets.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_ct_slow);

COVERAGE_DEFINE(dpif_bpf_ct_slow_path);
COVERAGE_DEFINE(dpif_bpf_ct_slow_invalid);
COVERAGE_DEFINE(dpif_bpf_ct_slow_error);
COVERAGE_DEFINE(dpif_bpf_ct_tcp_state);
COVERAGE_DEFINE(dpif_bpf_ct_tcp_state_error);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);

/* The kernel's default timeout, in seconds, of the protocols that have no
 * timeout policy (those of ICMP, TCP and UDP are in bpf/datapath-abi.h). */
#define CT_SLOW_GENERIC_TIMEOUT 600    /* nf_conntrack_generic_timeout */

static void tcp_state_move(const struct dpif_bpf_obj *,
                           const struct ct_dpif_tuple *orig, uint16_t zone,
                           bool reply, const struct flow *,
                           const struct ct_dpif_entry *);


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
    if (ct_slow_is_icmp(orig->l3_type, orig->ip_proto)) {
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
md_orig_tuple(const struct pkt_metadata *md, const struct ct_slow_pkt *p,
              struct ct_dpif_tuple *t)
{
    ovs_be16 sport, dport;

    md_tuple(md, t);
    sport = t->src_port;
    dport = t->dst_port;
    if (!t->ip_proto || t->l3_type != p->tuple.l3_type) {
        return false;
    }
    if (ct_slow_is_icmp(t->l3_type, t->ip_proto)) {
        /* The original tuple has the type and code, not the identifier:
         * the packet's, or that of the packet an error embeds (NAT keeps
         * it unless it clashed; if it did, the lookup fails and the
         * packet is looked up afresh). */
        const struct ct_dpif_tuple *pt = p->is_error ? &p->inner : &p->tuple;

        if (!ct_slow_is_icmp(pt->l3_type, pt->ip_proto)) {
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
    } else if (ct_slow_is_icmp(t->l3_type, t->ip_proto)) {
        st = replied ? OVS_BPF_CT_TP_ICMP_REPLY : OVS_BPF_CT_TP_ICMP_FIRST;
    } else {
        return CT_SLOW_GENERIC_TIMEOUT;
    }
    return dpif_bpf_ct_tp_timeout(obj, t, zone, tp_id, st);
}

/* The labels of a connection that had 'old' after a commit writes 'l' (if
 * not null) into them. */
static ovs_u128
labels_after(const ovs_u128 *old, const struct ct_slow_labels *l)
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
    const struct ct_slow_labels *labels = NULL;
    ovs_u128 label = OVS_U128_ZERO;
    struct ct_slow_labels l;
    struct ct_dpif_entry e;
    struct ct_slow_pkt p;
    uint32_t mark = 0;
    int error;

    COVERAGE_INC(dpif_bpf_ct_slow_path);
    if (commit && lbl) {
        memcpy(l.value, lbl->label, sizeof l.value);
        memcpy(l.mask, lbl->mask, sizeof l.mask);
        labels = &l;
    }
    memset(&e, 0, sizeof e);
    if (!ct_slow_parse_packet(packet, flow, &p)) {
        goto invalid;
    }

    /* The connection that an earlier ct() of this zone found for the
     * packet, as the kernel datapath keeps it in the skb. */
    if ((prev_state & (CS_TRACKED | CS_INVALID)) == CS_TRACKED
        && md->ct_zone == zone) {
        struct ct_dpif_tuple t;

        if (md_orig_tuple(md, &p, &t)
            && ((prev_state & CS_RELATED) || t.ip_proto == p.tuple.ip_proto)) {
            error = ct_slow_nl_get(&t, zone, &e);
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

        if (!ct_slow_invert_tuple(&p.inner, &inv)) {
            goto invalid;
        }
        error = ct_slow_nl_get(&inv, zone, &e);
        if (error == ENOENT) {
            goto invalid;
        } else if (error) {
            goto error;
        }
        found = related = true;
        reply = !ct_slow_tuple_equal(&inv, &e.tuple_orig);
    } else if (!found && p.is_icmp
               && !ct_slow_icmp_invert_type(p.tuple.l3_type,
                                            p.tuple.icmp_type)) {
        /* An ICMP type without a reply (router and neighbour discovery,
         * MLD...) has no connection: the kernel's trackers leave it
         * untracked, and ctnetlink refuses its tuple (EINVAL). */
        goto invalid;
    } else if (!found) {
        error = ct_slow_nl_get(&p.tuple, zone, &e);
        if (!error) {
            found = true;
            reply = !ct_slow_tuple_equal(&p.tuple, &e.tuple_orig);
        } else if (error != ENOENT) {
            goto error;
        }
    }

    if (found && reply && !related && commit
        && (act->flags & OVS_BPF_CT_F_FORCE)) {
        /* ct(force_commit) in the reply direction: a new connection in
         * this packet's direction replaces it. */
        error = ct_slow_nl_delete(&e.tuple_orig, zone);
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
        error = ct_slow_nl_update(&e.tuple_orig, zone, related ? 0 : timeout,
                                  status, act->mark, mask, labels, -1);
        if (error == ENOSPC && labels) {
            /* Made in BPF, without room for labels. */
            error = ct_slow_nl_recreate(&e, zone, timeout, mark, labels);
            if (!error && status) {
                error = ct_slow_nl_update(&e.tuple_orig, zone, 0, status, 0, 0,
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

        if (p.is_error
            || (p.is_icmp && !ct_slow_icmp_is_request(p.tuple.l3_type,
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
            error = ct_slow_nl_create(&p.tuple, zone,
                                      timeout_of(obj, &p.tuple, zone,
                                                 act->tp_id, flow, false,
                                                 true),
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
                error = ct_slow_nl_get(&p.tuple, zone, &e);
                if (error) {
                    goto error;
                }
                found = true;
                if (!ct_slow_tuple_equal(&p.tuple, &e.tuple_orig)) {
                    goto invalid;
                }
                orig = &e.tuple_orig;
                if (exists) {
                    /* Someone else's: its mark and labels, and ours. */
                    mark = (e.mark & ~act->mark_mask)
                           | (act->mark & act->mark_mask);
                    label = labels_after(&e.labels, labels);
                    if (labels) {
                        error = ct_slow_nl_update(&e.tuple_orig, zone, 0, 0,
                                                  act->mark, act->mark_mask,
                                                  labels, -1);
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
            uint16_t cs = ct_slow_nat_packet(packet, &p, &e, reply);

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
    return ct_slow_nl_update(orig, zone,
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
    uint8_t cur = (e ? ct_slow_tcp_state_of(e, OVS_BPF_TCPS_NONE)
                   : OVS_BPF_TCPS_NONE);

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
    error = ct_slow_nl_get(&orig, md->ct_zone, &e);
    if (!error) {
        cur = ct_slow_tcp_state_of(&e, old);
        next = (cur == old ? new
                : ovs_bpf_tcp_next(cur, !!(md->ct_state & CS_REPLY_DIR),
                                   ntohs(flow->tcp_flags)));
        error = tcp_state_write(obj, &e.tuple_orig, md->ct_zone, cur, next);
    }
    ovs_mutex_unlock(&mutex);
    tcp_state_error(error);
    ct_dpif_entry_uninit(&e);
}
