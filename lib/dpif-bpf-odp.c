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

#include <config.h>

#include "dpif-bpf-odp.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/uio.h>

#include "dp-packet.h"
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
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_flow)
                  == 48 + (OVS_BPF_FLOW_INLINE_ACTIONS
                           * sizeof(struct ovs_bpf_action)));
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_mask)
                  == 40 + sizeof(struct ovs_bpf_flow_key));
BUILD_ASSERT_DECL(OVS_BPF_USERDATA_LEN == sizeof(struct user_action_cookie));

/* BPF key fields whose meaning is narrower than the 'struct flow' field of
 * the same name: the bits outside these masks are always zero in packets, so
 * a mask that covers them is normalized to one that does not. */
#define BPF_TCP_FLAGS_MASK 0x0fff
#define BPF_IPV6_LABEL_MASK IPV6_LABEL_MASK

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

/* What the bytes of 'ipv6_src' and 'ipv6_dst' of a BPF key hold (see struct
 * ovs_bpf_flow_key). */
enum key_layout {
    KEY_IPV6,                   /* The IPv6 addresses (zero if not IPv6). */
    KEY_MPLS,                   /* The MPLS labels, then 'ipv6_dst'. */
    KEY_NSH,                    /* The NSH headers. */
};

/* The layout of the key of 'flow' under mask 'm': only a flow that matches
 * the ethertype exactly can match the fields of MPLS or NSH. */
static enum key_layout
flow_key_layout(ovs_be16 dl_type, ovs_be16 dl_type_mask)
{
    if (dl_type_mask != OVS_BE16_MAX) {
        return KEY_IPV6;
    } else if (eth_type_mpls(dl_type)) {
        return KEY_MPLS;
    } else if (dl_type == htons(ETH_TYPE_NSH)) {
        return KEY_NSH;
    } else {
        return KEY_IPV6;
    }
}

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

static void
and_bytes(void *dst_, const void *mask_, size_t n)
{
    uint8_t *dst = dst_;
    const uint8_t *mask = mask_;

    for (size_t i = 0; i < n; i++) {
        dst[i] &= mask[i];
    }
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

/* Actions. */

/* Translation state. */
struct act_xlate {
    struct ovs_bpf_action *slots;
    uint32_t n;                 /* Slots needed so far (may exceed max). */
    bool userspace_only;        /* Valid, but BPF cannot run it. */
    bool not_eth;               /* The packet has no Ethernet header here
                                 * (after pop_eth, push_nsh, or add_mpls
                                 * without the L3 flag). */
    ovs_be16 l3_type;           /* With 'not_eth': the ethertype of the
                                 * packet's first header, or 0 if that is
                                 * the flow's own (after pop_eth). */
    bool nsh_popped;            /* After pop_nsh: whether the packet has an
                                 * Ethernet header depends on the NSH next
                                 * protocol (see check_nsh_action()). */
    bool tnl_pushed;            /* A TNL_PUSH slot ran: the key no longer
                                 * describes the packet's headers. */
    bool bpf_pop_eth;           /* With 'not_eth': a POP_ETH slot took the
                                 * header off, for the outputs to layer 3
                                 * ports that follow (bpf/actions.h). */
    bool nsh_pair;              /* The PUSH_NSH_ETH or POP_ETH_NSH slot of
                                 * the previous action does this one too. */
    int nesting;                /* Within clone(), sample(),
                                 * check_pkt_len(). */
};

static struct ovs_bpf_action *
new_slot(struct act_xlate *x, enum ovs_bpf_action_type type)
{
    static struct ovs_bpf_action overflow;
    struct ovs_bpf_action *slot;

    /* Keep counting past the end, so that the caller learns about an
     * unsupported action even in a list that is too long. */
    slot = x->n < OVS_BPF_MAX_ACTIONS ? &x->slots[x->n] : &overflow;
    x->n++;
    memset(slot, 0, sizeof *slot);
    slot->type = type;
    return slot;
}

/* Returns true if the BPF programs can set the key attribute 'type'. */
static bool
set_is_bpf(enum ovs_key_attr type)
{
    return (type == OVS_KEY_ATTR_PRIORITY || type == OVS_KEY_ATTR_SKB_MARK
            || type == OVS_KEY_ATTR_ETHERNET || type == OVS_KEY_ATTR_IPV4
            || type == OVS_KEY_ATTR_IPV6 || type == OVS_KEY_ATTR_TCP
            || type == OVS_KEY_ATTR_UDP || type == OVS_KEY_ATTR_MPLS);
}

/* Translates set() or set_masked() ('masked') of a key attribute of type
 * 'type' whose value and mask ('size' bytes each) are 'value' and 'mask'
 * (for set() an all-ones 'mask'). */
static int
xlate_set(struct act_xlate *x, enum ovs_key_attr type, const void *value,
          const void *mask, size_t size, bool masked, bool *modifies)
{
    struct ovs_bpf_action *s;
    int expected;

    expected = (type <= OVS_KEY_ATTR_MAX
                ? ovs_flow_key_attr_lens[type].len
                : ATTR_LEN_INVALID);
    if (expected == ATTR_LEN_INVALID
        || (expected >= 0 && (size_t) expected != size)) {
        return EINVAL;
    }
    if (is_all_zeros(mask, size) && set_is_bpf(type)) {
        /* A set that changes nothing. */
        return 0;
    }

    *modifies = true;
    switch (type) {
    case OVS_KEY_ATTR_PRIORITY:
    case OVS_KEY_ATTR_SKB_MARK: {
        const uint32_t *v = value, *m = mask;

        s = new_slot(x, (type == OVS_KEY_ATTR_PRIORITY
                         ? OVS_BPF_ACTION_SET_PRIORITY
                         : OVS_BPF_ACTION_SET_MARK));
        s->u.meta.value = *v & *m;
        s->u.meta.mask = *m;
        return 0;
    }

    case OVS_KEY_ATTR_ETHERNET: {
        const struct ovs_key_ethernet *v = value, *m = mask;

        s = new_slot(x, OVS_BPF_ACTION_SET_ETH);
        for (int i = 0; i < ETH_ADDR_LEN; i++) {
            s->u.eth.src[i] = v->eth_src.ea[i] & m->eth_src.ea[i];
            s->u.eth.src_mask[i] = m->eth_src.ea[i];
            s->u.eth.dst[i] = v->eth_dst.ea[i] & m->eth_dst.ea[i];
            s->u.eth.dst_mask[i] = m->eth_dst.ea[i];
        }
        return 0;
    }

    case OVS_KEY_ATTR_IPV4: {
        const struct ovs_key_ipv4 *v = value, *m = mask;

        /* The protocol and fragment bits are not writable: set_masked()
         * must not cover them (the kernel datapath refuses them too), set()
         * leaves them alone, as odp-execute does. */
        if (masked && (m->ipv4_proto || m->ipv4_frag)) {
            return EINVAL;
        }
        s = new_slot(x, OVS_BPF_ACTION_SET_IPV4);
        s->u.ipv4.src = v->ipv4_src & m->ipv4_src;
        s->u.ipv4.src_mask = m->ipv4_src;
        s->u.ipv4.dst = v->ipv4_dst & m->ipv4_dst;
        s->u.ipv4.dst_mask = m->ipv4_dst;
        s->u.ipv4.tos = v->ipv4_tos & m->ipv4_tos;
        s->u.ipv4.tos_mask = m->ipv4_tos;
        s->u.ipv4.ttl = v->ipv4_ttl & m->ipv4_ttl;
        s->u.ipv4.ttl_mask = m->ipv4_ttl;
        return 0;
    }

    case OVS_KEY_ATTR_IPV6: {
        const struct ovs_key_ipv6 *v = value, *m = mask;
        ovs_be32 label_mask = m->ipv6_label;

        if (masked) {
            if (m->ipv6_proto || m->ipv6_frag
                || m->ipv6_label & ~htonl(IPV6_LABEL_MASK)) {
                return EINVAL;
            }
        } else {
            label_mask = htonl(IPV6_LABEL_MASK);
        }

        /* One slot per part that changes, so that a TTL decrement costs one
         * small action instead of two address rewrites. */
        if (!ipv6_mask_is_any(&m->ipv6_src)) {
            s = new_slot(x, OVS_BPF_ACTION_SET_IPV6_SRC);
            memcpy(s->u.ipv6_addr.addr, &v->ipv6_src, 16);
            memcpy(s->u.ipv6_addr.mask, &m->ipv6_src, 16);
            and_bytes(s->u.ipv6_addr.addr, s->u.ipv6_addr.mask, 16);
        }
        if (!ipv6_mask_is_any(&m->ipv6_dst)) {
            s = new_slot(x, OVS_BPF_ACTION_SET_IPV6_DST);
            memcpy(s->u.ipv6_addr.addr, &v->ipv6_dst, 16);
            memcpy(s->u.ipv6_addr.mask, &m->ipv6_dst, 16);
            and_bytes(s->u.ipv6_addr.addr, s->u.ipv6_addr.mask, 16);
        }
        if (label_mask || m->ipv6_tclass || m->ipv6_hlimit) {
            s = new_slot(x, OVS_BPF_ACTION_SET_IPV6_MISC);
            s->u.ipv6_misc.label = v->ipv6_label & label_mask;
            s->u.ipv6_misc.label_mask = label_mask;
            s->u.ipv6_misc.tclass = v->ipv6_tclass & m->ipv6_tclass;
            s->u.ipv6_misc.tclass_mask = m->ipv6_tclass;
            s->u.ipv6_misc.hlimit = v->ipv6_hlimit & m->ipv6_hlimit;
            s->u.ipv6_misc.hlimit_mask = m->ipv6_hlimit;
        }
        return 0;
    }

    case OVS_KEY_ATTR_TCP:
    case OVS_KEY_ATTR_UDP: {
        const struct ovs_key_tcp *v = value, *m = mask;

        BUILD_ASSERT_DECL(sizeof(struct ovs_key_tcp)
                          == sizeof(struct ovs_key_udp));
        s = new_slot(x, (type == OVS_KEY_ATTR_TCP
                         ? OVS_BPF_ACTION_SET_TCP
                         : OVS_BPF_ACTION_SET_UDP));
        s->u.l4.src = v->tcp_src & m->tcp_src;
        s->u.l4.src_mask = m->tcp_src;
        s->u.l4.dst = v->tcp_dst & m->tcp_dst;
        s->u.l4.dst_mask = m->tcp_dst;
        return 0;
    }

    case OVS_KEY_ATTR_MPLS: {
        const struct ovs_key_mpls *v = value, *m = mask;

        /* One label stack entry, the outermost (as in the kernel). */
        if (size != sizeof(struct ovs_key_mpls)) {
            return EINVAL;
        }
        if (x->not_eth) {
            /* The labels of a packet without an Ethernet header: the BPF
             * programs never see such a packet. */
            x->userspace_only = true;
            return 0;
        }
        s = new_slot(x, OVS_BPF_ACTION_SET_MPLS);
        s->u.mpls.lse = v->mpls_lse & m->mpls_lse;
        s->u.mpls.lse_mask = m->mpls_lse;
        return 0;
    }

    case OVS_KEY_ATTR_SCTP:
    case OVS_KEY_ATTR_ARP:
    case OVS_KEY_ATTR_ND:
        /* odp_execute_actions() rewrites these (SCTP needs a CRC32c over
         * the whole packet): ovs-vswitchd runs such flows. */
        x->userspace_only = true;
        return 0;

    case OVS_KEY_ATTR_ND_EXTENSIONS:
        /* ofproto probes with this action whether the datapath has the ND
         * extension fields, which the BPF flow key does not have. */
        return EINVAL;

    case OVS_KEY_ATTR_ICMP:
    case OVS_KEY_ATTR_ICMPV6:
        /* odp-execute supports only the unmasked form. */
        if (masked) {
            return EINVAL;
        }
        x->userspace_only = true;
        return 0;

    case OVS_KEY_ATTR_NSH:          /* Nested: see check_nsh_action(). */
    case OVS_KEY_ATTR_TUNNEL:
    case OVS_KEY_ATTR_DP_HASH:
    case OVS_KEY_ATTR_RECIRC_ID:
    case OVS_KEY_ATTR_UNSPEC:
    case OVS_KEY_ATTR_ENCAP:
    case OVS_KEY_ATTR_IN_PORT:
    case OVS_KEY_ATTR_ETHERTYPE:
    case OVS_KEY_ATTR_VLAN:
    case OVS_KEY_ATTR_TCP_FLAGS:
    case OVS_KEY_ATTR_CT_STATE:
    case OVS_KEY_ATTR_CT_ZONE:
    case OVS_KEY_ATTR_CT_MARK:
    case OVS_KEY_ATTR_CT_LABELS:
    case OVS_KEY_ATTR_CT_ORIG_TUPLE_IPV4:
    case OVS_KEY_ATTR_CT_ORIG_TUPLE_IPV6:
    case OVS_KEY_ATTR_PACKET_TYPE:
    case OVS_KEY_ATTR_TUNNEL_INFO:
    case __OVS_KEY_ATTR_MAX:
    default:
        return EINVAL;
    }
}

int
dpif_bpf_tunnel_action(const struct flow_tnl *tnl,
                       struct ovs_bpf_action *slot)
{
    struct ovs_bpf_act_tunnel *t;
    bool ipv6 = !tnl->ip_dst;

    if ((ipv6 && !ipv6_addr_is_set(&tnl->ipv6_dst))
        || (!ipv6 && ipv6_addr_is_set(&tnl->ipv6_src))
        || (ipv6 && tnl->ip_src)
        || tnl->flags & ~(FLOW_TNL_F_DONT_FRAGMENT | FLOW_TNL_F_CSUM
                          | FLOW_TNL_F_KEY)
        || tnl->metadata.present.map || tnl->gbp_id || tnl->gbp_flags
        || tnl->erspan_ver || tnl->erspan_idx || tnl->erspan_dir
        || tnl->erspan_hwid || tnl->gtpu_flags || tnl->gtpu_msgtype) {
        return EINVAL;
    }

    memset(slot, 0, sizeof *slot);
    slot->type = OVS_BPF_ACTION_SET_TUNNEL;
    t = &slot->u.tunnel;
    t->tun_id = tnl->tun_id;
    if (ipv6) {
        memcpy(t->ipv6_src, &tnl->ipv6_src, 16);
        memcpy(t->ipv6_dst, &tnl->ipv6_dst, 16);
        t->flags |= BPF_F_TUNINFO_IPV6;
    } else {
        t->ipv4_src = tnl->ip_src;
        t->ipv4_dst = tnl->ip_dst;
    }
    t->tos = tnl->ip_tos;
    t->ttl = tnl->ip_ttl;
    t->tp_dst = tnl->tp_dst;
    if (!(tnl->flags & FLOW_TNL_F_CSUM)) {
        t->flags |= BPF_F_ZERO_CSUM_TX;
    }
    if (tnl->flags & FLOW_TNL_F_DONT_FRAGMENT) {
        t->flags |= BPF_F_DONT_FRAGMENT;
    }
    return 0;
}

/* Translates set(tunnel(...)) 'a' (the OVS_KEY_ATTR_TUNNEL attribute) into
 * an OVS_BPF_ACTION_SET_TUNNEL slot, see dpif_bpf_tunnel_action(). */
static int
xlate_set_tunnel(struct act_xlate *x, const struct nlattr *a)
{
    struct flow_tnl tnl;

    if (odp_tun_key_from_attr(a, &tnl, NULL) != ODP_FIT_PERFECT) {
        return EINVAL;
    }
    return dpif_bpf_tunnel_action(&tnl,
                                  new_slot(x, OVS_BPF_ACTION_SET_TUNNEL));
}

/* Returns the length of the argument of actions 'type' that this file
 * translates, or -1 if it is variable or the action is not translated. */
static int
action_arg_len(uint16_t type)
{
    switch (type) {
    case OVS_ACTION_ATTR_OUTPUT: return sizeof(uint32_t);
    case OVS_ACTION_ATTR_TRUNC: return sizeof(struct ovs_action_trunc);
    case OVS_ACTION_ATTR_PUSH_VLAN: return sizeof(struct ovs_action_push_vlan);
    case OVS_ACTION_ATTR_POP_VLAN: return 0;
    case OVS_ACTION_ATTR_RECIRC: return sizeof(uint32_t);
    case OVS_ACTION_ATTR_METER: return sizeof(uint32_t);
    case OVS_ACTION_ATTR_HASH: return sizeof(struct ovs_action_hash);
    case OVS_ACTION_ATTR_DROP: return sizeof(uint32_t);
    case OVS_ACTION_ATTR_PUSH_MPLS: return sizeof(struct ovs_action_push_mpls);
    case OVS_ACTION_ATTR_POP_MPLS: return sizeof(ovs_be16);
    case OVS_ACTION_ATTR_ADD_MPLS: return sizeof(struct ovs_action_add_mpls);
    case OVS_ACTION_ATTR_PUSH_ETH: return sizeof(struct ovs_action_push_eth);
    case OVS_ACTION_ATTR_POP_ETH: return 0;
    case OVS_ACTION_ATTR_POP_NSH: return 0;
    case OVS_ACTION_ATTR_TUNNEL_POP: return sizeof(odp_port_t);
    default: return -1;
    }
}

static int xlate_actions(struct act_xlate *, const struct nlattr *actions,
                         size_t len, bool more_after, bool *modifies);

/* Checks the argument of push_mpls, pop_mpls or add_mpls action 'a' as the
 * kernel datapath does (its size is checked by the caller), and follows
 * whether the packet keeps its Ethernet header in 'x'. */
static int
check_mpls_action(struct act_xlate *x, const struct nlattr *a)
{
    switch (nl_attr_type(a)) {
    case OVS_ACTION_ATTR_PUSH_MPLS: {
        const struct ovs_action_push_mpls *mpls = nl_attr_get(a);

        if (!eth_type_mpls(mpls->mpls_ethertype)) {
            return EINVAL;
        }
        x->l3_type = mpls->mpls_ethertype;
        return 0;
    }

    case OVS_ACTION_ATTR_POP_MPLS:
        /* Any ethertype: the one of what follows the labels.  As in
         * odp-execute's pop_mpls(), popping with "Transparent Ethernet
         * Bridging" from an MPLS packet without an Ethernet header leaves
         * the Ethernet frame it carried. */
        if (nl_attr_get_be16(a) == htons(ETH_TYPE_TEB)) {
            x->not_eth = false;
        }
        x->l3_type = nl_attr_get_be16(a);
        return 0;

    case OVS_ACTION_ATTR_ADD_MPLS: {
        const struct ovs_action_add_mpls *mpls = nl_attr_get(a);

        if (!eth_type_mpls(mpls->mpls_ethertype)) {
            return EINVAL;
        }
        /* Without OVS_MPLS_L3_TUNNEL_FLAG_MASK, add_mpls puts the label in
         * front of the Ethernet header: the packet is then an MPLS packet
         * without one (packet_type MPLS), which needs push_eth before it
         * can leave. */
        if (!(mpls->tun_flags & OVS_MPLS_L3_TUNNEL_FLAG_MASK)) {
            x->not_eth = true;
        }
        x->l3_type = mpls->mpls_ethertype;
        return 0;
    }

    default:
        return EINVAL;
    }
}

/* Checks the attribute OVS_KEY_ATTR_NSH 'nsh' of push_nsh ('push'),
 * set(nsh) or set_masked(nsh) ('masked': each attribute it nests holds a
 * value and a mask) as the kernel datapath does: a base header, MD type 1
 * or MD type 2 context (the latter only for push_nsh), of the MD type the
 * base header says.  push_nsh needs the base header, and the context if
 * it is of MD type 1 (ofproto pushes MD type 2 without TLVs, which
 * odp_execute_actions() does right). */
static bool
nsh_attrs_valid(const struct nlattr *nsh, bool push, bool masked)
{
    bool has_base = false, has_md1 = false, has_md2 = false;
    size_t mul = masked ? 2 : 1;
    const struct nlattr *a;
    uint8_t mdtype = 0;
    size_t left;

    NL_NESTED_FOR_EACH (a, left, nsh) {
        size_t len = nl_attr_get_size(a);

        switch (nl_attr_type(a)) {
        case OVS_NSH_KEY_ATTR_BASE: {
            const struct ovs_nsh_key_base *base = nl_attr_get(a);

            if (has_base || len != mul * sizeof *base) {
                return false;
            }
            has_base = true;
            mdtype = base->mdtype;
            break;
        }

        case OVS_NSH_KEY_ATTR_MD1:
            if (has_md1 || len != mul * sizeof(struct ovs_nsh_key_md1)) {
                return false;
            }
            has_md1 = true;
            break;

        case OVS_NSH_KEY_ATTR_MD2:
            if (!push || has_md2 || !len || len > NSH_CTX_HDRS_MAX_LEN) {
                return false;
            }
            has_md2 = true;
            break;

        default:
            return false;
        }
    }
    if (left || (has_md1 && has_md2)) {
        return false;
    }
    if (!masked && ((has_md1 && mdtype != NSH_M_TYPE1)
                    || (has_md2 && mdtype != NSH_M_TYPE2))) {
        return false;
    }
    return !push || (has_base && (has_md1 || mdtype != NSH_M_TYPE1));
}

/* Returns the one attribute that the payload of action 'a' nests, or NULL
 * if 'a' holds anything else. */
static const struct nlattr *
single_nested(const struct nlattr *a)
{
    const struct nlattr *inner = nl_attr_get(a);
    size_t size = nl_attr_get_size(a);

    if (size < NLA_HDRLEN || inner->nla_len < NLA_HDRLEN
        || size != NLA_ALIGN(inner->nla_len)) {
        return NULL;
    }
    return inner;
}

/* Checks push_nsh, pop_nsh, set(nsh) or set_masked(nsh) 'a' (of type
 * 'type') and follows what it does to the packet's headers in 'x'.
 *
 * The kernel datapath checks these against the flow's key: the ethertype
 * under the NSH header that push_nsh adds, the NSH next protocol that says
 * whether pop_nsh leaves an Ethernet frame.  The translation does not see
 * the key, so it takes the cases ofproto produces and refuses, with EINVAL,
 * those it cannot tell right:
 *
 *   - push_nsh on an Ethernet frame, or on an IPv4, IPv6 or NSH packet that
 *     an earlier action of the list made (odp_execute_actions() cannot push
 *     NSH on anything else);
 *   - pop_nsh on an NSH packet without an Ethernet header, followed only by
 *     a recirculation (decap() of NSH: what the packet is then depends on
 *     its next protocol, which only the lookup after the recirculation
 *     sees);
 *   - set(nsh) on a packet that has NSH as its first header after the
 *     Ethernet one, or as its first header; ovs-vswitchd checks the
 *     packet's ethertype again before running it. */
static int
check_nsh_action(struct act_xlate *x, const struct nlattr *a, int type)
{
    const struct nlattr *nsh;

    switch (type) {
    case OVS_ACTION_ATTR_PUSH_NSH:
        nsh = single_nested(a);
        if (!nsh || nl_attr_type(nsh) != OVS_KEY_ATTR_NSH
            || !nsh_attrs_valid(nsh, true, false)) {
            return EINVAL;
        }
        if (x->not_eth && x->l3_type != htons(ETH_TYPE_IP)
            && x->l3_type != htons(ETH_TYPE_IPV6)
            && x->l3_type != htons(ETH_TYPE_NSH)) {
            return EINVAL;
        }
        x->not_eth = true;
        x->l3_type = htons(ETH_TYPE_NSH);
        return 0;

    case OVS_ACTION_ATTR_POP_NSH:
        if (!x->not_eth || (x->l3_type && x->l3_type != htons(ETH_TYPE_NSH))) {
            return EINVAL;
        }
        x->not_eth = false;
        x->nsh_popped = true;
        return 0;

    case OVS_ACTION_ATTR_SET:
    case OVS_ACTION_ATTR_SET_MASKED:
        nsh = nl_attr_get(a);
        if (!nsh_attrs_valid(nsh, false, type == OVS_ACTION_ATTR_SET_MASKED)) {
            return EINVAL;
        }
        if (x->not_eth && x->l3_type && x->l3_type != htons(ETH_TYPE_NSH)) {
            return EINVAL;
        }
        return 0;

    default:
        return EINVAL;
    }
}

/* Translates push_nsh 'a' (checked already), if the next action of its
 * list ('last' if none) is a push_eth, into a PUSH_NSH_ETH slot that does
 * both.  Returns false if it cannot: the packet goes through
 * ovs-vswitchd. */
static bool
xlate_push_nsh_eth(struct act_xlate *x, const struct nlattr *a, bool last)
{
    union {
        struct nsh_hdr nsh;
        uint8_t bytes[NSH_HDR_MAX_LEN];
    } buf;
    struct nsh_hdr *nsh = &buf.nsh;
    const struct ovs_action_push_eth *eth;
    const struct nlattr *next;
    struct ovs_bpf_action *s;
    size_t hdr_len;

    next = last ? NULL : nl_attr_next(a);
    if (!next || nl_attr_type(next) != OVS_ACTION_ATTR_PUSH_ETH
        || nl_attr_get_size(next) != sizeof *eth
        || odp_nsh_hdr_from_attr(nl_attr_get(a), nsh, sizeof buf)
           != ODP_FIT_PERFECT) {
        return false;
    }
    hdr_len = nsh_hdr_len(nsh);
    if (hdr_len < NSH_BASE_HDR_LEN || hdr_len > OVS_BPF_NSH_PUSH_MAX_LEN) {
        return false;
    }
    eth = nl_attr_get(next);
    s = new_slot(x, OVS_BPF_ACTION_PUSH_NSH_ETH);
    memcpy(s->u.push_nsh.eth_dst, &eth->addresses.eth_dst, ETH_ADDR_LEN);
    memcpy(s->u.push_nsh.eth_src, &eth->addresses.eth_src, ETH_ADDR_LEN);
    s->u.push_nsh.hdr_len = hdr_len;
    memcpy(s->u.push_nsh.hdr, buf.bytes, hdr_len);
    return true;
}

/* Translates pop_eth 'a' of an Ethernet frame, if the next action of its
 * list ('last' if none) is a pop_nsh, into a POP_ETH_NSH slot that does
 * both.  Only as the flow's first action: an NSH packet that does not
 * carry an Ethernet frame goes up from there as a slow path packet, which
 * ovs-vswitchd then runs the flow's actions on (bpf/actions-nsh.h).
 * Returns false if it cannot. */
static bool
xlate_pop_eth_nsh(struct act_xlate *x, const struct nlattr *a, bool last)
{
    const struct nlattr *next = last ? NULL : nl_attr_next(a);

    if (!next || nl_attr_type(next) != OVS_ACTION_ATTR_POP_NSH
        || x->nesting || x->n) {
        return false;
    }
    new_slot(x, OVS_BPF_ACTION_POP_ETH_NSH);
    x->not_eth = true;
    x->l3_type = htons(ETH_TYPE_NSH);
    x->nsh_pair = true;
    return true;
}

/* Translates set(nsh(...)) or, if 'masked', set_masked(nsh(...)) whose
 * OVS_KEY_ATTR_NSH (checked already) is 'key' into SET_NSH slot 's', as
 * odp_execute_actions() sets them: set() sets the base header's fields,
 * and the MD type 1 context if it has one. */
static void
xlate_set_nsh(struct ovs_bpf_action *s, const struct nlattr *key,
              bool masked)
{
    struct ovs_bpf_act_set_nsh *n = &s->u.set_nsh;
    struct ovs_key_nsh v, m;

    memset(&v, 0, sizeof v);
    memset(&m, 0, sizeof m);
    if (masked) {
        odp_nsh_key_from_attr(key, &v, &m, NULL);
    } else {
        odp_nsh_key_from_attr(key, &v, NULL, NULL);
        if (nl_attr_find_nested(key, OVS_NSH_KEY_ATTR_BASE)) {
            m.flags = m.ttl = UINT8_MAX;
            m.path_hdr = OVS_BE32_MAX;
        }
        if (nl_attr_find_nested(key, OVS_NSH_KEY_ATTR_MD1)) {
            memset(m.context, 0xff, sizeof m.context);
        }
    }
    n->flags = v.flags;
    n->flags_mask = m.flags;
    n->ttl = v.ttl;
    n->ttl_mask = m.ttl;
    n->path_hdr = v.path_hdr;
    n->path_hdr_mask = m.path_hdr;
    for (int i = 0; i < OVS_BPF_NSH_CONTEXT_WORDS; i++) {
        n->context[i] = v.context[i];
        n->context_mask[i] = m.context[i];
    }
}

/* Returns true if action 'a' may follow a pop_eth that BPF runs (see
 * struct act_xlate's 'bpf_pop_eth'). */
static bool
action_fits_bpf_pop_eth(const struct nlattr *a)
{
    return (nl_attr_type(a) == OVS_ACTION_ATTR_OUTPUT
            || (nl_attr_type(a) == OVS_ACTION_ATTR_SET
                && nl_attr_type(nl_attr_get(a)) == OVS_KEY_ATTR_TUNNEL));
}

/* Returns true if action 'a' may run on a packet without an Ethernet
 * header (see struct act_xlate's 'not_eth'). */
static bool
action_fits_no_eth(const struct nlattr *a)
{
    switch (nl_attr_type(a)) {
    case OVS_ACTION_ATTR_PUSH_ETH:
    case OVS_ACTION_ATTR_TUNNEL_PUSH:   /* Gives it an Ethernet header. */
    case OVS_ACTION_ATTR_ADD_MPLS:
    case OVS_ACTION_ATTR_POP_MPLS:
    case OVS_ACTION_ATTR_PUSH_NSH:
    case OVS_ACTION_ATTR_POP_NSH:
        return true;

    case OVS_ACTION_ATTR_RECIRC:
        /* ovs-vswitchd recirculates a packet without an Ethernet header
         * itself, through its own table of such flows (see "Layer 3
         * packets" in Documentation/topics/dpif-bpf.rst). */
    case OVS_ACTION_ATTR_DROP:
        return true;

    case OVS_ACTION_ATTR_SET:
    case OVS_ACTION_ATTR_SET_MASKED:
        return (nl_attr_type(nl_attr_get(a)) == OVS_KEY_ATTR_MPLS
                || nl_attr_type(nl_attr_get(a)) == OVS_KEY_ATTR_NSH);

    default:
        return false;
    }
}

/* Translates clone(A) and sample(A): the CLONE/SAMPLE slot, then A.
 *
 * The kernel datapath runs A on a copy of the packet.  The BPF programs run
 * A on the packet itself, which is the same as long as nothing runs after
 * A, or A leaves the packet and its metadata alone (outputs and userspace
 * actions only).  Otherwise ovs-vswitchd runs the flow. */
static int
xlate_nested(struct act_xlate *x, enum ovs_bpf_action_type type,
             uint32_t probability, const struct nlattr *actions, size_t len,
             bool more_after, bool *modifies)
{
    struct ovs_bpf_action *slot;
    uint32_t idx = x->n;
    bool nested_modifies = false;
    bool not_eth = x->not_eth;
    ovs_be16 l3_type = x->l3_type;
    bool nsh_popped = x->nsh_popped;
    bool bpf_pop_eth = x->bpf_pop_eth;
    bool tnl_pushed = x->tnl_pushed;
    int error;

    slot = new_slot(x, type);
    slot->u.nested.probability = probability;
    x->nesting++;
    error = xlate_actions(x, actions, len, more_after, &nested_modifies);
    x->nesting--;
    if (error) {
        return error;
    }
    /* A and what it does to the headers apply to a copy of the packet. */
    x->not_eth = not_eth;
    x->l3_type = l3_type;
    x->nsh_popped = nsh_popped;
    x->bpf_pop_eth = bpf_pop_eth;
    x->tnl_pushed = tnl_pushed;
    if (nested_modifies) {
        if (more_after) {
            x->userspace_only = true;
        }
        *modifies = true;
    }
    if (idx < OVS_BPF_MAX_ACTIONS) {
        x->slots[idx].u.nested.n_actions = x->n - idx - 1;
    }
    return 0;
}

/* Returns true if the BPF programs can push the tunnel header of 'data'
 * (its 'header_len' checked against the attribute's size), setting
 * '*ipv6' and '*l3': what netdev-native-tnl pushes for VXLAN over IPv4 or
 * IPv6, with or without a UDP checksum, and for VXLAN-GPE carrying
 * Ethernet ('l3_packet' false: the packet has its Ethernet header) or, after
 * a pop_eth that BPF runs ('l3_packet' true), IPv4 or IPv6, whose header
 * then replaces the stand-in Ethernet header ('*l3'). */
static bool
tnl_push_is_bpf(const struct ovs_action_push_tnl *data, bool l3_packet,
                bool *ipv6, bool *l3)
{
    const uint8_t *hdr = (const uint8_t *) data->header;
    const struct vxlanhdr *vxh;
    uint32_t flags;
    size_t l4;

    if (data->header_len > OVS_BPF_TNL_MAX_HDR
        || data->header_len < ETH_HEADER_LEN + IP_HEADER_LEN
        || data->tnl_type != OVS_VPORT_TYPE_VXLAN) {
        return false;
    }
    *ipv6 = (hdr[12] << 8 | hdr[13]) == ETH_TYPE_IPV6;
    if (*ipv6) {
        const struct ovs_16aligned_ip6_hdr *ip6;

        l4 = ETH_HEADER_LEN + IPV6_HEADER_LEN;
        ip6 = ALIGNED_CAST(const struct ovs_16aligned_ip6_hdr *,
                           hdr + ETH_HEADER_LEN);
        if (data->header_len < l4 || ip6->ip6_nxt != IPPROTO_UDP) {
            return false;
        }
    } else {
        const struct ip_header *ip;

        l4 = ETH_HEADER_LEN + IP_HEADER_LEN;
        ip = ALIGNED_CAST(const struct ip_header *, hdr + ETH_HEADER_LEN);
        if ((hdr[12] << 8 | hdr[13]) != ETH_TYPE_IP
            || ip->ip_ihl_ver != IP_IHL_VER(5, 4)
            || ip->ip_proto != IPPROTO_UDP) {
            return false;
        }
    }
    if (data->header_len != l4 + UDP_HEADER_LEN + sizeof *vxh) {
        return false;
    }
    vxh = ALIGNED_CAST(const struct vxlanhdr *, hdr + l4 + UDP_HEADER_LEN);
    flags = ntohl(get_16aligned_be32(&vxh->vx_flags));
    *l3 = false;
    if (flags == VXLAN_FLAGS) {
        return !l3_packet;
    }
    if ((flags & ~0xffu) != (VXLAN_FLAGS | VXLAN_HF_GPE)) {
        return false;
    }
    switch (vxh->vx_gpe.next_protocol) {
    case VXLAN_GPE_NP_ETHERNET:
        return !l3_packet;
    case VXLAN_GPE_NP_IPV4:
    case VXLAN_GPE_NP_IPV6:
        *l3 = true;
        return l3_packet;
    default:
        return false;
    }
}

/* Translates tnl_push 'a' into a TNL_PUSH slot and the TNL_HDR slots of its
 * header (see bpf/actions-tnl.h), if the BPF programs can push it (see
 * tnl_push_is_bpf()).  Any other tunnel header (Geneve, GRE, ERSPAN, a
 * VXLAN extension, or one on a packet without an Ethernet header that
 * ovs-vswitchd popped itself) makes the flow userspace only: ovs-vswitchd
 * pushes it (dp_bpf_tnl_push() in lib/dpif-bpf.c, or dpif-netdev's own
 * header functions).  Only a malformed action is refused (EINVAL).
 * Either way the packet has an Ethernet header after it. */
static int
xlate_tnl_push(struct act_xlate *x, const struct nlattr *a)
{
    const size_t hdr_ofs = offsetof(struct ovs_action_push_tnl, header);
    const struct ovs_action_push_tnl *data = nl_attr_get(a);
    struct ovs_bpf_action *s;
    bool ipv6, l3;
    size_t n;

    if (nl_attr_get_size(a) < hdr_ofs
        || data->header_len > nl_attr_get_size(a) - hdr_ofs
        || data->header_len < ETH_HEADER_LEN) {
        return EINVAL;
    }
    if (!tnl_push_is_bpf(data, x->not_eth, &ipv6, &l3)
        || (x->not_eth && !x->bpf_pop_eth)) {
        x->userspace_only = true;
    } else {
        s = new_slot(x, OVS_BPF_ACTION_TNL_PUSH);
        s->u.tnl_push.tnl_port = odp_to_u32(data->tnl_port);
        s->u.tnl_push.out_port = odp_to_u32(data->out_port);
        s->u.tnl_push.header_len = data->header_len;
        s->u.tnl_push.tnl_type = OVS_BPF_TNL_VXLAN;
        s->u.tnl_push.flags = ((ipv6 ? OVS_BPF_TNL_F_IPV6 : 0)
                               | (l3 ? OVS_BPF_TNL_F_L3 : 0));
        for (size_t ofs = 0; ofs < data->header_len; ofs += n) {
            n = MIN(OVS_BPF_TNL_HDR_SLOT, data->header_len - ofs);
            memcpy(new_slot(x, OVS_BPF_ACTION_TNL_HDR)->u.raw,
                   (const uint8_t *) data->header + ofs, n);
        }
        x->tnl_pushed = true;
    }
    x->not_eth = false;
    x->bpf_pop_eth = false;
    x->l3_type = 0;
    return 0;
}

/* Translates check_pkt_len(size=N, gt(A), le(B)): the CHECK_PKT_LEN slot,
 * A, an END slot that ends A, then B (see bpf/actions-pktlen.h).  B ends
 * with the flow's actions, so a check_pkt_len followed by anything
 * ('later') runs in ovs-vswitchd; ofproto never emits one. */
static int
xlate_check_pkt_len(struct act_xlate *x, const struct nlattr *a, bool later,
                    bool *modifies)
{
    static const struct nl_policy policy[] = {
        [OVS_CHECK_PKT_LEN_ATTR_PKT_LEN] = { .type = NL_A_U16 },
        [OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_GREATER] = { .type = NL_A_NESTED },
        [OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_LESS_EQUAL] = {
            .type = NL_A_NESTED },
    };
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    const struct nlattr *gt, *le;
    struct ovs_bpf_action *slot;
    uint32_t idx = x->n;
    int error;

    if (!nl_parse_nested(a, policy, attrs, ARRAY_SIZE(attrs))) {
        return EINVAL;
    }
    gt = attrs[OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_GREATER];
    le = attrs[OVS_CHECK_PKT_LEN_ATTR_ACTIONS_IF_LESS_EQUAL];
    if (later) {
        x->userspace_only = true;
    }

    slot = new_slot(x, OVS_BPF_ACTION_CHECK_PKT_LEN);
    slot->u.check_pkt_len.pkt_len
        = nl_attr_get_u16(attrs[OVS_CHECK_PKT_LEN_ATTR_PKT_LEN]);
    x->nesting++;
    error = xlate_actions(x, nl_attr_get(gt), nl_attr_get_size(gt), later,
                          modifies);
    if (error) {
        x->nesting--;
        return error;
    }
    if (idx < OVS_BPF_MAX_ACTIONS) {
        x->slots[idx].u.check_pkt_len.n_gt = x->n - idx - 1;
    }
    new_slot(x, OVS_BPF_ACTION_END);
    error = xlate_actions(x, nl_attr_get(le), nl_attr_get_size(le), later,
                          modifies);
    x->nesting--;
    return error;
}

static int
xlate_userspace(struct act_xlate *x, const struct nlattr *a)
{
    static const struct nl_policy policy[] = {
        [OVS_USERSPACE_ATTR_PID] = { .type = NL_A_U32 },
        [OVS_USERSPACE_ATTR_USERDATA] = { .type = NL_A_UNSPEC,
                                          .optional = true },
        [OVS_USERSPACE_ATTR_EGRESS_TUN_PORT] = { .type = NL_A_U32,
                                                 .optional = true },
        [OVS_USERSPACE_ATTR_ACTIONS] = { .type = NL_A_FLAG,
                                         .optional = true },
    };
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    struct ovs_bpf_action *s;

    if (!nl_parse_nested(a, policy, attrs, ARRAY_SIZE(attrs))) {
        return EINVAL;
    }
    if (attrs[OVS_USERSPACE_ATTR_EGRESS_TUN_PORT]) {
        /* Tunnel metadata for the upcall: no tunnels here. */
        return EINVAL;
    }

    /* The pid does not matter: upcalls go through the perf ring and the
     * dpif assigns them to handlers. */
    s = new_slot(x, OVS_BPF_ACTION_USERSPACE);
    if (attrs[OVS_USERSPACE_ATTR_USERDATA]) {
        const struct nlattr *ud = attrs[OVS_USERSPACE_ATTR_USERDATA];
        size_t ud_len = nl_attr_get_size(ud);

        if (ud_len > OVS_BPF_USERDATA_LEN) {
            x->userspace_only = true;
        } else {
            memcpy(s->u.userspace.userdata, nl_attr_get(ud), ud_len);
            s->u.userspace.userdata_len = ud_len;
        }
    }
    if (attrs[OVS_USERSPACE_ATTR_ACTIONS]) {
        s->u.userspace.flags |= OVS_BPF_USERSPACE_F_ACTIONS;
    }
    return 0;
}

/* Translates the nat() of a ct() action, 'a' (OVS_CT_ATTR_NAT), into 's'.
 * The kernel's bpf_ct_set_nat_info() takes one address and one port: the
 * BPF program chooses them in the range (bpf/ct-nat.h), so 's' gets the
 * first address, the number of addresses after it (at most 2**32 - 1: of
 * a larger IPv6 range, the first 2**32 addresses are used) and the ports.
 * "hash" is the default choice, "random" and "persistent" change it.  An
 * all-zero SNAT address (nat(src=0.0.0.0), nat(src=::)) is the packet's
 * own source address (OVS_BPF_CT_F_NAT_ZERO); an all-zero DNAT address,
 * or a range that starts at zero, is refused. */
static int
xlate_ct_nat(struct ovs_bpf_action *s, const struct nlattr *a)
{
    static const struct nl_policy policy[] = {
        [OVS_NAT_ATTR_SRC] = { .type = NL_A_FLAG, .optional = true },
        [OVS_NAT_ATTR_DST] = { .type = NL_A_FLAG, .optional = true },
        [OVS_NAT_ATTR_IP_MIN] = { .type = NL_A_UNSPEC, .optional = true },
        [OVS_NAT_ATTR_IP_MAX] = { .type = NL_A_UNSPEC, .optional = true },
        [OVS_NAT_ATTR_PROTO_MIN] = { .type = NL_A_U16, .optional = true },
        [OVS_NAT_ATTR_PROTO_MAX] = { .type = NL_A_U16, .optional = true },
        [OVS_NAT_ATTR_PERSISTENT] = { .type = NL_A_FLAG, .optional = true },
        [OVS_NAT_ATTR_PROTO_HASH] = { .type = NL_A_FLAG, .optional = true },
        [OVS_NAT_ATTR_PROTO_RANDOM] = { .type = NL_A_FLAG,
                                        .optional = true },
    };
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    struct ovs_bpf_act_ct *ct = &s->u.ct;
    size_t alen;
    bool src, dst;

    ct->flags |= OVS_BPF_CT_F_NAT;
    if (!nl_attr_get_size(a)) {
        return 0;               /* Applies the connection's NAT. */
    }
    if (!nl_parse_nested(a, policy, attrs, ARRAY_SIZE(attrs))) {
        return EINVAL;
    }
    src = attrs[OVS_NAT_ATTR_SRC] != NULL;
    dst = attrs[OVS_NAT_ATTR_DST] != NULL;
    if (src && dst) {
        return EINVAL;          /* As the kernel datapath. */
    }
    if (!src && !dst) {
        /* Nothing but flags, as the kernel datapath accepts: the NAT of
         * the connection. */
        return attrs[OVS_NAT_ATTR_IP_MIN] || attrs[OVS_NAT_ATTR_PROTO_MIN]
               ? EINVAL : 0;
    }
    alen = attrs[OVS_NAT_ATTR_IP_MIN]
           ? nl_attr_get_size(attrs[OVS_NAT_ATTR_IP_MIN]) : 0;
    if (!alen && src && !attrs[OVS_NAT_ATTR_IP_MAX]) {
        /* nat(src) without an address: what ofproto makes of
         * nat(src=0.0.0.0) when the datapath does all-zero SNAT
         * (dpif_bpf_ct_get_features()), for either IP version. */
        ct->flags |= OVS_BPF_CT_F_NAT_ZERO;
    } else if ((alen != sizeof(ovs_be32) && alen != sizeof(struct in6_addr))
        || (attrs[OVS_NAT_ATTR_IP_MAX]
            && nl_attr_get_size(attrs[OVS_NAT_ATTR_IP_MAX]) != alen)) {
        /* No address (which the kfunc needs), or a malformed one. */
        return EINVAL;
    }
    /* Without a commit, the binding is never made: the NAT of the
     * connection applies, as in the kernel datapath. */
    ct->flags |= src ? OVS_BPF_CT_F_NAT_SRC : OVS_BPF_CT_F_NAT_DST;
    if (attrs[OVS_NAT_ATTR_PROTO_RANDOM]) {
        ct->flags |= OVS_BPF_CT_F_NAT_RANDOM;
    }
    if (attrs[OVS_NAT_ATTR_PERSISTENT]) {
        ct->flags |= OVS_BPF_CT_F_NAT_PERSISTENT;
    }
    if (alen == sizeof(ovs_be32)) {
        ovs_be32 min = nl_attr_get_be32(attrs[OVS_NAT_ATTR_IP_MIN]);
        ovs_be32 max = (attrs[OVS_NAT_ATTR_IP_MAX]
                        ? nl_attr_get_be32(attrs[OVS_NAT_ATTR_IP_MAX])
                        : min);

        if (!min) {
            /* All-zero SNAT: keep the address, change the port only if
             * it clashes. */
            if (!src || max) {
                return EINVAL;
            }
            ct->flags |= OVS_BPF_CT_F_NAT_ZERO;
        }
        if (ntohl(max) < ntohl(min)) {
            return EINVAL;
        }
        ct->nat_addr.ipv4 = min;
        ct->nat_addr_span = ntohl(max) - ntohl(min);
    } else if (alen) {
        struct in6_addr min = nl_attr_get_in6_addr(
            attrs[OVS_NAT_ATTR_IP_MIN]);
        struct in6_addr max = (attrs[OVS_NAT_ATTR_IP_MAX]
                               ? nl_attr_get_in6_addr(
                                   attrs[OVS_NAT_ATTR_IP_MAX])
                               : min);
        uint32_t span;

        if (memcmp(&max, &min, sizeof min) < 0) {
            return EINVAL;
        }
        if (ipv6_addr_equals(&min, &in6addr_any)) {
            /* All-zero SNAT, as for IPv4. */
            if (!src || !ipv6_addr_equals(&max, &in6addr_any)) {
                return EINVAL;
            }
            ct->flags |= OVS_BPF_CT_F_NAT_ZERO;
        }
        /* max - min, in the last 32 bits if the upper 96 are the same;
         * otherwise more than 2**32 addresses. */
        if (!memcmp(&max, &min, 12)) {
            uint32_t lo_min, lo_max;

            memcpy(&lo_min, &min.s6_addr[12], 4);
            memcpy(&lo_max, &max.s6_addr[12], 4);
            span = ntohl(lo_max) - ntohl(lo_min);
        } else {
            span = UINT32_MAX;
        }
        memcpy(ct->nat_addr.ipv6, &min, sizeof min);
        ct->nat_addr_span = span;
        ct->flags |= OVS_BPF_CT_F_NAT_IPV6;
    }
    if (attrs[OVS_NAT_ATTR_PROTO_MIN]) {
        uint16_t pmin = nl_attr_get_u16(attrs[OVS_NAT_ATTR_PROTO_MIN]);
        uint16_t pmax = (attrs[OVS_NAT_ATTR_PROTO_MAX]
                         ? nl_attr_get_u16(attrs[OVS_NAT_ATTR_PROTO_MAX])
                         : pmin);

        if (pmax < pmin) {
            return EINVAL;
        }
        ct->nat_port_min = pmin;
        ct->nat_port_max = pmin ? pmax : 0;
    }
    return 0;
}

/* Translates ct() action 'a' (OVS_ACTION_ATTR_CT).  What the BPF ct()
 * cannot do is refused with EINVAL, so that ofproto's probes and
 * "dpctl/add-flow" see it: labels if the slow path cannot write them
 * (dpif_bpf_ct_labels_enable() failed), ALG helpers, and the NAT that
 * xlate_ct_nat() refuses.  A ct() with labels takes two slots: its own and
 * the argument slot of the labels after it (struct ovs_bpf_act_ct_label). */
static int
xlate_ct(struct act_xlate *x, const struct nlattr *a)
{
    static const struct nl_policy policy[] = {
        [OVS_CT_ATTR_COMMIT] = { .type = NL_A_FLAG, .optional = true },
        [OVS_CT_ATTR_FORCE_COMMIT] = { .type = NL_A_FLAG, .optional = true },
        [OVS_CT_ATTR_ZONE] = { .type = NL_A_U16, .optional = true },
        [OVS_CT_ATTR_MARK] = { .type = NL_A_UNSPEC, .optional = true,
                               .min_len = 2 * sizeof(uint32_t),
                               .max_len = 2 * sizeof(uint32_t) },
        [OVS_CT_ATTR_LABELS] = { .type = NL_A_UNSPEC, .optional = true,
                                 .min_len = sizeof(struct ovs_key_ct_labels)
                                            * 2,
                                 .max_len = sizeof(struct ovs_key_ct_labels)
                                            * 2 },
        [OVS_CT_ATTR_HELPER] = { .type = NL_A_STRING, .optional = true },
        [OVS_CT_ATTR_NAT] = { .type = NL_A_UNSPEC, .optional = true },
        [OVS_CT_ATTR_EVENTMASK] = { .type = NL_A_U32, .optional = true },
        [OVS_CT_ATTR_TIMEOUT] = { .type = NL_A_STRING, .optional = true },
    };
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    struct ovs_bpf_action *s;
    bool commit, force;

    if (!nl_parse_nested(a, policy, attrs, ARRAY_SIZE(attrs))
        || (attrs[OVS_CT_ATTR_LABELS] && !dpif_bpf_odp_ct_labels())
        || attrs[OVS_CT_ATTR_HELPER]) {
        return EINVAL;
    }
    commit = attrs[OVS_CT_ATTR_COMMIT] != NULL;
    force = attrs[OVS_CT_ATTR_FORCE_COMMIT] != NULL;
    if (commit && force) {
        return EINVAL;          /* As the kernel datapath. */
    }
    if ((attrs[OVS_CT_ATTR_MARK] || attrs[OVS_CT_ATTR_LABELS])
        && !commit && !force) {
        return EINVAL;          /* A mark or labels by a commit only. */
    }

    /* The eventmask (which ctnetlink events a commit sends) is accepted and
     * has no effect: the connections that BPF programs insert have no event
     * extension, so the kernel sends no event for them at all (see
     * "Conntrack" in dpif-bpf.rst). */
    s = new_slot(x, OVS_BPF_ACTION_CT);
    if (attrs[OVS_CT_ATTR_ZONE]) {
        s->u.ct.zone = nl_attr_get_u16(attrs[OVS_CT_ATTR_ZONE]);
    }
    if (commit || force) {
        s->u.ct.flags |= OVS_BPF_CT_F_COMMIT;
    }
    if (force) {
        s->u.ct.flags |= OVS_BPF_CT_F_FORCE;
    }
    if (attrs[OVS_CT_ATTR_MARK]) {
        const uint32_t *mark = nl_attr_get(attrs[OVS_CT_ATTR_MARK]);

        s->u.ct.mark = mark[0];
        s->u.ct.mark_mask = mark[1];
    }
    if (attrs[OVS_CT_ATTR_TIMEOUT]) {
        /* The name of a timeout policy is its id in decimal
         * (lib/dpif-bpf-ct-tp.c); it takes effect in a commit that creates
         * a connection, as in the kernel datapath.  Any other name means
         * no policy, the defaults, as the kernel datapath takes a name
         * that has no policy (and ofproto-dpif probes the attribute with
         * such a name). */
        unsigned int id;

        if (str_to_uint(nl_attr_get_string(attrs[OVS_CT_ATTR_TIMEOUT]), 10,
                        &id)) {
            s->u.ct.tp_id = id;
        }
    }
    if (attrs[OVS_CT_ATTR_NAT]) {
        int error = xlate_ct_nat(s, attrs[OVS_CT_ATTR_NAT]);

        if (error) {
            return error;
        }
    }
    if (attrs[OVS_CT_ATTR_LABELS]) {
        /* struct { ovs_u128 value, mask; }, as odp-util puts it. */
        const uint8_t *labels = nl_attr_get(attrs[OVS_CT_ATTR_LABELS]);

        if (!is_all_zeros(labels + 16, 16)) {
            struct ovs_bpf_act_ct_label *l;

            /* The flag first: 's' is no longer written once the argument
             * slot is taken (in a list too long for the slots, both are
             * the same stand-in). */
            s->u.ct.flags |= OVS_BPF_CT_F_LABEL;
            l = &new_slot(x, OVS_BPF_ACTION_CT_LABEL)->u.ct_label;
            for (int i = 0; i < 16; i++) {
                l->label[i] = labels[i] & labels[16 + i];
                l->mask[i] = labels[16 + i];
            }
        }
    }
    return 0;
}

/* Translates the list of actions 'actions'.  'more_after' is true if
 * actions of an enclosing list run after this list.  Sets '*modifies' if
 * the list changes the packet or its metadata. */
static int
xlate_actions(struct act_xlate *x, const struct nlattr *actions, size_t len,
              bool more_after, bool *modifies)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH (a, left, actions, len) {
        enum ovs_action_attr type = nl_attr_type(a);
        bool last = left <= NLA_ALIGN(a->nla_len);
        bool later = more_after || !last;
        int expected = action_arg_len(type);
        struct ovs_bpf_action *s;
        int error = 0;

        if (expected >= 0 && expected != nl_attr_get_size(a)) {
            return EINVAL;
        }

        /* A packet without an Ethernet header cannot be sent, sent up or
         * recirculated (the BPF programs see only Ethernet frames), nor
         * have its other headers rewritten: until push_eth, only its MPLS
         * labels may be added, popped or changed.  Except after a pop_eth
         * that BPF runs: its outputs, to layer 3 ports (BPF checks the
         * port), and the set(tunnel(...)) of those. */
        if (x->not_eth && !action_fits_no_eth(a)
            && !(x->bpf_pop_eth && action_fits_bpf_pop_eth(a))) {
            return EINVAL;
        }
        /* After pop_nsh, only the recirculation of decap(). */
        if (x->nsh_popped && type != OVS_ACTION_ATTR_RECIRC
            && type != OVS_ACTION_ATTR_DROP) {
            return EINVAL;
        }

        switch (type) {
        case OVS_ACTION_ATTR_OUTPUT:
            s = new_slot(x, OVS_BPF_ACTION_OUTPUT);
            s->u.output.port = nl_attr_get_u32(a);
            break;

        case OVS_ACTION_ATTR_USERSPACE:
            error = xlate_userspace(x, a);
            break;

        case OVS_ACTION_ATTR_SET:
        case OVS_ACTION_ATTR_SET_MASKED: {
            const struct nlattr *key = nl_attr_get(a);
            const uint8_t *value = nl_attr_get(key);
            size_t size = nl_attr_get_size(key);
            uint8_t ones[128];

            if (nl_attr_get_size(a) < NLA_HDRLEN
                || nl_attr_get_size(a) != NLA_ALIGN(key->nla_len)
                || key->nla_len < NLA_HDRLEN) {
                return EINVAL;
            }
            if (x->tnl_pushed && nl_attr_type(key) != OVS_KEY_ATTR_TUNNEL) {
                /* The BPF key still has the inner headers: refused rather
                 * than run on the wrong ones. */
                return EINVAL;
            }
            if (nl_attr_type(key) == OVS_KEY_ATTR_NSH) {
                /* Nested attributes, each with its own mask in
                 * set_masked().  BPF sets the NSH header of an Ethernet
                 * frame; odp_execute_actions() the one of a packet without
                 * Ethernet header. */
                error = check_nsh_action(x, a, type);
                if (!error) {
                    if (x->not_eth) {
                        x->userspace_only = true;
                    } else {
                        xlate_set_nsh(new_slot(x, OVS_BPF_ACTION_SET_NSH),
                                      key, type == OVS_ACTION_ATTR_SET_MASKED);
                    }
                    *modifies = true;
                }
                break;
            }
            if (nl_attr_type(key) == OVS_KEY_ATTR_TUNNEL) {
                /* Only set(tunnel(...)) exists, as in the kernel. */
                error = (type == OVS_ACTION_ATTR_SET
                         ? xlate_set_tunnel(x, key) : EINVAL);
            } else if (type == OVS_ACTION_ATTR_SET) {
                if (size > sizeof ones) {
                    return EINVAL;
                }
                memset(ones, 0xff, size);
                error = xlate_set(x, nl_attr_type(key), value, ones, size,
                                  false, modifies);
            } else {
                /* The payload is the value followed by the mask. */
                if (size % 2) {
                    return EINVAL;
                }
                error = xlate_set(x, nl_attr_type(key), value,
                                  value + size / 2, size / 2, true, modifies);
            }
            break;
        }

        case OVS_ACTION_ATTR_PUSH_VLAN: {
            const struct ovs_action_push_vlan *vlan = nl_attr_get(a);

            /* As in the kernel: the TCI of a pushed tag has VLAN_CFI. */
            if (!eth_type_vlan(vlan->vlan_tpid)
                || !(vlan->vlan_tci & htons(VLAN_CFI))) {
                return EINVAL;
            }
            s = new_slot(x, OVS_BPF_ACTION_PUSH_VLAN);
            s->u.push_vlan.tpid = vlan->vlan_tpid;
            s->u.push_vlan.tci = vlan->vlan_tci & ~htons(VLAN_CFI);
            *modifies = true;
            break;
        }

        case OVS_ACTION_ATTR_POP_VLAN:
            new_slot(x, OVS_BPF_ACTION_POP_VLAN);
            *modifies = true;
            break;

        case OVS_ACTION_ATTR_RECIRC:
            /* The BPF recirculation tail-calls the lookup: nothing after it
             * ever runs.  A packet without an Ethernet header recirculates
             * in ovs-vswitchd (see action_fits_no_eth()). */
            if (later || x->not_eth) {
                x->userspace_only = true;
            }
            s = new_slot(x, OVS_BPF_ACTION_RECIRC);
            s->u.recirc.id = nl_attr_get_u32(a);
            *modifies = true;
            break;

        case OVS_ACTION_ATTR_HASH: {
            const struct ovs_action_hash *hash = nl_attr_get(a);

            if (hash->hash_alg != OVS_HASH_ALG_L4
                && hash->hash_alg != OVS_HASH_ALG_SYM_L4) {
                return EINVAL;
            }
            s = new_slot(x, OVS_BPF_ACTION_HASH);
            s->u.hash.alg = hash->hash_alg;
            s->u.hash.basis = hash->hash_basis;
            *modifies = true;
            break;
        }

        case OVS_ACTION_ATTR_TRUNC: {
            const struct ovs_action_trunc *trunc = nl_attr_get(a);
            const struct nlattr *next;

            if (trunc->max_len < ETH_HEADER_LEN) {
                return EINVAL;
            }
            /* The cut length applies to the next output only (as in the
             * kernel), which ofproto puts right after the trunc.  The BPF
             * programs cannot cut one copy of a packet and send the rest
             * whole, so they do trunc only for the very last output of
             * the flow; ovs-vswitchd does every other case. */
            next = last ? NULL : nl_attr_next(a);
            if (more_after || !next
                || nl_attr_type(next) != OVS_ACTION_ATTR_OUTPUT
                || left - NLA_ALIGN(a->nla_len) > NLA_ALIGN(next->nla_len)) {
                x->userspace_only = true;
            }
            s = new_slot(x, OVS_BPF_ACTION_TRUNC);
            s->u.trunc.max_len = trunc->max_len;
            break;
        }

        case OVS_ACTION_ATTR_CLONE:
            error = xlate_nested(x, OVS_BPF_ACTION_CLONE, UINT32_MAX,
                                 nl_attr_get(a), nl_attr_get_size(a),
                                 later, modifies);
            break;

        case OVS_ACTION_ATTR_SAMPLE: {
            static const struct nl_policy policy[] = {
                [OVS_SAMPLE_ATTR_PROBABILITY] = { .type = NL_A_U32 },
                [OVS_SAMPLE_ATTR_ACTIONS] = { .type = NL_A_NESTED },
            };
            struct nlattr *attrs[ARRAY_SIZE(policy)];

            if (!nl_parse_nested(a, policy, attrs, ARRAY_SIZE(attrs))) {
                return EINVAL;
            }
            error = xlate_nested(
                x, OVS_BPF_ACTION_SAMPLE,
                nl_attr_get_u32(attrs[OVS_SAMPLE_ATTR_PROBABILITY]),
                nl_attr_get(attrs[OVS_SAMPLE_ATTR_ACTIONS]),
                nl_attr_get_size(attrs[OVS_SAMPLE_ATTR_ACTIONS]),
                later, modifies);
            break;
        }

        case OVS_ACTION_ATTR_CHECK_PKT_LEN:
            error = xlate_check_pkt_len(x, a, later, modifies);
            break;

        case OVS_ACTION_ATTR_METER: {
            uint32_t id = nl_attr_get_u32(a);

            /* ofproto allocates ids below the max_meters we report. */
            if (id >= OVS_BPF_MAX_METERS) {
                return EINVAL;
            }
            s = new_slot(x, OVS_BPF_ACTION_METER);
            s->u.meter.id = id;
            break;
        }

        case OVS_ACTION_ATTR_DROP:
            /* An explicit drop ends its list: no slot needed. */
            if (!last) {
                return EINVAL;
            }
            break;

        case OVS_ACTION_ATTR_PUSH_MPLS:
        case OVS_ACTION_ATTR_POP_MPLS:
        case OVS_ACTION_ATTR_ADD_MPLS: {
            /* push_mpls and pop_mpls of an Ethernet frame run in BPF
             * (bpf/actions-mpls.h).  odp_execute_actions() runs, in
             * ovs-vswitchd, what the BPF programs cannot do: add_mpls
             * (with or without the L3 flag, the label goes in front of the
             * Ethernet header: a packet without one, which BPF cannot
             * carry), the MPLS actions of a packet that has lost its
             * Ethernet header, and a pop_mpls to a VLAN ethertype (the
             * kernel's VLAN helpers, with which the BPF programs move the
             * label, would take that for a tag to pop).  The arguments
             * are checked as the kernel datapath does. */
            bool had_eth = !x->not_eth;

            error = check_mpls_action(x, a);
            if (error) {
                break;
            }
            *modifies = true;
            if (!had_eth || type == OVS_ACTION_ATTR_ADD_MPLS
                || (type == OVS_ACTION_ATTR_POP_MPLS
                    && eth_type_vlan(nl_attr_get_be16(a)))) {
                x->userspace_only = true;
            } else if (type == OVS_ACTION_ATTR_PUSH_MPLS) {
                const struct ovs_action_push_mpls *mpls = nl_attr_get(a);

                s = new_slot(x, OVS_BPF_ACTION_PUSH_MPLS);
                s->u.mpls.lse = mpls->mpls_lse;
                s->u.mpls.eth_type = mpls->mpls_ethertype;
            } else {
                s = new_slot(x, OVS_BPF_ACTION_POP_MPLS);
                s->u.mpls.eth_type = nl_attr_get_be16(a);
            }
            break;
        }

        case OVS_ACTION_ATTR_PUSH_ETH:
        case OVS_ACTION_ATTR_POP_ETH:
            if (x->nsh_pair) {
                /* push_eth after push_nsh: in the PUSH_NSH_ETH slot. */
                x->nsh_pair = false;
                x->not_eth = false;
                x->l3_type = 0;
                break;
            }
            if (type == OVS_ACTION_ATTR_POP_ETH && !x->not_eth
                && xlate_pop_eth_nsh(x, a, last)) {
                *modifies = true;
                break;
            }
            /* With MPLS: decap() of an MPLS packet that carries IP, then
             * encap(ethernet).  odp_execute_actions() runs them; the state
             * in between is checked above.  A pop_eth before the output to
             * a layer 3 port (VXLAN-GPE) is a BPF action, outside nested
             * lists (a clone() could not put the header back). */
            if (x->not_eth == (type == OVS_ACTION_ATTR_POP_ETH)) {
                return EINVAL;
            }
            x->not_eth = type == OVS_ACTION_ATTR_POP_ETH;
            x->bpf_pop_eth = x->not_eth && !x->nesting;
            x->l3_type = 0;
            if (x->bpf_pop_eth) {
                new_slot(x, OVS_BPF_ACTION_POP_ETH);
            } else {
                x->userspace_only = true;
            }
            *modifies = true;
            break;

        case OVS_ACTION_ATTR_CT:
            error = xlate_ct(x, a);
            *modifies = true;
            break;

        case OVS_ACTION_ATTR_CT_CLEAR:
            new_slot(x, OVS_BPF_ACTION_CT_CLEAR);
            *modifies = true;
            break;

        case OVS_ACTION_ATTR_PUSH_NSH:
        case OVS_ACTION_ATTR_POP_NSH: {
            /* push_nsh of an Ethernet frame followed by push_eth, and
             * pop_eth followed by pop_nsh, run in BPF as one slot each
             * (bpf/actions-nsh.h), which the first of the pair made.
             * odp_execute_actions() runs the rest, in ovs-vswitchd (see
             * check_nsh_action() for what is refused). */
            bool had_eth = !x->not_eth;
            bool pair = x->nsh_pair;

            error = check_nsh_action(x, a, type);
            if (error) {
                break;
            }
            *modifies = true;
            x->nsh_pair = false;
            if (type == OVS_ACTION_ATTR_PUSH_NSH && had_eth && !x->nesting
                && xlate_push_nsh_eth(x, a, last)) {
                x->nsh_pair = true;
            } else if (!pair) {
                x->userspace_only = true;
            }
            break;
        }

        case OVS_ACTION_ATTR_TUNNEL_PUSH:
            error = xlate_tnl_push(x, a);
            *modifies = true;
            break;

        case OVS_ACTION_ATTR_TUNNEL_POP:
            /* As recirc: the lookup after it replaces the actions. */
            if (later) {
                x->userspace_only = true;
            }
            s = new_slot(x, OVS_BPF_ACTION_TNL_POP);
            s->u.tnl_pop.port = nl_attr_get_u32(a);
            *modifies = true;
            break;

        case OVS_ACTION_ATTR_LB_OUTPUT:
        case OVS_ACTION_ATTR_UNSPEC:
        case __OVS_ACTION_ATTR_MAX:
        default:
            /* Features this datapath does not have: native tunnels,
             * bonds... */
            return EINVAL;
        }
        if (error) {
            return error;
        }
    }
    return 0;
}

int
dpif_bpf_odp_to_actions(const struct nlattr *actions, size_t len,
                        struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS],
                        uint32_t *n_slots)
{
    struct act_xlate x = { .slots = slots };
    bool modifies = false;
    int error;

    error = xlate_actions(&x, actions, len, false, &modifies);
    if (error) {
        return error;
    }
    if (x.userspace_only || x.n > OVS_BPF_MAX_ACTIONS) {
        return E2BIG;
    }

    memset(&slots[x.n], 0, (OVS_BPF_MAX_ACTIONS - x.n) * sizeof *slots);
    *n_slots = x.n;
    return 0;
}

/* Returns true if the BPF programs would send 'packet' up as a slow path
 * packet from the first of 'slots' ('n' of them): the pop of an NSH packet
 * that does not carry an Ethernet frame (see xlate_pop_eth_nsh()).  A flow
 * of such packets is a flow of ovs-vswitchd's; a downcall has no flow, so
 * ovs-vswitchd executes such a packet itself. */
bool
dpif_bpf_odp_execute_in_userspace(const struct ovs_bpf_action *slots,
                                  uint32_t n, const struct dp_packet *packet)
{
    const uint8_t *data = dp_packet_data(packet);
    ovs_be16 type;

    if (!n || slots[0].type != OVS_BPF_ACTION_POP_ETH_NSH) {
        return false;
    }
    if (dp_packet_size(packet) < ETH_HEADER_LEN + NSH_BASE_HDR_LEN) {
        return true;
    }
    memcpy(&type, data + 2 * ETH_ADDR_LEN, sizeof type);
    return (type != htons(ETH_TYPE_NSH)
            || data[ETH_HEADER_LEN + 3] != NSH_P_ETHERNET);
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

int
dpif_bpf_odp_check_l3_actions(ovs_be32 packet_type,
                              const struct nlattr *actions, size_t len)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    struct act_xlate x = {
        .slots = slots,
        .not_eth = true,
        .l3_type = (pt_ns(packet_type) == OFPHTN_ETHERTYPE
                    ? pt_ns_type_be(packet_type) : 0),
    };
    bool modifies = false;

    return xlate_actions(&x, actions, len, false, &modifies);
}

/* Formatting. */

/* A conntrack label, 16 bytes as OVS's ovs_u128 in memory, in hex. */
static void
format_u128(struct ds *s, const uint8_t bytes[16])
{
    ovs_u128 v;

    memcpy(&v, bytes, sizeof v);
    if (v.u64.hi) {
        ds_put_format(s, "0x%"PRIx64"%016"PRIx64, v.u64.hi, v.u64.lo);
    } else {
        ds_put_format(s, "0x%"PRIx64, v.u64.lo);
    }
}

/* Formats the nat(src|dst=...) of ct() action 'ct'. */
static void
format_ct_nat(struct ds *s, const struct ovs_bpf_act_ct *ct)
{
    ds_put_format(s, ",nat(%s=", ct->flags & OVS_BPF_CT_F_NAT_SRC
                                 ? "src" : "dst");
    if (!(ct->flags & OVS_BPF_CT_F_NAT_IPV6)) {
        ds_put_format(s, IP_FMT, IP_ARGS(ct->nat_addr.ipv4));
        if (ct->nat_addr_span) {
            ds_put_format(s, "-"IP_FMT,
                          IP_ARGS(htonl(ntohl(ct->nat_addr.ipv4)
                                        + ct->nat_addr_span)));
        }
    } else {
        struct in6_addr a;

        memcpy(&a, ct->nat_addr.ipv6, sizeof a);
        ipv6_format_addr(&a, s);
        if (ct->nat_addr_span) {
            /* The number of addresses after the first. */
            ds_put_format(s, "+%"PRIu32, ct->nat_addr_span);
        }
    }
    if (ct->nat_port_min) {
        ds_put_format(s, ":%"PRIu16, ct->nat_port_min);
        if (ct->nat_port_max != ct->nat_port_min) {
            ds_put_format(s, "-%"PRIu16, ct->nat_port_max);
        }
    }
    if (ct->flags & OVS_BPF_CT_F_NAT_RANDOM) {
        ds_put_cstr(s, ",random");
    }
    if (ct->flags & OVS_BPF_CT_F_NAT_PERSISTENT) {
        ds_put_cstr(s, ",persistent");
    }
    ds_put_char(s, ')');
}

static void
format_eth(struct ds *s, const char *name, const uint8_t *v, const uint8_t *m)
{
    if (!is_all_zeros(m, ETH_ADDR_LEN)) {
        ds_put_format(s, "%s="ETH_ADDR_FMT, name,
                      ETH_ADDR_BYTES_ARGS(v));
        if (!is_all_ones(m, ETH_ADDR_LEN)) {
            ds_put_format(s, "/"ETH_ADDR_FMT, ETH_ADDR_BYTES_ARGS(m));
        }
        ds_put_char(s, ',');
    }
}

static void
format_ipv6(struct ds *s, const char *name, const uint8_t *v,
            const uint8_t *m)
{
    if (!is_all_zeros(m, 16)) {
        struct in6_addr a, b;

        memcpy(&a, v, 16);
        memcpy(&b, m, 16);
        ds_put_format(s, "%s=", name);
        ipv6_format_addr(&a, s);
        if (!is_all_ones(m, 16)) {
            ds_put_char(s, '/');
            ipv6_format_addr(&b, s);
        }
        ds_put_char(s, ',');
    }
}

static void
format_ipv4(struct ds *s, const char *name, ovs_be32 v, ovs_be32 m)
{
    if (m) {
        ds_put_format(s, "%s="IP_FMT, name, IP_ARGS(v));
        if (m != OVS_BE32_MAX) {
            ds_put_format(s, "/"IP_FMT, IP_ARGS(m));
        }
        ds_put_char(s, ',');
    }
}

static void
format_uint(struct ds *s, const char *name, uint32_t v, uint32_t m,
            uint32_t all, bool hex)
{
    if (m) {
        ds_put_format(s, hex ? "%s=%#"PRIx32 : "%s=%"PRIu32, name, v);
        if (m != all) {
            ds_put_format(s, "/%#"PRIx32, m);
        }
        ds_put_char(s, ',');
    }
}

void
dpif_bpf_format_key(struct ds *s, const struct ovs_bpf_flow_key *k,
                    const struct ovs_bpf_flow_key *m)
{
    size_t start = s->length;
    enum key_layout layout;

    format_uint(s, "in_port", k->in_port, m->in_port, UINT32_MAX, false);
    format_uint(s, "recirc_id", k->recirc_id, m->recirc_id, UINT32_MAX,
                true);
    format_uint(s, "dp_hash", k->dp_hash, m->dp_hash, UINT32_MAX, true);
    format_uint(s, "skb_priority", k->skb_priority, m->skb_priority,
                UINT32_MAX, true);
    format_uint(s, "skb_mark", k->skb_mark, m->skb_mark, UINT32_MAX, true);
    format_eth(s, "eth_src", k->eth_src, m->eth_src);
    format_eth(s, "eth_dst", k->eth_dst, m->eth_dst);
    for (int i = 0; i < 2; i++) {
        char name[16];

        snprintf(name, sizeof name, "vlan%d_tpid", i);
        format_uint(s, name, ntohs(k->vlans[i].tpid),
                    ntohs(m->vlans[i].tpid), UINT16_MAX, true);
        snprintf(name, sizeof name, "vlan%d_tci", i);
        format_uint(s, name, ntohs(k->vlans[i].tci),
                    ntohs(m->vlans[i].tci), UINT16_MAX, true);
    }
    format_uint(s, "eth_type", ntohs(k->eth_type), ntohs(m->eth_type),
                UINT16_MAX, true);
    format_ipv4(s, "ipv4_src", k->ipv4_src, m->ipv4_src);
    format_ipv4(s, "ipv4_dst", k->ipv4_dst, m->ipv4_dst);
    layout = flow_key_layout(k->eth_type, m->eth_type);
    if (layout == KEY_MPLS) {
        for (int i = 0; i < OVS_BPF_MAX_MPLS_LABELS; i++) {
            char name[16];

            snprintf(name, sizeof name, "mpls_lse%d", i);
            format_uint(s, name, ntohl(k->mpls_lse[i]), ntohl(m->mpls_lse[i]),
                        UINT32_MAX, true);
        }
        format_ipv6(s, "ipv6_dst", k->ipv6_dst, m->ipv6_dst);
    } else if (layout == KEY_NSH) {
        format_uint(s, "nsh_flags", k->nsh.flags, m->nsh.flags, UINT8_MAX,
                    true);
        format_uint(s, "nsh_ttl", k->nsh.ttl, m->nsh.ttl, UINT8_MAX, false);
        format_uint(s, "nsh_mdtype", k->nsh.mdtype, m->nsh.mdtype, UINT8_MAX,
                    false);
        format_uint(s, "nsh_np", k->nsh.np, m->nsh.np, UINT8_MAX, false);
        format_uint(s, "nsh_path_hdr", ntohl(k->nsh.path_hdr),
                    ntohl(m->nsh.path_hdr), UINT32_MAX, true);
        for (int i = 0; i < OVS_BPF_NSH_CONTEXT_WORDS; i++) {
            char name[16];

            snprintf(name, sizeof name, "nsh_c%d", i + 1);
            format_uint(s, name, ntohl(k->nsh_context[i]),
                        ntohl(m->nsh_context[i]), UINT32_MAX, true);
        }
    } else {
        format_ipv6(s, "ipv6_src", k->ipv6_src, m->ipv6_src);
        format_ipv6(s, "ipv6_dst", k->ipv6_dst, m->ipv6_dst);
    }
    format_uint(s, "ipv6_label", ntohl(k->ipv6_label), ntohl(m->ipv6_label),
                BPF_IPV6_LABEL_MASK, true);
    format_uint(s, "nw_proto", k->nw_proto, m->nw_proto, UINT8_MAX, false);
    format_uint(s, "nw_tos", k->nw_tos, m->nw_tos, UINT8_MAX, true);
    format_uint(s, "nw_ttl", k->nw_ttl, m->nw_ttl, UINT8_MAX, false);
    format_uint(s, "nw_frag", k->nw_frag, m->nw_frag, FLOW_NW_FRAG_MASK,
                true);
    format_uint(s, "tp_src", ntohs(k->tp_src), ntohs(m->tp_src), UINT16_MAX,
                false);
    format_uint(s, "tp_dst", ntohs(k->tp_dst), ntohs(m->tp_dst), UINT16_MAX,
                false);
    format_uint(s, "tcp_flags", ntohs(k->tcp_flags), ntohs(m->tcp_flags),
                BPF_TCP_FLAGS_MASK, true);
    format_eth(s, "arp_sha", k->arp_sha, m->arp_sha);
    format_eth(s, "arp_tha", k->arp_tha, m->arp_tha);
    format_ipv6(s, "nd_target", k->nd_target, m->nd_target);
    format_uint(s, "ct_state", k->ct_state, m->ct_state, UINT8_MAX, true);
    format_uint(s, "ct_zone", k->ct_zone, m->ct_zone, UINT16_MAX, true);
    format_uint(s, "ct_mark", k->ct_mark, m->ct_mark, UINT32_MAX, true);
    if (!is_all_zeros(m->ct_label, 16)) {
        ds_put_cstr(s, "ct_label=");
        format_u128(s, k->ct_label);
        if (!is_all_ones(m->ct_label, 16)) {
            ds_put_char(s, '/');
            format_u128(s, m->ct_label);
        }
        ds_put_char(s, ',');
    }
    format_uint(s, "ct_nw_proto", k->ct_nw_proto, m->ct_nw_proto, UINT8_MAX,
                false);
    format_ipv4(s, "ct_nw_src", k->ct_nw_src, m->ct_nw_src);
    format_ipv4(s, "ct_nw_dst", k->ct_nw_dst, m->ct_nw_dst);
    format_ipv6(s, "ct_ipv6_src", k->ct_ipv6_src, m->ct_ipv6_src);
    format_ipv6(s, "ct_ipv6_dst", k->ct_ipv6_dst, m->ct_ipv6_dst);
    format_uint(s, "ct_tp_src", ntohs(k->ct_tp_src), ntohs(m->ct_tp_src),
                UINT16_MAX, false);
    format_uint(s, "ct_tp_dst", ntohs(k->ct_tp_dst), ntohs(m->ct_tp_dst),
                UINT16_MAX, false);

    if (m->tun_id) {
        ds_put_format(s, "tun_id=%#"PRIx64, ntohll(k->tun_id));
        if (m->tun_id != OVS_BE64_MAX) {
            ds_put_format(s, "/%#"PRIx64, ntohll(m->tun_id));
        }
        ds_put_char(s, ',');
    }
    format_ipv4(s, "tun_ipv4_src", k->tun_ipv4_src, m->tun_ipv4_src);
    format_ipv4(s, "tun_ipv4_dst", k->tun_ipv4_dst, m->tun_ipv4_dst);
    format_ipv6(s, "tun_ipv6_src", k->tun_ipv6_src, m->tun_ipv6_src);
    format_ipv6(s, "tun_ipv6_dst", k->tun_ipv6_dst, m->tun_ipv6_dst);
    format_uint(s, "tun_flags", ntohs(k->tun_flags), ntohs(m->tun_flags),
                FLOW_TNL_F_MASK, true);
    format_uint(s, "tun_tos", k->tun_tos, m->tun_tos, UINT8_MAX, true);
    format_uint(s, "tun_ttl", k->tun_ttl, m->tun_ttl, UINT8_MAX, false);
    format_uint(s, "tun_tp_src", ntohs(k->tun_tp_src), ntohs(m->tun_tp_src),
                UINT16_MAX, false);
    format_uint(s, "tun_tp_dst", ntohs(k->tun_tp_dst), ntohs(m->tun_tp_dst),
                UINT16_MAX, false);

    if (s->length > start) {
        ds_chomp(s, ',');
    } else {
        ds_put_cstr(s, "<all wildcarded>");
    }
}

const char *
dpif_bpf_action_name(uint32_t type)
{
    static const char *const names[__OVS_BPF_ACTION_MAX] = {
        [OVS_BPF_ACTION_END] = "end",
#define OVS_BPF_ACTION_NAME(ENUM, NAME) [OVS_BPF_ACTION_##ENUM] = #NAME,
        OVS_BPF_ACTIONS(OVS_BPF_ACTION_NAME)
#undef OVS_BPF_ACTION_NAME
    };

    return type < ARRAY_SIZE(names) ? names[type] : NULL;
}

void
dpif_bpf_format_actions(struct ds *s, const struct ovs_bpf_action *slots,
                        uint32_t n)
{
    if (!n) {
        ds_put_cstr(s, "drop");
        return;
    }

    for (uint32_t i = 0; i < n; i++) {
        const struct ovs_bpf_action *a = &slots[i];
        const char *name = dpif_bpf_action_name(a->type);

        if (i) {
            ds_put_char(s, ',');
        }
        if (!name) {
            ds_put_format(s, "<type %"PRIu32">", a->type);
            continue;
        }
        ds_put_cstr(s, name);

        switch ((enum ovs_bpf_action_type) a->type) {
        case OVS_BPF_ACTION_OUTPUT:
            ds_put_format(s, "(%"PRIu32")", a->u.output.port);
            break;
        case OVS_BPF_ACTION_USERSPACE:
            ds_put_format(s, "(len=%"PRIu32, a->u.userspace.userdata_len);
            if (a->u.userspace.userdata_len) {
                uint32_t len = MIN(a->u.userspace.userdata_len,
                                   OVS_BPF_USERDATA_LEN);

                ds_put_cstr(s, ",data=");
                for (uint32_t j = 0; j < len; j++) {
                    ds_put_format(s, "%02x", a->u.userspace.userdata[j]);
                }
            }
            if (a->u.userspace.flags & OVS_BPF_USERSPACE_F_ACTIONS) {
                ds_put_cstr(s, ",actions");
            }
            ds_put_char(s, ')');
            break;
        case OVS_BPF_ACTION_SET_ETH:
            ds_put_format(s, "(src="ETH_ADDR_FMT"/"ETH_ADDR_FMT
                          ",dst="ETH_ADDR_FMT"/"ETH_ADDR_FMT")",
                          ETH_ADDR_BYTES_ARGS(a->u.eth.src),
                          ETH_ADDR_BYTES_ARGS(a->u.eth.src_mask),
                          ETH_ADDR_BYTES_ARGS(a->u.eth.dst),
                          ETH_ADDR_BYTES_ARGS(a->u.eth.dst_mask));
            break;
        case OVS_BPF_ACTION_SET_IPV4:
            ds_put_format(s, "(src="IP_FMT"/"IP_FMT",dst="IP_FMT"/"IP_FMT
                          ",tos=%#x/%#x,ttl=%u/%#x)",
                          IP_ARGS(a->u.ipv4.src), IP_ARGS(a->u.ipv4.src_mask),
                          IP_ARGS(a->u.ipv4.dst), IP_ARGS(a->u.ipv4.dst_mask),
                          a->u.ipv4.tos, a->u.ipv4.tos_mask,
                          a->u.ipv4.ttl, a->u.ipv4.ttl_mask);
            break;
        case OVS_BPF_ACTION_SET_IPV6_SRC:
        case OVS_BPF_ACTION_SET_IPV6_DST: {
            struct in6_addr addr, mask;

            memcpy(&addr, a->u.ipv6_addr.addr, 16);
            memcpy(&mask, a->u.ipv6_addr.mask, 16);
            ds_put_char(s, '(');
            ipv6_format_addr(&addr, s);
            ds_put_char(s, '/');
            ipv6_format_addr(&mask, s);
            ds_put_char(s, ')');
            break;
        }
        case OVS_BPF_ACTION_SET_IPV6_MISC:
            ds_put_format(s, "(label=%#"PRIx32"/%#"PRIx32
                          ",tclass=%#x/%#x,hlimit=%u/%#x)",
                          ntohl(a->u.ipv6_misc.label),
                          ntohl(a->u.ipv6_misc.label_mask),
                          a->u.ipv6_misc.tclass, a->u.ipv6_misc.tclass_mask,
                          a->u.ipv6_misc.hlimit, a->u.ipv6_misc.hlimit_mask);
            break;
        case OVS_BPF_ACTION_SET_TCP:
        case OVS_BPF_ACTION_SET_UDP:
            ds_put_format(s, "(src=%u/%#x,dst=%u/%#x)",
                          ntohs(a->u.l4.src), ntohs(a->u.l4.src_mask),
                          ntohs(a->u.l4.dst), ntohs(a->u.l4.dst_mask));
            break;
        case OVS_BPF_ACTION_PUSH_VLAN:
            ds_put_format(s, "(tpid=%#"PRIx16",tci=%#"PRIx16")",
                          ntohs(a->u.push_vlan.tpid),
                          ntohs(a->u.push_vlan.tci));
            break;
        case OVS_BPF_ACTION_RECIRC:
            ds_put_format(s, "(%#"PRIx32")", a->u.recirc.id);
            break;
        case OVS_BPF_ACTION_HASH:
            ds_put_format(s, "(alg=%"PRIu32",basis=%#"PRIx32")",
                          a->u.hash.alg, a->u.hash.basis);
            break;
        case OVS_BPF_ACTION_TRUNC:
            ds_put_format(s, "(%"PRIu32")", a->u.trunc.max_len);
            break;
        case OVS_BPF_ACTION_CLONE:
            ds_put_format(s, "(n=%"PRIu32")", a->u.nested.n_actions);
            break;
        case OVS_BPF_ACTION_SAMPLE:
            ds_put_format(s, "(n=%"PRIu32",p=%#"PRIx32")",
                          a->u.nested.n_actions, a->u.nested.probability);
            break;
        case OVS_BPF_ACTION_SET_PRIORITY:
        case OVS_BPF_ACTION_SET_MARK:
            ds_put_format(s, "(%#"PRIx32"/%#"PRIx32")",
                          a->u.meta.value, a->u.meta.mask);
            break;
        case OVS_BPF_ACTION_CHECK_PKT_LEN:
            ds_put_format(s, "(size=%"PRIu32",n_gt=%"PRIu32")",
                          a->u.check_pkt_len.pkt_len,
                          a->u.check_pkt_len.n_gt);
            break;
        case OVS_BPF_ACTION_METER:
            ds_put_format(s, "(%"PRIu32")", a->u.meter.id);
            break;
        case OVS_BPF_ACTION_SET_TUNNEL: {
            const struct ovs_bpf_act_tunnel *t = &a->u.tunnel;

            ds_put_format(s, "(tun_id=%#"PRIx64",", ntohll(t->tun_id));
            if (t->flags & BPF_F_TUNINFO_IPV6) {
                struct in6_addr addr;

                memcpy(&addr, t->ipv6_src, 16);
                ds_put_cstr(s, "ipv6_src=");
                ipv6_format_addr(&addr, s);
                memcpy(&addr, t->ipv6_dst, 16);
                ds_put_cstr(s, ",ipv6_dst=");
                ipv6_format_addr(&addr, s);
            } else {
                ds_put_format(s, "src="IP_FMT",dst="IP_FMT,
                              IP_ARGS(t->ipv4_src), IP_ARGS(t->ipv4_dst));
            }
            ds_put_format(s, ",tos=%#x,ttl=%u,tp_dst=%u,%scsum%s)",
                          t->tos, t->ttl, ntohs(t->tp_dst),
                          t->flags & BPF_F_ZERO_CSUM_TX ? "no" : "",
                          t->flags & BPF_F_DONT_FRAGMENT ? ",df" : "");
            break;
        }
        case OVS_BPF_ACTION_CT:
            ds_put_format(s, "(zone=%"PRIu16, a->u.ct.zone);
            if (a->u.ct.flags & OVS_BPF_CT_F_COMMIT) {
                ds_put_cstr(s, a->u.ct.flags & OVS_BPF_CT_F_FORCE
                               ? ",force_commit" : ",commit");
            }
            if (a->u.ct.mark_mask) {
                ds_put_format(s, ",mark=%#"PRIx32"/%#"PRIx32,
                              a->u.ct.mark, a->u.ct.mark_mask);
            }
            if (a->u.ct.tp_id) {
                ds_put_format(s, ",timeout=%"PRIu32, a->u.ct.tp_id);
            }
            if (a->u.ct.flags & OVS_BPF_CT_F_LABEL && i + 1 < n
                && slots[i + 1].type == OVS_BPF_ACTION_CT_LABEL) {
                /* The argument slot after it, shown as part of it. */
                const struct ovs_bpf_act_ct_label *l = &slots[++i].u.ct_label;

                ds_put_cstr(s, ",label=");
                format_u128(s, l->label);
                ds_put_char(s, '/');
                format_u128(s, l->mask);
            }
            if (a->u.ct.flags & (OVS_BPF_CT_F_NAT_SRC
                                 | OVS_BPF_CT_F_NAT_DST)) {
                format_ct_nat(s, &a->u.ct);
            } else if (a->u.ct.flags & OVS_BPF_CT_F_NAT) {
                ds_put_cstr(s, ",nat");
            }
            ds_put_char(s, ')');
            break;
        case OVS_BPF_ACTION_PUSH_MPLS:
            ds_put_format(s, "(lse=%#"PRIx32",eth_type=%#"PRIx16")",
                          ntohl(a->u.mpls.lse), ntohs(a->u.mpls.eth_type));
            break;
        case OVS_BPF_ACTION_POP_MPLS:
            ds_put_format(s, "(eth_type=%#"PRIx16")",
                          ntohs(a->u.mpls.eth_type));
            break;
        case OVS_BPF_ACTION_SET_MPLS:
            ds_put_format(s, "(lse=%#"PRIx32"/%#"PRIx32")",
                          ntohl(a->u.mpls.lse), ntohl(a->u.mpls.lse_mask));
            break;
        case OVS_BPF_ACTION_PUSH_NSH_ETH: {
            const struct ovs_bpf_act_push_nsh *p = &a->u.push_nsh;
            struct eth_addr dst, src;

            memcpy(&dst, p->eth_dst, sizeof dst);
            memcpy(&src, p->eth_src, sizeof src);
            ds_put_format(s, "(src="ETH_ADDR_FMT",dst="ETH_ADDR_FMT",hdr=",
                          ETH_ADDR_ARGS(src), ETH_ADDR_ARGS(dst));
            for (uint32_t j = 0; j < p->hdr_len && j < sizeof p->hdr; j++) {
                ds_put_format(s, "%02"PRIx8, p->hdr[j]);
            }
            ds_put_char(s, ')');
            break;
        }
        case OVS_BPF_ACTION_SET_NSH: {
            const struct ovs_bpf_act_set_nsh *sn = &a->u.set_nsh;

            ds_put_format(s, "(flags=%#"PRIx8"/%#"PRIx8",ttl=%"PRIu8
                          "/%#"PRIx8",path_hdr=%#"PRIx32"/%#"PRIx32,
                          sn->flags, sn->flags_mask, sn->ttl, sn->ttl_mask,
                          ntohl(sn->path_hdr), ntohl(sn->path_hdr_mask));
            for (int j = 0; j < OVS_BPF_NSH_CONTEXT_WORDS; j++) {
                if (sn->context_mask[j]) {
                    ds_put_format(s, ",c%d=%#"PRIx32"/%#"PRIx32, j + 1,
                                  ntohl(sn->context[j]),
                                  ntohl(sn->context_mask[j]));
                }
            }
            ds_put_char(s, ')');
            break;
        }
        case OVS_BPF_ACTION_TNL_PUSH: {
            const struct ovs_bpf_act_tnl_push *p = &a->u.tnl_push;
            uint32_t len = p->header_len;

            ds_put_format(s, "(tnl_port=%"PRIu32",out_port=%"PRIu32
                          ",type=%"PRIu8"%s%s,header=", p->tnl_port,
                          p->out_port, p->tnl_type,
                          p->flags & OVS_BPF_TNL_F_IPV6 ? ",ipv6" : "",
                          p->flags & OVS_BPF_TNL_F_L3 ? ",l3" : "");
            /* The header, from the TNL_HDR slots that follow. */
            while (len && i + 1 < n
                   && slots[i + 1].type == OVS_BPF_ACTION_TNL_HDR) {
                uint32_t k = MIN(len, OVS_BPF_TNL_HDR_SLOT);

                i++;
                for (uint32_t j = 0; j < k; j++) {
                    ds_put_format(s, "%02"PRIx8, slots[i].u.raw[j]);
                }
                len -= k;
            }
            ds_put_char(s, ')');
            break;
        }
        case OVS_BPF_ACTION_TNL_POP:
            ds_put_format(s, "(%"PRIu32")", a->u.tnl_pop.port);
            break;
        case OVS_BPF_ACTION_CT_LABEL:
            /* Not after a ct() with labels: shown as it is. */
            ds_put_cstr(s, "(");
            format_u128(s, a->u.ct_label.label);
            ds_put_char(s, '/');
            format_u128(s, a->u.ct_label.mask);
            ds_put_char(s, ')');
            break;
        case OVS_BPF_ACTION_TNL_HDR:
            /* Not after a tnl_push: shown as it is. */
            ds_put_format(s, "(%"PRIuSIZE" bytes)", sizeof a->u.raw);
            break;
        case OVS_BPF_ACTION_END:
        case OVS_BPF_ACTION_POP_VLAN:
        case OVS_BPF_ACTION_CT_CLEAR:
        case OVS_BPF_ACTION_POP_ETH:
        case OVS_BPF_ACTION_POP_ETH_NSH:
        case __OVS_BPF_ACTION_MAX:
        default:
            break;
        }
    }
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
