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

/* Text forms of the BPF datapath's flow keys, masks and action slots, for
 * dpctl/dump-flows and dpif-bpf/show. */

#include <config.h>

#include "dpif-bpf-odp.h"
#include "dpif-bpf-odp-private.h"

#include <string.h>

#include "openvswitch/dynamic-string.h"
#include "packets.h"
#include "util.h"

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
        case OVS_BPF_ACTION_ADD_MPLS_ETH: {
            const struct ovs_bpf_act_add_mpls_eth *p = &a->u.add_mpls_eth;
            struct eth_addr dst, src;

            memcpy(&dst, p->eth_dst, sizeof dst);
            memcpy(&src, p->eth_src, sizeof src);
            ds_put_format(s, "(src="ETH_ADDR_FMT",dst="ETH_ADDR_FMT
                          ",lse=%#"PRIx32",eth_type=%#"PRIx16")",
                          ETH_ADDR_ARGS(src), ETH_ADDR_ARGS(dst),
                          ntohl(p->lse), ntohs(p->eth_type));
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
        case OVS_BPF_ACTION_POP_ETH_MPLS:
        case __OVS_BPF_ACTION_MAX:
        default:
            break;
        }
    }
}

