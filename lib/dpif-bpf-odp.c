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

/* Translation of ODP flow keys and masks into the BPF datapath's flow key
 * and flow table keys, and back; packet metadata for upcalls and
 * downcalls.  The actions are in dpif-bpf-odp-actions.c, the text forms in
 * dpif-bpf-odp-format.c. */

#include <config.h>

#include "dpif-bpf-odp.h"
#include "dpif-bpf-odp-private.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/uio.h>

#include "flow.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/match.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "packets.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_odp);

/* The ABI structs have the same layout for clang -target bpf and for the
 * host compiler only if these hold. */
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_flow_key) == 256);
BUILD_ASSERT_DECL(offsetof(struct ovs_bpf_flow_key, ct_state)
                  == OVS_BPF_KEY_CT_TUN_OFS);
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_flow_key) == OVS_BPF_KEY_WORDS * 8);
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_flow_table_key)
                  == 8 + sizeof(struct ovs_bpf_flow_key));
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_action) == 64);
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_flow_stats) == 32);
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_flow)
                  == (16 + OVS_BPF_FLOW_STATS_SLOTS * 32
                      + (OVS_BPF_FLOW_INLINE_ACTIONS
                         * sizeof(struct ovs_bpf_action))));
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_mask)
                  == 40 + sizeof(struct ovs_bpf_flow_key));
BUILD_ASSERT_DECL(OVS_BPF_USERDATA_LEN == sizeof(struct user_action_cookie));

/* True if ct() may write and flows may match conntrack labels: the slow
 * path made this process's network namespace give new connections room
 * for labels (dpif_bpf_ct_labels_enable()). */
static atomic_bool ct_labels = false;

void
dpif_bpf_odp_set_ct_labels(bool enabled)
{
    atomic_store_relaxed(&ct_labels, enabled);
}

bool
dpif_bpf_odp_ct_labels(void)
{
    bool enabled;

    atomic_read_relaxed(&ct_labels, &enabled);
    return enabled;
}

void
dpif_bpf_odp_support(struct odp_support *support)
{
    memset(support, 0, sizeof *support);
    support->max_vlan_headers = 2;
    support->max_mpls_depth = OVS_BPF_MAX_MPLS_LABELS;
    support->recirc = true;
    /* Conntrack: the ct() action of the BPF programs sets ct_state, ct_zone,
     * ct_mark and the original direction tuple from the kernel's
     * nf_conntrack (bpf/actions-ct.h).  ct_label if the slow path, which
     * writes labels through ctnetlink, could make room for them (see
     * dpif_bpf_ct_labels_enable()).  The NAT bits of ct_state: the ct()
     * action does IPv4 and IPv6 NAT (bpf/ct-nat.h).  No ND extensions: the
     * BPF key has no field for them. */
    support->ct_state = true;
    support->ct_state_nat = true;
    support->ct_zone = true;
    support->ct_mark = true;
    support->ct_label = dpif_bpf_odp_ct_labels();
    support->ct_orig_tuple = true;
    support->ct_orig_tuple6 = true;
}

BUILD_ASSERT_DECL(OVS_BPF_MAX_MPLS_LABELS == FLOW_MAX_MPLS_LABELS);
BUILD_ASSERT_DECL(OVS_BPF_NSH_CONTEXT_WORDS
                  == ARRAY_SIZE(((struct ovs_key_nsh *) NULL)->context));

/* The tunnel metadata that the BPF key holds: what a VXLAN device in
 * collect_md mode reports (bpf/tunnel.h).  The flags are FLOW_TNL_F_*, in
 * network byte order in the key.  Geneve options, GBP, ERSPAN and GTP-U
 * fields have no place in it. */
static void
tunnel_to_bpf(const struct flow_tnl *t, struct ovs_bpf_flow_key *k)
{
    k->tun_id = t->tun_id;
    k->tun_ipv4_src = t->ip_src;
    k->tun_ipv4_dst = t->ip_dst;
    memcpy(k->tun_ipv6_src, &t->ipv6_src, 16);
    memcpy(k->tun_ipv6_dst, &t->ipv6_dst, 16);
    k->tun_flags = htons(t->flags & FLOW_TNL_F_MASK);
    k->tun_tos = t->ip_tos;
    k->tun_ttl = t->ip_ttl;
    k->tun_tp_src = t->tp_src;
    k->tun_tp_dst = t->tp_dst;
}

/* The inverse of tunnel_to_bpf(): leaves the fields of 't' that the BPF key
 * does not hold alone (FLOW_TNL_F_UDPIF among the flags). */
static void
bpf_to_tunnel(const struct ovs_bpf_flow_key *k, struct flow_tnl *t)
{
    t->tun_id = k->tun_id;
    t->ip_src = k->tun_ipv4_src;
    t->ip_dst = k->tun_ipv4_dst;
    memcpy(&t->ipv6_src, k->tun_ipv6_src, 16);
    memcpy(&t->ipv6_dst, k->tun_ipv6_dst, 16);
    t->flags = ((t->flags & ~FLOW_TNL_F_MASK)
                | (ntohs(k->tun_flags) & FLOW_TNL_F_MASK));
    t->ip_tos = k->tun_tos;
    t->ip_ttl = k->tun_ttl;
    t->tp_src = k->tun_tp_src;
    t->tp_dst = k->tun_tp_dst;
}

/* Copies the fields that struct ovs_bpf_flow_key holds from 'f' to 'k'.  Used
 * for keys and, with 'f' a mask, for masks.  'layout' says what the bytes of
 * the IPv6 addresses hold. */
static void
flow_fields_to_bpf(const struct flow *f, enum key_layout layout,
                   struct ovs_bpf_flow_key *k)
{
    memset(k, 0, sizeof *k);

    k->in_port = odp_to_u32(f->in_port.odp_port);
    k->recirc_id = f->recirc_id;
    k->dp_hash = f->dp_hash;
    k->skb_priority = f->skb_priority;
    k->skb_mark = f->pkt_mark;

    memcpy(k->eth_dst, f->dl_dst.ea, ETH_ADDR_LEN);
    memcpy(k->eth_src, f->dl_src.ea, ETH_ADDR_LEN);
    k->eth_type = f->dl_type;
    for (int i = 0; i < 2; i++) {
        k->vlans[i].tpid = f->vlans[i].tpid;
        k->vlans[i].tci = f->vlans[i].tci;
    }

    k->ipv4_src = f->nw_src;
    k->ipv4_dst = f->nw_dst;
    switch (layout) {
    case KEY_MPLS:
        for (int i = 0; i < FLOW_MAX_MPLS_LABELS; i++) {
            k->mpls_lse[i] = f->mpls_lse[i];
        }
        memcpy(k->ipv6_dst, &f->ipv6_dst, 16);
        break;
    case KEY_NSH:
        k->nsh.flags = f->nsh.flags;
        k->nsh.ttl = f->nsh.ttl;
        k->nsh.mdtype = f->nsh.mdtype;
        k->nsh.np = f->nsh.np;
        k->nsh.path_hdr = f->nsh.path_hdr;
        for (int i = 0; i < OVS_BPF_NSH_CONTEXT_WORDS; i++) {
            k->nsh_context[i] = f->nsh.context[i];
        }
        break;
    case KEY_IPV6:
    default:
        memcpy(k->ipv6_src, &f->ipv6_src, 16);
        memcpy(k->ipv6_dst, &f->ipv6_dst, 16);
        break;
    }
    k->ipv6_label = f->ipv6_label;
    k->nw_proto = f->nw_proto;
    k->nw_tos = f->nw_tos;
    k->nw_ttl = f->nw_ttl;
    k->nw_frag = f->nw_frag;

    k->tp_src = f->tp_src;
    k->tp_dst = f->tp_dst;
    k->tcp_flags = f->tcp_flags;
    memcpy(k->arp_sha, f->arp_sha.ea, ETH_ADDR_LEN);
    memcpy(k->arp_tha, f->arp_tha.ea, ETH_ADDR_LEN);
    memcpy(k->nd_target, &f->nd_target, 16);

    tunnel_to_bpf(&f->tunnel, k);
    k->ct_state = f->ct_state;
    k->ct_nw_proto = f->ct_nw_proto;
    k->ct_zone = f->ct_zone;
    k->ct_mark = f->ct_mark;
    if (dpif_bpf_odp_ct_labels()) {
        /* Otherwise not a field of the BPF key: check_unsupported(). */
        memcpy(k->ct_label, &f->ct_label, 16);
    }
    k->ct_nw_src = f->ct_nw_src;
    k->ct_nw_dst = f->ct_nw_dst;
    memcpy(k->ct_ipv6_src, &f->ct_ipv6_src, 16);
    memcpy(k->ct_ipv6_dst, &f->ct_ipv6_dst, 16);
    k->ct_tp_src = f->ct_tp_src;
    k->ct_tp_dst = f->ct_tp_dst;
}

/* The inverse of flow_fields_to_bpf(): sets in 'f' the fields that 'k' holds
 * and leaves the others alone. */
static void
bpf_fields_to_flow(const struct ovs_bpf_flow_key *k, enum key_layout layout,
                   struct flow *f)
{
    f->in_port.odp_port = u32_to_odp(k->in_port);
    f->recirc_id = k->recirc_id;
    f->dp_hash = k->dp_hash;
    f->skb_priority = k->skb_priority;
    f->pkt_mark = k->skb_mark;

    memcpy(f->dl_dst.ea, k->eth_dst, ETH_ADDR_LEN);
    memcpy(f->dl_src.ea, k->eth_src, ETH_ADDR_LEN);
    f->dl_type = k->eth_type;
    for (int i = 0; i < 2; i++) {
        f->vlans[i].tpid = k->vlans[i].tpid;
        f->vlans[i].tci = k->vlans[i].tci;
    }

    f->nw_src = k->ipv4_src;
    f->nw_dst = k->ipv4_dst;
    switch (layout) {
    case KEY_MPLS:
        for (int i = 0; i < FLOW_MAX_MPLS_LABELS; i++) {
            f->mpls_lse[i] = k->mpls_lse[i];
        }
        memcpy(&f->ipv6_dst, k->ipv6_dst, 16);
        break;
    case KEY_NSH:
        f->nsh.flags = k->nsh.flags;
        f->nsh.ttl = k->nsh.ttl;
        f->nsh.mdtype = k->nsh.mdtype;
        f->nsh.np = k->nsh.np;
        f->nsh.path_hdr = k->nsh.path_hdr;
        for (int i = 0; i < OVS_BPF_NSH_CONTEXT_WORDS; i++) {
            f->nsh.context[i] = k->nsh_context[i];
        }
        break;
    case KEY_IPV6:
    default:
        memcpy(&f->ipv6_src, k->ipv6_src, 16);
        memcpy(&f->ipv6_dst, k->ipv6_dst, 16);
        break;
    }
    f->ipv6_label = k->ipv6_label;
    f->nw_proto = k->nw_proto;
    f->nw_tos = k->nw_tos;
    f->nw_ttl = k->nw_ttl;
    f->nw_frag = k->nw_frag;

    f->tp_src = k->tp_src;
    f->tp_dst = k->tp_dst;
    f->tcp_flags = k->tcp_flags;
    memcpy(f->arp_sha.ea, k->arp_sha, ETH_ADDR_LEN);
    memcpy(f->arp_tha.ea, k->arp_tha, ETH_ADDR_LEN);
    memcpy(&f->nd_target, k->nd_target, 16);

    bpf_to_tunnel(k, &f->tunnel);
    f->ct_state = k->ct_state;
    f->ct_nw_proto = k->ct_nw_proto;
    f->ct_zone = k->ct_zone;
    f->ct_mark = k->ct_mark;
    if (dpif_bpf_odp_ct_labels()) {
        memcpy(&f->ct_label, k->ct_label, 16);
    }
    f->ct_nw_src = k->ct_nw_src;
    f->ct_nw_dst = k->ct_nw_dst;
    memcpy(&f->ct_ipv6_src, k->ct_ipv6_src, 16);
    memcpy(&f->ct_ipv6_dst, k->ct_ipv6_dst, 16);
    f->ct_tp_src = k->ct_tp_src;
    f->ct_tp_dst = k->ct_tp_dst;
}

/* Zeroes in 'm' the fields that flow_fields_to_bpf() copies, so that what is
 * left of a mask is what the BPF key cannot hold. */
static void
clear_bpf_fields(struct flow *m, enum key_layout layout)
{
    struct ovs_bpf_flow_key zero;

    memset(&zero, 0, sizeof zero);
    bpf_fields_to_flow(&zero, layout, m);
}

/* Returns true if 'a & b' is zero over 'n' bytes. */
static bool
and_is_zero(const void *a_, const void *b_, size_t n)
{
    const uint8_t *a = a_;
    const uint8_t *b = b_;

    for (size_t i = 0; i < n; i++) {
        if (a[i] & b[i]) {
            return false;
        }
    }
    return true;
}

/* Checks the fields of 'm' (the mask of 'flow') that the BPF key cannot
 * hold.  Some are metadata that a packet of the BPF datapath never has: no
 * conntrack label unless the slow path can write labels
 * (dpif_bpf_ct_labels_enable()), no tunnel options (Geneve TLVs, GBP,
 * ERSPAN, GTP-U: its tunnel ports are VXLAN devices).  They are always
 * zero, so matching them with zero, which exact-match keys do (see
 * flow_wildcards_init_for_packet()), matches every packet and is accepted.
 * Every other field must be wildcarded.  Clears the accepted fields from
 * 'm'. */
static bool
check_unsupported(const struct flow *flow, struct flow *m)
{
#define ZERO_UNDER_MASK(FIELD)                                         \
    (and_is_zero(&flow->FIELD, &m->FIELD, sizeof flow->FIELD)          \
     ? (memset(&m->FIELD, 0, sizeof m->FIELD), true)                   \
     : false)

    /* Not a field: the table that gives the option layout. */
    m->tunnel.metadata.tab = NULL;
    if (!ZERO_UNDER_MASK(tunnel)
        || (!dpif_bpf_odp_ct_labels() && !ZERO_UNDER_MASK(ct_label))) {
        return false;
    }
#undef ZERO_UNDER_MASK

    /* Checked by the caller. */
    m->packet_type = 0;

    /* IGMP group / ND reserved, OpenFlow metadata, MPLS labels or NSH
     * fields of a flow that is not MPLS or NSH...:
     * the BPF parser does not look at them, so they must not be matched. */
    return is_all_zeros(m, sizeof *m);
}

/* Translates 'flow' under 'wc' into '*bkey' and '*bmask'.  With 'strict',
 * refuses a mask that matches a field the BPF key cannot hold.  On error,
 * stores a static string that says why in '*reason'. */
static int
flow_to_key__(const struct flow *flow, const struct flow_wildcards *wc,
              bool strict, struct ovs_bpf_flow_key *bkey,
              struct ovs_bpf_flow_key *bmask, const char **reason)
{
    struct flow m = wc->masks;
    /* The key of an MPLS or NSH packet holds its labels or NSH headers in
     * the bytes of the IPv6 addresses (see struct ovs_bpf_flow_key). */
    enum key_layout layout = flow_key_layout(flow->dl_type, m.dl_type);

    /* Only Ethernet frames reach the BPF programs (TC on Ethernet ports). */
    if (flow->packet_type != htonl(PT_ETH)) {
        *reason = "not an Ethernet packet type";
        return EINVAL;
    }

    /* Like every datapath, the BPF one matches the input port exactly: ports
     * are in the key so that a flow never applies to the wrong port. */
    if (m.in_port.odp_port != ODPP_NONE) {
        *reason = "in_port is not matched exactly";
        return EINVAL;
    }

    *reason = "a field is matched beyond its width";

    /* tcp_flags is 12 bits wide and the IPv6 flow label 20 bits: bits above
     * are zero in every packet, so a mask that covers them matches only if
     * the value has them zero as well, and then they can be dropped. */
    if (flow->tcp_flags & m.tcp_flags & ~htons(BPF_TCP_FLAGS_MASK)) {
        return EINVAL;
    }
    m.tcp_flags &= htons(BPF_TCP_FLAGS_MASK);
    if (flow->ipv6_label & m.ipv6_label & ~htonl(BPF_IPV6_LABEL_MASK)) {
        return EINVAL;
    }
    m.ipv6_label &= htonl(BPF_IPV6_LABEL_MASK);
    if (flow->nw_frag & m.nw_frag & ~FLOW_NW_FRAG_MASK) {
        return EINVAL;
    }
    m.nw_frag &= FLOW_NW_FRAG_MASK;

    /* ICMP type and code are 8 bits wide, in the low byte of 'tp_src' and
     * 'tp_dst' (see xlate_wc_finish()). */
    if (is_icmpv4(flow, NULL) || is_icmpv6(flow, NULL)) {
        if ((flow->tp_src & m.tp_src & ~htons(0xff))
            || (flow->tp_dst & m.tp_dst & ~htons(0xff))) {
            return EINVAL;
        }
        m.tp_src &= htons(0xff);
        m.tp_dst &= htons(0xff);
    }

    /* ODP has no way to say "no original direction tuple": it leaves the
     * tuple out when ct_nw_proto is zero (odp_flow_key_from_flow()), so a
     * mask on the tuple of a key without one does not survive a round
     * trip through ODP.  It matches nothing either: the BPF programs set
     * the tuple and ct_nw_proto together. */
    if (!flow->ct_nw_proto) {
        m.ct_nw_proto = 0;
        m.ct_nw_src = m.ct_nw_dst = 0;
        memset(&m.ct_ipv6_src, 0, sizeof m.ct_ipv6_src);
        memset(&m.ct_ipv6_dst, 0, sizeof m.ct_ipv6_dst);
        m.ct_tp_src = m.ct_tp_dst = 0;
    }

    /* For ICMPv6 neighbour discovery, struct flow reuses 'tcp_flags' for the
     * ND option type (the ND extensions, which this datapath does not
     * claim). */
    if (m.tcp_flags && is_icmpv6(flow, NULL)) {
        *reason = "the ND option type is matched";
        return EINVAL;
    }

    /* The labels of an MPLS key share their bytes with the IPv6 source
     * address, the NSH headers of an NSH key with both IPv6 addresses: such
     * a flow must not match them. */
    if (layout == KEY_MPLS && !ipv6_mask_is_any(&m.ipv6_src)) {
        *reason = "an MPLS flow matches the IPv6 source address";
        return EINVAL;
    }
    if (layout == KEY_NSH && (!ipv6_mask_is_any(&m.ipv6_src)
                              || !ipv6_mask_is_any(&m.ipv6_dst))) {
        *reason = "an NSH flow matches an IPv6 address";
        return EINVAL;
    }
    if (layout == KEY_NSH) {
        /* An exact match (flow_wildcards_init_for_packet()) covers the IP
         * fields of an NSH flow, which no NSH packet has and ODP keys of
         * NSH do not carry: zero under their mask, they can be dropped. */
        if ((flow->nw_proto & m.nw_proto) || (flow->nw_tos & m.nw_tos)
            || (flow->nw_ttl & m.nw_ttl) || (flow->nw_frag & m.nw_frag)) {
            return EINVAL;
        }
        m.nw_proto = m.nw_tos = m.nw_ttl = m.nw_frag = 0;
    }

    flow_fields_to_bpf(&m, layout, bmask);

    if (strict) {
        struct flow rest = m;

        clear_bpf_fields(&rest, layout);
        if (!check_unsupported(flow, &rest)) {
            *reason = "a field the BPF flow key cannot hold is matched";
            return EINVAL;
        }
    }

    flow_fields_to_bpf(flow, layout, bkey);
    and_bytes(bkey, bmask, sizeof *bkey);
    return 0;
}

int
dpif_bpf_flow_to_key(const struct flow *flow, const struct flow_wildcards *wc,
                     struct ovs_bpf_flow_key *bkey,
                     struct ovs_bpf_flow_key *bmask)
{
    struct flow_wildcards exact;
    const char *reason;

    if (!wc) {
        flow_wildcards_init_for_packet(&exact, flow);
        return flow_to_key__(flow, &exact, false, bkey, bmask, &reason);
    }
    return flow_to_key__(flow, wc, true, bkey, bmask, &reason);
}

static void
log_bad_key(const char *what, const struct nlattr *key, size_t key_len,
            const struct nlattr *mask, size_t mask_len, const char *error)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

    /* Not a warning: ofproto probes datapath features with keys that a
     * datapath may reject. */
    if (!VLOG_DROP_DBG(&rl)) {
        struct ds s = DS_EMPTY_INITIALIZER;

        odp_flow_format(key, key_len, mask, mask_len, NULL, &s, true);
        VLOG_DBG("cannot translate flow %s (%s): %s", what, error,
                 ds_cstr(&s));
        ds_destroy(&s);
    }
}

int
dpif_bpf_odp_to_key(const struct nlattr *key, size_t key_len,
                    const struct nlattr *mask, size_t mask_len,
                    struct ovs_bpf_flow_key *bkey,
                    struct ovs_bpf_flow_key *bmask)
{
    enum odp_key_fitness fitness;
    struct flow_wildcards wc;
    const char *reason;
    struct flow flow;
    char *error = NULL;
    int err;

    /* Like dpif-netdev, accept only keys that odp-util parses perfectly: a
     * key with more or fewer attributes than expected would be matched
     * differently from what the caller meant.  Passing 'error' keeps
     * odp-util from logging a warning for each bad key. */
    fitness = odp_flow_key_to_flow(key, key_len, &flow, &error);
    if (fitness != ODP_FIT_PERFECT) {
        log_bad_key("key", key, key_len, NULL, 0,
                    error ? error : odp_key_fitness_to_string(fitness));
        free(error);
        return EINVAL;
    }

    fitness = odp_flow_key_to_mask(mask_len ? mask : NULL, mask_len, &wc,
                                   &flow, &error);
    if (fitness != ODP_FIT_PERFECT) {
        log_bad_key("mask", key, key_len, mask, mask_len,
                    error ? error : odp_key_fitness_to_string(fitness));
        free(error);
        return EINVAL;
    }

    if (!mask_len && is_igmp(&flow, NULL)) {
        /* The exact-match mask of flow_wildcards_init_for_packet() includes
         * the IGMP type, code and group, which no ODP key attribute carries
         * (their values here are zeros, not the packet's): like the kernel
         * datapath, do not match them. */
        wc.masks.tp_src = 0;
        wc.masks.tp_dst = 0;
        wc.masks.igmp_group_ip4 = 0;
    }

    err = flow_to_key__(&flow, &wc, true, bkey, bmask, &reason);
    if (err) {
        log_bad_key("key", key, key_len, mask, mask_len, reason);
    }
    return err;
}

/* The inverse of flow_to_key__(), for dpif_bpf_key_to_odp(). */
static void
key_to_flow(const struct ovs_bpf_flow_key *bkey,
            const struct ovs_bpf_flow_key *bmask,
            struct flow *flow, struct flow_wildcards *wc)
{
    enum key_layout layout = flow_key_layout(bkey->eth_type,
                                             (wc ? bmask->eth_type
                                              : OVS_BE16_MAX));

    memset(flow, 0, sizeof *flow);
    bpf_fields_to_flow(bkey, layout, flow);
    flow->packet_type = htonl(PT_ETH);

    if (wc) {
        memset(wc, 0, sizeof *wc);
        bpf_fields_to_flow(bmask, layout, &wc->masks);
        wc->masks.packet_type = OVS_BE32_MAX;
    }
}

void
dpif_bpf_key_to_odp(const struct ovs_bpf_flow_key *bkey,
                    const struct ovs_bpf_flow_key *bmask,
                    struct ofpbuf *key, struct ofpbuf *mask)
{
    struct odp_flow_key_parms parms;
    struct flow_wildcards wc;
    struct flow flow;
    size_t key_ofs = key->size;

    key_to_flow(bkey, bmask, &flow, &wc);

    /* 'bkey' is masked, so it may have lost what the Netlink encoding needs
     * to know which attributes to emit: restore a value under a zero
     * mask where that is the case. */
    for (int i = 0; i < 2; i++) {
        if (flow.vlans[i].tpid && !(flow.vlans[i].tci & htons(VLAN_CFI))) {
            /* A tag whose TCI is wildcarded is still a tag. */
            flow.vlans[i].tci |= htons(VLAN_CFI);
        }
    }
    if (eth_type_mpls(flow.dl_type)
        && !flow_count_mpls_labels(&flow, NULL)) {
        /* An MPLS key needs a label stack entry: with all the labels masked
         * out, one wildcarded entry, with the bottom of stack bit so that it
         * is the only one. */
        flow.mpls_lse[0] |= htonl(MPLS_BOS_MASK);
    }
    if (flow.dl_type == htons(ETH_TYPE_NSH) && !wc.masks.nsh.mdtype) {
        /* The mask always has the MD type 1 context, the key only with
         * MD type 1. */
        flow.nsh.mdtype = NSH_M_TYPE1;
    }
    if (!wc.masks.dl_type) {
        /* An Ethertype below ETH_TYPE_MIN would be encoded as "not
         * Ethernet II" with an exact mask. */
        flow.dl_type = htons(ETH_TYPE_MIN);
    }

    memset(&parms, 0, sizeof parms);
    parms.flow = &flow;
    parms.mask = &wc.masks;
    dpif_bpf_odp_support(&parms.support);
    odp_flow_key_from_flow(&parms, key);

    if (mask) {
        struct ofpbuf key_buf;

        ofpbuf_use_const(&key_buf, (char *) key->data + key_ofs,
                         key->size - key_ofs);
        parms.key_buf = &key_buf;
        odp_flow_key_from_mask(&parms, mask);
    }
}

/* Flow tables. */

static const uint8_t flow_table_words[OVS_BPF_N_FLOW_TABLES]
    = OVS_BPF_FLOW_TABLE_WORDS;

unsigned int
dpif_bpf_flow_table_words(unsigned int table)
{
    ovs_assert(table < OVS_BPF_N_FLOW_TABLES);
    return flow_table_words[table];
}

void
dpif_bpf_mask_compile(const struct ovs_bpf_flow_key *mask,
                      struct ovs_bpf_mask *m)
{
    uint64_t words[OVS_BPF_KEY_WORDS];
    unsigned int n = 0;

    memset(m, 0, sizeof *m);
    m->in_use = 1;
    memcpy(words, mask, sizeof words);
    for (unsigned int i = 0; i < OVS_BPF_KEY_WORDS; i++) {
        if (words[i]) {
            m->word[n] = i;
            m->mask[n] = words[i];
            n++;
        }
    }
    /* The smallest table whose key holds them.  The last has every word,
     * so there is always one. */
    while (flow_table_words[m->table] < n) {
        m->table++;
    }
}

void
dpif_bpf_table_key(uint32_t mask_id, const struct ovs_bpf_mask *m,
                   const struct ovs_bpf_flow_key *key,
                   struct ovs_bpf_flow_table_key *tkey)
{
    uint64_t words[OVS_BPF_KEY_WORDS];
    unsigned int n = dpif_bpf_flow_table_words(m->table);

    memset(tkey, 0, sizeof *tkey);
    tkey->mask_id = mask_id;
    memcpy(words, key, sizeof words);
    for (unsigned int i = 0; i < n; i++) {
        tkey->words[i] = words[m->word[i]] & m->mask[i];
    }
}

void
dpif_bpf_table_key_normalize(unsigned int table,
                             struct ovs_bpf_flow_table_key *tkey)
{
    unsigned int n = dpif_bpf_flow_table_words(table);

    memset(&tkey->words[n], 0, (OVS_BPF_KEY_WORDS - n) * sizeof(uint64_t));
}

/* Layer 3 flows. */

/* Returns true if the ODP flow key 'key' is of a packet that is not an
 * Ethernet frame (an OVS_KEY_ATTR_PACKET_TYPE other than Ethernet). */
static bool
key_is_l3(const struct nlattr *key, size_t key_len)
{
    const struct nlattr *pt;

    pt = nl_attr_find__(key, key_len, OVS_KEY_ATTR_PACKET_TYPE);
    return (pt && nl_attr_get_size(pt) == sizeof(ovs_be32)
            && nl_attr_get_be32(pt) != htonl(PT_ETH));
}

int
dpif_bpf_odp_to_l3_match(const struct nlattr *key, size_t key_len,
                         const struct nlattr *mask, size_t mask_len,
                         struct match *match)
{
    enum odp_key_fitness fitness;
    char *error = NULL;

    if (!key_is_l3(key, key_len)) {
        return ENOENT;
    }
    fitness = odp_flow_key_to_flow(key, key_len, &match->flow, &error);
    if (fitness == ODP_FIT_PERFECT) {
        fitness = odp_flow_key_to_mask(mask_len ? mask : NULL, mask_len,
                                       &match->wc, &match->flow, &error);
    }
    if (fitness != ODP_FIT_PERFECT) {
        log_bad_key("key", key, key_len, mask, mask_len,
                    error ? error : odp_key_fitness_to_string(fitness));
        free(error);
        return EINVAL;
    }
    /* As for the BPF flows: the packet type and the input port are matched
     * exactly, so that a flow never applies to another kind of packet or
     * another port. */
    if (match->wc.masks.packet_type != OVS_BE32_MAX
        || match->wc.masks.in_port.odp_port != ODPP_NONE) {
        log_bad_key("key", key, key_len, mask, mask_len,
                    "packet_type or in_port is not matched exactly");
        return EINVAL;
    }
    return 0;
}

/* Conntrack and tunnel metadata. */

/* Sets the conntrack and tunnel fields of 'md' from the metadata block
 * 'key_meta' of an upcall (see OVS_BPF_KEY_CT_TUN_OFS): the conntrack state
 * of a recirculated packet, as dpif-netdev's conntrack sets it, and the
 * tunnel metadata of a packet received on a tunnel port (zero otherwise),
 * so that flow_extract() puts them in the flow. */
void
dpif_bpf_key_meta_to_md(const uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN],
                        struct pkt_metadata *md)
{
    struct ovs_bpf_flow_key k;

    memcpy((uint8_t *) &k + OVS_BPF_KEY_CT_TUN_OFS, key_meta,
           OVS_BPF_KEY_CT_TUN_LEN);
    memset(&md->tunnel, 0, sizeof md->tunnel);
    bpf_to_tunnel(&k, &md->tunnel);

    md->ct_state = k.ct_state;
    md->ct_zone = k.ct_zone;
    md->ct_mark = k.ct_mark;
    memcpy(&md->ct_label, k.ct_label, sizeof md->ct_label);
    memset(&md->ct_orig_tuple, 0, sizeof md->ct_orig_tuple);
    md->ct_orig_tuple_ipv6 = false;
    if (!k.ct_state || !k.ct_nw_proto) {
        return;
    }
    /* The BPF program sets either the IPv4 or the IPv6 addresses. */
    if (!is_all_zeros(k.ct_ipv6_src, 16) || !is_all_zeros(k.ct_ipv6_dst, 16)) {
        struct ovs_key_ct_tuple_ipv6 *t = &md->ct_orig_tuple.ipv6;

        md->ct_orig_tuple_ipv6 = true;
        memcpy(&t->ipv6_src, k.ct_ipv6_src, 16);
        memcpy(&t->ipv6_dst, k.ct_ipv6_dst, 16);
        t->src_port = k.ct_tp_src;
        t->dst_port = k.ct_tp_dst;
        t->ipv6_proto = k.ct_nw_proto;
    } else {
        struct ovs_key_ct_tuple_ipv4 *t = &md->ct_orig_tuple.ipv4;

        t->ipv4_src = k.ct_nw_src;
        t->ipv4_dst = k.ct_nw_dst;
        t->src_port = k.ct_tp_src;
        t->dst_port = k.ct_tp_dst;
        t->ipv4_proto = k.ct_nw_proto;
    }
}

/* The inverse of dpif_bpf_key_meta_to_md(), for downcalls: the metadata
 * block of the packet whose metadata is 'md', so that the actions after a
 * recirculation see the ct_state that ovs-vswitchd saw, and the lookups
 * after it the tunnel metadata the packet was received with. */
void
dpif_bpf_md_to_key_meta(const struct pkt_metadata *md,
                        uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN])
{
    struct ovs_bpf_flow_key k;

    memset((uint8_t *) &k + OVS_BPF_KEY_CT_TUN_OFS, 0,
           OVS_BPF_KEY_CT_TUN_LEN);
    if (flow_tnl_dst_is_set(&md->tunnel)) {
        tunnel_to_bpf(&md->tunnel, &k);
    }
    k.ct_state = md->ct_state;
    k.ct_zone = md->ct_state ? md->ct_zone : 0;
    k.ct_mark = md->ct_state ? md->ct_mark : 0;
    if (md->ct_state) {
        memcpy(k.ct_label, &md->ct_label, 16);
    }
    if (md->ct_state && md->ct_orig_tuple_ipv6) {
        const struct ovs_key_ct_tuple_ipv6 *t = &md->ct_orig_tuple.ipv6;

        k.ct_nw_proto = t->ipv6_proto;
        memcpy(k.ct_ipv6_src, &t->ipv6_src, 16);
        memcpy(k.ct_ipv6_dst, &t->ipv6_dst, 16);
        k.ct_tp_src = t->src_port;
        k.ct_tp_dst = t->dst_port;
    } else if (md->ct_state) {
        const struct ovs_key_ct_tuple_ipv4 *t = &md->ct_orig_tuple.ipv4;

        k.ct_nw_proto = t->ipv4_proto;
        k.ct_nw_src = t->ipv4_src;
        k.ct_nw_dst = t->ipv4_dst;
        k.ct_tp_src = t->src_port;
        k.ct_tp_dst = t->dst_port;
    }
    memcpy(key_meta, (uint8_t *) &k + OVS_BPF_KEY_CT_TUN_OFS,
           OVS_BPF_KEY_CT_TUN_LEN);
}

/* Downcall frames. */

size_t
dpif_bpf_downcall_iov(struct iovec iov[DPIF_BPF_DOWNCALL_IOVS],
                      const void *packet, size_t len,
                      const struct ovs_bpf_action *actions,
                      uint32_t n_actions, const uint8_t *key_meta,
                      struct ovs_bpf_downcall *dc)
{
    /* The stand-in for the packet's ethertype, which goes in 'dc'. */
    static const ovs_be16 stand_in
        = CONSTANT_HTONS(OVS_BPF_DOWNCALL_ETH_TYPE);
    const struct eth_header *eth = packet;
    const uint8_t *after_type = (const uint8_t *) (eth + 1);

    ovs_assert(len >= ETH_HEADER_LEN);
    dc->eth_type = eth->eth_type;

    iov[0].iov_base = CONST_CAST(struct eth_header *, eth);
    iov[0].iov_len = offsetof(struct eth_header, eth_type);
    iov[1].iov_base = CONST_CAST(ovs_be16 *, &stand_in);
    iov[1].iov_len = sizeof stand_in;
    iov[2].iov_base = CONST_CAST(uint8_t *, after_type);
    iov[2].iov_len = len - ETH_HEADER_LEN;
    iov[3].iov_base = CONST_CAST(struct ovs_bpf_action *, actions);
    iov[3].iov_len = n_actions * sizeof *actions;
    iov[4].iov_base = CONST_CAST(uint8_t *, key_meta);
    iov[4].iov_len = OVS_BPF_KEY_CT_TUN_LEN;
    iov[5].iov_base = dc;
    iov[5].iov_len = sizeof *dc;
    return DPIF_BPF_DOWNCALL_IOVS;
}
