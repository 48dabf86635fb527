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
#define OVS_BPF_MPLS_BOS 0x100          /* Bottom-of-stack bit of an LSE. */
#define OVS_BPF_NSH_BASE_LEN 8          /* OVS's NSH_BASE_HDR_LEN. */
#define OVS_BPF_NSH_MD1_LEN 24          /* OVS's NSH_M_TYPE1_LEN. */
#define OVS_BPF_NSH_M_TYPE1 1
#define OVS_BPF_NSH_M_TYPE2 2
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

/* How deep the parser goes.  The headers of a packet's first bytes (up to
 * the IP header) are read by direct packet access, which the verifier
 * allows only at bounded offsets; what can be deeper is read with
 * bpf_skb_load_bytes(), at any offset:
 *
 *  - OVS_BPF_PARSE_MAX_OFF: deepest offset read by direct access, in bytes.
 *    A transport header or ND option beyond it is copied instead.
 *  - OVS_BPF_MAX_IPV6_EXT: IPv6 extension headers followed, and
 *  - OVS_BPF_MAX_ND_OPTS: ND options scanned, each chain walked in a
 *    bpf_loop() callback, which the verifier checks once whatever the
 *    count.  OVS has no such limits; these are there so that a crafted
 *    packet cannot make the parser run for long, and no real packet comes
 *    near them.
 *
 * A packet past one of them cannot be parsed completely, so its key would
 * differ from the one ovs-vswitchd computes, and a megaflow installed for
 * another packet could match that partial key (an OpenFlow rule on the
 * fields not parsed would be bypassed).  So such a packet is never looked
 * up: the parse ends with OVS_BPF_PARSE_INCOMPLETE, the packet goes up as a
 * miss (counted as OVS_BPF_STAT_PARSE_INCOMPLETE) and ovs-vswitchd decides
 * with the full key. */
#define OVS_BPF_PARSE_MAX_OFF 2048
/* OVS_BPF_MAX_IPV6_EXT and OVS_BPF_MAX_ND_OPTS are in datapath-abi.h: the
 * tests check them. */

/* Zeroes bytes ['from', 'to') of 'key' ('from' and 'to' constants, 'to' a
 * multiple of 8), whole words where it can: a memset through a byte pointer
 * is compiled into one-byte stores, 128 of them for the conntrack and
 * tunnel metadata, which cost a hit about 25 ns. */
static __always_inline void
ovs_bpf_key_zero(struct ovs_bpf_flow_key *key, const int from, const int to)
{
    __u64 *words = (__u64 *) key;
    __u8 *bytes = (__u8 *) key;
    int i;

#pragma unroll
    for (i = from; i < ((from + 7) & ~7); i++) {
        bytes[i] = 0;
    }
#pragma unroll
    for (i = (from + 7) / 8; i < to / 8; i++) {
        words[i] = 0;
    }
}

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

/* Returns a pointer to 'len' bytes at 'off' of the packet, as
 * ovs_bpf_pkt_ptr(), or, if 'off' is beyond what direct access reaches,
 * copies them into 'buf' (of at least 'len' bytes, 'len' a constant) and
 * returns 'buf'.  Callers check first that the bytes are within the
 * packet. */
static __always_inline void *
ovs_bpf_pkt_read(struct __sk_buff *skb, struct ovs_bpf_parser *p, __u32 off,
                 __u32 len, void *buf)
{
    if (off > OVS_BPF_PARSE_MAX_OFF) {
        return bpf_skb_load_bytes(skb, off, buf, len) ? NULL : buf;
    }
    return ovs_bpf_pkt_ptr(p, off, len);
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

/* The state of a walk along a chain of headers or options in a bpf_loop()
 * callback. */
enum ovs_bpf_walk_state {
    OVS_BPF_WALK_MORE,          /* Not finished: the bound stopped it. */
    OVS_BPF_WALK_DONE,          /* Finished. */
    OVS_BPF_WALK_BAD,           /* Malformed: OVS's parse fails here. */
};

/* ND options, for ovs_bpf_nd_opt_step(). */
struct ovs_bpf_nd_walk {
    struct __sk_buff *skb;
    __u32 off;                  /* Of the next option. */
    __u32 size;                 /* Bytes left from 'off'. */
    __u8 sll[6];
    __u8 tll[6];
    __u8 opt_type;
    __u8 state;                 /* enum ovs_bpf_walk_state. */
};

/* One ND option: the body of OVS's option loop in parse_icmpv6().  A
 * bpf_loop() callback: returns 1 to stop the walk. */
static long
ovs_bpf_nd_opt_step(__u32 i, void *w_)
{
    struct ovs_bpf_nd_walk *w = w_;
    __u32 opt_len;
    __u8 opt[8];

    if (w->size < 8) {
        w->state = OVS_BPF_WALK_DONE;
        return 1;
    }
    if (i >= OVS_BPF_MAX_ND_OPTS) {
        return 1;               /* OVS would scan more options. */
    }
    if (bpf_skb_load_bytes(w->skb, w->off, opt, sizeof opt)) {
        w->state = OVS_BPF_WALK_DONE;   /* Cannot happen: 'size' says the
                                         * bytes are there. */
        return 1;
    }
    opt_len = opt[1] * 8;
    if (!opt_len || opt_len > w->size) {
        w->state = OVS_BPF_WALK_DONE;
        return 1;
    }
    if (opt_len == 8 && (opt[0] == OVS_BPF_ND_OPT_SOURCE_LINKADDR
                         || opt[0] == OVS_BPF_ND_OPT_TARGET_LINKADDR)) {
        __u8 *lla = opt[0] == OVS_BPF_ND_OPT_SOURCE_LINKADDR ? w->sll
                                                             : w->tll;

        if (!ovs_bpf_mac_is_zero(lla)) {
            w->state = OVS_BPF_WALK_BAD;    /* The same option twice. */
            return 1;
        }
        __builtin_memcpy(lla, opt + 2, 6);
        if (!w->opt_type) {
            w->opt_type = opt[0];
        }
    }
    w->off += opt_len;
    w->size -= opt_len;
    return 0;
}

/* ICMPv6 neighbour discovery after the 8-byte ICMPv6 header at 'off':
 * OVS's parse_icmpv6().  Fills 'nd_target', 'arp_sha', 'arp_tha' and
 * 'tcp_flags' (OVS keeps the type of the first link-layer address option
 * there, as the ND "options type"). */
static __always_inline void
ovs_bpf_parse_nd(struct __sk_buff *skb, struct ovs_bpf_parser *p,
                 struct ovs_bpf_flow_key *key, __u32 off, __u32 size)
{
    struct ovs_bpf_nd_walk w = {
        .skb = skb,
        .off = off + 16,
        .size = size - 16,
        .state = OVS_BPF_WALK_MORE,
    };
    __u8 buf[16];
    __u8 *target;

    if (size < 16) {
        return;                 /* Truncated target: no target, no opts. */
    }
    target = ovs_bpf_pkt_read(skb, p, off, 16, buf);
    if (!target) {
        return;
    }
    bpf_loop(OVS_BPF_MAX_ND_OPTS + 1, ovs_bpf_nd_opt_step, &w, 0);
    if (w.state == OVS_BPF_WALK_MORE) {
        p->incomplete = true;
    }
    key->tcp_flags = bpf_htons(w.opt_type);
    if (w.state == OVS_BPF_WALK_BAD) {
        /* As OVS: no target and no addresses, but the options type. */
        return;
    }
    __builtin_memcpy(key->nd_target, target, 16);
    __builtin_memcpy(key->arp_sha, w.sll, 6);
    __builtin_memcpy(key->arp_tha, w.tll, 6);
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
    __u8 buf[20];
    __u8 *l4;

    if (!key) {
        return OVS_BPF_PARSE_OK;
    }
    switch (key->nw_proto) {
    case IPPROTO_TCP:
        if (size >= 20) {
            __u32 hdr_len;

            l4 = ovs_bpf_pkt_read(skb, &p, off, 20, buf);
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
            l4 = ovs_bpf_pkt_read(skb, &p, off, 4, buf);
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
            l4 = ovs_bpf_pkt_read(skb, &p, off, 2, buf);
            if (!l4) {
                break;
            }
            key->tp_src = bpf_htons(l4[0]);
            key->tp_dst = bpf_htons(l4[1]);
        }
        break;
    case OVS_BPF_IPPROTO_ICMPV6:
        if (size >= 8) {
            l4 = ovs_bpf_pkt_read(skb, &p, off, 2, buf);
            if (!l4) {
                break;
            }
            key->tp_src = bpf_htons(l4[0]);
            key->tp_dst = bpf_htons(l4[1]);
            if (l4[1] == 0 && (l4[0] == OVS_BPF_ND_NEIGHBOR_SOLICIT
                               || l4[0] == OVS_BPF_ND_NEIGHBOR_ADVERT)) {
                ovs_bpf_parse_nd(skb, &p, key, off + 8, size - 8);
            }
        }
        break;
    }
    return ovs_bpf_parser_result(&p);
}

/* IPv6 extension headers, for ovs_bpf_ipv6_ext_step(). */
struct ovs_bpf_ipv6_ext_walk {
    struct __sk_buff *skb;
    __u32 off;                  /* Of the next header. */
    __u32 size;                 /* Bytes of L3 payload left from 'off'. */
    __u8 nw_proto;              /* Type of the next header. */
    __u8 nw_frag;
    __u8 rh;                    /* A routing header with segments left. */
    __u8 state;                 /* enum ovs_bpf_walk_state. */
};

/* One IPv6 extension header: the body of OVS's loop in
 * parse_ipv6_ext_hdrs__().  A bpf_loop() callback: returns 1 to stop the
 * walk.  The headers are copied with bpf_skb_load_bytes(): they may be
 * anywhere in the packet, beyond what direct access reaches. */
static long
ovs_bpf_ipv6_ext_step(__u32 i, void *w_)
{
    struct ovs_bpf_ipv6_ext_walk *w = w_;
    __u32 ext_len;
    __u8 ext[4];

    if (!ovs_bpf_ipv6_is_ext(w->nw_proto)) {
        w->state = OVS_BPF_WALK_DONE;
        return 1;
    }
    if (i >= OVS_BPF_MAX_IPV6_EXT) {
        return 1;               /* Chain longer than we follow. */
    }
    if (w->size < 8 || bpf_skb_load_bytes(w->skb, w->off, ext, sizeof ext)) {
        w->state = OVS_BPF_WALK_BAD;
        return 1;
    }
    if (w->nw_proto == OVS_BPF_IPPROTO_FRAGMENT) {
        __be16 offlg = *(__be16 *) (ext + 2);

        w->nw_proto = ext[0];
        w->off += 8;
        w->size -= 8;
        if (offlg) {
            w->nw_frag = OVS_BPF_FRAG_ANY;
            if (offlg & bpf_htons(0xfff8)) {
                /* Later fragment: OVS reports the fragment header as the
                 * protocol and stops. */
                w->nw_frag |= OVS_BPF_FRAG_LATER;
                w->nw_proto = OVS_BPF_IPPROTO_FRAGMENT;
                w->state = OVS_BPF_WALK_DONE;
                return 1;
            }
        }
        return 0;
    }
    ext_len = (w->nw_proto == IPPROTO_AH
               ? (ext[1] + 2) * 4 : (ext[1] + 1) * 8);
    if (w->nw_proto == OVS_BPF_IPPROTO_ROUTING && ext[3]) {
        w->rh = 1;
    }
    w->nw_proto = ext[0];
    if (ext_len > w->size) {
        w->state = OVS_BPF_WALK_BAD;
        return 1;
    }
    w->off += ext_len;
    w->size -= ext_len;
    return 0;
}

/* Parses the packet of 'skb' into the packet fields of 'key' (which the
 * caller has zeroed, metadata aside) and records the L3/L4 offsets in
 * 's'.  Returns OVS_BPF_PARSE_OK, OVS_BPF_PARSE_NEED_PULL or
 * OVS_BPF_PARSE_INCOMPLETE. */
/* OVS's parse_nsh(): fills the NSH fields of 'key' from the NSH header at
 * 'off', 'size' bytes before the end of the packet, or leaves them all zero
 * if flow_extract() would (see struct ovs_bpf_flow_key). */
static __always_inline void
ovs_bpf_parse_nsh(struct ovs_bpf_parser *p, struct ovs_bpf_flow_key *key,
                  __u32 off, __u32 size)
{
    __u16 ver_flags_ttl_len;
    __be32 path_hdr;
    __u8 *hdr, *ctx;
    __u8 mdtype, np;
    __u32 len;

    if (size < OVS_BPF_NSH_BASE_LEN) {
        return;
    }
    hdr = ovs_bpf_pkt_ptr(p, off, OVS_BPF_NSH_BASE_LEN);
    if (!hdr) {
        return;
    }
    ver_flags_ttl_len = bpf_ntohs(*(__be16 *) hdr);
    mdtype = hdr[2];
    np = hdr[3];
    path_hdr = *(__be32 *) (hdr + 4);
    len = (ver_flags_ttl_len & 0x3f) << 2;
    if (len > size || ver_flags_ttl_len >> 14) {
        return;
    }

    if (mdtype == OVS_BPF_NSH_M_TYPE1) {
        if (len != OVS_BPF_NSH_MD1_LEN) {
            return;
        }
        ctx = ovs_bpf_pkt_ptr(p, off + OVS_BPF_NSH_BASE_LEN,
                              sizeof key->nsh_context);
        if (!ctx) {
            return;
        }
        __builtin_memcpy(key->nsh_context, ctx, sizeof key->nsh_context);
    } else if (mdtype == OVS_BPF_NSH_M_TYPE2 && len < OVS_BPF_NSH_BASE_LEN) {
        /* MD type 2: the TLVs are not parsed, as in OVS. */
        return;
    }
    key->nsh.flags = (ver_flags_ttl_len >> 12) & 0x3;
    key->nsh.ttl = (ver_flags_ttl_len >> 6) & 0x3f;
    key->nsh.mdtype = mdtype;
    key->nsh.np = np;
    key->nsh.path_hdr = path_hdr;
}

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
         * written only after the walk succeeds. */
        if (ovs_bpf_ipv6_is_ext(nw_proto)) {
            struct ovs_bpf_ipv6_ext_walk w = {
                .skb = skb,
                .off = off,
                .size = size,
                .nw_proto = nw_proto,
                .state = OVS_BPF_WALK_MORE,
            };

            bpf_loop(OVS_BPF_MAX_IPV6_EXT + 1, ovs_bpf_ipv6_ext_step, &w, 0);
            s->ipv6_rh = w.rh;
            if (w.state == OVS_BPF_WALK_BAD) {
                goto out;
            } else if (w.state == OVS_BPF_WALK_MORE) {
                p.incomplete = true;    /* Chain longer than we follow. */
                goto out;
            }
            off = w.off;
            size = w.size;
            nw_proto = w.nw_proto;
            nw_frag = w.nw_frag;
        }
        key->ipv6_label = tc_flow & bpf_htonl(0x000fffff);
        key->nw_tos = bpf_ntohl(tc_flow) >> 20;
        key->nw_ttl = hdr[7];
        key->nw_proto = nw_proto;
        key->nw_frag = nw_frag;
    } else if (eth_type == bpf_htons(ETH_P_MPLS_UC)
               || eth_type == bpf_htons(ETH_P_MPLS_MC)) {
        /* OVS's parse_mpls(): the first OVS_BPF_MAX_MPLS_LABELS complete
         * label stack entries, up to the one with the bottom of stack bit;
         * nothing after the labels.  (A bounded loop: clang does not
         * unroll it, the verifier follows its 3 iterations.) */
        for (i = 0; i < OVS_BPF_MAX_MPLS_LABELS; i++) {
            __be32 *lse;

            if (size < 4) {
                break;
            }
            lse = ovs_bpf_pkt_ptr(&p, off, 4);
            if (!lse) {
                break;
            }
            key->mpls_lse[i] = *lse;
            if (*lse & bpf_htonl(OVS_BPF_MPLS_BOS)) {
                break;
            }
            off += 4;
            size -= 4;
        }
        goto out;
    } else if (eth_type == bpf_htons(ETH_P_NSH)) {
        ovs_bpf_parse_nsh(&p, key, off, size);
        goto out;
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
    ovs_bpf_key_zero(key, offsetof(struct ovs_bpf_flow_key, eth_dst),
                     OVS_BPF_KEY_CT_TUN_OFS);
    r = ovs_bpf_parse(skb, key, s);
    /* Everything up to OVS_BPF_PARSE_MAX_OFF is linear now. */
    return r == OVS_BPF_PARSE_NEED_PULL ? OVS_BPF_PARSE_FAILED : r;
}

#endif /* BPF_PARSE_H */
