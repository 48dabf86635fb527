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

/* push_mpls, pop_mpls and set(mpls) on Ethernet frames.
 *
 * The label stack entry goes between the Ethernet header (with the VLAN
 * tags in the bytes) and what follows it, as in OVS and the kernel
 * datapath, and skb->protocol must say MPLS after a push and the new
 * ethertype after a pop: the kernel forwards by it (an ingress redirect
 * hands the skb to the protocol handler skb->protocol names, GSO and
 * checksum offload read it).  A TC program cannot write skb->protocol, and
 * the helpers that move bytes refuse an skb that is not IP:
 * bpf_skb_adjust_room() returns -ENOTSUPP for any skb->protocol other than
 * IPv4 or IPv6 (so it cannot take a label off an MPLS skb), and even on an
 * IP skb it leaves skb->protocol as it was (its BPF_F_ADJ_ROOM_DECAP_L3_*
 * flags set it to IPv4 or IPv6 only, and only on IP skbs);
 * bpf_skb_change_proto() converts between IPv4 and IPv6 only;
 * bpf_skb_change_head() adds bytes in front of the MAC header and leaves
 * the protocol alone.
 *
 * The VLAN helpers do both: bpf_skb_vlan_push() with a tag already in skb
 * metadata inserts that tag into the bytes right after the MAC addresses
 * and sets skb->protocol to its TPID; bpf_skb_vlan_pop() clears the
 * metadata tag and, if skb->protocol is a VLAN type, moves the tag in the
 * bytes after the MAC addresses into the metadata (4 bytes less), setting
 * skb->protocol to the ethertype that follows that tag (the kernel's
 * skb_vlan_push()/skb_vlan_pop() and vlan_set_encap_proto()).  So bytes
 * are inserted or removed 4 at a time after the MAC addresses, and
 * skb->protocol becomes the ethertype found after the last tag removed:
 *
 *   push_mpls: [MACs][tags][type][payload]
 *     push, push, push:   [MACs][B][A][tags][type][payload], +8 bytes
 *     write after B:      [MACs][B][tags][mpls type][LSE][payload]
 *     pop, pop:           B and then the first tag or nothing go to the
 *                         metadata tag and away: [MACs][tags][mpls type]
 *                         [LSE][payload], skb->protocol = mpls type (or
 *                         the TPID of the tag still in the bytes)
 *
 *   pop_mpls:  [MACs][tags][mpls type][LSE][payload]
 *     write:              [MACs][8100 0000][tags][new type][payload]
 *     push, push:         [MACs][A][8100 0000][tags][new type][payload]
 *     pop, pop, pop:      [MACs][tags][new type][payload], skb->protocol =
 *                         new type (or a TPID as above)
 *
 * An accelerated tag that the packet had is taken off first and put back
 * last.  The network header ends at the label after a push and at the new
 * type's header after a pop, as the kernel's skb_mpls_push()/_pop() leave
 * it; skb->csum of a CHECKSUM_COMPLETE packet follows (the VLAN helpers
 * keep it, the writes after the Ethernet header recompute it).
 *
 * Limits, each counted as a failure of the action (the packet is dropped):
 * more than two VLAN tags in the bytes or an 802.3 (LLC/SNAP) frame, a
 * pop_mpls to a VLAN ethertype (the translator makes those flows
 * userspace flows), a push or pop inside a clone() whose packet is restored
 * afterwards (the length changes), a failing helper (no headroom and no
 * memory).  A GSO packet keeps its GSO type: after push_mpls it is an MPLS
 * GSO packet without the inner protocol the kernel's MPLS segmentation
 * needs (skb_mpls_push() sets it, no helper can), see
 * Documentation/topics/dpif-bpf.rst. */

#ifndef BPF_ACTIONS_MPLS_H
#define BPF_ACTIONS_MPLS_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"
#include "bpf/parse.h"

/* VLAN tags that the MPLS actions move the label past in the bytes. */
#define OVS_BPF_MPLS_MAX_TAGS 2

static __always_inline bool
ovs_bpf_eth_type_mpls(__be16 type)
{
    return type == bpf_htons(ETH_P_MPLS_UC)
           || type == bpf_htons(ETH_P_MPLS_MC);
}

/* The number of VLAN tags in the packet bytes in front of the ethertype
 * that the parser found ('l3_ofs' is right after it), in '*n_tags'.
 * Returns false if that is more than OVS_BPF_MPLS_MAX_TAGS or not tags
 * (an 802.3 frame). */
static __always_inline bool
ovs_bpf_mpls_tags(const struct ovs_bpf_scratch *s, __u32 *n_tags)
{
    __u32 l3 = s->l3_ofs;

    if (l3 < ETH_HLEN || (l3 - ETH_HLEN) % 4
        || (l3 - ETH_HLEN) / 4 > OVS_BPF_MPLS_MAX_TAGS) {
        return false;
    }
    *n_tags = (l3 - ETH_HLEN) / 4;
    return true;
}

/* Loads the 'n_tags' VLAN tags in the bytes (at offset 12) into 'buf'.
 * Verifier: constant lengths. */
static __always_inline long
ovs_bpf_mpls_load_tags(struct __sk_buff *skb, __u8 *buf, __u32 n_tags)
{
    if (n_tags == 1) {
        return bpf_skb_load_bytes(skb, 12, buf, 4);
    } else if (n_tags == 2) {
        return bpf_skb_load_bytes(skb, 12, buf, 8);
    }
    return 0;
}

/* Writes 4 * 'n_tags' + 6 bytes of 'buf' at offset 'off' (12 or 16).
 * skb->csum of a CHECKSUM_COMPLETE packet covers the bytes after the
 * Ethernet header: those are written with BPF_F_RECOMPUTE_CSUM, the
 * ethertype at 12 without.  Verifier: constant lengths. */
static __always_inline long
ovs_bpf_mpls_store(struct __sk_buff *skb, __u32 off, const __u8 *buf,
                   __u32 n_tags)
{
    const __u32 f = BPF_F_RECOMPUTE_CSUM;

    if (off == 12) {
        if (bpf_skb_store_bytes(skb, 12, buf, 2, 0)) {
            return -1;
        }
        if (n_tags == 0) {
            return bpf_skb_store_bytes(skb, 14, buf + 2, 4, f);
        } else if (n_tags == 1) {
            return bpf_skb_store_bytes(skb, 14, buf + 2, 8, f);
        }
        return bpf_skb_store_bytes(skb, 14, buf + 2, 12, f);
    }
    if (n_tags == 0) {
        return bpf_skb_store_bytes(skb, off, buf, 6, f);
    } else if (n_tags == 1) {
        return bpf_skb_store_bytes(skb, off, buf, 10, f);
    }
    return bpf_skb_store_bytes(skb, off, buf, 14, f);
}

/* Takes the accelerated VLAN tag off, if there is one, into '*vlan'; the
 * end of the push or pop puts it back with ovs_bpf_vlan_tag_push() as the
 * outermost tag (a tag that the helpers left in the metadata goes into the
 * bytes behind it). */
static __always_inline long
ovs_bpf_mpls_save_vlan(struct __sk_buff *skb, struct ovs_bpf_vlan_tag *vlan)
{
    *vlan = ovs_bpf_vlan_tag_get(skb);
    return vlan->present ? bpf_skb_vlan_pop(skb) : 0;
}

/* After a push or pop: the ethertype is 'eth_type', the labels are those
 * in the packet from 'l3' on if it is MPLS, and the network and transport
 * fields are zero, as the parser leaves them for an MPLS packet and as
 * nothing after pop_mpls can use them before a recirculation parses the
 * packet again.  'l3_ofs' follows the ethertype; 'l4_ofs' 0 keeps the set
 * actions off the packet's payload. */
static __always_inline void
ovs_bpf_mpls_new_key(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                     __be16 eth_type, __u32 l3)
{
    struct ovs_bpf_flow_key *k = &s->key;
    int i;

    /* 'ipv4_src' alone, then 8-byte stores from 'ipv4_dst' on (the key
     * is 8-byte aligned): 11 stores instead of the 21 4-byte stores of a
     * memset from 'ipv4_src'.  The barrier keeps clang from merging the
     * two into that memset again. */
    _Static_assert(__builtin_offsetof(struct ovs_bpf_flow_key, ipv4_dst)
                   % 8 == 0, "ipv4_dst is not 8-byte aligned");
    k->ipv4_src = 0;
    barrier();
    __builtin_memset(&k->ipv4_dst, 0,
                     OVS_BPF_KEY_CT_TUN_OFS
                     - __builtin_offsetof(struct ovs_bpf_flow_key,
                                          ipv4_dst));
    k->eth_type = eth_type;
    s->l3_ofs = l3;
    s->l4_ofs = 0;
    if (!ovs_bpf_eth_type_mpls(eth_type)) {
        return;
    }
    for (i = 0; i < OVS_BPF_MAX_MPLS_LABELS; i++) {
        __be32 lse;

        if (bpf_skb_load_bytes(skb, l3 + 4 * i, &lse, 4)) {
            break;
        }
        k->mpls_lse[i] = lse;
        if (lse & bpf_htonl(OVS_BPF_MPLS_BOS)) {
            break;
        }
    }
}

/* The end of a push or pop: the key follows ('eth_type' is the new
 * ethertype), and the next action runs.  The packet had 'n_tags' tags in
 * the bytes and 'vlan' in skb metadata before, and has as many now, but
 * the helpers may have left one more or one less in the metadata: the
 * ethertype is after those in the bytes. */
static __always_inline int
ovs_bpf_mpls_done(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                  __u32 idx, __be16 eth_type, __u32 n_tags,
                  const struct ovs_bpf_vlan_tag *vlan)
{
    __u32 l3 = ETH_HLEN + 4 * (n_tags + (vlan->present ? 1 : 0)
                               - (skb->vlan_present ? 1 : 0));

    ovs_bpf_mpls_new_key(skb, s, eth_type, l3);
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_PUSH_MPLS. */
static __always_inline int
ovs_bpf_act_push_mpls__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                        struct ovs_bpf_action *a, __u32 idx)
{
    const __be16 tpid = bpf_htons(ETH_P_8021Q);
    struct ovs_bpf_vlan_tag vlan;
    __u32 n_tags;
    __u8 buf[16] = { 0 };
    __be16 eth_type;
    __be32 lse;

    eth_type = a->u.mpls.eth_type;
    lse = a->u.mpls.lse;
    if (s->clone_active || !ovs_bpf_mpls_tags(s, &n_tags)
        || ovs_bpf_mpls_load_tags(skb, buf, n_tags)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_PUSH_MPLS);
    }
    /* What goes after tag B: the tags, the MPLS type, the label. */
    __builtin_memcpy(buf + 4 * n_tags, &eth_type, 2);
    __builtin_memcpy(buf + 4 * n_tags + 2, &lse, 4);

    if (ovs_bpf_mpls_save_vlan(skb, &vlan)
        || bpf_skb_vlan_push(skb, tpid, 0)
        || bpf_skb_vlan_push(skb, tpid, 0)
        || bpf_skb_vlan_push(skb, tpid, 0)
        || ovs_bpf_mpls_store(skb, 16, buf, n_tags)
        || bpf_skb_vlan_pop(skb)
        || bpf_skb_vlan_pop(skb)
        || ovs_bpf_vlan_tag_push(skb, &vlan)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_PUSH_MPLS);
    }
    return ovs_bpf_mpls_done(skb, s, idx, eth_type, n_tags, &vlan);
}

/* OVS_BPF_ACTION_POP_MPLS.  A packet that is not MPLS is left alone, as
 * odp_execute_actions() does. */
static __always_inline int
ovs_bpf_act_pop_mpls__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       struct ovs_bpf_action *a, __u32 idx)
{
    const __be16 tpid = bpf_htons(ETH_P_8021Q);
    struct ovs_bpf_vlan_tag vlan;
    __u32 n_tags;
    __u8 buf[16] = { 0 };
    __be16 eth_type;

    if (!ovs_bpf_eth_type_mpls(s->key.eth_type)) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    eth_type = a->u.mpls.eth_type;
    if (s->clone_active || ovs_bpf_eth_type_vlan(eth_type)
        || !ovs_bpf_mpls_tags(s, &n_tags)
        || ovs_bpf_mpls_load_tags(skb, buf + 4, n_tags)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_MPLS);
    }
    /* What replaces [tags][MPLS type][label]: a tag for the helpers to
     * remove, the tags, the new type. */
    buf[0] = 0x81;
    __builtin_memcpy(buf + 4 + 4 * n_tags, &eth_type, 2);

    if (ovs_bpf_mpls_save_vlan(skb, &vlan)
        || ovs_bpf_mpls_store(skb, 12, buf, n_tags)
        || bpf_skb_vlan_push(skb, tpid, 0)
        || bpf_skb_vlan_push(skb, tpid, 0)
        || bpf_skb_vlan_pop(skb)
        || bpf_skb_vlan_pop(skb)
        || bpf_skb_vlan_pop(skb)
        || ovs_bpf_vlan_tag_push(skb, &vlan)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_POP_MPLS);
    }
    return ovs_bpf_mpls_done(skb, s, idx, eth_type, n_tags, &vlan);
}

/* OVS_BPF_ACTION_SET_MPLS: the outermost label stack entry, masked.  A
 * packet that is not MPLS is left alone, as odp_execute_actions() does. */
static __always_inline int
ovs_bpf_act_set_mpls__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       struct ovs_bpf_action *a, __u32 idx)
{
    __u32 off;
    __be32 lse;

    off = s->l3_ofs;
    if (!ovs_bpf_eth_type_mpls(s->key.eth_type)
        || bpf_skb_load_bytes(skb, off, &lse, 4)) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    lse = (lse & ~a->u.mpls.lse_mask) | (a->u.mpls.lse & a->u.mpls.lse_mask);
    if (!ovs_bpf_may_write(s, off + 4)
        || bpf_skb_store_bytes(skb, off, &lse, 4, BPF_F_RECOMPUTE_CSUM)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_MPLS);
    }
    s->key.mpls_lse[0] = lse;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

#endif /* BPF_ACTIONS_MPLS_H */
