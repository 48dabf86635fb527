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

/* Translation of ODP actions into the BPF datapath's action slots
 * (dpif_bpf_odp_to_actions()): which actions run in BPF, which only in
 * ovs-vswitchd, and which are refused.  One translator, xlate_actions(),
 * with a check per action that reads and writes the same translation state
 * ('struct act_xlate': what the packet looks like after the actions so
 * far), which is why this is one file of that size. */

#include <config.h>

#include "dpif-bpf-odp.h"
#include "dpif-bpf-odp-private.h"

#include <errno.h>
#include <string.h>

#include "dp-packet.h"
#include "flow.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "odp-util.h"
#include "packets.h"
#include "util.h"

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
    bool pair;                  /* The PUSH_NSH_ETH, POP_ETH_NSH,
                                 * ADD_MPLS_ETH or POP_ETH_MPLS slot of the
                                 * previous action does this one too. */
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
    x->pair = true;
    return true;
}

/* Translates add_mpls 'a' (checked already) without the L3 flag of an
 * Ethernet frame, if the next action of its list ('last' if none) is a
 * push_eth, into an ADD_MPLS_ETH slot that does both
 * (bpf/actions-mpls-eth.h).  Returns false if it cannot: the packet goes
 * through ovs-vswitchd. */
static bool
xlate_add_mpls_eth(struct act_xlate *x, const struct nlattr *a, bool last)
{
    const struct ovs_action_add_mpls *mpls = nl_attr_get(a);
    const struct ovs_action_push_eth *eth;
    const struct nlattr *next;
    struct ovs_bpf_action *s;

    next = last ? NULL : nl_attr_next(a);
    if (!next || nl_attr_type(next) != OVS_ACTION_ATTR_PUSH_ETH
        || nl_attr_get_size(next) != sizeof *eth
        || mpls->tun_flags & OVS_MPLS_L3_TUNNEL_FLAG_MASK
        || x->nesting) {
        return false;
    }
    eth = nl_attr_get(next);
    s = new_slot(x, OVS_BPF_ACTION_ADD_MPLS_ETH);
    memcpy(s->u.add_mpls_eth.eth_dst, &eth->addresses.eth_dst, ETH_ADDR_LEN);
    memcpy(s->u.add_mpls_eth.eth_src, &eth->addresses.eth_src, ETH_ADDR_LEN);
    s->u.add_mpls_eth.lse = mpls->mpls_lse;
    s->u.add_mpls_eth.eth_type = mpls->mpls_ethertype;
    return true;
}

/* Translates pop_eth 'a' of an Ethernet frame ('left' bytes of actions
 * from 'a' on in its list), if the next action is a pop_mpls to
 * "Transparent Ethernet Bridging" (decap() of an MPLS packet that carries
 * an Ethernet frame) and a recirculation or nothing follows, into a
 * POP_ETH_MPLS slot that does both (bpf/actions-mpls-eth.h; the key it
 * leaves is good for a recirculation only).  Returns false if it
 * cannot. */
static bool
xlate_pop_eth_mpls(struct act_xlate *x, const struct nlattr *a, size_t left)
{
    size_t a_len = NLA_ALIGN(a->nla_len);
    const struct nlattr *next;

    if (x->nesting || left <= a_len) {
        return false;
    }
    next = nl_attr_next(a);
    left -= a_len;
    if (nl_attr_type(next) != OVS_ACTION_ATTR_POP_MPLS
        || nl_attr_get_size(next) != sizeof(ovs_be16)
        || nl_attr_get_be16(next) != htons(ETH_TYPE_TEB)) {
        return false;
    }
    if (left > NLA_ALIGN(next->nla_len)
        && nl_attr_type(nl_attr_next(next)) != OVS_ACTION_ATTR_RECIRC) {
        return false;
    }
    new_slot(x, OVS_BPF_ACTION_POP_ETH_MPLS);
    x->not_eth = true;
    x->l3_type = 0;
    x->pair = true;
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

/* Returns true if the BPF programs can push GRE header 'greh' of a
 * 'gre_len'-byte tunnel header tail (see tnl_push_is_bpf()): what
 * netdev-native-tnl builds, with a checksum and a key or not, but without a
 * sequence number, which counts per port in ovs-vswitchd's netdev. */
static bool
tnl_push_gre_is_bpf(const struct gre_base_hdr *greh, size_t gre_len,
                    bool l3_packet, bool *l3)
{
    ovs_be16 flags = greh->flags;
    size_t hlen = 4;

    if (flags & ~htons(GRE_CSUM | GRE_KEY)) {
        return false;
    }
    hlen += ((flags & htons(GRE_CSUM) ? 4 : 0)
             + (flags & htons(GRE_KEY) ? 4 : 0));
    if (gre_len != hlen) {
        return false;
    }
    switch (ntohs(greh->protocol)) {
    case ETH_TYPE_TEB:
        *l3 = false;
        return !l3_packet;
    case ETH_TYPE_IP:
    case ETH_TYPE_IPV6:
        *l3 = true;
        return l3_packet;
    default:
        return false;
    }
}

/* Returns true if the BPF programs can push the tunnel header of 'data'
 * (its 'header_len' checked against the attribute's size), setting
 * '*ipv6', '*gre' and '*l3': what netdev-native-tnl pushes for VXLAN over
 * IPv4 or IPv6, with or without a UDP checksum, and for VXLAN-GPE carrying
 * Ethernet ('l3_packet' false: the packet has its Ethernet header) or,
 * after a pop_eth that BPF runs ('l3_packet' true), IPv4 or IPv6, whose
 * header then replaces the stand-in Ethernet header ('*l3'); for GRE the
 * same (see tnl_push_gre_is_bpf()). */
static bool
tnl_push_is_bpf(const struct ovs_action_push_tnl *data, bool l3_packet,
                bool *ipv6, bool *gre, bool *l3)
{
    const uint8_t *hdr = (const uint8_t *) data->header;
    const struct vxlanhdr *vxh;
    uint8_t l4_proto;
    uint32_t flags;
    size_t l4;

    *gre = (data->tnl_type == OVS_VPORT_TYPE_GRE
            || data->tnl_type == OVS_VPORT_TYPE_IP6GRE);
    if (data->header_len > OVS_BPF_TNL_MAX_HDR
        || data->header_len < ETH_HEADER_LEN + IP_HEADER_LEN
        || (data->tnl_type != OVS_VPORT_TYPE_VXLAN && !*gre)) {
        return false;
    }
    l4_proto = *gre ? IPPROTO_GRE : IPPROTO_UDP;
    *ipv6 = (hdr[12] << 8 | hdr[13]) == ETH_TYPE_IPV6;
    if (*ipv6) {
        const struct ovs_16aligned_ip6_hdr *ip6;

        l4 = ETH_HEADER_LEN + IPV6_HEADER_LEN;
        ip6 = ALIGNED_CAST(const struct ovs_16aligned_ip6_hdr *,
                           hdr + ETH_HEADER_LEN);
        if (data->header_len < l4 || ip6->ip6_nxt != l4_proto) {
            return false;
        }
    } else {
        const struct ip_header *ip;

        l4 = ETH_HEADER_LEN + IP_HEADER_LEN;
        ip = ALIGNED_CAST(const struct ip_header *, hdr + ETH_HEADER_LEN);
        if ((hdr[12] << 8 | hdr[13]) != ETH_TYPE_IP
            || ip->ip_ihl_ver != IP_IHL_VER(5, 4)
            || ip->ip_proto != l4_proto) {
            return false;
        }
    }
    if (*gre) {
        return (data->header_len >= l4 + sizeof(struct gre_base_hdr)
                && tnl_push_gre_is_bpf(
                       ALIGNED_CAST(const struct gre_base_hdr *, hdr + l4),
                       data->header_len - l4, l3_packet, l3));
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
 * tnl_push_is_bpf()).  Any other tunnel header (Geneve, ERSPAN, a VXLAN
 * extension, GRE with a sequence number, or one on a packet without an
 * Ethernet header that ovs-vswitchd popped itself) makes the flow
 * userspace only: ovs-vswitchd
 * pushes it (dp_bpf_tnl_push() in lib/dpif-bpf-execute.c, or dpif-netdev's
 * own header functions).  Only a malformed action is refused (EINVAL).
 * Either way the packet has an Ethernet header after it. */
static int
xlate_tnl_push(struct act_xlate *x, const struct nlattr *a)
{
    const size_t hdr_ofs = offsetof(struct ovs_action_push_tnl, header);
    const struct ovs_action_push_tnl *data = nl_attr_get(a);
    struct ovs_bpf_action *s;
    bool ipv6, gre, l3;
    size_t n;

    if (nl_attr_get_size(a) < hdr_ofs
        || data->header_len > nl_attr_get_size(a) - hdr_ofs
        || data->header_len < ETH_HEADER_LEN) {
        return EINVAL;
    }
    if (!tnl_push_is_bpf(data, x->not_eth, &ipv6, &gre, &l3)
        || (x->not_eth && !x->bpf_pop_eth)) {
        x->userspace_only = true;
    } else {
        s = new_slot(x, OVS_BPF_ACTION_TNL_PUSH);
        s->u.tnl_push.tnl_port = odp_to_u32(data->tnl_port);
        s->u.tnl_push.out_port = odp_to_u32(data->out_port);
        s->u.tnl_push.header_len = data->header_len;
        s->u.tnl_push.tnl_type = (gre ? OVS_BPF_TNL_GRE
                                  : OVS_BPF_TNL_VXLAN);
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
             * (bpf/actions-mpls.h), and so do add_mpls without the L3
             * flag followed by push_eth and pop_eth followed by
             * pop_mpls(eth_type=0x6558), as one slot each
             * (bpf/actions-mpls-eth.h), which the first of the pair made.
             * odp_execute_actions() runs, in ovs-vswitchd, what the BPF
             * programs cannot do: the other add_mpls (with or without the
             * L3 flag), the MPLS actions of a packet that has lost its
             * Ethernet header, and a pop_mpls to a VLAN ethertype (the
             * kernel's VLAN helpers, with which the BPF programs move the
             * label, would take that for a tag to pop).  The arguments
             * are checked as the kernel datapath does. */
            bool had_eth = !x->not_eth;
            bool pair = x->pair;

            error = check_mpls_action(x, a);
            if (error) {
                break;
            }
            *modifies = true;
            x->pair = false;
            if (pair) {
                /* pop_mpls after pop_eth: in the POP_ETH_MPLS slot. */
            } else if (type == OVS_ACTION_ATTR_ADD_MPLS && had_eth
                       && xlate_add_mpls_eth(x, a, last)) {
                x->pair = true;
            } else if (!had_eth || type == OVS_ACTION_ATTR_ADD_MPLS
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
            if (x->pair) {
                /* push_eth after push_nsh or add_mpls: in the PUSH_NSH_ETH
                 * or ADD_MPLS_ETH slot. */
                x->pair = false;
                x->not_eth = false;
                x->l3_type = 0;
                break;
            }
            if (type == OVS_ACTION_ATTR_POP_ETH && !x->not_eth
                && (xlate_pop_eth_nsh(x, a, last)
                    || xlate_pop_eth_mpls(x, a, left))) {
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
            bool pair = x->pair;

            error = check_nsh_action(x, a, type);
            if (error) {
                break;
            }
            *modifies = true;
            x->pair = false;
            if (type == OVS_ACTION_ATTR_PUSH_NSH && had_eth && !x->nesting
                && xlate_push_nsh_eth(x, a, last)) {
                x->pair = true;
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

