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

/* Native tunneling: tnl_push and tnl_pop, as dpif-netdev runs them
 * (lib/netdev-native-tnl.c), on VXLAN and GRE over IPv4 and IPv6.
 *
 * tnl_push: ovs-vswitchd built the outer headers from its route and
 * neighbour tables (ofproto's "ovs/route" and "tnl/neigh"); the program
 * puts them in front of the packet and fills in what depends on the
 * packet: the IPv4 total length and header checksum or the IPv6 payload
 * length, and for VXLAN the UDP length, the UDP source port, from the
 * packet's flow hash as netdev-native-tnl and the kernel spread flows over
 * the ports 32768-60999 (OVS's tnl_udp_port_min/max), and the UDP checksum
 * if the header has a nonzero one (IPv6 always, IPv4 with
 * options:csum=true), for GRE the GRE checksum if the header has the C
 * flag (see ovs_bpf_tnl_l4_csum()).  A GRE header with a sequence number
 * (options:seq=true), which counts per port, is not pushed here (the
 * translation leaves it to ovs-vswitchd).
 *
 * Room for the header: an IPv4 or IPv6 skb gets it from
 * bpf_skb_adjust_room() with the encapsulation flags (UDP or GRE), which
 * open it behind the Ethernet header and mark the skb as a tunnel packet,
 * so that a GSO packet is segmented with its outer headers; the Ethernet
 * header then moves behind the new one.  Any other skb (ARP...), which
 * that helper refuses, gets it in front from bpf_skb_change_head(), which
 * cannot mark it: a GSO packet that is not IP cannot be encapsulated
 * (there is none).
 *
 * tnl_pop: checks the outer headers as netdev-native-tnl does (IPv4
 * version, no options, header checksum, total length; IPv6 without
 * extension headers; then for a VXLAN port UDP, its length and checksum,
 * VXLAN flags and reserved bits, for a GRE port (OVS_BPF_PORT_F_GRE) GRE,
 * its flags, version and checksum), fills the tunnel metadata of the key
 * as it does (tun_id, outer addresses, TOS, TTL, UDP ports, flags "key"
 * and, with a UDP or GRE checksum, "csum"), takes the headers off with
 * bpf_skb_adjust_room() and looks the inner frame up again with in_port =
 * the tunnel port.  A packet that fails a check is dropped and counted
 * (OVS_BPF_DROP_TNL_POP_SHORT, OVS_BPF_DROP_TNL_POP_BAD).
 *
 * Both refuse (as a failure of their action) a packet with a VLAN tag in
 * skb metadata or in its bytes (the header would go on the wrong side of
 * it), and a push or pop inside a clone() whose packet is restored
 * afterwards (the length changes). */

#ifndef BPF_ACTIONS_TNL_H
#define BPF_ACTIONS_TNL_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"
#include "bpf/parse.h"
#include "bpf/skb-csum.h"
#include "bpf/tunnel.h"
#include "bpf/upcall.h"

/* Newer than some UAPI headers (kernel 6.3). */
#ifndef BPF_F_ADJ_ROOM_DECAP_L3_IPV4
#define BPF_F_ADJ_ROOM_DECAP_L3_IPV4 (1ULL << 7)
#define BPF_F_ADJ_ROOM_DECAP_L3_IPV6 (1ULL << 8)
#endif

#define OVS_BPF_TNL_IPV4_HLEN 20
#define OVS_BPF_TNL_IPV6_HLEN 40
#define OVS_BPF_TNL_UDP_HLEN 8
#define OVS_BPF_TNL_VXLAN_HLEN 8
#define OVS_BPF_TNL_VXLAN_FLAGS 0x08000000  /* The I flag. */
#define OVS_BPF_TNL_GPE_FLAG 0x04000000     /* P: a VXLAN-GPE header. */
#define OVS_BPF_TNL_GPE_OAM 0x01000000      /* O: an OAM packet. */
#define OVS_BPF_TNL_GPE_NP_IPV4 1           /* Next protocols. */
#define OVS_BPF_TNL_GPE_NP_IPV6 2
#define OVS_BPF_TNL_GPE_NP_ETHERNET 3
#define OVS_BPF_TNL_UDP_PORT_MIN 32768
#define OVS_BPF_TNL_UDP_PORT_MAX 61000
#define OVS_BPF_TNL_GRE_HLEN 4              /* Without its options. */
#define OVS_BPF_TNL_GRE_MAX_HLEN 16         /* With all three. */
#define OVS_BPF_TNL_GRE_CSUM 0x8000         /* C: a checksum (and offset). */
#define OVS_BPF_TNL_GRE_KEY 0x2000          /* K: a key. */
#define OVS_BPF_TNL_GRE_SEQ 0x1000          /* S: a sequence number. */
#define OVS_BPF_TNL_ETH_P_TEB 0x6558        /* Ethernet over GRE. */
#ifndef IPPROTO_GRE
#define IPPROTO_GRE 47
#endif

/* The length of a GRE header with flags 'flags' (host order), whose
 * options are those that OVS knows. */
static __always_inline __u32
ovs_bpf_tnl_gre_hlen(__u16 flags)
{
    return (OVS_BPF_TNL_GRE_HLEN
            + (flags & OVS_BPF_TNL_GRE_CSUM ? 4 : 0)
            + (flags & OVS_BPF_TNL_GRE_KEY ? 4 : 0)
            + (flags & OVS_BPF_TNL_GRE_SEQ ? 4 : 0));
}

/* Folds the unfolded one's complement sum 'sum' and returns its
 * complement: a checksum field's value, in memory order. */
static __always_inline __u16
ovs_bpf_tnl_fold(__u32 sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (__u16) ~sum;
}

/* The checksum of the 20-byte IPv4 header at 'ip', 2-byte aligned (which
 * must hold its checksum field as is: 0 to compute one, the field to check
 * one): its ten 16-bit words added in the program and folded (RFC 1071),
 * cheaper than a bpf_csum_diff() call for tnl_push's header and tnl_pop's
 * check of every received one. */
static __always_inline __u16
ovs_bpf_tnl_ip_csum(const void *ip)
{
    const __u16 *w = ip;
    __u32 sum = 0;

    for (int i = 0; i < OVS_BPF_TNL_IPV4_HLEN / 2; i++) {
        sum += w[i];
    }
    return ovs_bpf_tnl_fold(sum);
}

/* The checksum of the outer L4 header at 'l4' of 'skb' and what follows it,
 * 'l4_len' bytes (network order), as they are in the packet: for UDP ('udp')
 * with the pseudo-header of the IPv4 or IPv6 header at offset ETH_HLEN (with
 * the upper-layer length 'l4_len'), for GRE without.  A CHECKSUM_PARTIAL
 * packet, whose inner L4 checksum is still to be computed by whoever transmits
 * it, is summed up to the inner L4 header and the rest counted as what it will
 * sum to once its checksum is in, the complement of the pseudo-header sum in
 * its checksum field (the kernel's local checksum offload, lco_csum()).  The
 * sum is taken OVS_BPF_TNL_CSUM_CHUNK bytes at a time, the last chunk padded
 * with zeros: at most OVS_BPF_TNL_CSUM_MAX bytes.  Returns false if the packet
 * is longer or cannot be read.  'verify': the sum is to check a received
 * packet's checksum ('*csump' 0 if it is right). */
#define OVS_BPF_TNL_CSUM_CHUNK 64
#define OVS_BPF_TNL_CSUM_MAX (48 * OVS_BPF_TNL_CSUM_CHUNK)

static __always_inline bool
ovs_bpf_tnl_l4_csum(struct __sk_buff *skb, bool udp, bool ipv6, __u32 l4,
                    __be16 l4_len, bool verify, __u16 *csump)
{
    __u8 chunk[OVS_BPF_TNL_CSUM_CHUNK];
    __u8 ph[40] = { 0 };        /* Pseudo-header. */
    __u16 start, offset, field;
    __u32 sum, end, i;
    bool partial;

    if (!udp) {
        sum = 0;
    } else if (ipv6) {
        if (bpf_skb_load_bytes(skb, ETH_HLEN + 8, ph, 32)) {
            return false;
        }
        __builtin_memcpy(ph + 34, &l4_len, 2);
        ph[39] = IPPROTO_UDP;
        sum = bpf_csum_diff(NULL, 0, (void *) ph, 40, 0);
    } else {
        if (bpf_skb_load_bytes(skb, ETH_HLEN + 12, ph, 8)) {
            return false;
        }
        ph[9] = IPPROTO_UDP;
        __builtin_memcpy(ph + 10, &l4_len, 2);
        sum = bpf_csum_diff(NULL, 0, (void *) ph, 12, 0);
    }

    end = l4 + bpf_ntohs(l4_len);
    partial = ovs_bpf_skb_csum_partial(skb, &start, &offset);
    if (verify && ((partial && start <= l4) || skb->gso_size)) {
        /* The outer checksum itself is still to be computed (a local
         * sender's, offloaded), or is computed for each segment when a GSO
         * packet is segmented (its field holds the pseudo-header sum of
         * the whole): the kernel takes such a packet as checked, and so do
         * we. */
        *csump = 0;
        return true;
    }
    if (partial && start > l4 && start < end && !((start - l4) & 1)) {
        if (bpf_skb_load_bytes(skb, start + offset, &field, 2)) {
            return false;
        }
        sum = bpf_csum_diff(NULL, 0, (void *) &(__u32) { (__u16) ~field },
                            4, sum);
        end = start;
    }
    if (end - l4 > OVS_BPF_TNL_CSUM_MAX) {
        return false;
    }
    for (i = 0; i < OVS_BPF_TNL_CSUM_MAX / OVS_BPF_TNL_CSUM_CHUNK; i++) {
        __u32 off = l4 + i * OVS_BPF_TNL_CSUM_CHUNK;
        __u32 n;

        if (off >= end) {
            break;
        }
        n = end - off;
        if (n > OVS_BPF_TNL_CSUM_CHUNK) {
            n = OVS_BPF_TNL_CSUM_CHUNK;
        }
        __builtin_memset(chunk, 0, sizeof chunk);
        if (n < 1 || bpf_skb_load_bytes(skb, off, chunk, n)) {
            return false;
        }
        sum = bpf_csum_diff(NULL, 0, (void *) chunk, sizeof chunk, sum);
    }
    *csump = ovs_bpf_tnl_fold(sum);
    return true;
}

/* Fills in the L4 header of VXLAN header 'hdr' (UDP, at 'l4', 'l4_len'
 * bytes with what follows, network order): the length and the source port
 * from 'hash'.  Returns true if it asks for a checksum, which it zeroes
 * until the packet is there to compute it. */
static __always_inline bool
ovs_bpf_tnl_push_udp(__u8 *hdr, __u32 l4, __be16 l4_len, __u32 hash)
{
    __u16 sport, udp_csum;

    sport = bpf_htons((__u16) ((((__u64) hash)
                                * (OVS_BPF_TNL_UDP_PORT_MAX
                                   - OVS_BPF_TNL_UDP_PORT_MIN)) >> 32)
                      + OVS_BPF_TNL_UDP_PORT_MIN);
    __builtin_memcpy(&udp_csum, hdr + l4 + 6, 2);
    __builtin_memcpy(hdr + l4, &sport, 2);
    __builtin_memcpy(hdr + l4 + 4, &l4_len, 2);
    __builtin_memset(hdr + l4 + 6, 0, 2);
    return udp_csum != 0;
}

/* OVS_BPF_ACTION_TNL_PUSH, followed by its TNL_HDR slots. */
static __always_inline int
ovs_bpf_act_tnl_push__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       struct ovs_bpf_action *a, __u32 idx)
{
    __u8 hdr[OVS_BPF_TNL_MAX_HDR];
    __u8 inner_eth[ETH_HLEN];
    struct ovs_bpf_action *h;
    __u32 len, rest, n_slots, new_len, l4, l4_hlen;
    __u16 tot_len, l4_len, csum, gre_flags = 0;
    bool ipv6, l3, gre, l4_csum;
    __u64 flags, encap_l4;

    len = a->u.tnl_push.header_len;
    ipv6 = a->u.tnl_push.flags & OVS_BPF_TNL_F_IPV6;
    l3 = a->u.tnl_push.flags & OVS_BPF_TNL_F_L3;
    gre = a->u.tnl_push.tnl_type == OVS_BPF_TNL_GRE;
    l4 = ETH_HLEN + (ipv6 ? OVS_BPF_TNL_IPV6_HLEN : OVS_BPF_TNL_IPV4_HLEN);
    if (s->clone_active || skb->vlan_present
        || !l3 != !skb->cb[OVS_BPF_CB_NO_ETH]
        || (!gre && a->u.tnl_push.tnl_type != OVS_BPF_TNL_VXLAN)
        || len > OVS_BPF_TNL_MAX_HDR
        || len < l4 + OVS_BPF_TNL_GRE_HLEN) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }

    /* The header, from its argument slots. */
    n_slots = len > OVS_BPF_TNL_HDR_SLOT ? 2 : 1;
    h = ovs_bpf_slot(s, idx + 1);
    if (!h || h->type != OVS_BPF_ACTION_TNL_HDR) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }
    __builtin_memcpy(hdr, h->u.raw, OVS_BPF_TNL_HDR_SLOT);
    if (n_slots == 2) {
        h = ovs_bpf_slot(s, idx + 2);
        if (!h || h->type != OVS_BPF_ACTION_TNL_HDR) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
        }
        __builtin_memcpy(hdr + OVS_BPF_TNL_HDR_SLOT, h->u.raw,
                         OVS_BPF_TNL_HDR_SLOT);
    }

    /* The tunnel header's length: VXLAN's fixed, GRE's from its flags
     * (no sequence number: see above). */
    if (l4 > OVS_BPF_TNL_MAX_HDR - OVS_BPF_TNL_UDP_HLEN) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }
    if (gre) {
        __builtin_memcpy(&gre_flags, hdr + l4, 2);
        gre_flags = bpf_ntohs(gre_flags);
        l4_hlen = ovs_bpf_tnl_gre_hlen(gre_flags);
        if (gre_flags & ~(OVS_BPF_TNL_GRE_CSUM | OVS_BPF_TNL_GRE_KEY)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
        }
    } else {
        l4_hlen = OVS_BPF_TNL_UDP_HLEN + OVS_BPF_TNL_VXLAN_HLEN;
    }
    if (len != l4 + l4_hlen) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }

    /* What depends on the packet: the lengths, the IPv4 checksum, the
     * UDP header.  A nonzero UDP checksum in the header (IPv6, or
     * options:csum=true) or GRE's C flag asks for a checksum. */
    new_len = skb->len + len - (l3 ? ETH_HLEN : 0);
    l4_len = bpf_htons(new_len - l4);
    if (ipv6) {
        __builtin_memcpy(hdr + ETH_HLEN + 4, &l4_len, 2);
    } else {
        tot_len = bpf_htons(new_len - ETH_HLEN);
        __builtin_memcpy(hdr + ETH_HLEN + 2, &tot_len, 2);
        __builtin_memset(hdr + ETH_HLEN + 10, 0, 2);
        csum = ovs_bpf_tnl_ip_csum(hdr + ETH_HLEN);
        __builtin_memcpy(hdr + ETH_HLEN + 10, &csum, 2);
    }
    if (gre) {
        l4_csum = gre_flags & OVS_BPF_TNL_GRE_CSUM;
        encap_l4 = BPF_F_ADJ_ROOM_ENCAP_L4_GRE;
    } else {
        l4_csum = ovs_bpf_tnl_push_udp(hdr, l4, l4_len,
                                       bpf_get_hash_recalc(skb));
        encap_l4 = BPF_F_ADJ_ROOM_ENCAP_L4_UDP;
    }
    if (l4_csum && skb->gso_size) {
        /* The segments would need their own checksums, which the tunnel
         * segmentation computes only for SKB_GSO_UDP_TUNNEL_CSUM or
         * SKB_GSO_GRE_CSUM, which no helper sets. */
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }

    /* Room, then the header.  Verifier: the store's length is provably in
     * [1, OVS_BPF_TNL_MAX_HDR - ETH_HLEN]. */
    rest = len - ETH_HLEN;
    if (rest > OVS_BPF_TNL_MAX_HDR - ETH_HLEN || rest < 1) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }
    if (l3) {
        /* After the BPF pop_eth (VXLAN-GPE or GRE carrying IPv4 or IPv6,
         * which pop_eth checked): the Ethernet header still in front of
         * the network header is a stand-in that the outer one replaces. */
        flags = ((ipv6 ? BPF_F_ADJ_ROOM_ENCAP_L3_IPV6
                       : BPF_F_ADJ_ROOM_ENCAP_L3_IPV4)
                 | encap_l4);
        if (bpf_skb_adjust_room(skb, rest, BPF_ADJ_ROOM_MAC, flags)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
        }
        skb->cb[OVS_BPF_CB_NO_ETH] = 0;
    } else if ((skb->protocol == bpf_htons(ETH_P_IP)
                || skb->protocol == bpf_htons(ETH_P_IPV6))
               && s->l3_ofs == ETH_HLEN) {
        flags = ((ipv6 ? BPF_F_ADJ_ROOM_ENCAP_L3_IPV6
                       : BPF_F_ADJ_ROOM_ENCAP_L3_IPV4)
                 | encap_l4
                 | BPF_F_ADJ_ROOM_ENCAP_L2_ETH
                 | BPF_F_ADJ_ROOM_ENCAP_L2(ETH_HLEN));
        if (bpf_skb_load_bytes(skb, 0, inner_eth, ETH_HLEN)
            || bpf_skb_adjust_room(skb, len, BPF_ADJ_ROOM_MAC, flags)
            || bpf_skb_store_bytes(skb, len, inner_eth, ETH_HLEN,
                                   BPF_F_RECOMPUTE_CSUM)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
        }
    } else if (skb->gso_size
               || bpf_skb_change_head(skb, len, 0)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }
    if (bpf_skb_store_bytes(skb, 0, hdr, ETH_HLEN, 0)
        || bpf_skb_store_bytes(skb, ETH_HLEN, hdr + ETH_HLEN, rest,
                               BPF_F_RECOMPUTE_CSUM)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
    }
    if (l4_csum) {
        /* UDP's at offset 6, GRE's right after its 4 bytes; a UDP
         * checksum of 0 would say "none". */
        if (!ovs_bpf_tnl_l4_csum(skb, !gre, ipv6, l4, l4_len, false,
                                 &csum)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
        }
        if (!csum && !gre) {
            csum = 0xffff;
        }
        if (bpf_skb_store_bytes(skb, l4 + (gre ? OVS_BPF_TNL_GRE_HLEN : 6),
                                &csum, 2, BPF_F_RECOMPUTE_CSUM)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_PUSH);
        }
    }

    /* The key still describes the inner packet; no set action of ours
     * follows a tnl_push (the translator sees to it). */
    s->l3_ofs = ETH_HLEN;
    s->l4_ofs = 0;
    return ovs_bpf_run_actions(skb, s, idx + 1 + n_slots);
}

/* Copies the 40 bytes behind the Ethernet header of 'skb' into 'ip' and
 * the 30 at 'l4' (UDP, VXLAN, inner Ethernet, or GRE with its options and
 * the start of what it carries) into 'buf', both 8-byte
 * aligned, by direct packet access, if the linear data holds them (as it
 * does for what a NIC or a veth hands over): plain loads instead of two
 * bpf_skb_load_bytes() calls per received packet.  Returns false, having
 * copied nothing, if it does not. */
static __always_inline bool
ovs_bpf_tnl_pop_read(struct __sk_buff *skb, __u32 l4, __u8 *ip, __u8 *buf)
{
    __u8 *data = (void *) (long) skb->data;
    __u8 *end = (void *) (long) skb->data_end;
    __u8 *udp;

    if (l4 > ETH_HLEN + OVS_BPF_TNL_IPV6_HLEN) {
        return false;           /* For the verifier: it cannot be. */
    }
    udp = data + l4;
    if (data + ETH_HLEN + OVS_BPF_TNL_IPV6_HLEN > end
        || udp + OVS_BPF_TNL_UDP_HLEN + OVS_BPF_TNL_VXLAN_HLEN + ETH_HLEN
           > end) {
        return false;
    }
    for (int i = 0; i < OVS_BPF_TNL_IPV6_HLEN; i += 8) {
        *(__u64 *) (ip + i) = *(__u64 *) (data + ETH_HLEN + i);
    }
    for (int i = 0; i < 24; i += 8) {
        *(__u64 *) (buf + i) = *(__u64 *) (udp + i);
    }
    *(__u32 *) (buf + 24) = *(__u32 *) (udp + 24);
    *(__u16 *) (buf + 28) = *(__u16 *) (udp + 28);
    return true;
}

/* tnl_pop's part for a VXLAN port: checks the UDP and VXLAN headers in
 * 'buf' (read at 'l4' of 'skb', 'l3_len' bytes of IP payload, network
 * order) and fills the key's VNI, UDP ports and flags.  Returns the length
 * of both headers, with '*l3_type' the ethertype of what follows if it is
 * a layer 3 packet (VXLAN-GPE) or 0 for Ethernet, or 0 after storing in
 * '*drop' why the packet is dropped. */
static __always_inline __u32
ovs_bpf_tnl_pop_vxlan(struct __sk_buff *skb, struct ovs_bpf_flow_key *k,
                      bool ipv6, __u32 l4, __be16 l3_len, const __u8 *buf,
                      __be16 *l3_type, __u32 *drop)
{
    const __u32 vx = OVS_BPF_TNL_UDP_HLEN;
    __be16 udp_csum, udp_len;
    __be32 vx_flags, vni;
    __u32 flags;
    __u16 csum;

    /* The UDP datagram within the IP payload holds its headers. */
    __builtin_memcpy(&udp_len, buf + 4, 2);
    if (bpf_ntohs(udp_len) > bpf_ntohs(l3_len)
        || bpf_ntohs(udp_len) < (OVS_BPF_TNL_UDP_HLEN
                                 + OVS_BPF_TNL_VXLAN_HLEN + ETH_HLEN)) {
        *drop = OVS_BPF_DROP_TNL_POP_SHORT;
        return 0;
    }

    /* A UDP checksum, if there is one, must be right. */
    __builtin_memcpy(&udp_csum, buf + 6, 2);
    if (udp_csum
        && (!ovs_bpf_tnl_l4_csum(skb, true, ipv6, l4, udp_len, true, &csum)
            || csum)) {
        *drop = OVS_BPF_DROP_TNL_POP_BAD;
        return 0;
    }

    /* VXLAN: the I flag and nothing else, the reserved byte after the VNI
     * zero.  VXLAN-GPE (the P flag), as netdev-native-tnl takes it on any
     * VXLAN port: not an OAM packet, version 0, a next protocol in the
     * last byte of the word of flags, which it otherwise ignores.  GPE's
     * IPv4 or IPv6 packets are layer 3 packets, for ovs-vswitchd; its
     * Ethernet frames are popped as VXLAN's. */
    __builtin_memcpy(&vx_flags, buf + vx, 4);
    __builtin_memcpy(&vni, buf + vx + 4, 4);
    flags = bpf_ntohl(vx_flags);
    *l3_type = 0;
    if (flags & OVS_BPF_TNL_GPE_FLAG) {
        if (flags & OVS_BPF_TNL_GPE_OAM) {
            *drop = OVS_BPF_DROP_TNL_POP_BAD;
            return 0;
        }
        switch (flags & 0xff) {
        case OVS_BPF_TNL_GPE_NP_IPV4:
            *l3_type = bpf_htons(ETH_P_IP);
            break;
        case OVS_BPF_TNL_GPE_NP_IPV6:
            *l3_type = bpf_htons(ETH_P_IPV6);
            break;
        case OVS_BPF_TNL_GPE_NP_ETHERNET:
            break;
        default:
            /* NSH: the layer 3 path of ovs-vswitchd takes IP only. */
            *drop = OVS_BPF_DROP_TNL_POP_BAD;
            return 0;
        }
        flags &= ~(OVS_BPF_TNL_GPE_FLAG | 0xff);
    }
    if (flags != OVS_BPF_TNL_VXLAN_FLAGS || vni & bpf_htonl(0xff)) {
        *drop = OVS_BPF_DROP_TNL_POP_BAD;
        return 0;
    }

    k->tun_id = bpf_cpu_to_be64((__u64) (bpf_ntohl(vni) >> 8));
    __builtin_memcpy(&k->tun_tp_src, buf, 2);
    __builtin_memcpy(&k->tun_tp_dst, buf + 2, 2);
    k->tun_flags = bpf_htons(OVS_BPF_FLOW_TNL_F_KEY
                             | (udp_csum ? OVS_BPF_FLOW_TNL_F_CSUM : 0));
    return OVS_BPF_TNL_UDP_HLEN + OVS_BPF_TNL_VXLAN_HLEN;
}

/* tnl_pop's part for a GRE port, as ovs_bpf_tnl_pop_vxlan() for VXLAN:
 * the flags C, K and S only (version 0, no routing), a right checksum
 * with C, the key as tun_id with K; Ethernet (TEB) inside, or IPv4 or
 * IPv6 (a layer 3 packet).  No UDP ports. */
static __always_inline __u32
ovs_bpf_tnl_pop_gre(struct __sk_buff *skb, struct ovs_bpf_flow_key *k,
                    bool ipv6, __u32 l4, __be16 l3_len, const __u8 *buf,
                    __be16 *l3_type, __u32 *drop)
{
    __be16 gre_flags, proto;
    __u32 hlen, flags;
    __be32 key;
    __u16 csum;

    __builtin_memcpy(&gre_flags, buf, 2);
    __builtin_memcpy(&proto, buf + 2, 2);
    flags = bpf_ntohs(gre_flags);
    if (flags & ~(OVS_BPF_TNL_GRE_CSUM | OVS_BPF_TNL_GRE_KEY
                  | OVS_BPF_TNL_GRE_SEQ)) {
        *drop = OVS_BPF_DROP_TNL_POP_BAD;
        return 0;
    }
    hlen = ovs_bpf_tnl_gre_hlen(flags);
    *l3_type = 0;
    if (proto == bpf_htons(ETH_P_IP) || proto == bpf_htons(ETH_P_IPV6)) {
        *l3_type = proto;
    } else if (proto != bpf_htons(OVS_BPF_TNL_ETH_P_TEB)) {
        *drop = OVS_BPF_DROP_TNL_POP_BAD;
        return 0;
    }
    if (bpf_ntohs(l3_len) < hlen + (*l3_type ? 0 : ETH_HLEN)) {
        *drop = OVS_BPF_DROP_TNL_POP_SHORT;
        return 0;
    }
    if (flags & OVS_BPF_TNL_GRE_CSUM
        && (!ovs_bpf_tnl_l4_csum(skb, false, ipv6, l4, l3_len, true, &csum)
            || csum)) {
        *drop = OVS_BPF_DROP_TNL_POP_BAD;
        return 0;
    }

    if (flags & OVS_BPF_TNL_GRE_KEY) {
        if (flags & OVS_BPF_TNL_GRE_CSUM) {
            __builtin_memcpy(&key, buf + 8, 4);
        } else {
            __builtin_memcpy(&key, buf + 4, 4);
        }
        k->tun_id = bpf_cpu_to_be64((__u64) bpf_ntohl(key));
    }
    k->tun_flags = bpf_htons((flags & OVS_BPF_TNL_GRE_KEY
                              ? OVS_BPF_FLOW_TNL_F_KEY : 0)
                             | (flags & OVS_BPF_TNL_GRE_CSUM
                                ? OVS_BPF_FLOW_TNL_F_CSUM : 0));
    return hlen;
}

/* OVS_BPF_ACTION_TNL_POP. */
static __always_inline int
ovs_bpf_act_tnl_pop__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                      struct ovs_bpf_action *a, __u32 idx)
{
    /* UDP, VXLAN and inner Ethernet headers, or GRE with its options and
     * the start of what it carries. */
    __u8 buf[OVS_BPF_TNL_UDP_HLEN + OVS_BPF_TNL_VXLAN_HLEN + ETH_HLEN]
        __attribute__((aligned(8)));
    __u8 ip[OVS_BPF_TNL_IPV6_HLEN] __attribute__((aligned(8)));
    __u8 inner_eth[ETH_HLEN];
    struct ovs_bpf_flow_key *k = &s->key;
    __u32 port = a->u.tnl_pop.port;
    struct ovs_bpf_port *p;
    __be16 inner_type, l3_len;
    __u32 l4, l3_room, rest, min, pad, hlen, drop, proto;
    __be16 l3_type = 0;
    __u64 decap = 0;
    bool ipv6, gre;

    p = bpf_map_lookup_elem(&ports, &port);
    ipv6 = k->eth_type == bpf_htons(ETH_P_IPV6);
    if (!p || !(p->flags & OVS_BPF_PORT_F_TUNNEL) || s->clone_active
        || skb->vlan_present || s->l3_ofs != ETH_HLEN
        || (k->eth_type != bpf_htons(ETH_P_IP) && !ipv6)) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_POP);
    }
    gre = p->flags & OVS_BPF_PORT_F_GRE;
    proto = gre ? IPPROTO_GRE : IPPROTO_UDP;
    l4 = ETH_HLEN + (ipv6 ? OVS_BPF_TNL_IPV6_HLEN : OVS_BPF_TNL_IPV4_HLEN);
    if (skb->len < l4 + sizeof buf) {
        return ovs_bpf_drop(OVS_BPF_DROP_TNL_POP_SHORT);
    }
    if (!ovs_bpf_tnl_pop_read(skb, l4, ip, buf)
        && (bpf_skb_load_bytes(skb, ETH_HLEN, ip, sizeof ip)
            || bpf_skb_load_bytes(skb, l4, buf, sizeof buf))) {
        return ovs_bpf_drop(OVS_BPF_DROP_TNL_POP_SHORT);
    }

    if (ipv6) {
        /* IPv6 without extension headers, then UDP or GRE. */
        __builtin_memcpy(&l3_len, ip + 4, 2);
        l3_room = skb->len - l4;
        if ((ip[0] >> 4) != 6 || ip[6] != proto) {
            return ovs_bpf_drop(OVS_BPF_DROP_TNL_POP_BAD);
        }
    } else {
        /* IPv4: version 4 without options, a good checksum, not a
         * fragment, UDP or GRE. */
        __builtin_memcpy(&l3_len, ip + 2, 2);
        l3_len = bpf_htons(bpf_ntohs(l3_len) - OVS_BPF_TNL_IPV4_HLEN);
        l3_room = skb->len - l4;
        if (ip[0] != 0x45 || ovs_bpf_tnl_ip_csum(ip)
            || (ip[6] & 0x3f) || ip[7] || ip[9] != proto) {
            return ovs_bpf_drop(OVS_BPF_DROP_TNL_POP_BAD);
        }
    }
    /* What the IP header says is in the packet.  (A wrapped IPv4 total
     * length, below 20, is above the room.) */
    if (bpf_ntohs(l3_len) > l3_room) {
        return ovs_bpf_drop(OVS_BPF_DROP_TNL_POP_SHORT);
    }

    /* The tunnel metadata, as netdev-native-tnl fills it; conntrack state
     * does not go through a tunnel.  (Zeroed before the checks of the
     * tunnel header, which fill in its part: a packet that fails them is
     * dropped.) */
    ovs_bpf_key_zero(k, OVS_BPF_KEY_CT_TUN_OFS, sizeof *k);
    drop = OVS_BPF_DROP_INTERNAL;
    hlen = (gre
            ? ovs_bpf_tnl_pop_gre(skb, k, ipv6, l4, l3_len, buf, &l3_type,
                                  &drop)
            : ovs_bpf_tnl_pop_vxlan(skb, k, ipv6, l4, l3_len, buf,
                                    &l3_type, &drop));
    if (!hlen) {
        return ovs_bpf_drop(drop);
    }
    if (ipv6) {
        __builtin_memcpy(k->tun_ipv6_src, ip + 8, 16);
        __builtin_memcpy(k->tun_ipv6_dst, ip + 24, 16);
        k->tun_tos = (ip[0] << 4) | (ip[1] >> 4);
        k->tun_ttl = ip[7];
    } else {
        __builtin_memcpy(&k->tun_ipv4_src, ip + 12, 4);
        __builtin_memcpy(&k->tun_ipv4_dst, ip + 16, 4);
        k->tun_tos = ip[1];
        k->tun_ttl = ip[8];
    }
    k->in_port = port;

    if (l3_type) {
        /* A layer 3 packet, which the BPF flow key cannot describe: up to
         * ovs-vswitchd, from its network header, as one that a layer 3
         * port's device received (see ovs_bpf_l3_upcall()). */
        return ovs_bpf_l3_upcall(skb, s, l3_type, l4 + hlen);
    }

    /* Off with the headers: the inner Ethernet header replaces the outer
     * one.  The GSO size is the inner packet's already.  (One constant
     * offset per tunnel header length for the verifier.) */
    switch (hlen) {
    case 4:
        __builtin_memcpy(inner_eth, buf + 4, ETH_HLEN);
        break;
    case 8:
        __builtin_memcpy(inner_eth, buf + 8, ETH_HLEN);
        break;
    case 12:
        __builtin_memcpy(inner_eth, buf + 12, ETH_HLEN);
        break;
    case 16:
        __builtin_memcpy(inner_eth, buf + 16, ETH_HLEN);
        break;
    default:
        return ovs_bpf_drop(OVS_BPF_DROP_INTERNAL);
    }
    __builtin_memcpy(&inner_type, inner_eth + 12, 2);
    if (inner_type == bpf_htons(ETH_P_IP)) {
        decap = BPF_F_ADJ_ROOM_DECAP_L3_IPV4;
    } else if (inner_type == bpf_htons(ETH_P_IPV6)) {
        decap = BPF_F_ADJ_ROOM_DECAP_L3_IPV6;
    }
    /* bpf_skb_adjust_room() refuses to leave less than an IP header of
     * the skb's protocol behind the MAC header: an inner frame shorter
     * than that (ARP over IPv6) gets zeros at its end first, taken off
     * again after. */
    rest = skb->len - (l4 + hlen + ETH_HLEN);
    min = ipv6 ? OVS_BPF_TNL_IPV6_HLEN : OVS_BPF_TNL_IPV4_HLEN;
    pad = rest < min ? min - rest : 0;
    if ((pad && bpf_skb_change_tail(skb, skb->len + pad, 0))
        || bpf_skb_adjust_room(skb, -(__s32) (l4 + hlen), BPF_ADJ_ROOM_MAC,
                               BPF_F_ADJ_ROOM_FIXED_GSO | decap)
        || bpf_skb_store_bytes(skb, 0, inner_eth, ETH_HLEN, 0)
        || (pad && bpf_skb_change_tail(skb, skb->len - pad, 0))) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_TNL_POP);
    }

    /* Looked up again, as a recirculation with the same recirc_id. */
    return ovs_bpf_recirc(skb, s, s->key.recirc_id);
}

#endif /* BPF_ACTIONS_TNL_H */
