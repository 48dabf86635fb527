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

/* Ethernet encapsulation of whole Ethernet frames, the push and pop that
 * NSH (bpf/actions-nsh.h) and MPLS (bpf/actions-mpls-eth.h) share: a new
 * Ethernet header of type TYPE and a header HDR of that type go in front
 * of the frame, or come off it again.
 *
 * skb->protocol must say the new header's type (NSH, MPLS) after the push
 * and the inner ethertype after the pop (see bpf/actions-mpls.h for why
 * and for what the helpers can do).
 * Here the VLAN helpers set it, with the Ethernet header already in place:
 * with a tag in skb metadata, bpf_skb_vlan_push() of another one puts the
 * first into the bytes after the MAC addresses (skb->protocol = its TPID),
 * and two bpf_skb_vlan_pop() take the second off and the first out of the
 * bytes again, leaving skb->protocol the ethertype after it
 * (ovs_bpf_encap_eth_proto()).
 *
 *   push:  [MACs][tags][type][payload], tag T in metadata or none
 *     vlan push:          T (if any) into the bytes, a tag D in metadata
 *     change_head:        [new MACs][TYPE][HDR][MACs][T][tags][type]...
 *     vlan push/pop/pop:  D into the bytes and out again: skb->protocol =
 *                         TYPE, no tag in metadata
 *
 *   pop:   [MACs][TYPE][HDR][inner MACs][inner type][payload]
 *     bpf_skb_adjust_room() closes room behind the Ethernet header of an
 *     IPv4 or IPv6 skb only, so the ethertype is made IPv4 first (written,
 *     then the tag dance), then the header and the inner MAC addresses
 *     and type go, and the inner MAC addresses and type are written over
 *     the outer ones; the tag dance once more makes skb->protocol the inner
 *     type (an inner VLAN tag ends up in metadata, as a received one).
 *
 * The inner frame's checksum-complete value stays right: the bytes written
 * in front of the network header are not in skb->csum (the redirect adds
 * the whole MAC header, bpf_push_mac_rcsum()), and bpf_skb_adjust_room()
 * takes what it removes out of it.
 *
 * A GSO packet (TCP over the NSH or MPLS path, say) is neither pushed nor
 * popped here: the kernel would segment it from a network header that
 * still points into the inner frame, and without the inner protocol that
 * no helper can set.  It goes up to ovs-vswitchd as a slow path packet
 * when the push or pop is the flow's first action, as the translator makes
 * encap and decap flows, and ovs-vswitchd cuts it into its segments and
 * runs the flow's actions on each (dp_bpf_execute_userspace()); elsewhere
 * the caller counts it as a failure of the action. */

#ifndef BPF_ENCAP_ETH_H
#define BPF_ENCAP_ETH_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions-mpls.h"
#include "bpf/maps.h"
#include "bpf/upcall.h"

/* Whether the packet of the push or pop at slot 'idx' can go up to
 * ovs-vswitchd as a slow path packet, as the flow found it: the action is
 * the flow's first and no clone() changed the packet.  Sends it if so. */
static __always_inline bool
ovs_bpf_encap_eth_up(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                     __u32 idx)
{
    if (idx || s->clone_active) {
        return false;
    }
    /* ovs-vswitchd runs the flow's actions on it. */
    ovs_bpf_count(OVS_BPF_STAT_SLOW_PATH);
    ovs_bpf_upcall(skb, s, OVS_BPF_UPCALL_SLOW_PATH);
    return true;
}

/* Whether the packet of the push or pop at slot 'idx' is a GSO packet that
 * goes up to ovs-vswitchd (see the top of the file).  Sends it if so; the
 * caller then drops its copy.  A GSO packet that cannot go up is the
 * caller's failure. */
static __always_inline bool
ovs_bpf_encap_eth_gso_up(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                         __u32 idx)
{
    return skb->gso_size && ovs_bpf_encap_eth_up(skb, s, idx);
}

/* With a VLAN tag in skb metadata and the Ethernet header in the bytes:
 * makes skb->protocol the ethertype at offset 12 (or, if that is a VLAN
 * TPID, the one after the tag, which goes to metadata), with no other tag
 * in metadata.  See the top of the file. */
static __always_inline long
ovs_bpf_encap_eth_proto(struct __sk_buff *skb)
{
    const __be16 tpid = bpf_htons(ETH_P_8021Q);

    if (bpf_skb_vlan_push(skb, tpid, 0)
        || bpf_skb_vlan_pop(skb)
        || bpf_skb_vlan_pop(skb)) {
        return -1;
    }
    return 0;
}

/* Puts a new Ethernet header from 'src' to 'dst' with ethertype 'type',
 * and 'hdr_len' bytes for the caller to fill behind it, in front of the
 * frame (the first steps of the push at the top of the file; the caller
 * writes the header and then calls ovs_bpf_encap_eth_proto()). */
static __always_inline long
ovs_bpf_encap_eth_push(struct __sk_buff *skb, const __u8 *dst,
                       const __u8 *src, __be16 type, __u32 hdr_len)
{
    const __be16 tpid = bpf_htons(ETH_P_8021Q);
    __u8 eth[ETH_HLEN];

    __builtin_memcpy(eth, dst, 6);
    __builtin_memcpy(eth + 6, src, 6);
    __builtin_memcpy(eth + 12, &type, 2);
    if (bpf_skb_vlan_push(skb, tpid, 0)
        || bpf_skb_change_head(skb, ETH_HLEN + hdr_len, 0)
        || bpf_skb_store_bytes(skb, 0, eth, ETH_HLEN, 0)) {
        return -1;
    }
    return 0;
}

/* Takes the outer Ethernet header (no VLAN tag in the bytes) and the
 * 'hdr_len' bytes behind it off the frame, leaving the inner frame whose
 * first ETH_HLEN bytes (MAC addresses and type) are 'inner', with
 * skb->protocol its type (the pop at the top of the file).
 *
 * Only a recirculation follows (the translator sees to it), which parses
 * the packet again: the key just stops describing the outer header. */
static __always_inline long
ovs_bpf_encap_eth_pop(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                      __u32 hdr_len, const __u8 *inner)
{
    const __be16 tpid = bpf_htons(ETH_P_8021Q);
    const __be16 ipv4 = bpf_htons(ETH_P_IP);
    __be16 inner_type;

    __builtin_memcpy(&inner_type, inner + 12, 2);

    /* The outer accelerated tag goes with the outer header.  Then IPv4 for
     * bpf_skb_adjust_room(), which removes the header and the inner MAC
     * addresses and type, whose copies go where the outer ones were. */
    if ((skb->vlan_present && bpf_skb_vlan_pop(skb))
        || bpf_skb_store_bytes(skb, 12, &ipv4, 2, 0)
        || bpf_skb_vlan_push(skb, tpid, 0)
        || ovs_bpf_encap_eth_proto(skb)
        || bpf_skb_adjust_room(skb, -(__s32) (hdr_len + ETH_HLEN),
                               BPF_ADJ_ROOM_MAC, 0)
        || bpf_skb_store_bytes(skb, 0, inner, ETH_HLEN, 0)) {
        return -1;
    }
    if (inner_type != ipv4
        && (bpf_skb_vlan_push(skb, tpid, 0) || ovs_bpf_encap_eth_proto(skb))) {
        return -1;
    }

    ovs_bpf_mpls_new_key(skb, s, inner_type, ETH_HLEN);
    __builtin_memcpy(s->key.eth_dst, inner, 6);
    __builtin_memcpy(s->key.eth_src, inner + 6, 6);
    __builtin_memset(s->key.vlans, 0, sizeof s->key.vlans);
    return 0;
}

#endif /* BPF_ENCAP_ETH_H */
