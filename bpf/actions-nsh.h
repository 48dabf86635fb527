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

/* NSH of Ethernet frames: push_nsh with push_eth, pop_eth with pop_nsh,
 * and set(nsh).
 *
 * OpenFlow's encap(nsh),encap(ethernet) reaches the datapath as
 * push_nsh(...),push_eth(...), and decap(),decap() of an NSH packet as
 * pop_eth,pop_nsh: in between, the packet has no Ethernet header, which
 * the BPF programs cannot carry, so the translator turns each pair into one
 * slot that does both (struct ovs_bpf_act_push_nsh).
 *
 * The push and pop, and how skb->protocol follows them (NSH after the
 * push, the inner ethertype after the pop), are in bpf/encap-eth.h,
 * shared with the MPLS encapsulation of Ethernet frames.
 *
 * A GSO packet (TCP over the NSH path, say), and an NSH packet whose next
 * protocol is not Ethernet (its pop leaves a layer 3 packet), go up to
 * ovs-vswitchd as slow path packets when the push or pop is the flow's
 * first action, as the translator makes encap and decap flows
 * (bpf/encap-eth.h says why for GSO; dpif-bpf-execute.c checks the packet
 * of an execute), and are otherwise failures.
 *
 * Limits, each counted as a failure of the action (the packet is
 * dropped): a GSO packet elsewhere, a push or pop inside a clone() whose
 * packet is restored afterwards, VLAN tags in the bytes of the outer header
 * of a pop, an inner frame shorter than 34 bytes (bpf_skb_adjust_room()'s
 * minimum of an IPv4 header after it), a failing helper. */

#ifndef BPF_ACTIONS_NSH_H
#define BPF_ACTIONS_NSH_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/actions-mpls.h"
#include "bpf/encap-eth.h"
#include "bpf/maps.h"
#include "bpf/parse.h"

#ifndef ETH_P_NSH
#define ETH_P_NSH 0x894F
#endif

#define OVS_BPF_NSH_NP_ETHERNET 3       /* OVS's NSH_P_ETHERNET. */

/* The flags (2 bits) and TTL (6 bits) of the NSH header 'hdr', from its
 * first two bytes: version (2 bits), flags, TTL, length (6 bits). */
static __always_inline __u8
ovs_bpf_nsh_flags(const __u8 *hdr)
{
    return (hdr[0] >> 4) & 0x3;
}

static __always_inline __u8
ovs_bpf_nsh_ttl(const __u8 *hdr)
{
    return ((hdr[0] & 0xf) << 2) | (hdr[1] >> 6);
}

/* Fills the NSH fields of the key from the 'hdr_len' bytes header 'hdr',
 * as ovs_bpf_parse_nsh() would. */
static __always_inline void
ovs_bpf_nsh_key(struct ovs_bpf_flow_key *k, const __u8 *hdr, __u32 hdr_len)
{
    k->nsh.flags = ovs_bpf_nsh_flags(hdr);
    k->nsh.ttl = ovs_bpf_nsh_ttl(hdr);
    k->nsh.mdtype = hdr[2];
    k->nsh.np = hdr[3];
    __builtin_memcpy(&k->nsh.path_hdr, hdr + 4, 4);
    if (hdr[2] == OVS_BPF_NSH_M_TYPE1 && hdr_len == OVS_BPF_NSH_MD1_LEN) {
        __builtin_memcpy(k->nsh_context, hdr + 8, sizeof k->nsh_context);
    }
}

/* OVS_BPF_ACTION_PUSH_NSH_ETH. */
static __always_inline int
ovs_bpf_act_push_nsh_eth__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                           struct ovs_bpf_action *a, __u32 idx)
{
    const struct ovs_bpf_act_push_nsh *p = &a->u.push_nsh;
    const __be16 nsh_type = bpf_htons(ETH_P_NSH);
    struct ovs_bpf_flow_key *k = &s->key;
    __u32 hdr_len = p->hdr_len;
    int i;

    if (ovs_bpf_encap_eth_gso_up(skb, s, idx)) {
        return TC_ACT_SHOT;
    }
    if (s->clone_active || skb->gso_size
        || hdr_len < OVS_BPF_NSH_BASE_LEN
        || hdr_len > OVS_BPF_NSH_PUSH_MAX_LEN || hdr_len % 4) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_PUSH_NSH_ETH);
    }
    if (ovs_bpf_encap_eth_push(skb, p->eth_dst, p->eth_src, nsh_type,
                               hdr_len)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_PUSH_NSH_ETH);
    }
    /* The header, 4 bytes at a time (constant lengths for the
     * verifier). */
    for (i = 0; i < OVS_BPF_NSH_PUSH_MAX_LEN / 4; i++) {
        if (4 * i >= hdr_len) {
            break;
        }
        if (bpf_skb_store_bytes(skb, ETH_HLEN + 4 * i, &p->hdr[4 * i], 4,
                                0)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_PUSH_NSH_ETH);
        }
    }
    if (ovs_bpf_encap_eth_proto(skb)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_PUSH_NSH_ETH);
    }

    /* The key of the new packet: as the parser leaves it for NSH. */
    ovs_bpf_mpls_new_key(skb, s, nsh_type, ETH_HLEN);
    __builtin_memcpy(k->eth_dst, p->eth_dst, 6);
    __builtin_memcpy(k->eth_src, p->eth_src, 6);
    __builtin_memset(k->vlans, 0, sizeof k->vlans);
    ovs_bpf_nsh_key(k, p->hdr, hdr_len);
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_POP_ETH_NSH. */
static __always_inline int
ovs_bpf_act_pop_eth_nsh__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                          struct ovs_bpf_action *a, __u32 idx)
{
    __u8 base[4], inner[ETH_HLEN];
    __u32 len;

    (void) a;
    if (s->key.eth_type != bpf_htons(ETH_P_NSH)
        || bpf_skb_load_bytes(skb, ETH_HLEN, base, 4)) {
        /* Not NSH: as odp_execute_actions(), which leaves it alone (its
         * pop_eth would have taken the Ethernet header off). */
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH_NSH);
    }
    if (base[3] != OVS_BPF_NSH_NP_ETHERNET) {
        return (ovs_bpf_encap_eth_up(skb, s, idx)
                ? TC_ACT_SHOT
                : ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH_NSH));
    }
    if (ovs_bpf_encap_eth_gso_up(skb, s, idx)) {
        return TC_ACT_SHOT;
    }
    len = (base[1] & 0x3f) << 2;
    if (s->clone_active || skb->gso_size || s->l3_ofs != ETH_HLEN
        || len < OVS_BPF_NSH_BASE_LEN || len > 252
        || bpf_skb_load_bytes(skb, ETH_HLEN + len, inner, ETH_HLEN)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH_NSH);
    }
    if (ovs_bpf_encap_eth_pop(skb, s, len, inner)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_ETH_NSH);
    }
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_SET_NSH: set(nsh(...)) and its masked form, as
 * odp_execute_actions() does them: the flags, TTL and service path header
 * of any NSH header, the context of MD type 1 (not the TLVs of MD type 2).
 * A packet that is not NSH is left alone. */
static __always_inline int
ovs_bpf_act_set_nsh__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                      struct ovs_bpf_action *a, __u32 idx)
{
    const struct ovs_bpf_act_set_nsh *n = &a->u.set_nsh;
    struct ovs_bpf_flow_key *k = &s->key;
    __u8 hdr[OVS_BPF_NSH_MD1_LEN];
    __u32 off = s->l3_ofs, wlen;
    __be32 path_hdr;
    __u8 flags, ttl;
    bool md1;
    int i;

    if (k->eth_type != bpf_htons(ETH_P_NSH)
        || bpf_skb_load_bytes(skb, off, hdr, OVS_BPF_NSH_BASE_LEN)) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    md1 = ((hdr[2] & 0xf) == OVS_BPF_NSH_M_TYPE1
           && ((hdr[1] & 0x3f) << 2) >= OVS_BPF_NSH_MD1_LEN);
    if (md1 && bpf_skb_load_bytes(skb, off + OVS_BPF_NSH_BASE_LEN, hdr + 8,
                                  sizeof n->context)) {
        md1 = false;
    }

    flags = ovs_bpf_nsh_flags(hdr);
    ttl = ovs_bpf_nsh_ttl(hdr);
    flags = ((flags & ~n->flags_mask) | (n->flags & n->flags_mask)) & 0x3;
    ttl = ((ttl & ~n->ttl_mask) | (n->ttl & n->ttl_mask)) & 0x3f;
    hdr[0] = (hdr[0] & 0xc0) | (flags << 4) | (ttl >> 2);
    hdr[1] = (hdr[1] & 0x3f) | (ttl << 6);
    __builtin_memcpy(&path_hdr, hdr + 4, 4);
    path_hdr = (path_hdr & ~n->path_hdr_mask)
               | (n->path_hdr & n->path_hdr_mask);
    __builtin_memcpy(hdr + 4, &path_hdr, 4);
    if (md1) {
        for (i = 0; i < OVS_BPF_NSH_CONTEXT_WORDS; i++) {
            __be32 c;

            __builtin_memcpy(&c, hdr + 8 + 4 * i, 4);
            c = (c & ~n->context_mask[i]) | (n->context[i]
                                             & n->context_mask[i]);
            __builtin_memcpy(hdr + 8 + 4 * i, &c, 4);
        }
    }

    wlen = md1 ? OVS_BPF_NSH_MD1_LEN : OVS_BPF_NSH_BASE_LEN;
    if (!ovs_bpf_may_write(s, off + wlen)
        || (md1
            ? bpf_skb_store_bytes(skb, off, hdr, OVS_BPF_NSH_MD1_LEN,
                                  BPF_F_RECOMPUTE_CSUM)
            : bpf_skb_store_bytes(skb, off, hdr, OVS_BPF_NSH_BASE_LEN,
                                  BPF_F_RECOMPUTE_CSUM))) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_NSH);
    }
    if (k->nsh.mdtype) {
        /* A header that the parser took: the key follows it. */
        k->nsh.flags = flags;
        k->nsh.ttl = ttl;
        k->nsh.path_hdr = path_hdr;
        if (md1) {
            __builtin_memcpy(k->nsh_context, hdr + 8,
                             sizeof k->nsh_context);
        }
    }
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

#endif /* BPF_ACTIONS_NSH_H */
