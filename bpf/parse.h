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

/* The packet parser: fills the packet fields of a struct ovs_bpf_flow_key
 * exactly as OVS's miniflow_extract() (lib/flow.c) fills struct flow for
 * the same bytes, including its handling of short and malformed packets:
 * a header that fails OVS's sanity checks ends the parse, and the fields
 * parsed so far stay in the key.  The comments name the OVS behaviour each
 * branch reproduces.
 *
 * All reads are direct packet accesses.  When a header lies beyond the
 * linear part of the skb (but within the packet), the parser reports
 * OVS_BPF_PARSE_NEED_PULL and the caller pulls and parses again, so the
 * common, linear case never pays for bpf_skb_pull_data(). */

#ifndef BPF_PARSE_H
#define BPF_PARSE_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/maps.h"

#define OVS_BPF_VLAN_CFI 0x1000
#define OVS_BPF_ETH_TYPE_MIN 0x600      /* Below: an 802.3 length. */
#define OVS_BPF_DL_TYPE_NONE 0x5ff      /* OVS's FLOW_DL_TYPE_NONE. */
#define OVS_BPF_ETH_P_RARP 0x8035
#define OVS_BPF_FRAG_ANY 1              /* FLOW_NW_FRAG_ANY. */
#define OVS_BPF_FRAG_LATER 2            /* FLOW_NW_FRAG_LATER. */

#define OVS_BPF_IPPROTO_HOPOPTS 0
#define OVS_BPF_IPPROTO_ROUTING 43
#define OVS_BPF_IPPROTO_FRAGMENT 44
#define OVS_BPF_IPPROTO_ICMPV6 58
#define OVS_BPF_IPPROTO_DSTOPTS 60
#define OVS_BPF_ND_NEIGHBOR_SOLICIT 135
#define OVS_BPF_ND_NEIGHBOR_ADVERT 136
#define OVS_BPF_ND_OPT_SOURCE_LINKADDR 1
#define OVS_BPF_ND_OPT_TARGET_LINKADDR 2

/* Bounds that keep the verifier's path count finite.  A packet that needs
 * more than these cannot be parsed completely, so its key would differ from
 * the one ovs-vswitchd computes, and a megaflow installed for another
 * packet could match that partial key (an OpenFlow rule on the fields not
 * parsed would be bypassed).  So such a packet is never looked up: the
 * parse ends with OVS_BPF_PARSE_INCOMPLETE, the packet goes up as a miss
 * (counted as OVS_BPF_STAT_PARSE_INCOMPLETE) and ovs-vswitchd decides with
 * the full key.
 *
 *  - OVS_BPF_PARSE_MAX_OFF: deepest header offset read, in bytes.
 *  - OVS_BPF_MAX_IPV6_EXT: IPv6 extension headers (OVS has no limit).
 *  - OVS_BPF_MAX_ND_OPTS: ND options scanned (OVS has no limit). */
#define OVS_BPF_PARSE_MAX_OFF 2048
#define OVS_BPF_MAX_IPV6_EXT 8
#define OVS_BPF_MAX_ND_OPTS 16

/* The number of VLAN headers the parser decodes (1 or 2; 0 means 2): OVS's
 * flow_vlan_limit (other_config:vlan-limit, 1 by default), which
 * ovs-vswitchd's flow_extract() applies to the packets it receives in
 * upcalls.  The BPF key must decode as many tags, or the megaflows
 * installed for multi-tagged packets would never match in BPF.  A .rodata
 * constant (defined in datapath.bpf.c) that the loader sets before loading
 * the object, so that the verifier prunes the branch not taken. */
extern const volatile __u32 ovs_bpf_vlan_limit;

/* Bytes bpf_skb_pull_data() makes linear when the headers were not. */
#define OVS_BPF_PARSE_PULL_LEN (OVS_BPF_PARSE_MAX_OFF + 128)

enum ovs_bpf_parse_result {
    OVS_BPF_PARSE_OK,
    OVS_BPF_PARSE_NEED_PULL,    /* Headers beyond the linear data. */
    OVS_BPF_PARSE_INCOMPLETE,   /* Stopped at a bound: the key is partial. */
    OVS_BPF_PARSE_FAILED,       /* Could not make the headers linear. */
};

struct ovs_bpf_parser {
    void *data;
    void *data_end;
    bool need_pull;
    bool incomplete;            /* A bound stopped the parse. */
};

static __always_inline enum ovs_bpf_parse_result
ovs_bpf_parser_result(const struct ovs_bpf_parser *p)
{
    return (p->need_pull ? OVS_BPF_PARSE_NEED_PULL
            : p->incomplete ? OVS_BPF_PARSE_INCOMPLETE
            : OVS_BPF_PARSE_OK);
}

/* Returns a pointer to 'len' bytes at 'off' of the packet, or NULL if they
 * are not in the linear data or lie beyond OVS_BPF_PARSE_MAX_OFF.  Callers
 * check first, like OVS, that the bytes are within the packet (or the L3
 * payload), so NULL here means "not linear" (the parse is retried after a
 * pull) or "too deep" (the parse is incomplete).
 *
 * Verifier: 'off' is bounded by OVS_BPF_PARSE_MAX_OFF before it is added
 * to the packet pointer (a packet pointer plus an unbounded scalar is
 * rejected), and the comparison with data_end is done on the same pointer
 * that is returned, so the verifier marks exactly that range readable. */
static __always_inline void *
ovs_bpf_pkt_ptr(struct ovs_bpf_parser *p, __u32 off, __u32 len)
{
    void *ptr;

    if (off > OVS_BPF_PARSE_MAX_OFF) {
        p->incomplete = true;
        return NULL;
    }
    ptr = p->data + off;
    if (ptr + len > p->data_end) {
        p->need_pull = true;
        return NULL;
    }
    return ptr;
}

static __always_inline bool
ovs_bpf_eth_type_vlan(__be16 type)
{
    return type == bpf_htons(ETH_P_8021Q) || type == bpf_htons(ETH_P_8021AD);
}

/* The IPv6 extension headers OVS steps over. */
static __always_inline bool
ovs_bpf_ipv6_is_ext(__u8 nw_proto)
{
    return nw_proto == OVS_BPF_IPPROTO_HOPOPTS
           || nw_proto == OVS_BPF_IPPROTO_ROUTING
           || nw_proto == OVS_BPF_IPPROTO_DSTOPTS
           || nw_proto == IPPROTO_AH
           || nw_proto == OVS_BPF_IPPROTO_FRAGMENT;
}

static __always_inline bool
ovs_bpf_mac_is_zero(const __u8 *mac)
{
    return !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]);
}

/* ICMPv6 neighbour discovery after the 8-byte ICMPv6 header at 'off':
 * OVS's parse_icmpv6().  Fills 'nd_target', 'arp_sha', 'arp_tha' and
 * 'tcp_flags' (OVS keeps the type of the first link-layer address option
 * there, as the ND "options type"). */
static __always_inline void
ovs_bpf_parse_nd(struct ovs_bpf_parser *p, struct ovs_bpf_flow_key *key,
                 __u32 off, __u32 size)
{
    __u8 opt_type = 0;
    __u8 *target;
    int i;

    if (size < 16) {
        return;                 /* Truncated target: no target, no opts. */
    }
    target = ovs_bpf_pkt_ptr(p, off, 16);
    if (!target) {
        return;
    }
    __builtin_memcpy(key->nd_target, target, 16);
    off += 16;
    size -= 16;

    for (i = 0; i < OVS_BPF_MAX_ND_OPTS; i++) {
        __u8 *opt;
        __u32 opt_len;

        if (size < 8) {
            break;
        }
        opt = ovs_bpf_pkt_ptr(p, off, 8);
        if (!opt) {
            break;
        }
        opt_len = opt[1] * 8;
        if (!opt_len || opt_len > size) {
            break;
        }
        if (opt[0] == OVS_BPF_ND_OPT_SOURCE_LINKADDR && opt_len == 8) {
            if (!ovs_bpf_mac_is_zero(key->arp_sha)) {
                goto invalid;   /* The same option twice. */
            }
            __builtin_memcpy(key->arp_sha, opt + 2, 6);
            if (!opt_type) {
                opt_type = opt[0];
            }
        } else if (opt[0] == OVS_BPF_ND_OPT_TARGET_LINKADDR
                   && opt_len == 8) {
            if (!ovs_bpf_mac_is_zero(key->arp_tha)) {
                goto invalid;
            }
            __builtin_memcpy(key->arp_tha, opt + 2, 6);
            if (!opt_type) {
                opt_type = opt[0];
            }
        }
        off += opt_len;
        size -= opt_len;
    }
    if (i == OVS_BPF_MAX_ND_OPTS && size >= 8) {
        p->incomplete = true;   /* OVS would scan more options. */
    }
    key->tcp_flags = bpf_htons(opt_type);
    return;

invalid:
    /* As OVS: forget the target and the addresses, keep the options
     * type. */
    __builtin_memset(key->nd_target, 0, 16);
    __builtin_memset(key->arp_sha, 0, 6);
    __builtin_memset(key->arp_tha, 0, 6);
    key->tcp_flags = bpf_htons(opt_type);
}

/* The transport header at 'off', 'size' bytes of L3 payload.  Returns
 * OVS_BPF_PARSE_NEED_PULL if a header is beyond the linear data,
 * OVS_BPF_PARSE_INCOMPLETE if one is beyond a bound of the parser.
 *
 * Verifier: a global (non-static, noinline) function is verified once, on
 * its own, with 'off' and 'size' unknown.  Inlined, the ND option loop
 * would be verified again for every path through the VLAN, ethertype and
 * IPv6 extension header code, which exceeds the 1M instruction budget. */
__attribute__((noinline)) int
ovs_bpf_parse_l4(struct __sk_buff *skb, struct ovs_bpf_flow_key *key,
                 __u32 off, __u32 size)
{
    struct ovs_bpf_parser p = {
        .data = (void *) (long) skb->data,
        .data_end = (void *) (long) skb->data_end,
    };
    __u8 *l4;

    if (!key) {
        return OVS_BPF_PARSE_OK;
    }
    switch (key->nw_proto) {
    case IPPROTO_TCP:
        if (size >= 20) {
            __u32 hdr_len;

            l4 = ovs_bpf_pkt_ptr(&p, off, 20);
            if (!l4) {
                break;
            }
            hdr_len = (l4[12] >> 4) * 4;
            if (hdr_len >= 20 && size >= hdr_len) {
                key->tp_src = *(__be16 *) l4;
                key->tp_dst = *(__be16 *) (l4 + 2);
                key->tcp_flags = *(__be16 *) (l4 + 12)
                                 & bpf_htons(0x0fff);
            }
        }
        break;
    case IPPROTO_UDP:
    case IPPROTO_SCTP:
        /* Both start with the two ports; SCTP needs its 12-byte common
         * header, UDP its 8 bytes. */
        if (size >= (key->nw_proto == IPPROTO_UDP ? 8 : 12)) {
            l4 = ovs_bpf_pkt_ptr(&p, off, 4);
            if (!l4) {
                break;
            }
            key->tp_src = *(__be16 *) l4;
            key->tp_dst = *(__be16 *) (l4 + 2);
        }
        break;
    case IPPROTO_ICMP:
    case IPPROTO_IGMP:
        /* Type and code in the low byte of tp_src and tp_dst.  (OVS also
         * keeps the IGMP group, which this key has no field for: the
         * translator rejects masks on it.) */
        if (size >= 8) {
            l4 = ovs_bpf_pkt_ptr(&p, off, 2);
            if (!l4) {
                break;
            }
            key->tp_src = bpf_htons(l4[0]);
            key->tp_dst = bpf_htons(l4[1]);
        }
        break;
    case OVS_BPF_IPPROTO_ICMPV6:
        if (size >= 8) {
            l4 = ovs_bpf_pkt_ptr(&p, off, 2);
            if (!l4) {
                break;
            }
            key->tp_src = bpf_htons(l4[0]);
            key->tp_dst = bpf_htons(l4[1]);
            if (l4[1] == 0 && (l4[0] == OVS_BPF_ND_NEIGHBOR_SOLICIT
                               || l4[0] == OVS_BPF_ND_NEIGHBOR_ADVERT)) {
                ovs_bpf_parse_nd(&p, key, off + 8, size - 8);
            }
        }
        break;
    }
    return ovs_bpf_parser_result(&p);
}

/* Parses the packet of 'skb' into the packet fields of 'key' (which the
 * caller has zeroed, metadata aside) and records the L3/L4 offsets in
 * 's'.  Returns OVS_BPF_PARSE_OK, OVS_BPF_PARSE_NEED_PULL or
 * OVS_BPF_PARSE_INCOMPLETE. */
static __always_inline enum ovs_bpf_parse_result
ovs_bpf_parse(struct __sk_buff *skb, struct ovs_bpf_flow_key *key,
              struct ovs_bpf_scratch *s)
{
    struct ovs_bpf_parser p = {
        .data = (void *) (long) skb->data,
        .data_end = (void *) (long) skb->data_end,
    };
    int vlan_limit = ovs_bpf_vlan_limit == 1 ? 1 : 2;
    __u32 size = skb->len;
    __u32 off = 12;
    __be16 eth_type;
    __u8 *hdr;
    int n_vlans = 0;
    int i;

    s->l3_ofs = 0;
    s->l4_ofs = 0;
    s->ipv6_rh = 0;

    /* OVS: a packet shorter than an Ethernet header has metadata only. */
    if (size < ETH_HLEN) {
        return OVS_BPF_PARSE_OK;
    }
    hdr = ovs_bpf_pkt_ptr(&p, 0, ETH_HLEN);
    if (!hdr) {
        return OVS_BPF_PARSE_NEED_PULL;
    }
    __builtin_memcpy(key->eth_dst, hdr, 6);
    __builtin_memcpy(key->eth_src, hdr + 6, 6);
    size -= 12;

    /* VLAN.  The kernel has usually moved the outer tag of the packet to
     * skb metadata before TC ingress (skb_vlan_untag()); that tag is the
     * outermost one, so it goes first. */
    if (skb->vlan_present) {
        key->vlans[0].tpid = (__be16) skb->vlan_proto;
        key->vlans[0].tci = bpf_htons((__u16) skb->vlan_tci
                                      | OVS_BPF_VLAN_CFI);
        n_vlans = 1;
    }
    /* OVS's parse_vlan(): a tag needs 4 bytes plus the next ethertype. */
#pragma unroll
    for (i = 0; i < 2; i++) {
        __be16 *tag;

        if (n_vlans >= vlan_limit || size < 6) {
            break;
        }
        tag = ovs_bpf_pkt_ptr(&p, off, 4);
        if (!tag) {
            return OVS_BPF_PARSE_NEED_PULL;
        }
        if (!ovs_bpf_eth_type_vlan(tag[0])) {
            break;
        }
        /* Verifier: "& 1" is a no-op here (n_vlans < 2) that lets the
         * verifier see the array index in bounds on every path. */
        key->vlans[n_vlans & 1].tpid = tag[0];
        key->vlans[n_vlans & 1].tci = tag[1] | bpf_htons(OVS_BPF_VLAN_CFI);
        n_vlans++;
        off += 4;
        size -= 4;
    }

    /* OVS's parse_ethertype(): 802.3 lengths, LLC/SNAP. */
    hdr = ovs_bpf_pkt_ptr(&p, off, 2);
    if (!hdr) {
        return OVS_BPF_PARSE_NEED_PULL;
    }
    eth_type = *(__be16 *) hdr;
    off += 2;
    size -= 2;
    if (bpf_ntohs(eth_type) < OVS_BPF_ETH_TYPE_MIN) {
        eth_type = bpf_htons(OVS_BPF_DL_TYPE_NONE);
        if (size >= 8) {
            hdr = ovs_bpf_pkt_ptr(&p, off, 8);
            if (!hdr) {
                return OVS_BPF_PARSE_NEED_PULL;
            }
            if (hdr[0] == 0xaa && hdr[1] == 0xaa && hdr[2] == 0x03
                && !hdr[3] && !hdr[4] && !hdr[5]) {
                __be16 snap_type = *(__be16 *) (hdr + 6);

                off += 8;
                size -= 8;
                if (bpf_ntohs(snap_type) >= OVS_BPF_ETH_TYPE_MIN) {
                    eth_type = snap_type;
                }
            }
        }
    }
    key->eth_type = eth_type;
    s->l3_ofs = off;

    if (eth_type == bpf_htons(ETH_P_IP)) {
        __u32 ip_len, tot_len;
        __u16 frag_off;

        /* OVS's ipv4_sanity_check(): on failure, no L3 fields at all. */
        if (size < 20) {
            goto out;
        }
        hdr = ovs_bpf_pkt_ptr(&p, off, 20);
        if (!hdr) {
            goto out;
        }
        ip_len = (hdr[0] & 0x0f) * 4;
        tot_len = bpf_ntohs(*(__be16 *) (hdr + 2));
        if (ip_len < 20 || size < ip_len
            || tot_len > size || ip_len > tot_len) {
            goto out;
        }
        size = tot_len;             /* Never parse the L2 padding. */

        key->ipv4_src = *(__be32 *) (hdr + 12);
        key->ipv4_dst = *(__be32 *) (hdr + 16);
        key->nw_tos = hdr[1];
        key->nw_ttl = hdr[8];
        key->nw_proto = hdr[9];
        frag_off = bpf_ntohs(*(__be16 *) (hdr + 6));
        if (frag_off & 0x3fff) {            /* MF or an offset. */
            key->nw_frag = OVS_BPF_FRAG_ANY;
            if (frag_off & 0x1fff) {
                key->nw_frag |= OVS_BPF_FRAG_LATER;
            }
        }
        off += ip_len;
        size -= ip_len;
    } else if (eth_type == bpf_htons(ETH_P_IPV6)) {
        __u8 nw_proto, nw_frag = 0;
        __be32 tc_flow;
        __u32 plen;

        /* OVS's ipv6_sanity_check(). */
        if (size < 40) {
            goto out;
        }
        hdr = ovs_bpf_pkt_ptr(&p, off, 40);
        if (!hdr) {
            goto out;
        }
        plen = bpf_ntohs(*(__be16 *) (hdr + 4));
        if (plen + 40 > size) {
            goto out;
        }
        __builtin_memcpy(key->ipv6_src, hdr + 8, 16);
        __builtin_memcpy(key->ipv6_dst, hdr + 24, 16);
        tc_flow = *(__be32 *) hdr;
        nw_proto = hdr[6];
        off += 40;
        size = plen;                /* Never parse the L2 padding. */

        /* OVS's parse_ipv6_ext_hdrs__().  If it fails, OVS keeps the
         * addresses but none of label/tos/ttl/proto/frag: those are
         * written only after the loop succeeds. */
        for (i = 0; i < OVS_BPF_MAX_IPV6_EXT; i++) {
            __u8 *ext;

            if (!ovs_bpf_ipv6_is_ext(nw_proto)) {
                break;
            }
            if (size < 8) {
                goto out;
            }
            ext = ovs_bpf_pkt_ptr(&p, off, 8);
            if (!ext) {
                goto out;
            }
            if (nw_proto == OVS_BPF_IPPROTO_FRAGMENT) {
                __be16 offlg = *(__be16 *) (ext + 2);

                nw_proto = ext[0];
                off += 8;
                size -= 8;
                if (offlg) {
                    nw_frag = OVS_BPF_FRAG_ANY;
                    if (offlg & bpf_htons(0xfff8)) {
                        /* Later fragment: OVS reports the fragment header
                         * as the protocol and stops. */
                        nw_frag |= OVS_BPF_FRAG_LATER;
                        nw_proto = OVS_BPF_IPPROTO_FRAGMENT;
                        break;
                    }
                }
            } else {
                __u32 ext_len = nw_proto == IPPROTO_AH
                                ? (ext[1] + 2) * 4 : (ext[1] + 1) * 8;

                if (nw_proto == OVS_BPF_IPPROTO_ROUTING && ext[3]) {
                    s->ipv6_rh = 1;
                }
                nw_proto = ext[0];
                if (ext_len > size) {
                    goto out;
                }
                off += ext_len;
                size -= ext_len;
            }
        }
        if (i == OVS_BPF_MAX_IPV6_EXT && ovs_bpf_ipv6_is_ext(nw_proto)) {
            p.incomplete = true;    /* Chain longer than we follow. */
            goto out;
        }
        key->ipv6_label = tc_flow & bpf_htonl(0x000fffff);
        key->nw_tos = bpf_ntohl(tc_flow) >> 20;
        key->nw_ttl = hdr[7];
        key->nw_proto = nw_proto;
        key->nw_frag = nw_frag;
    } else {
        if (eth_type == bpf_htons(ETH_P_ARP)
            || eth_type == bpf_htons(OVS_BPF_ETH_P_RARP)) {
            __u16 op;

            if (size < 28) {
                goto out;
            }
            hdr = ovs_bpf_pkt_ptr(&p, off, 28);
            if (!hdr) {
                goto out;
            }
            /* Ethernet/IPv4 ARP only, as OVS. */
            if (*(__be16 *) hdr != bpf_htons(1)
                || *(__be16 *) (hdr + 2) != bpf_htons(ETH_P_IP)
                || hdr[4] != 6 || hdr[5] != 4) {
                goto out;
            }
            key->ipv4_src = *(__be32 *) (hdr + 14);
            key->ipv4_dst = *(__be32 *) (hdr + 24);
            op = bpf_ntohs(*(__be16 *) (hdr + 6));
            if (op <= 0xff) {       /* OVS matches the low 8 bits only. */
                key->nw_proto = op;
            }
            __builtin_memcpy(key->arp_sha, hdr + 8, 6);
            __builtin_memcpy(key->arp_tha, hdr + 18, 6);
        }
        goto out;
    }

    s->l4_ofs = off;
    if (!(key->nw_frag & OVS_BPF_FRAG_LATER)) {
        int l4 = ovs_bpf_parse_l4(skb, key, off, size);

        if (l4 == OVS_BPF_PARSE_NEED_PULL) {
            p.need_pull = true;
        } else if (l4 == OVS_BPF_PARSE_INCOMPLETE) {
            p.incomplete = true;
        }
    }

out:
    return ovs_bpf_parser_result(&p);
}

/* Parses 'skb' into 'key', pulling non-linear headers into the linear
 * data once if needed.  Returns OVS_BPF_PARSE_OK, OVS_BPF_PARSE_INCOMPLETE
 * (the key is partial: it must not be looked up) or OVS_BPF_PARSE_FAILED
 * (the pull failed). */
static __always_inline enum ovs_bpf_parse_result
ovs_bpf_parse_packet(struct __sk_buff *skb, struct ovs_bpf_flow_key *key,
                     struct ovs_bpf_scratch *s)
{
    enum ovs_bpf_parse_result r;
    __u32 len;

    r = ovs_bpf_parse(skb, key, s);
    if (r != OVS_BPF_PARSE_NEED_PULL) {
        return r;
    }

    /* Rare: headers in paged data.  Make them linear and parse again from
     * scratch (the first pass may have filled some fields). */
    len = skb->len < OVS_BPF_PARSE_PULL_LEN ? skb->len
                                            : OVS_BPF_PARSE_PULL_LEN;
    if (bpf_skb_pull_data(skb, len)) {
        return OVS_BPF_PARSE_FAILED;
    }
    __builtin_memset((__u8 *) key + offsetof(struct ovs_bpf_flow_key,
                                             eth_dst), 0,
                     sizeof *key - offsetof(struct ovs_bpf_flow_key,
                                            eth_dst));
    r = ovs_bpf_parse(skb, key, s);
    /* Everything up to OVS_BPF_PARSE_MAX_OFF is linear now. */
    return r == OVS_BPF_PARSE_NEED_PULL ? OVS_BPF_PARSE_FAILED : r;
}

#endif /* BPF_PARSE_H */
