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

/* The masked set-field actions: new = (old & ~mask) | (value & mask) for
 * each field, as OVS_ACTION_ATTR_SET_MASKED, with the IPv4 header checksum
 * and the TCP/UDP/ICMPv6 checksums kept right.
 *
 * An action whose header the packet does not have (set_ipv4 on an ARP
 * packet, set_tcp on a later fragment...) leaves the packet unchanged, as
 * odp_execute_actions() does; the translator only emits them behind
 * matching prerequisites anyway.  A failing helper, or a change that a
 * clone() could not undo, drops the packet as a failure of the action's
 * type.
 *
 * Writes go through bpf_skb_store_bytes(), which unclones a shared skb
 * head; reads use bpf_skb_load_bytes() because the L3 offset is not a
 * constant (VLAN tags, IPv4 options, IPv6 extension headers). */

#ifndef BPF_ACTIONS_SET_H
#define BPF_ACTIONS_SET_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/csum.h"
#include "bpf/maps.h"
#include "bpf/parse.h"

#define OVS_BPF_MASKED(OLD, VAL, MASK) (((OLD) & ~(MASK)) | ((VAL) & (MASK)))

static __always_inline bool
ovs_bpf_is_ipv4(const struct ovs_bpf_scratch *s)
{
    /* l4_ofs is set only when the IP header passed the parser's checks. */
    return s->key.eth_type == bpf_htons(ETH_P_IP) && s->l4_ofs;
}

static __always_inline bool
ovs_bpf_is_ipv6(const struct ovs_bpf_scratch *s)
{
    return s->key.eth_type == bpf_htons(ETH_P_IPV6) && s->l4_ofs;
}

/* Rewrites the Ethernet address at 'pkt' (in the packet) with 'val' under
 * 'mask' and copies the result to 'key' (in the packet's key), as a 32-bit
 * and a 16-bit word each: a loop over the 6 bytes was about 12 loads,
 * masks and stores per byte in the JIT image, the cost of a set_eth
 * that the lookup program runs.  The words are unaligned (an address
 * starts at byte 6 of the packet, 26 of the key, 14 of a mask): the
 * verifier allows that where the CPU does it efficiently (x86-64,
 * arm64). */
static __always_inline void
ovs_bpf_set_mac(__u8 *pkt, __u8 *key, const __u8 *val, const __u8 *mask)
{
    __u32 hi = OVS_BPF_MASKED(*(__u32 *) pkt, *(const __u32 *) val,
                              *(const __u32 *) mask);
    __u16 lo = OVS_BPF_MASKED(*(__u16 *) (pkt + 4),
                              *(const __u16 *) (val + 4),
                              *(const __u16 *) (mask + 4));

    *(__u32 *) pkt = hi;
    *(__u16 *) (pkt + 4) = lo;
    *(__u32 *) key = hi;
    *(__u16 *) (key + 4) = lo;
}

/* OVS_BPF_ACTION_SET_ETH: rewrites the Ethernet addresses of the packet and
 * of the key as 'e' says.  Returns false if the packet could not be
 * changed, which the caller counts as a failure of the action; a packet
 * too short for an Ethernet header is left as it is.  Also run by the
 * lookup program (see ovs_bpf_run_leading_step()).
 *
 * The addresses are rewritten in place, by direct packet access: the
 * bpf_skb_load_bytes() and bpf_skb_store_bytes() calls this took before
 * were most of its cost (see "Performance" in dpif-bpf.rst).  A direct
 * write makes the kernel unclone a cloned skb's head when a program that
 * writes starts (the verifier's prologue calls bpf_skb_pull_data()), as
 * bpf_skb_store_bytes() did at the write.  A header that is not in the
 * linear data (a packet built that way, never one received from a device)
 * goes through the helpers. */
static __always_inline bool
ovs_bpf_set_eth(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                const struct ovs_bpf_act_eth *e)
{
    __u8 *data = (__u8 *) (long) skb->data;
    __u8 *data_end = (__u8 *) (long) skb->data_end;
    __u8 mac[12];
    int i;

    if (data + sizeof mac <= data_end) {
        if (!ovs_bpf_may_write(s, sizeof mac)) {
            return false;
        }
        ovs_bpf_set_mac(data, s->key.eth_dst, e->dst, e->dst_mask);
        ovs_bpf_set_mac(data + 6, s->key.eth_src, e->src, e->src_mask);
        return true;
    }
    if (bpf_skb_load_bytes(skb, 0, mac, sizeof mac)) {
        return true;            /* No Ethernet. */
    }
#pragma unroll
    for (i = 0; i < 6; i++) {
        mac[i] = OVS_BPF_MASKED(mac[i], e->dst[i], e->dst_mask[i]);
        mac[6 + i] = OVS_BPF_MASKED(mac[6 + i], e->src[i], e->src_mask[i]);
    }
    /* No checksum covers the Ethernet header, and skb->csum of a
     * CHECKSUM_COMPLETE packet starts after it: no csum flag. */
    if (!ovs_bpf_may_write(s, sizeof mac)
        || bpf_skb_store_bytes(skb, 0, mac, sizeof mac, 0)) {
        return false;
    }
    __builtin_memcpy(s->key.eth_dst, mac, 6);
    __builtin_memcpy(s->key.eth_src, mac + 6, 6);
    return true;
}

/* Rewrites the IPv4 address at 'off' ('key_addr' is its copy in the key)
 * with the masked value, fixing the IP and L4 checksums.  Returns
 * nonzero on a helper failure. */
static __always_inline int
ovs_bpf_set_ipv4_addr(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                      __u32 off, __be32 old, __be32 val, __be32 mask,
                      __be32 *key_addr)
{
    __be32 new = OVS_BPF_MASKED(old, val, mask);

    if (new == old) {
        return 0;
    }
    if (bpf_skb_store_bytes(skb, off, &new, 4, 0)
        || bpf_l3_csum_replace(skb, s->l3_ofs + OVS_BPF_IPV4_CSUM_OFF,
                               old, new, 4)
        || ovs_bpf_l4_csum_pseudo4(skb, s, false, old, new)) {
        return -1;
    }
    *key_addr = new;
    return 0;
}

/* OVS_BPF_ACTION_SET_IPV4: addresses, TOS, TTL. */
static __always_inline int
ovs_bpf_act_set_ipv4__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       struct ovs_bpf_action *a, __u32 idx)
{
    struct ovs_bpf_act_ipv4 *act;
    __u8 ip[20];
    __u32 l3;
    __be16 old16, new16;

    act = &a->u.ipv4;
    l3 = s->l3_ofs;
    if (!ovs_bpf_is_ipv4(s) || bpf_skb_load_bytes(skb, l3, ip, sizeof ip)) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    if (!ovs_bpf_may_write(s, s->l4_ofs + (ovs_bpf_has_l4(skb, s) ? 20 : 0))) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_IPV4);
    }

    if (ovs_bpf_set_ipv4_addr(skb, s, l3 + 12, *(__be32 *) (ip + 12),
                              act->src, act->src_mask, &s->key.ipv4_src)
        || ovs_bpf_set_ipv4_addr(skb, s, l3 + 16, *(__be32 *) (ip + 16),
                                 act->dst, act->dst_mask,
                                 &s->key.ipv4_dst)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_IPV4);
    }

    /* TOS shares a checksummed 16-bit word with version/IHL, TTL with the
     * protocol. */
    if (act->tos_mask) {
        __u8 tos = OVS_BPF_MASKED(ip[1], act->tos, act->tos_mask);

        if (tos != ip[1]) {
            old16 = bpf_htons(ip[0] << 8 | ip[1]);
            new16 = bpf_htons(ip[0] << 8 | tos);
            if (bpf_skb_store_bytes(skb, l3 + 1, &tos, 1, 0)
                || bpf_l3_csum_replace(skb, l3 + OVS_BPF_IPV4_CSUM_OFF,
                                       old16, new16, 2)) {
                return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_IPV4);
            }
            s->key.nw_tos = tos;
        }
    }
    if (act->ttl_mask) {
        __u8 ttl = OVS_BPF_MASKED(ip[8], act->ttl, act->ttl_mask);

        if (ttl != ip[8]) {
            old16 = bpf_htons(ip[8] << 8 | ip[9]);
            new16 = bpf_htons(ttl << 8 | ip[9]);
            if (bpf_skb_store_bytes(skb, l3 + 8, &ttl, 1, 0)
                || bpf_l3_csum_replace(skb, l3 + OVS_BPF_IPV4_CSUM_OFF,
                                       old16, new16, 2)) {
                return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_IPV4);
            }
            s->key.nw_ttl = ttl;
        }
    }
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_SET_IPV6_SRC and _DST: 'off' is 8 or 24 in the IPv6
 * header; the L4 checksum covers both addresses in its pseudo header. */
static __always_inline int
ovs_bpf_set_ipv6_addr(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                      struct ovs_bpf_action *a, __u32 idx, __u32 off)
{
    __u32 type = (off == 8 ? OVS_BPF_ACTION_SET_IPV6_SRC
                  : OVS_BPF_ACTION_SET_IPV6_DST);
    __be32 old[4], new[4];
    int i;

    if (!ovs_bpf_is_ipv6(s)
        || bpf_skb_load_bytes(skb, s->l3_ofs + off, old, sizeof old)) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    __builtin_memcpy(new, a->u.ipv6_addr.addr, 16);
#pragma unroll
    for (i = 0; i < 4; i++) {
        __be32 mask;

        __builtin_memcpy(&mask, a->u.ipv6_addr.mask + 4 * i, 4);
        new[i] = OVS_BPF_MASKED(old[i], new[i], mask);
    }
    if (!((old[0] ^ new[0]) | (old[1] ^ new[1]) | (old[2] ^ new[2])
          | (old[3] ^ new[3]))) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    if (!ovs_bpf_may_write(s, s->l4_ofs + (ovs_bpf_has_l4(skb, s) ? 20 : 0))) {
        return ovs_bpf_action_failed(type);
    }
    if (bpf_skb_store_bytes(skb, s->l3_ofs + off, new, sizeof new, 0)
        || (!(off == 24 && s->ipv6_rh)
            && ovs_bpf_l4_csum_pseudo16(skb, s, old, new) < 0)) {
        return ovs_bpf_action_failed(type);
    }
    __builtin_memcpy(off == 8 ? s->key.ipv6_src : s->key.ipv6_dst, new, 16);
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_SET_IPV6_MISC: flow label, traffic class, hop limit; no
 * checksum covers them. */
static __always_inline int
ovs_bpf_act_set_ipv6_misc__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                            struct ovs_bpf_action *a, __u32 idx)
{
    struct ovs_bpf_act_ipv6_misc *act;
    __u32 w, nw, label, label_mask;
    __u8 hdr[8], tclass;

    act = &a->u.ipv6_misc;
    if (!ovs_bpf_is_ipv6(s)
        || bpf_skb_load_bytes(skb, s->l3_ofs, hdr, sizeof hdr)) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    if (!ovs_bpf_may_write(s, s->l3_ofs + sizeof hdr)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_IPV6_MISC);
    }
    w = bpf_ntohl(*(__be32 *) hdr);
    label = bpf_ntohl(act->label) & 0xfffff;
    label_mask = bpf_ntohl(act->label_mask) & 0xfffff;
    tclass = OVS_BPF_MASKED((__u8) (w >> 20), act->tclass, act->tclass_mask);
    nw = (w & 0xf0000000) | ((__u32) tclass << 20)
         | OVS_BPF_MASKED(w & 0xfffff, label, label_mask);
    *(__be32 *) hdr = bpf_htonl(nw);
    hdr[7] = OVS_BPF_MASKED(hdr[7], act->hlimit, act->hlimit_mask);
    if (bpf_skb_store_bytes(skb, s->l3_ofs, hdr, sizeof hdr, 0)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_IPV6_MISC);
    }
    s->key.ipv6_label = bpf_htonl(nw & 0xfffff);
    s->key.nw_tos = tclass;
    s->key.nw_ttl = hdr[7];
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_SET_TCP and _UDP: ports. */
static __always_inline int
ovs_bpf_set_l4_ports(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                     struct ovs_bpf_action *a, __u32 idx, __u8 nw_proto)
{
    __u32 type = (nw_proto == IPPROTO_TCP ? OVS_BPF_ACTION_SET_TCP
                  : OVS_BPF_ACTION_SET_UDP);
    __be16 ports[2], src, dst;

    if (s->key.nw_proto != nw_proto || !ovs_bpf_has_l4(skb, s)
        || (!ovs_bpf_is_ipv4(s) && !ovs_bpf_is_ipv6(s))
        || bpf_skb_load_bytes(skb, s->l4_ofs, ports, sizeof ports)) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    src = OVS_BPF_MASKED(ports[0], a->u.l4.src, a->u.l4.src_mask);
    dst = OVS_BPF_MASKED(ports[1], a->u.l4.dst, a->u.l4.dst_mask);
    if (src == ports[0] && dst == ports[1]) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    if (!ovs_bpf_may_write(s, s->l4_ofs + ovs_bpf_l4_min_len(nw_proto))) {
        return ovs_bpf_action_failed(type);
    }
    if ((src != ports[0]
         && (bpf_skb_store_bytes(skb, s->l4_ofs, &src, 2, 0)
             || ovs_bpf_l4_csum_port(skb, s, ports[0], src)))
        || (dst != ports[1]
            && (bpf_skb_store_bytes(skb, s->l4_ofs + 2, &dst, 2, 0)
                || ovs_bpf_l4_csum_port(skb, s, ports[1], dst)))) {
        return ovs_bpf_action_failed(type);
    }
    s->key.tp_src = src;
    s->key.tp_dst = dst;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

#endif /* BPF_ACTIONS_SET_H */
