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

/* The BPF datapath ABI: the one definition of everything that the BPF
 * programs (the .bpf.c files of bpf/) and ovs-vswitchd (lib/dpif-bpf-*) share.
 *
 * Both sides include this header unchanged: it uses only the fixed-width
 * types of <linux/types.h> and struct bpf_spin_lock of <linux/bpf.h> (both
 * UAPI), no kernel and no OVS headers.  Every struct has
 * explicit padding so that its layout is the same for clang -target bpf and
 * for the host compiler; the BUILD_ASSERTs in lib/dpif-bpf-odp.c check the
 * sizes from the userspace side.
 *
 * Changing anything here changes the ABI: bump OVS_BPF_ABI_VERSION, which
 * ovs-vswitchd compares with the version compiled into the object it loads
 * (the .rodata constant 'ovs_bpf_abi_version'). */

#ifndef BPF_DATAPATH_ABI_H
#define BPF_DATAPATH_ABI_H 1

#include <linux/types.h>
#include <linux/bpf.h>

#define OVS_BPF_ABI_VERSION 17

/* Limits.  OVS_BPF_MAX_MASKS bounds the tuple-space search loop of the
 * lookup program; the number of masks actually searched is the configured
 * 'n_masks' of struct ovs_bpf_dp_config, at most this. */
#define OVS_BPF_MAX_ACTIONS 32      /* Action slots per flow. */
#define OVS_BPF_MAX_MASKS 64        /* Megaflow masks in the mask list. */
#define OVS_BPF_MAX_PORTS 1024      /* Datapath ports. */
#define OVS_BPF_MAX_RECIRC 8        /* Recirculations per packet. */
#define OVS_BPF_USERDATA_LEN 48     /* == sizeof(struct user_action_cookie). */
#define OVS_BPF_SECRET_LEN 16       /* Downcall authentication secret. */
#define OVS_BPF_MAX_IPV6_EXT 64     /* IPv6 extension headers parsed. */
#define OVS_BPF_MAX_ND_OPTS 64      /* ND options parsed (bpf/parse.h). */
#define OVS_BPF_MAX_MPLS_LABELS 3   /* == FLOW_MAX_MPLS_LABELS. */
#define OVS_BPF_NSH_CONTEXT_WORDS 4 /* MD type 1 context headers. */
#define OVS_BPF_MAX_METERS 4096     /* Meter ids, 0 to this minus 1. */
#define OVS_BPF_MAX_METER_BANDS 8   /* Bands per meter. */

/* Names of the maps and programs in the object (the loader knows them as
 * the fields of the object's skeleton; bpftool and the tests by these
 * names), and as the maps are pinned below
 * /sys/fs/bpf/ovs-bpf/<datapath>/. */
#define OVS_BPF_MAP_FLOW_TABLES /* By enum ovs_bpf_flow_table. */ \
    { "flow_table_w2", "flow_table_w4", "flow_table_w6", "flow_table_w8", \
      "flow_table_w12", "flow_table_w16", "flow_table_w24", \
      "flow_table_w32" }
#define OVS_BPF_MAP_FLOW_ACTIONS "flow_actions"  /* Long action lists. */
#define OVS_BPF_MAP_FLOW_MASKS  "flow_masks"
#define OVS_BPF_MAP_DP_CONFIG   "dp_config"
#define OVS_BPF_MAP_MASK_ORDER  "mask_order"
#define OVS_BPF_MAP_MASK_STATS  "mask_stats"    /* Hits per mask. */
#define OVS_BPF_MAP_MASK_CACHE  "mask_cache"    /* Per CPU: hash -> mask. */
#define OVS_BPF_MAP_DP_STATS    "dp_stats"
#define OVS_BPF_MAP_PORTS       "ports"         /* odp port -> port info. */
#define OVS_BPF_MAP_IFINDEX_PORTS "ifindex_ports" /* ifindex -> port + 1. */
#define OVS_BPF_MAP_IFINDEXES   "ifindexes"     /* The same, larger ones. */
#define OVS_BPF_MAP_UPCALLS     "upcall_rings"  /* Array of ring buffers. */
#define OVS_BPF_MAP_UPCALL_CONFIG "upcall_config" /* Its configuration. */
#define OVS_BPF_MAP_TAILCALLS   "tailcalls"     /* prog array. */
#define OVS_BPF_MAP_METERS      "meters"        /* meter id -> meter. */
#define OVS_BPF_MAP_CT_REASS    "ct_reass"      /* struct ovs_bpf_ct_reass. */
#define OVS_BPF_MAP_CT_TPS      "ct_tps"        /* id -> ovs_bpf_ct_tp. */
#define OVS_BPF_MAP_CT_TP_CONNS "ct_tp_conns"   /* Connection -> tp id. */
#define OVS_BPF_MAP_CT_TCP_WIN  "ct_tcp_win"    /* Connection -> TCP window. */
#define OVS_BPF_MAP_CT_ZONES    "ct_zones"      /* zone -> ovs_bpf_ct_zone. */

#define OVS_BPF_PROG_INGRESS    "ovs_bpf_ingress"   /* TC ingress of ports. */
#define OVS_BPF_PROG_DOWNCALL   "ovs_bpf_downcall"  /* TC ingress of TAP. */
#define OVS_BPF_PROG_CT_REASS   "ovs_bpf_ct_reass"  /* Run by ovs-vswitchd. */

/* .rodata constants of the object (__u32 each).  The loader reads the
 * first to check the ABI version, and should set the second, before
 * loading the object, to OVS's flow_vlan_limit (1 unless
 * other_config:vlan-limit says otherwise): the number of VLAN tags the BPF
 * parser decodes must equal the number flow_extract() decodes for the
 * upcalled packets, or megaflows of multi-tagged packets never match in
 * BPF.  The object's default is 2.  (The loader reads and sets them through
 * the object's skeleton, bpf/datapath.skel.h.) */
#define OVS_BPF_RODATA_ABI_VERSION "ovs_bpf_abi_version"
#define OVS_BPF_RODATA_VLAN_LIMIT  "ovs_bpf_vlan_limit"

/* ------------------------------------------------------------------ */
/* Flow key.                                                          */
/* ------------------------------------------------------------------ */

/* The parsed packet, as the lookup program matches it.  The fields mean what
 * the fields of the same name in OVS's 'struct flow' mean, so that
 * lib/dpif-bpf-odp.c converts one to the other field by field and the key
 * the BPF parser builds for a packet equals (under any mask) the key
 * ovs-vswitchd's flow_extract() builds for it:
 *
 *   - 'vlans[i].tci' has VLAN_CFI (0x1000) set when tag i is present, as in
 *     struct flow; 'vlans[0]' is the outermost tag.  'eth_type' is the
 *     ethertype after the VLAN tags.
 *   - ARP: 'nw_proto' is the low byte of the opcode, 'ipv4_src'/'ipv4_dst'
 *     the sender/target protocol addresses, 'arp_sha'/'arp_tha' the
 *     hardware addresses.
 *   - ICMPv4/ICMPv6: 'tp_src' is the type, 'tp_dst' the code (network byte
 *     order, in the low byte as OVS does).  Neighbour discovery: 'nd_target',
 *     and 'arp_sha'/'arp_tha' hold the source/target link-layer addresses.
 *   - 'nw_frag' holds FLOW_NW_FRAG_ANY (1) and FLOW_NW_FRAG_LATER (2).
 *   - MPLS (ethertype 0x8847 or 0x8848): 'mpls_lse' holds the first
 *     OVS_BPF_MAX_MPLS_LABELS label stack entries (outermost first, zero
 *     where the stack is shorter), as 'mpls_lse' of struct flow.  As in
 *     flow_extract(), nothing after the labels is parsed, so every network
 *     and transport field of an MPLS packet is zero: 'mpls_lse' shares its
 *     bytes with 'ipv6_src', which only IPv6 packets use.  (A mask never
 *     covers both: OVS matches the IPv6 fields only with eth_type IPv6.)
 *   - NSH (ethertype 0x894f): 'nsh' holds the base and service path
 *     headers, 'nsh_context' the four context headers of MD type 1 (zero
 *     for other MD types), as 'nsh' of struct flow.  As in flow_extract(),
 *     nothing after the NSH header is parsed, and a header that
 *     flow_extract() does not accept (short, version other than 0, MD type
 *     1 of another length than 24 bytes, MD type 2 shorter than 8) leaves
 *     all of them zero.  'nsh' shares its bytes with 'ipv6_src' and
 *     'nsh_context' with 'ipv6_dst', which an NSH packet does not have
 *     (its 'nw_proto', 'nw_tos', 'nw_ttl' and 'nw_frag' are zero, and an
 *     exact match covers them, so they cannot be shared).
 *   - IPv6: 'nw_tos' is the traffic class, 'nw_ttl' the hop limit and
 *     'nw_proto' the upper-layer protocol after the extension headers.
 *   - Conntrack ('ct_*') and tunnel ('tun_*') fields are metadata, like
 *     'in_port': not parsed from the packet but set by what happened to it
 *     (a ct() action, the tunnel device it came in through), and kept
 *     across recirculation.  They are zero when nothing set them, which is
 *     what a key of OVS without conntrack or tunnel metadata holds.
 *     'ct_state' holds the CS_* bits of OVS (lib/packets.h) that fit in 8
 *     bits; the original-direction tuple is in 'ct_nw_src'... for IPv4 and
 *     'ct_ipv6_src'... for IPv6, as in struct flow.
 * All padding is zero in every key and every mask: keys are hashed as
 * bytes. */
struct ovs_bpf_vlan {
    __be16 tpid;
    __be16 tci;
};

/* The NSH base and service path headers, as in OVS's struct ovs_key_nsh
 * (the context headers are 'nsh_context' of the key). */
struct ovs_bpf_nsh {
    __u8 flags;                 /* 2 bits. */
    __u8 ttl;                   /* 6 bits. */
    __u8 mdtype;                /* The header's whole MD type byte. */
    __u8 np;                    /* Next protocol. */
    __be32 path_hdr;            /* SPI (24 bits) and SI (8 bits). */
};

struct ovs_bpf_flow_key {
    /* Metadata. */
    __u32 in_port;              /* Datapath (odp) port number. */
    __u32 recirc_id;
    __u32 dp_hash;
    __u32 skb_priority;
    __u32 skb_mark;

    /* Ethernet. */
    __u8 eth_dst[6];
    __u8 eth_src[6];
    __be16 eth_type;
    __u16 pad0;
    struct ovs_bpf_vlan vlans[2];

    /* Network layer. */
    __be32 ipv4_src;            /* Also ARP SPA. */
    __be32 ipv4_dst;            /* Also ARP TPA. */
    union {
        __u8 ipv6_src[16];
        __be32 mpls_lse[4];     /* OVS_BPF_MAX_MPLS_LABELS used, one zero. */
        struct ovs_bpf_nsh nsh; /* 8 bytes, the rest zero. */
    };
    union {
        __u8 ipv6_dst[16];
        __be32 nsh_context[OVS_BPF_NSH_CONTEXT_WORDS];
    };
    __be32 ipv6_label;
    __u8 nw_proto;
    __u8 nw_tos;
    __u8 nw_ttl;
    __u8 nw_frag;

    /* Transport layer. */
    __be16 tp_src;
    __be16 tp_dst;
    __be16 tcp_flags;           /* TCP flags in the low 12 bits. */
    __u8 arp_sha[6];            /* Also ND source link-layer address. */
    __u8 arp_tha[6];            /* Also ND target link-layer address. */
    __u8 nd_target[16];
    __u16 pad1;

    /* Conntrack metadata (word 16 on). */
    __u8 ct_state;              /* CS_* bits. */
    __u8 ct_nw_proto;           /* Original direction tuple... */
    __u16 ct_zone;
    __u32 ct_mark;
    __u8 ct_label[16];          /* As OVS's ovs_u128 in memory. */
    __be32 ct_nw_src;
    __be32 ct_nw_dst;
    __u8 ct_ipv6_src[16];
    __u8 ct_ipv6_dst[16];
    __be16 ct_tp_src;
    __be16 ct_tp_dst;           /* ...up to here. */
    __u32 pad2;

    /* Tunnel metadata (word 25 on): the outer headers of a packet received
     * through a tunnel port, as 'struct flow_tnl' of OVS. */
    __be64 tun_id;
    __be32 tun_ipv4_src;
    __be32 tun_ipv4_dst;
    __u8 tun_ipv6_src[16];
    __u8 tun_ipv6_dst[16];
    __be16 tun_flags;           /* FLOW_TNL_F_* of OVS. */
    __u8 tun_tos;
    __u8 tun_ttl;
    __be16 tun_tp_src;
    __be16 tun_tp_dst;
};

/* The conntrack and tunnel metadata of the key: its last
 * OVS_BPF_KEY_CT_TUN_LEN bytes, from OVS_BPF_KEY_CT_TUN_OFS on.  The packet
 * parser leaves them alone: they are set by the ingress program (zero, or
 * what the tunnel device says), by ct() actions and by a downcall (which
 * carries them down), kept across recirculation, and sent up with every
 * upcall, as one block of bytes ('key_meta' of struct ovs_bpf_upcall and
 * of a downcall frame). */
#define OVS_BPF_KEY_CT_TUN_OFS 128
#define OVS_BPF_KEY_CT_TUN_LEN 128

/* ------------------------------------------------------------------ */
/* Flow tables.                                                       */
/* ------------------------------------------------------------------ */

/* A megaflow is its key masked with one mask of the mask list.  A mask
 * usually covers few of the key's 32 8-byte words (an Ethernet megaflow of
 * OVS: in_port and recirc_id, the two Ethernet addresses, eth_type, and
 * the word of nw_proto, nw_frag and the ports, 5 words), and a BPF hash
 * map hashes and compares its whole key on every lookup.  So the flow table
 * key holds only the words the mask covers, packed in key order, and the
 * flows are in one of several hash maps by how many words their mask
 * covers: the key of the table of 'n' words is the first 8 + 8 * n bytes
 * of struct ovs_bpf_flow_table_key.  A mask of 5 words is looked up with a
 * 56-byte key instead of the 264 bytes of the whole key.
 *
 * The tables, with the number of key words of each. */
enum ovs_bpf_flow_table {
    OVS_BPF_FLOW_TABLE_W2,
    OVS_BPF_FLOW_TABLE_W4,
    OVS_BPF_FLOW_TABLE_W6,
    OVS_BPF_FLOW_TABLE_W8,
    OVS_BPF_FLOW_TABLE_W12,
    OVS_BPF_FLOW_TABLE_W16,
    OVS_BPF_FLOW_TABLE_W24,
    OVS_BPF_FLOW_TABLE_W32,
    OVS_BPF_N_FLOW_TABLES
};
#define OVS_BPF_FLOW_TABLE_WORDS { 2, 4, 6, 8, 12, 16, 24, 32 }

#define OVS_BPF_KEY_WORDS 32        /* sizeof(struct ovs_bpf_flow_key) / 8 */

/* The key of the flow tables.  A flow is in the table chosen by its mask
 * ('table' of struct ovs_bpf_mask) under the first 8 + 8 * n bytes of this,
 * where 'n' is the table's number of words: 'words' holds the words of the
 * key that the mask covers, masked, in key order, then zero words up to
 * 'n'.  The whole masked key is the hash key, never a hash of it: two flows
 * never share an entry. */
struct ovs_bpf_flow_table_key {
    __u32 mask_id;              /* Index in the 'flow_masks' array. */
    __u32 pad;
    __u64 words[OVS_BPF_KEY_WORDS];
};

/* An entry of the 'flow_masks' array map: a mask compiled into the list of
 * key words it covers.  Userspace keeps the reference counts; the lookup
 * program searches the masks that the search order (struct
 * ovs_bpf_mask_order) lists, in that order, and skips entries that are not
 * in use.  For i below the number of
 * words of 'table', word i of the table key is word 'word[i]' of the key
 * ANDed with 'mask[i]'; the entries after the mask's own words have word 0
 * and mask 0, so that they give the zero words of the table key. */
struct ovs_bpf_mask {
    __u32 in_use;
    __u8 table;                 /* enum ovs_bpf_flow_table. */
    __u8 word[OVS_BPF_KEY_WORDS];   /* Key word indexes. */
    __u8 pad[3];
    __u64 mask[OVS_BPF_KEY_WORDS];
};

/* ------------------------------------------------------------------ */
/* Actions.                                                           */
/* ------------------------------------------------------------------ */

/* The action types, written once here: OVS_BPF_ACTION(ENUM, NAME) for each,
 * in the order of their values (which are part of the ABI: append new ones).
 * An action type is also the slot of its program in the 'tailcalls' prog
 * array, and the program is the function ovs_bpf_act_NAME of
 * bpf/datapath.bpf.c, which bpf/maps.h puts in that slot; NAME is also how
 * the action is formatted (e.g. by "ovs-appctl dpctl/dump-flows").  The
 * comment gives the member of 'u' in struct ovs_bpf_action that holds the
 * action's argument.
 *
 * Adding an action: a line here, its program in bpf/datapath.bpf.c (and the
 * header that implements it), its translation from ODP in
 * lib/dpif-bpf-odp-actions.c and its formatting in
 * lib/dpif-bpf-odp-format.c. */
#define OVS_BPF_ACTIONS(OVS_BPF_ACTION)                                     \
    OVS_BPF_ACTION(OUTPUT, output)                  /* u.output */          \
    OVS_BPF_ACTION(USERSPACE, userspace)            /* u.userspace */       \
    OVS_BPF_ACTION(SET_ETH, set_eth)                /* u.eth, masked */     \
    OVS_BPF_ACTION(SET_IPV4, set_ipv4)              /* u.ipv4, masked */    \
    OVS_BPF_ACTION(SET_IPV6_SRC, set_ipv6_src)      /* u.ipv6_addr, masked */ \
    OVS_BPF_ACTION(SET_IPV6_DST, set_ipv6_dst)      /* u.ipv6_addr, masked */ \
    OVS_BPF_ACTION(SET_IPV6_MISC, set_ipv6_misc)    /* u.ipv6_misc, masked */ \
    OVS_BPF_ACTION(SET_TCP, set_tcp)                /* u.l4, masked */      \
    OVS_BPF_ACTION(SET_UDP, set_udp)                /* u.l4, masked */      \
    OVS_BPF_ACTION(PUSH_VLAN, push_vlan)            /* u.push_vlan */       \
    OVS_BPF_ACTION(POP_VLAN, pop_vlan)              /* no argument */       \
    OVS_BPF_ACTION(RECIRC, recirc)                  /* u.recirc */          \
    OVS_BPF_ACTION(HASH, hash)                      /* u.hash */            \
    OVS_BPF_ACTION(TRUNC, trunc)                    /* u.trunc */           \
    OVS_BPF_ACTION(CLONE, clone)                    /* u.nested */          \
    OVS_BPF_ACTION(SAMPLE, sample)                  /* u.nested */          \
    OVS_BPF_ACTION(SET_PRIORITY, set_priority)      /* u.meta, masked */    \
    OVS_BPF_ACTION(SET_MARK, set_mark)              /* u.meta, masked */    \
    OVS_BPF_ACTION(CHECK_PKT_LEN, check_pkt_len)    /* u.check_pkt_len */ \
    OVS_BPF_ACTION(METER, meter)                    /* u.meter */           \
    OVS_BPF_ACTION(SET_TUNNEL, set_tunnel)          /* u.tunnel */           \
    OVS_BPF_ACTION(CT, ct)                          /* u.ct */              \
    OVS_BPF_ACTION(CT_CLEAR, ct_clear)              /* no argument */       \
    OVS_BPF_ACTION(CT_LABEL, ct_label)              /* u.ct_label: CT's */ \
    OVS_BPF_ACTION(POP_ETH, pop_eth)                /* no argument */       \
    OVS_BPF_ACTION(PUSH_MPLS, push_mpls)            /* u.mpls */            \
    OVS_BPF_ACTION(POP_MPLS, pop_mpls)              /* u.mpls */            \
    OVS_BPF_ACTION(SET_MPLS, set_mpls)              /* u.mpls, masked */ \
    OVS_BPF_ACTION(PUSH_NSH_ETH, push_nsh_eth)      /* u.push_nsh */        \
    OVS_BPF_ACTION(POP_ETH_NSH, pop_eth_nsh)        /* no argument */       \
    OVS_BPF_ACTION(SET_NSH, set_nsh)                /* u.set_nsh, masked */ \
    OVS_BPF_ACTION(ADD_MPLS_ETH, add_mpls_eth)      /* u.add_mpls_eth */    \
    OVS_BPF_ACTION(POP_ETH_MPLS, pop_eth_mpls)      /* no argument */       \
    OVS_BPF_ACTION(TNL_PUSH, tnl_push)              /* u.tnl_push */        \
    OVS_BPF_ACTION(TNL_POP, tnl_pop)                /* u.tnl_pop */         \
    OVS_BPF_ACTION(TNL_HDR, tnl_hdr)                /* u.raw: TNL_PUSH's */

/* OVS_BPF_ACTION_END (0) marks an unused slot: it ends the chain. */
enum ovs_bpf_action_type {
    OVS_BPF_ACTION_END = 0,
#define OVS_BPF_ACTION_ENUM(ENUM, NAME) OVS_BPF_ACTION_##ENUM,
    OVS_BPF_ACTIONS(OVS_BPF_ACTION_ENUM)
#undef OVS_BPF_ACTION_ENUM
    __OVS_BPF_ACTION_MAX
};

/* Program array slots after the action programs. */
enum ovs_bpf_tailcall {
    OVS_BPF_TAILCALL_LOOKUP = __OVS_BPF_ACTION_MAX, /* Parse + lookup again
                                                     * (recirculation): the
                                                     * ingress program. */
    __OVS_BPF_TAILCALL_MAX
};

/* OVS_BPF_ACTION_OUTPUT. */
struct ovs_bpf_act_output {
    __u32 port;                 /* Datapath (odp) port number. */
};

/* OVS_BPF_ACTION_USERSPACE: the packet goes up through an upcall ring as an
 * OVS_BPF_UPCALL_ACTION with 'userdata' in the upcall. */
struct ovs_bpf_act_userspace {
    __u8 userdata[OVS_BPF_USERDATA_LEN];
    __u32 userdata_len;         /* 0 if the action has no userdata. */
    __u32 flags;                /* OVS_BPF_USERSPACE_F_*. */
};
#define OVS_BPF_USERSPACE_F_ACTIONS (1u << 0) /* OVS_USERSPACE_ATTR_ACTIONS. */

/* Masked set actions: new = (old & ~mask) | (value & mask), as
 * OVS_ACTION_ATTR_SET_MASKED.  The L3 and L4 checksums are updated. */
struct ovs_bpf_act_eth {
    __u8 src[6], src_mask[6];
    __u8 dst[6], dst_mask[6];
};

struct ovs_bpf_act_ipv4 {
    __be32 src, src_mask;
    __be32 dst, dst_mask;
    __u8 tos, tos_mask;
    __u8 ttl, ttl_mask;
};

struct ovs_bpf_act_ipv6_addr {
    __u8 addr[16];
    __u8 mask[16];
};

struct ovs_bpf_act_ipv6_misc {
    __be32 label, label_mask;   /* Low 20 bits. */
    __u8 tclass, tclass_mask;
    __u8 hlimit, hlimit_mask;
};

struct ovs_bpf_act_l4 {
    __be16 src, src_mask;
    __be16 dst, dst_mask;
};

struct ovs_bpf_act_push_vlan {
    __be16 tpid;
    __be16 tci;                 /* Without VLAN_CFI. */
};

struct ovs_bpf_act_recirc {
    __u32 id;
};

struct ovs_bpf_act_hash {
    __u32 alg;                  /* enum ovs_hash_alg. */
    __u32 basis;
};

struct ovs_bpf_act_trunc {
    __u32 max_len;
};

/* OVS_BPF_ACTION_CLONE and OVS_BPF_ACTION_SAMPLE: the next 'n_actions' slots
 * are the nested actions.  SAMPLE runs them with probability
 * 'probability' / UINT32_MAX and otherwise skips them. */
struct ovs_bpf_act_nested {
    __u32 n_actions;
    __u32 probability;          /* SAMPLE only. */
};

struct ovs_bpf_act_meta {
    __u32 value, mask;
};

/* OVS_BPF_ACTION_CHECK_PKT_LEN: the next 'n_gt' slots are the actions if
 * the packet is longer than 'pkt_len' bytes, followed by an
 * OVS_BPF_ACTION_END slot that ends them, followed by the actions if it is
 * not, up to the end of the flow's actions (the translator puts nothing
 * after a check_pkt_len). */
struct ovs_bpf_act_check_pkt_len {
    __u32 pkt_len;
    __u32 n_gt;
};

/* OVS_BPF_ACTION_METER: the packet goes through meter 'id' of the 'meters'
 * map (struct ovs_bpf_meter), which drops it if it exceeds a band. */
struct ovs_bpf_act_meter {
    __u32 id;                   /* Below OVS_BPF_MAX_METERS. */
};

/* OVS_BPF_ACTION_SET_TUNNEL: set(tunnel(...)), the outer headers for the
 * next outputs to tunnel ports (OVS_BPF_PORT_F_TUNNEL).  The program keeps
 * them in the per-CPU scratch area; an output to a tunnel port gives them
 * to the kernel's collect_md device with bpf_skb_set_tunnel_key() before
 * redirecting the packet to it, and the device builds the outer headers.
 * 'flags' are the BPF_F_* flags of bpf_skb_set_tunnel_key()
 * (BPF_F_TUNINFO_IPV6 for an IPv6 underlay, BPF_F_ZERO_CSUM_TX without
 * FLOW_TNL_F_CSUM, BPF_F_DONT_FRAGMENT with FLOW_TNL_F_DONT_FRAGMENT); the
 * UDP ports are the device's (destination) and its hash (source), as with
 * the kernel datapath's devices. */
struct ovs_bpf_act_tunnel {
    __be64 tun_id;
    __be32 ipv4_src;            /* 0: the route's source address. */
    __be32 ipv4_dst;
    __u8 ipv6_src[16];          /* With BPF_F_TUNINFO_IPV6. */
    __u8 ipv6_dst[16];          /* With BPF_F_TUNINFO_IPV6. */
    __u8 tos;
    __u8 ttl;                   /* 0: the device's default. */
    __be16 tp_dst;              /* What set(tunnel) asked for (shown only). */
    __u32 flags;                /* BPF_F_* of bpf_skb_set_tunnel_key(). */
};

/* OVS_BPF_ACTION_CT: connection tracking in the kernel's nf_conntrack,
 * zone 'zone' (see bpf/actions-ct.h).  With OVS_BPF_CT_F_COMMIT a new
 * connection is committed and its mark set to ('mark' & 'mark_mask')
 * under 'mark_mask' (all of which an existing one gets too); with
 * OVS_BPF_CT_F_FORCE as well, a connection that the packet is the reply
 * direction of is replaced by a new one in the packet's direction.
 *
 * NAT (IPv4 and IPv6 TCP and UDP in BPF, see bpf/ct-nat.h): with
 * OVS_BPF_CT_F_NAT, a packet of a connection that has a NAT binding is
 * translated from the connection's tuples.  With OVS_BPF_CT_F_NAT_SRC or
 * _DST as well, a connection that the commit creates gets a binding to an
 * address of the range 'nat_addr' ... 'nat_addr' + 'nat_addr_span' and, if
 * 'nat_port_min' is not zero, a port of 'nat_port_min' ... 'nat_port_max'
 * (host order); otherwise the kernel keeps the packet's port or picks a
 * free one.  OVS_BPF_CT_F_NAT_RANDOM chooses the port at random rather
 * than from the flow's hash, OVS_BPF_CT_F_NAT_PERSISTENT the address from
 * the source address only.  A binding of the other IP version than the
 * packet's is not made (the connection is committed without it).
 *
 * Labels: with OVS_BPF_CT_F_LABEL (and commit), the next slot is an
 * OVS_BPF_ACTION_CT_LABEL argument slot (struct ovs_bpf_act_ct_label),
 * which the ct() program reads and skips: the connection's labels get
 * 'label' under 'mask'.  The kfuncs cannot write labels, so such a ct() of
 * TCP or UDP takes the slow path (bpf/ct-slow.h) unless the connection has
 * those labels already; ctnetlink writes them there. */
struct ovs_bpf_act_ct {
    __u16 zone;
    __u16 flags;                /* OVS_BPF_CT_F_*. */
    __u32 mark;
    __u32 mark_mask;            /* 0: the mark is left alone. */
    union {                     /* First address of the range. */
        __be32 ipv4;
        __u8 ipv6[16];
    } nat_addr;
    __u32 nat_addr_span;        /* Addresses after the first. */
    __u16 nat_port_min;         /* Host order; 0: any. */
    __u16 nat_port_max;         /* Host order, >= nat_port_min. */
    __u32 tp_id;                /* Timeout policy of a commit; 0: none. */
};
#define OVS_BPF_CT_F_COMMIT (1u << 0)
#define OVS_BPF_CT_F_FORCE (1u << 1)
#define OVS_BPF_CT_F_NAT (1u << 2)
#define OVS_BPF_CT_F_NAT_SRC (1u << 3)
#define OVS_BPF_CT_F_NAT_DST (1u << 4)
#define OVS_BPF_CT_F_NAT_RANDOM (1u << 5)
#define OVS_BPF_CT_F_NAT_PERSISTENT (1u << 6)
#define OVS_BPF_CT_F_NAT_IPV6 (1u << 7)     /* 'nat_addr' is IPv6. */
#define OVS_BPF_CT_F_LABEL (1u << 8)        /* A CT_LABEL slot follows. */
/* nat(src=0.0.0.0) or nat(src=::), all-zero SNAT: the packet's own source
 * address is the range ('nat_addr' is zero), so that the kernel keeps the
 * address and changes the port only if the tuple clashes, as the kernel
 * datapath does. */
#define OVS_BPF_CT_F_NAT_ZERO (1u << 9)

/* OVS_BPF_ACTION_CT_LABEL: the labels of the ct() in the slot before it
 * (both as OVS's ovs_u128 in memory), never an action of its own.  An
 * argument slot rather than two more members of struct ovs_bpf_act_ct:
 * with NAT's 16-byte address, tp_id and the ranges, the ct() argument is
 * 40 bytes, and 32 more would not fit the 56 of a slot; growing every slot
 * by 16 bytes would cost every flow 25% more flow-table memory (2.5 KiB
 * instead of 2 KiB) for an action that few flows have, while the argument
 * slot costs only the flows that set labels one of their 32 slots. */
struct ovs_bpf_act_ct_label {
    __u8 label[16];
    __u8 mask[16];
};

/* OVS_BPF_ACTION_PUSH_MPLS, _POP_MPLS and _SET_MPLS (bpf/actions-mpls.h),
 * of Ethernet frames only (the translator leaves the MPLS actions of a
 * packet without Ethernet header to ovs-vswitchd):
 *
 *   - PUSH_MPLS puts 'lse' in front of the label stack, or between the
 *     Ethernet header (and its VLAN tags) and the network header of a
 *     packet that is not MPLS, and makes the ethertype 'eth_type' (0x8847
 *     or 0x8848).
 *   - POP_MPLS takes the outermost label off an MPLS packet and makes the
 *     ethertype 'eth_type' (never a VLAN TPID); it leaves another packet
 *     alone.
 *   - SET_MPLS sets the outermost label stack entry to
 *     (old & ~'lse_mask') | ('lse' & 'lse_mask') (set(mpls) has an
 *     all-ones mask); it leaves a packet that is not MPLS alone.
 *
 * 'lse' is a whole label stack entry in network byte order (label, TC,
 * bottom of stack bit, TTL), as in OVS's struct ovs_key_mpls. */
struct ovs_bpf_act_mpls {
    __be32 lse;                 /* PUSH_MPLS, SET_MPLS. */
    __be32 lse_mask;            /* SET_MPLS. */
    __be16 eth_type;            /* PUSH_MPLS, POP_MPLS. */
    __u16 pad;
};

/* OVS_BPF_ACTION_PUSH_NSH_ETH, _POP_ETH_NSH and _SET_NSH
 * (bpf/actions-nsh.h), of Ethernet frames only:
 *
 *   - PUSH_NSH_ETH is push_nsh followed by push_eth: the frame (with its
 *     VLAN tags) goes behind the NSH header 'hdr' ('hdr_len' bytes as on
 *     the wire: MD type 1, or MD type 2 with at most
 *     OVS_BPF_NSH_PUSH_MAX_LEN - 8 bytes of TLVs) and a new Ethernet header
 *     from 'eth_src' to 'eth_dst', ethertype NSH.
 *   - POP_ETH_NSH is pop_eth followed by pop_nsh: the Ethernet frame that
 *     an NSH packet carries (next protocol Ethernet) is what is left.
 *   - SET_NSH sets the flags, TTL, service path header and (MD type 1)
 *     context to (old & ~mask) | (value & mask); set(nsh) has all-ones
 *     masks.  A packet that is not NSH is left alone. */
#define OVS_BPF_NSH_PUSH_MAX_LEN 40
struct ovs_bpf_act_push_nsh {
    __u8 eth_dst[6];
    __u8 eth_src[6];
    __u32 hdr_len;              /* 8 to OVS_BPF_NSH_PUSH_MAX_LEN, 4n. */
    __u8 hdr[OVS_BPF_NSH_PUSH_MAX_LEN];
};

struct ovs_bpf_act_set_nsh {
    __u8 flags, flags_mask;     /* 2 bits. */
    __u8 ttl, ttl_mask;         /* 6 bits. */
    __be32 path_hdr, path_hdr_mask;
    __be32 context[OVS_BPF_NSH_CONTEXT_WORDS];
    __be32 context_mask[OVS_BPF_NSH_CONTEXT_WORDS];
};

/* OVS_BPF_ACTION_ADD_MPLS_ETH and _POP_ETH_MPLS (bpf/actions-mpls-eth.h),
 * of Ethernet frames only:
 *
 *   - ADD_MPLS_ETH is add_mpls without the L3 flag followed by push_eth:
 *     the frame (with its VLAN tags) goes behind the label stack entry
 *     'lse' and a new Ethernet header from 'eth_src' to 'eth_dst',
 *     ethertype 'eth_type' (0x8847 or 0x8848).
 *   - POP_ETH_MPLS is pop_eth followed by pop_mpls(eth_type=0x6558): the
 *     Ethernet frame behind an MPLS packet's only label is what is left. */
struct ovs_bpf_act_add_mpls_eth {
    __u8 eth_dst[6];
    __u8 eth_src[6];
    __be32 lse;
    __be16 eth_type;
    __u16 pad;
};

/* OVS_BPF_ACTION_TNL_PUSH and _TNL_POP: native tunneling, as dpif-netdev does
 * it (bpf/actions-tnl.h).  ovs-vswitchd builds the outer headers (Ethernet,
 * IP, UDP and VXLAN, or GRE) from its route and neighbour tables; TNL_PUSH
 * puts them in front of the packet, with the lengths, the IPv4 checksum and
 * the UDP source port (from the packet's flow hash) filled in, and the actions
 * after it run on the encapsulated packet.  The 'header_len' bytes of the
 * header are in the OVS_BPF_ACTION_TNL_HDR argument slots that follow it
 * ('u.raw', OVS_BPF_TNL_HDR_SLOT bytes each, as many as needed), which the
 * TNL_PUSH program reads and skips, as the CT_LABEL slot of ct(): a header
 * does not fit in one slot, and a bigger slot would cost every flow.  TNL_POP
 * checks and takes off the outer headers of a packet for tunnel port 'port'
 * (UDP and VXLAN, or GRE for an OVS_BPF_PORT_F_GRE port), fills the key's
 * tunnel metadata from them and looks the inner packet up again with in_port
 * 'port' (a recirculation with the same recirc_id). */
#define OVS_BPF_TNL_HDR_SLOT 56
#define OVS_BPF_TNL_MAX_HDR (2 * OVS_BPF_TNL_HDR_SLOT)

enum ovs_bpf_tnl_type {
    OVS_BPF_TNL_VXLAN = 1,      /* Ethernet over VXLAN over UDP. */
    OVS_BPF_TNL_GRE = 2,        /* Ethernet (or, with OVS_BPF_TNL_F_L3,
                                 * IPv4 or IPv6) over GRE. */
};
#define OVS_BPF_TNL_F_IPV6 (1u << 0)    /* The outer header is IPv6. */
#define OVS_BPF_TNL_F_L3 (1u << 1)      /* After the BPF pop_eth: the
                                         * header replaces the stand-in
                                         * Ethernet header (VXLAN-GPE
                                         * carrying IPv4 or IPv6). */

struct ovs_bpf_act_tnl_push {
    __u32 tnl_port;             /* Shown only. */
    __u32 out_port;             /* Shown only. */
    __u16 header_len;           /* Bytes of header in the TNL_HDR slots. */
    __u8 tnl_type;              /* enum ovs_bpf_tnl_type. */
    __u8 flags;                 /* OVS_BPF_TNL_F_*. */
};

struct ovs_bpf_act_tnl_pop {
    __u32 port;                 /* The tunnel port (OVS_BPF_PORT_F_TUNNEL). */
};

/* One action slot: 64 bytes, so a flow's 32 slots are 2 KiB. */
struct ovs_bpf_action {
    __u32 type;                 /* enum ovs_bpf_action_type. */
    __u32 pad;
    union {
        struct ovs_bpf_act_output output;
        struct ovs_bpf_act_userspace userspace;
        struct ovs_bpf_act_eth eth;
        struct ovs_bpf_act_ipv4 ipv4;
        struct ovs_bpf_act_ipv6_addr ipv6_addr;
        struct ovs_bpf_act_ipv6_misc ipv6_misc;
        struct ovs_bpf_act_l4 l4;
        struct ovs_bpf_act_push_vlan push_vlan;
        struct ovs_bpf_act_recirc recirc;
        struct ovs_bpf_act_hash hash;
        struct ovs_bpf_act_trunc trunc;
        struct ovs_bpf_act_nested nested;
        struct ovs_bpf_act_meta meta;
        struct ovs_bpf_act_check_pkt_len check_pkt_len;
        struct ovs_bpf_act_meter meter;
        struct ovs_bpf_act_tunnel tunnel;
        struct ovs_bpf_act_ct ct;
        struct ovs_bpf_act_ct_label ct_label;
        struct ovs_bpf_act_mpls mpls;
        struct ovs_bpf_act_push_nsh push_nsh;
        struct ovs_bpf_act_set_nsh set_nsh;
        struct ovs_bpf_act_add_mpls_eth add_mpls_eth;
        struct ovs_bpf_act_tnl_push tnl_push;
        struct ovs_bpf_act_tnl_pop tnl_pop;
        __u8 raw[OVS_BPF_TNL_HDR_SLOT];
    } u;
};

/* ------------------------------------------------------------------ */
/* Flow table value.                                                  */
/* ------------------------------------------------------------------ */

/* Statistics of a flow's hits on some of the CPUs (see 'stats' of struct
 * ovs_bpf_flow). */
struct ovs_bpf_flow_stats {
    __u64 packets;
    __u64 bytes;
    __u64 used_ns;              /* CLOCK_MONOTONIC ns of the last hit, at
                                 * jiffy resolution
                                 * (bpf_ktime_get_coarse_ns()). */
    __u32 tcp_flags;            /* OR of the TCP flags seen. */
    __u32 pad;
};

/* A flow's statistics are in OVS_BPF_FLOW_STATS_SLOTS slots: CPU 'c' below
 * OVS_BPF_FLOW_STATS_SLOTS - 1 alone writes slot 'c', with plain additions
 * (the programs of one packet run on one CPU, one packet at a time); the
 * CPUs from OVS_BPF_FLOW_STATS_SLOTS - 1 on share the last slot, with
 * atomic operations.  ovs-vswitchd sums the slots (packets, bytes), ORs
 * their TCP flags and takes the latest 'used_ns'.  Atomic additions to one
 * shared counter cost about a tenth of an output-only hit (see
 * "Performance" in Documentation/topics/dpif-bpf.rst).  Slots in the entry
 * rather than a per-CPU map of their own: a new flow's entry, written by
 * ovs-vswitchd with zero statistics, starts from zero by construction (no
 * index to allocate, zero and reuse), and a dump reads the statistics with
 * the entries, in the same batch lookups.  Four slots keep the entry of
 * the usual table keys in the kernel's 512-byte allocation size. */
#define OVS_BPF_FLOW_STATS_SLOTS 4

/* A flow whose actions the BPF programs cannot run (more than
 * OVS_BPF_MAX_ACTIONS slots after translation, or an action without a BPF
 * program) is installed with OVS_BPF_FLOW_F_USERSPACE: its packets go up as
 * OVS_BPF_UPCALL_SLOW_PATH and ovs-vswitchd executes its actions. */
#define OVS_BPF_FLOW_F_USERSPACE (1u << 0)

/* A flow table entry.  A flow's action slots are in the entry itself if
 * there are at most OVS_BPF_FLOW_INLINE_ACTIONS of them, as for most flows;
 * a longer list is in the 'flow_actions' map (struct
 * ovs_bpf_flow_actions) under 'actions_id', a key that ovs-vswitchd never
 * gives twice in the life of a datapath, so that a lookup that found the
 * entry just before a modify or a delete finds the list gone at worst (the
 * packet then goes up as a miss), never another flow's list.
 *
 * Why not all 32 slots in the entry: the flow tables are hash maps without
 * preallocation, whose entries the kernel allocates at each flow install;
 * a 2 KiB entry (a 4 KiB slab object) took most of the CPU time of a flow
 * setup (see "Performance" in Documentation/topics/dpif-bpf.rst). */
#define OVS_BPF_FLOW_INLINE_ACTIONS 4

struct ovs_bpf_flow {
    struct ovs_bpf_flow_stats stats[OVS_BPF_FLOW_STATS_SLOTS];
    __u32 flags;                /* OVS_BPF_FLOW_F_*. */
    __u32 n_actions;            /* Slots in use, at most 32. */
    __u64 actions_id;           /* 'flow_actions' key of the slots if
                                 * 'n_actions' > OVS_BPF_FLOW_INLINE_ACTIONS,
                                 * otherwise 0. */
    struct ovs_bpf_action actions[OVS_BPF_FLOW_INLINE_ACTIONS];
};

/* The action slots of a flow with more than OVS_BPF_FLOW_INLINE_ACTIONS. */
struct ovs_bpf_flow_actions {
    struct ovs_bpf_action actions[OVS_BPF_MAX_ACTIONS];
};

/* ------------------------------------------------------------------ */
/* Datapath configuration, ports and statistics.                      */
/* ------------------------------------------------------------------ */

/* The order in which the lookup searches the masks: the masks in use,
 * those that matched the most packets lately first (ovs-vswitchd reorders
 * them from the 'mask_stats' counters, as the kernel datapath rebalances
 * its mask array), so that a packet of the busiest megaflows finds its flow
 * at the first probe however many masks there are.  The 'mask_order' array
 * map has two entries: ovs-vswitchd writes the one that the lookup does not
 * use, then switches 'mask_order' of struct ovs_bpf_dp_config to it, so
 * that a lookup never sees a half-written order. */
struct ovs_bpf_mask_order {
    __u32 n_masks;              /* Entries of 'mask_id' to search. */
    __u8 mask_id[OVS_BPF_MAX_MASKS];    /* 'flow_masks' indexes. */
};

/* The per-CPU mask cache ('mask_cache', a per-CPU array of
 * OVS_BPF_MASK_CACHE_SIZE entries, only the BPF programs write it): which
 * mask found the flow of the last packet whose key hashed
 * (ovs_bpf_mask_cache_hash()) to the entry, so that the next packet of
 * the same microflow probes that mask first, whatever its place in the
 * search order, as the kernel datapath's mask cache does.  The entry
 * holds no flow, only where to look first: the probe is a lookup of the
 * flow table under the mask as they are now, so a flow deleted since is
 * not found, and the mask is used only if it is still at 'pos' of the
 * search order in use (an index check that also turns away a mask removed
 * or whose slot was given to another mask); anything else falls back to
 * the search in order, which then rewrites the entry. */
#define OVS_BPF_MASK_CACHE_SIZE 1024    /* Per CPU; a power of 2. */
struct ovs_bpf_mask_cache_entry {
    __u32 hash;                 /* ovs_bpf_mask_cache_hash() of the key. */
    __u8 valid;                 /* Zero: an empty entry. */
    __u8 mask_id;               /* 'flow_masks' index... */
    __u8 pos;                   /* ...at this index of the search order. */
    __u8 pad;
};

/* The words of the flow key that the mask cache hashes: the metadata, the
 * Ethernet, network and transport headers (key words 0 to 11, up to and
 * including the transport ports), which tell microflows apart. */
#define OVS_BPF_MASK_CACHE_HASH_WORDS 12

/* The mask cache's hash of 'key' (OVS_BPF_KEY_WORDS words), for the BPF
 * lookup and for tests.  A sum of products by distinct odd constants: the
 * multiplications are independent of each other, so the CPU overlaps them
 * (a chained hash would cost a multiplication's latency per word), and
 * the final mix spreads every bit into the high half, which is kept. */
static inline __u32
ovs_bpf_mask_cache_hash(const __u64 *key)
{
    __u64 h = 0;

#ifdef __bpf__
#pragma unroll
#endif
    for (int j = 0; j < OVS_BPF_MASK_CACHE_HASH_WORDS; j++) {
        /* Odd: an even constant plus an odd one. */
        h += key[j] * (0x9e3779b97f4a7c15ULL + 2 * j * 0x632be59bd9b4e019ULL);
    }
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h >> 32;
}

/* Element 0 of the 'dp_config' array map, written by ovs-vswitchd. */
struct ovs_bpf_dp_config {
    __u32 mask_order;           /* Entry of 'mask_order' in use (0 or 1). */
    __u32 tap_ifindex;          /* ifindex of the downcall TAP device. */
    __u8 secret[OVS_BPF_SECRET_LEN];    /* Downcall authentication. */
    __u32 n_ct_tps;             /* Entries of 'ct_tps' (timeout policies):
                                 * with none, ct() skips the per-packet
                                 * 'ct_tp_conns' lookup. */
    __u32 ct_tcp_liberal;       /* Nonzero: TCP segments out of their
                                 * connection's window are not +inv
                                 * (dpctl/ct-disable-tcp-seq-chk). */
};

/* Value of the 'ports' array map, indexed by odp port number (__u32, below
 * OVS_BPF_MAX_PORTS).  An entry with 'ifindex' 0 is not a port.  (An array,
 * not a hash map: its lookup is a bounds check and an address computation
 * that the verifier inlines into the program.) */
struct ovs_bpf_port {
    __u32 ifindex;              /* Where OUTPUT to this port redirects. */
    __u32 flags;                /* OVS_BPF_PORT_F_*. */
};
/* Output to this port redirects to the ingress of 'ifindex' instead of its
 * egress (e.g. an internal port implemented as a veth whose host side is
 * the device the user sees). */
#define OVS_BPF_PORT_F_INGRESS (1u << 0)
/* The port is a tunnel device in collect_md mode (a VXLAN device created
 * with "external"): the ingress program fills the key's 'tun_*' fields
 * from the tunnel metadata the device attached to the packet
 * (bpf_skb_get_tunnel_key()), and an output to it applies the tunnel key
 * of the last OVS_BPF_ACTION_SET_TUNNEL (without one, the output fails). */
#define OVS_BPF_PORT_F_TUNNEL (1u << 1)
/* The port is a layer 3 port (a VXLAN-GPE device, ARPHRD_NONE): its
 * packets have no Ethernet header.  The ingress program sends an IPv4 or
 * IPv6 packet received on it up as an OVS_BPF_UPCALL_L3 upcall, unparsed,
 * and only a packet whose Ethernet header an OVS_BPF_ACTION_POP_ETH
 * removed may be output to it (the redirect to a device without link
 * layer takes the header off); see "Layer 3 ports" in
 * Documentation/topics/dpif-bpf.rst. */
#define OVS_BPF_PORT_F_L3 (1u << 2)
/* The port is a GRE port without a device ('ifindex' 0, with
 * OVS_BPF_PORT_F_TUNNEL): as dpif-netdev's, it exists for native tunneling
 * only.  OVS_BPF_ACTION_TNL_POP on the underlay port takes GRE packets off
 * for it (and only GRE), and nothing outputs to it (ofproto pushes the
 * header with OVS_BPF_ACTION_TNL_PUSH instead); an output to it drops, as
 * to any port without 'ifindex'. */
#define OVS_BPF_PORT_F_GRE (1u << 3)

/* How the ingress program finds 'in_port' from the ifindex of the device
 * that received the packet.  For an ifindex below
 * OVS_BPF_IFINDEX_PORTS_SIZE, entry 'ifindex' of the 'ifindex_ports' array
 * map holds the odp port number plus one (0: the device is not a port):
 * an array lookup is a bounds check and an address computation that the
 * verifier inlines, where a hash lookup costs about 10 ns per packet.
 * Larger ifindexes (the kernel hands them out in increasing order, so a
 * host that has made many devices has some) are in the 'ifindexes' hash
 * map: __u32 ifindex -> __u32 odp port number. */
#define OVS_BPF_IFINDEX_PORTS_SIZE 65536

/* The per-CPU '__u64' counters of the 'dp_stats' array map.  Its entries
 * are, in this order:
 *
 *   - the counters of OVS_BPF_DP_STATS, indexed by enum ovs_bpf_dp_stat;
 *   - one counter per drop reason of OVS_BPF_DROP_REASONS, at
 *     OVS_BPF_STAT_DROP(enum ovs_bpf_drop_reason);
 *   - one counter per action type, at OVS_BPF_STAT_ACTION_FAILED(enum
 *     ovs_bpf_action_type): the packets (or copies) that the program of
 *     that action type dropped because the action failed or could not be
 *     done (see Documentation/topics/dpif-bpf.rst).
 *
 * Every packet or copy of a packet that the BPF programs drop is counted
 * once, under one drop reason or one action type; a packet that is
 * forwarded, sent up or left to the kernel is counted under none.  The
 * counters are incremented on the drop path only.
 *
 * OVS_BPF_DP_STAT(ENUM, NAME, DESCRIPTION) for each counter, in index
 * order.  NAME is how "ovs-appctl dpif-bpf/show" prints it. */
#define OVS_BPF_DP_STATS(OVS_BPF_DP_STAT)                                   \
    OVS_BPF_DP_STAT(HIT, "hit", "Packets that matched a flow.")            \
    OVS_BPF_DP_STAT(MISSED, "missed", "Packets that matched no flow.")     \
    OVS_BPF_DP_STAT(MASK_HIT, "mask_hit", "Masks probed by hits (sum).")  \
    OVS_BPF_DP_STAT(MASK_CACHE_HIT, "mask_cache_hit",                      \
                    "Hits found under the mask the mask cache gave "       \
                    "(one probe).")                                        \
    OVS_BPF_DP_STAT(MASK_CACHE_MISS, "mask_cache_miss",                    \
                    "Lookups among several masks that searched the mask " \
                    "order: no cache entry, a stale one, or no flow "      \
                    "under its mask.")                                     \
    OVS_BPF_DP_STAT(DOWNCALL, "downcall", "Downcalls accepted.")           \
    OVS_BPF_DP_STAT(PARSE_INCOMPLETE, "parse_incomplete",                  \
                    "Packets sent up without a lookup: the parser "        \
                    "stopped at one of its bounds (also in 'missed').")    \
    OVS_BPF_DP_STAT(SLOW_PATH, "slow_path",                                \
                    "Packets of userspace-only flows.")                    \
    OVS_BPF_DP_STAT(CT_SLOW_PATH, "ct_slow_path",                          \
                    "Packets that ct() sent to ovs-vswitchd: protocols "   \
                    "the conntrack kfuncs do not track (ICMP...).")        \
    OVS_BPF_DP_STAT(CT_TCP_STATE, "ct_tcp_state",                          \
                    "TCP packets that ct() sent to ovs-vswitchd to write " \
                    "the new state of their connection.")                 \
    OVS_BPF_DP_STAT(CT_TCP_STATE_PENDING, "ct_tcp_state_pending",          \
                    "TCP packets that asked the move of their "            \
                    "connection's state that an earlier packet took to "   \
                    "ovs-vswitchd, which did not write it yet: not sent "  \
                    "up.")                                                 \
    OVS_BPF_DP_STAT(CT_TCP_WINDOW, "ct_tcp_window",                        \
                    "TCP segments out of their connection's window, "      \
                    "which ct() marked +inv.")                            \
    OVS_BPF_DP_STAT(CT_TCP_FLAGS, "ct_tcp_flags",                          \
                    "TCP packets whose flags are invalid, or invalid in "  \
                    "their connection's state, which ct() marked +inv.")

/* Indexes of the counters in 'dp_stats'. */
enum ovs_bpf_dp_stat {
#define OVS_BPF_DP_STAT_ENUM(ENUM, NAME, DESCRIPTION) OVS_BPF_STAT_##ENUM,
    OVS_BPF_DP_STATS(OVS_BPF_DP_STAT_ENUM)
#undef OVS_BPF_DP_STAT_ENUM
    __OVS_BPF_STAT_MAX
};

/* Why the BPF programs dropped a packet, other than the failure of an
 * action (counted per action type instead).  OVS_BPF_DROP_REASON(ENUM, NAME,
 * DESCRIPTION) for each, in index order; NAME is how "ovs-appctl
 * dpif-bpf/show" prints it.  Documentation/topics/dpif-bpf.rst says what to
 * do about each. */
#define OVS_BPF_DROP_REASONS(OVS_BPF_DROP_REASON)                           \
    OVS_BPF_DROP_REASON(FLOW_DROP, "flow_drop",                            \
                        "The actions ended without an output or userspace " \
                        "action: the drop the flow asked for.")            \
    OVS_BPF_DROP_REASON(PARSE_ERROR, "parse_error",                        \
                        "The headers could not be made linear.")           \
    OVS_BPF_DROP_REASON(UPCALL_LOST, "upcall_lost",                        \
                        "An upcall (miss, slow path or userspace action) " \
                        "did not fit in its ring or had no reader.")       \
    OVS_BPF_DROP_REASON(UPCALL_BUDGET, "upcall_budget",                    \
                        "A miss of a port over its upcall budget, while "  \
                        "its ring was filling up.")                        \
    OVS_BPF_DROP_REASON(NO_PORT, "output_no_port",                         \
                        "An output to a port that does not exist.")        \
    OVS_BPF_DROP_REASON(RECIRC_LIMIT, "recirc_limit",                      \
                        "More than OVS_BPF_MAX_RECIRC recirculations.")    \
    OVS_BPF_DROP_REASON(TAIL_CALL, "tail_call",                            \
                        "A tail call failed: no program for the action, " \
                        "or more than the kernel's 33 per packet.")        \
    OVS_BPF_DROP_REASON(DOWNCALL_FORGED, "downcall_forged",                \
                        "Downcalls with a bad ethertype, magic or "        \
                        "secret.")                                         \
    OVS_BPF_DROP_REASON(DOWNCALL_MALFORMED, "downcall_malformed",          \
                        "Downcalls with a bad version, action count or "   \
                        "length.")                                         \
    OVS_BPF_DROP_REASON(DOWNCALL_ERROR, "downcall_error",                  \
                        "Downcalls whose packet could not be restored "    \
                        "(skb not writable or not growable).")             \
    OVS_BPF_DROP_REASON(METER, "meter",                                    \
                        "A meter band's rate was exceeded: the drop the "  \
                        "meter asked for.")                                \
    OVS_BPF_DROP_REASON(TNL_POP_SHORT, "tnl_pop_short",                    \
                        "tnl_pop of a packet shorter than its outer "      \
                        "headers say or than a tunnel packet.")            \
    OVS_BPF_DROP_REASON(TNL_POP_BAD, "tnl_pop_bad",                        \
                        "tnl_pop of a packet with bad outer headers: IP "  \
                        "version, options, checksum or fragment, not UDP " \
                        "(GRE), VXLAN flags or reserved bits, a "          \
                        "VXLAN-GPE OAM packet or next protocol other "     \
                        "than IPv4, IPv6 or Ethernet, GRE flags other "    \
                        "than C, K and S or version, a bad GRE checksum " \
                        "or protocol other than IPv4, IPv6 or Ethernet.") \
    OVS_BPF_DROP_REASON(INTERNAL, "internal",                              \
                        "A per-CPU area or an action slot was missing: "   \
                        "cannot happen.")

enum ovs_bpf_drop_reason {
#define OVS_BPF_DROP_REASON_ENUM(ENUM, NAME, DESCRIPTION) \
    OVS_BPF_DROP_##ENUM,
    OVS_BPF_DROP_REASONS(OVS_BPF_DROP_REASON_ENUM)
#undef OVS_BPF_DROP_REASON_ENUM
    __OVS_BPF_DROP_MAX
};

/* Indexes in 'dp_stats' of the counter of drop reason 'REASON' and of the
 * failures of action type 'TYPE', and the number of entries of 'dp_stats'. */
#define OVS_BPF_STAT_DROP(REASON) (__OVS_BPF_STAT_MAX + (REASON))
#define OVS_BPF_STAT_ACTION_FAILED(TYPE) \
    (__OVS_BPF_STAT_MAX + __OVS_BPF_DROP_MAX + (TYPE))
#define OVS_BPF_N_DP_STATS \
    (__OVS_BPF_STAT_MAX + __OVS_BPF_DROP_MAX + __OVS_BPF_ACTION_MAX)

/* ------------------------------------------------------------------ */
/* Meters.                                                            */
/* ------------------------------------------------------------------ */

/* An entry of the 'meters' array map, indexed by meter id: an OpenFlow
 * meter with drop bands, as dpif-netdev and the kernel datapath run them.
 * Each band is a token bucket that fills at 'rate' tokens per ns up to
 * 'max_bucket'; a packet costs OVS_BPF_METER_PKT_COST tokens in a meter
 * with OVS_BPF_METER_F_PKTPS, and OVS_BPF_METER_BIT_COST per bit
 * otherwise, so that a rate in packets/s or kbit/s is the number of tokens
 * per ns with no division in the packet path:
 *
 *     1 packet/s = 1 token/ns    if a packet costs 10^9 tokens
 *     1 kbit/s   = 1 token/ns    if a bit costs 10^6 tokens
 *
 * A packet takes its cost from every band that holds it; if a band does
 * not, the packet exceeds it, and a packet that exceeds a band is dropped
 * and counted on the band of the highest rate among those it exceeds.
 * 'max_delta_ns' bounds the time credited at once (enough to fill the
 * bucket from empty), so that 'rate' * time cannot overflow.
 *
 * ovs-vswitchd writes a meter whole, with BPF_F_LOCK; the action program
 * updates it under 'lock'.  'n_bands' 0 is no meter: a packet passes. */
#define OVS_BPF_METER_F_PKTPS (1u << 0)   /* Rates in packets/s. */
#define OVS_BPF_METER_PKT_COST 1000000000ULL
#define OVS_BPF_METER_BIT_COST 1000000ULL

struct ovs_bpf_meter_band {
    __u64 rate;                 /* Tokens per ns. */
    __u64 max_bucket;           /* Tokens: the burst size. */
    __u64 max_delta_ns;         /* max_bucket / rate. */
    __u64 bucket;               /* Tokens now. */
    __u64 packets;              /* Packets dropped by this band. */
    __u64 bytes;
};

struct ovs_bpf_meter {
    struct bpf_spin_lock lock;
    __u32 n_bands;              /* At most OVS_BPF_MAX_METER_BANDS. */
    __u32 flags;                /* OVS_BPF_METER_F_*. */
    __u32 pad;
    __u64 used_ns;              /* bpf_ktime_get_ns() of the last packet. */
    __u64 packets;              /* Packets that went through the meter. */
    __u64 bytes;
    struct ovs_bpf_meter_band bands[OVS_BPF_MAX_METER_BANDS];
};

/* ------------------------------------------------------------------ */
/* ct() of reassembled IP fragments.                                  */
/* ------------------------------------------------------------------ */

/* IP fragments sent to ct() are reassembled in ovs-vswitchd (lib/ipf.c, see
 * lib/dpif-bpf-ipf.c), which then tracks the reassembled packet in the
 * kernel's conntrack as the ct action does: it writes the one entry of the
 * 'ct_reass' array map, runs the program OVS_BPF_PROG_CT_REASS on the
 * packet's headers (BPF_PROG_TEST_RUN) and reads the entry back.  Only
 * ovs-vswitchd runs that program, one run at a time. */
struct ovs_bpf_ct_reass {
    /* In: the packet's key, as the parser would make it, with the
     * metadata of the packet.  Out: the conntrack fields that ct() set,
     * and the addresses and ports after NAT. */
    struct ovs_bpf_flow_key key;
    struct ovs_bpf_act_ct act;  /* In: the ct() action. */
    __u16 l3_ofs;               /* In: offsets of the IP and L4 headers. */
    __u16 l4_ofs;
};

/* ------------------------------------------------------------------ */
/* Upcalls (BPF -> ovs-vswitchd), through the upcall rings.          */
/* ------------------------------------------------------------------ */

enum ovs_bpf_upcall_type {
    OVS_BPF_UPCALL_MISS = 1,        /* No flow matched. */
    OVS_BPF_UPCALL_ACTION,          /* A userspace() action. */
    OVS_BPF_UPCALL_SLOW_PATH,       /* Flow with OVS_BPF_FLOW_F_USERSPACE. */
    OVS_BPF_UPCALL_CT,              /* ct() of a protocol that the conntrack
                                     * kfuncs do not track (ICMP...): see
                                     * bpf/ct-slow.h. */
    OVS_BPF_UPCALL_L3,              /* A packet without Ethernet header
                                     * received on a layer 3 port
                                     * (OVS_BPF_PORT_F_L3), its ethertype in
                                     * 'l3_type': ovs-vswitchd forwards it
                                     * as a layer 3 packet. */
};

/* ovs_bpf_upcall 'flags'. */
enum ovs_bpf_upcall_flags {
    /* The skb is CHECKSUM_PARTIAL: its sender left the L4 checksum to
     * whoever transmits it.  The 16-bit field at 'csum_start' +
     * 'csum_offset' holds the folded pseudo-header sum, and the checksum
     * still to compute covers the bytes from 'csum_start' to the end.
     * Both offsets count from the first byte of the upcalled packet (its
     * Ethernet header), before ovs-vswitchd pushes back an accelerated
     * VLAN tag.  Without this flag the packet's checksums are whatever
     * they are and must be left alone. */
    OVS_BPF_UPCALL_F_CSUM_PARTIAL = 1 << 0,
};

/* The header of every upcall record; 'cap_len' bytes of the packet follow
 * it.  The packet is as the ingress program saw it, except that a VLAN tag
 * the kernel had already moved into skb metadata is not in the bytes: it is
 * in 'vlan_proto' (nonzero if and only if there is such a tag) and
 * 'vlan_tci' (the tag's TCI unchanged, DEI bit included), and ovs-vswitchd
 * pushes it back, as it was, before extracting the flow. */
struct ovs_bpf_upcall {
    __u32 type;                 /* enum ovs_bpf_upcall_type. */
    __u32 in_port;
    __u32 pkt_len;              /* Length of the packet. */
    __u32 cap_len;              /* Bytes of it that follow this header. */
    __u32 recirc_id;
    __u32 dp_hash;
    __u32 skb_priority;
    __u32 skb_mark;
    __be16 vlan_tci;
    __be16 vlan_proto;
    __be16 l3_type;             /* OVS_BPF_UPCALL_L3 only: skb->protocol. */
    /* OVS_BPF_UPCALL_CT only: nonzero 'ct_tcp_new' means that the ct() ran
     * in BPF (the conntrack fields of 'key_meta' are its result) and that
     * the packet's TCP connection goes from state 'ct_tcp_old' to
     * 'ct_tcp_new' (enum ovs_bpf_tcp_state), which ovs-vswitchd writes
     * into the connection before it sends the packet on with the actions
     * after the ct().  Zero: the ct() itself is for ovs-vswitchd. */
    __u8 ct_tcp_old;
    __u8 ct_tcp_new;
    __u32 flags;                /* enum ovs_bpf_upcall_flags. */
    __u16 csum_start;           /* With OVS_BPF_UPCALL_F_CSUM_PARTIAL. */
    __u16 csum_offset;          /* With OVS_BPF_UPCALL_F_CSUM_PARTIAL. */
    /* Nonzero if the skb is GSO (a TCP segment larger than the MTU from a
     * local socket, or what GRO made of several): the payload size of each
     * segment it stands for (skb_shinfo()->gso_size), which ovs-vswitchd
     * needs to cut it into those segments again on the way down. */
    __u16 gso_size;
    __u16 pad0;                 /* Zero. */
    __u32 userdata_len;         /* OVS_BPF_UPCALL_ACTION only. */
    /* OVS_BPF_UPCALL_CT only: the slot of the ct() action and the end of
     * the slots to run after it.  OVS_BPF_MAX_ACTIONS struct
     * ovs_bpf_action, the action list being run, follow this header,
     * before the packet. */
    __u32 ct_slot;
    __u32 ct_end;
    __u8 userdata[OVS_BPF_USERDATA_LEN];
    /* The conntrack and tunnel metadata of the packet's key (see
     * OVS_BPF_KEY_CT_TUN_OFS). */
    __u8 key_meta[OVS_BPF_KEY_CT_TUN_LEN];
    /* Flow table key of the flow of an OVS_BPF_UPCALL_SLOW_PATH upcall, so
     * that ovs-vswitchd finds the actions it keeps for it. */
    struct ovs_bpf_flow_table_key flow;
};

/* Upcall rings.  Each handler thread of ovs-vswitchd reads a ring of its
 * own: a BPF ring buffer (BPF_MAP_TYPE_RINGBUF) of OVS_BPF_UPCALL_RING_SIZE
 * bytes that ovs-vswitchd creates and stores at the handler's index in the
 * 'upcall_rings' array of maps.  An upcall goes to ring
 * (skb hash * n_rings) >> 32, so that the packets of one flow stay in order
 * in one ring.  Each record is a struct ovs_bpf_upcall followed by the
 * packet (for OVS_BPF_UPCALL_CT, by the action slots, then the packet).
 *
 * The upcall budget keeps a port that floods misses from filling the rings
 * that the other ports' misses need: each port has, on each CPU, a token
 * bucket of 'budget_burst_ns' / 'budget_interval_ns' upcalls refilled at
 * 10^9 / 'budget_interval_ns' upcalls per second (kept as its theoretical
 * arrival time, so that the packet path only adds and compares).  A miss
 * of a port whose bucket is empty is dropped (OVS_BPF_DROP_UPCALL_BUDGET)
 * if its ring holds 'budget_fill' bytes or more not read yet: a port alone
 * may use every handler, a port among others gets its share. */
#define OVS_BPF_MAX_UPCALL_RINGS 128
#define OVS_BPF_UPCALL_RING_SIZE (2u << 20)

/* Element 0 of the 'upcall_config' array map, written by ovs-vswitchd. */
struct ovs_bpf_upcall_config {
    __u32 n_rings;              /* Entries of 'upcall_rings' in use. */
    __u32 budget_fill;          /* Bytes unread in a ring from which the
                                 * budget applies (0: always). */
    __u64 budget_interval_ns;   /* Time one upcall costs; 0: no budget. */
    __u64 budget_burst_ns;      /* Time credit a bucket holds. */
};

/* ------------------------------------------------------------------ */
/* Downcalls (ovs-vswitchd -> BPF), written to the datapath's TAP.    */
/* ------------------------------------------------------------------ */

/* A downcall frame, as written to the TAP device, is
 *
 *     the packet, from its Ethernet header on, with its ethertype (bytes 12
 *         and 13) replaced by OVS_BPF_DOWNCALL_ETH_TYPE
 *     'n_actions' struct ovs_bpf_action
 *     the conntrack and tunnel metadata of the packet's key
 *         (OVS_BPF_KEY_CT_TUN_LEN bytes, see OVS_BPF_KEY_CT_TUN_OFS)
 *     struct ovs_bpf_downcall (the last sizeof(struct ovs_bpf_downcall)
 *                              bytes of the frame)
 *
 * that is, the metadata is a TRAILER.  The downcall program reads the
 * struct ovs_bpf_downcall at the end of the frame, checks 'magic' and
 * 'secret' (equal to dp_config.secret, which only root can read) and
 * 'abi_version', copies the actions and the key metadata to its per-CPU
 * scratch area, cuts the
 * trailer off with bpf_skb_change_tail(), writes 'eth_type' back, and runs
 * the actions like those of a flow on exactly the bytes ovs-vswitchd
 * wrote.  A frame whose ethertype, magic or secret does not match is
 * dropped and counted as OVS_BPF_DROP_DOWNCALL_FORGED; a frame with a bad
 * version, 'n_actions' or length as OVS_BPF_DROP_DOWNCALL_MALFORMED.
 *
 * Why a trailer and not a header after the Ethernet addresses: the only
 * helper that removes bytes in the middle of a TC packet,
 * bpf_skb_adjust_room(), refuses (-ENOTSUPP) any skb whose skb->protocol is
 * not IPv4 or IPv6, and skb->protocol of a frame received on the TAP is its
 * outer ethertype; bpf_skb_change_tail() has no such restriction.
 *
 * Why the stand-in ethertype: the TAP's receive path (tun_get_user()) runs
 * the flow dissector over the whole frame to set the skb's transport header
 * offset, and bpf_skb_change_tail() refuses to cut below that offset.  For
 * a truncated packet (an IPv4 IHL or an IPv6 extension header longer than
 * the packet, a VLAN tag and a cut header...) the dissector would read the
 * actions and the trailer as the rest of the headers and put the offset
 * past the packet's end, so the downcall could not be cut back to the
 * packet.  The dissector knows no OVS_BPF_DOWNCALL_ETH_TYPE and stops at
 * it.  The downcall program then restores what the receive path would have
 * made of the real ethertype (skb->protocol, the outer VLAN tag in skb
 * metadata), see bpf/downcall.h. */
#define OVS_BPF_DOWNCALL_MAGIC 0x4f565342   /* "OVSB" */
#define OVS_BPF_DOWNCALL_ETH_TYPE 0x88b6    /* IEEE local experimental 2. */

struct ovs_bpf_downcall {
    __u32 magic;                /* OVS_BPF_DOWNCALL_MAGIC. */
    __u32 abi_version;          /* OVS_BPF_ABI_VERSION. */
    __u8 secret[OVS_BPF_SECRET_LEN];
    __u32 in_port;
    __u32 n_actions;            /* <= OVS_BPF_MAX_ACTIONS. */
    __u32 recirc_id;
    __u32 dp_hash;
    __u32 skb_priority;
    __u32 skb_mark;
    __be16 eth_type;            /* The packet's own ethertype. */
    __u16 pad0;                 /* Zero. */
    __u32 pad1;                 /* Zero. */
};

/* ------------------------------------------------------------------ */
/* Conntrack timeout policies.                                        */
/* ------------------------------------------------------------------ */

/* The states of a connection that the BPF ct() (and ovs-vswitchd's ct slow
 * path, lib/dpif-bpf-ct-slow.c) can tell apart, each with the attribute of
 * a timeout policy (ovs-vsctl add-zone-tp, CT_DPIF_TP_ATTR_* of OVS's
 * lib/ct-dpif.h) that gives its timeout, and the kernel's default in
 * seconds (nf_conntrack_*_timeout*) for a connection without a policy or a
 * policy without that attribute.  A TCP connection takes the timeout of
 * its state (enum ovs_bpf_tcp_state below); one whose state is not known
 * (TCP_CONNTRACK_NONE: the write of its first state is under way) is
 * "new" until a reply, then established, unless its last packet had a FIN
 * (closing) or an RST (closed).  The TCP attributes retransmit and unack
 * name what needs TCP window tracking, which there is not: no effect. */
#define OVS_BPF_CT_TP_STATES                                              \
    /*            state         policy attribute  default */             \
    OVS_BPF_CT_TP(TCP_NEW,      TCP_SYN_SENT,     120)                   \
    OVS_BPF_CT_TP(TCP_EST,      TCP_ESTABLISHED,  432000)                \
    OVS_BPF_CT_TP(TCP_FIN,      TCP_FIN_WAIT,     120)                   \
    OVS_BPF_CT_TP(TCP_RST,      TCP_CLOSE,        10)                    \
    OVS_BPF_CT_TP(TCP_SYN_RECV, TCP_SYN_RECV,     60)                    \
    OVS_BPF_CT_TP(TCP_CLOSE_WAIT, TCP_CLOSE_WAIT, 60)                    \
    OVS_BPF_CT_TP(TCP_LAST_ACK, TCP_LAST_ACK,     30)                    \
    OVS_BPF_CT_TP(TCP_TIME_WAIT, TCP_TIME_WAIT,   120)                   \
    OVS_BPF_CT_TP(TCP_SYN_SENT2, TCP_SYN_SENT2,   120)                   \
    OVS_BPF_CT_TP(UDP_FIRST,    UDP_FIRST,        30)  /* The commit. */ \
    OVS_BPF_CT_TP(UDP_SINGLE,   UDP_SINGLE,       30)  /* Unreplied. */  \
    OVS_BPF_CT_TP(UDP_MULTIPLE, UDP_MULTIPLE,     120) /* Replied. */    \
    OVS_BPF_CT_TP(ICMP_FIRST,   ICMP_FIRST,       30)  /* Unreplied. */  \
    OVS_BPF_CT_TP(ICMP_REPLY,   ICMP_REPLY,       30)  /* Replied. */

enum ovs_bpf_ct_tp_state {
#define OVS_BPF_CT_TP(STATE, ATTR, DEFAULT) OVS_BPF_CT_TP_##STATE,
    OVS_BPF_CT_TP_STATES
#undef OVS_BPF_CT_TP
    OVS_BPF_N_CT_TP_STATES
};

/* ------------------------------------------------------------------ */
/* TCP connection states.                                             */
/* ------------------------------------------------------------------ */

/* The states of a TCP connection in the kernel's conntrack (enum
 * tcp_conntrack of include/uapi/linux/netfilter/nf_conntrack_tcp.h, with
 * its values), which the BPF programs read from the connection
 * (ct->proto.tcp.state) and ovs-vswitchd writes through ctnetlink
 * (CTA_PROTOINFO_TCP_STATE), each with the state of a timeout policy that
 * gives its timeout (NONE: see OVS_BPF_CT_TP_STATES). */
#define OVS_BPF_TCP_STATES                            \
    OVS_BPF_TCP_STATE(NONE,        TCP_NEW)           \
    OVS_BPF_TCP_STATE(SYN_SENT,    TCP_NEW)           \
    OVS_BPF_TCP_STATE(SYN_RECV,    TCP_SYN_RECV)      \
    OVS_BPF_TCP_STATE(ESTABLISHED, TCP_EST)           \
    OVS_BPF_TCP_STATE(FIN_WAIT,    TCP_FIN)           \
    OVS_BPF_TCP_STATE(CLOSE_WAIT,  TCP_CLOSE_WAIT)    \
    OVS_BPF_TCP_STATE(LAST_ACK,    TCP_LAST_ACK)      \
    OVS_BPF_TCP_STATE(TIME_WAIT,   TCP_TIME_WAIT)     \
    OVS_BPF_TCP_STATE(CLOSE,       TCP_RST)           \
    OVS_BPF_TCP_STATE(SYN_SENT2,   TCP_SYN_SENT2)

enum ovs_bpf_tcp_state {
#define OVS_BPF_TCP_STATE(NAME, TP) OVS_BPF_TCPS_##NAME,
    OVS_BPF_TCP_STATES
#undef OVS_BPF_TCP_STATE
    OVS_BPF_N_TCPS,
    /* What ovs_bpf_tcp_next() returns besides a state: */
    OVS_BPF_TCPS_KEEP = OVS_BPF_N_TCPS, /* The state does not change. */
    OVS_BPF_TCPS_REOPEN,                /* The packet ends the connection
                                         * and starts a new one. */
    OVS_BPF_TCPS_INVALID,               /* The packet is invalid in the
                                         * connection's state: +inv. */
};

/* TCP flags, in host order (struct ovs_bpf_flow_key 'tcp_flags' is in
 * network order). */
#define OVS_BPF_TCP_FIN 0x001
#define OVS_BPF_TCP_SYN 0x002
#define OVS_BPF_TCP_RST 0x004
#define OVS_BPF_TCP_ACK 0x010
#define OVS_BPF_TCP_URG 0x020

/* True if TCP flags 'flags' (host order) are a combination that the
 * kernel's TCP tracker accepts in any state (its tcp_error(), as of Linux
 * 6.x): one of SYN, SYN-ACK, RST, RST-ACK, FIN-ACK and ACK, with or without
 * URG for those without RST (SYN-ACK-URG aside).  PSH, ECE, CWR and NS do not
 * count.  Anything else (no flag at all, SYN with FIN or RST, a FIN without
 * ACK...) is invalid whatever the connection, as on the kernel
 * datapath. */
#define OVS_BPF_TCP_VALID_FLAGS                                             \
    ((1ULL << OVS_BPF_TCP_SYN)                                              \
     | (1ULL << (OVS_BPF_TCP_SYN | OVS_BPF_TCP_URG))                        \
     | (1ULL << (OVS_BPF_TCP_SYN | OVS_BPF_TCP_ACK))                        \
     | (1ULL << OVS_BPF_TCP_RST)                                            \
     | (1ULL << (OVS_BPF_TCP_RST | OVS_BPF_TCP_ACK))                        \
     | (1ULL << (OVS_BPF_TCP_FIN | OVS_BPF_TCP_ACK))                        \
     | (1ULL << (OVS_BPF_TCP_FIN | OVS_BPF_TCP_ACK | OVS_BPF_TCP_URG))      \
     | (1ULL << OVS_BPF_TCP_ACK)                                            \
     | (1ULL << (OVS_BPF_TCP_ACK | OVS_BPF_TCP_URG)))

static inline int
ovs_bpf_tcp_flags_valid(__u16 flags)
{
    return (OVS_BPF_TCP_VALID_FLAGS
            >> (flags & (OVS_BPF_TCP_FIN | OVS_BPF_TCP_SYN | OVS_BPF_TCP_RST
                         | OVS_BPF_TCP_ACK | OVS_BPF_TCP_URG))) & 1;
}

/* The state that a TCP connection in state 'old' goes to with a packet
 * whose TCP flags are 'flags' (host order), in the 'reply' direction or
 * the original one: a state, OVS_BPF_TCPS_KEEP, OVS_BPF_TCPS_REOPEN or
 * OVS_BPF_TCPS_INVALID.  The moves, and the packets called invalid, are
 * those of the kernel's TCP tracker (its state table,
 * nf_conntrack_proto_tcp.c), without its sequence and window checks
 * (bpf/ct-tcp-win.h has ours): the packet counts by its strongest flag,
 * RST, then SYN (with or without ACK), then FIN, then ACK.
 *
 * KEEP is a packet that moves nothing, or one that the kernel ignores (it
 * goes on with the connection's ct_state, and may be what resyncs a
 * tracker that lost track: a SYN of the original direction in an open
 * connection, a retransmitted SYN-ACK).  INVALID is one that the kernel
 * calls invalid, which is +trk+inv and changes nothing: a SYN-ACK of the
 * original direction (but after a simultaneous open), a SYN of the reply
 * direction after the handshake, a FIN or a client's ACK before the
 * SYN-ACK, flags that ovs_bpf_tcp_flags_valid() refuses.  A connection
 * still in NONE, which the kernel never has (its first state is not
 * written yet, see bpf/ct-slow.h), has no invalid packet here.  REOPEN is
 * the kernel's reopening of a closed connection by a new SYN (in
 * TIME_WAIT or CLOSE, or a reply SYN in TIME_WAIT): the old connection
 * ends and the packet is that of a new one.  The BPF ct()
 * (bpf/actions-ct.h) and ovs-vswitchd (lib/dpif-bpf-ct-slow.c), which
 * writes the states, both use it. */
static inline __u8
ovs_bpf_tcp_next(__u8 old, int reply, __u16 flags)
{
    __u8 invalid = (old == OVS_BPF_TCPS_NONE ? OVS_BPF_TCPS_KEEP
                    : OVS_BPF_TCPS_INVALID);

    if (old >= OVS_BPF_N_TCPS) {
        return OVS_BPF_TCPS_KEEP;
    }
    if (!ovs_bpf_tcp_flags_valid(flags)) {
        return invalid;
    }
    if (flags & OVS_BPF_TCP_RST) {
        return old == OVS_BPF_TCPS_NONE ? OVS_BPF_TCPS_KEEP
                                        : OVS_BPF_TCPS_CLOSE;
    }
    if ((flags & (OVS_BPF_TCP_SYN | OVS_BPF_TCP_ACK))
        == (OVS_BPF_TCP_SYN | OVS_BPF_TCP_ACK)) {
        /* The answer to a SYN: in the reply direction, or in the original
         * one after a simultaneous open.  Any other one of the reply
         * direction is a retransmission, ignored; of the original one, the
         * client's, which never sends one. */
        if (old == OVS_BPF_TCPS_SYN_SENT2
            || old == (reply ? OVS_BPF_TCPS_SYN_SENT : OVS_BPF_TCPS_SYN_RECV)) {
            return OVS_BPF_TCPS_SYN_RECV;
        }
        return reply ? OVS_BPF_TCPS_KEEP : invalid;
    }
    if (flags & OVS_BPF_TCP_SYN) {
        switch (old) {
        case OVS_BPF_TCPS_NONE:
            return reply ? OVS_BPF_TCPS_KEEP : OVS_BPF_TCPS_SYN_SENT;
        case OVS_BPF_TCPS_SYN_SENT:
            /* A retransmission, or the other end's SYN: simultaneous
             * open. */
            return reply ? OVS_BPF_TCPS_SYN_SENT2 : OVS_BPF_TCPS_SYN_SENT;
        case OVS_BPF_TCPS_SYN_SENT2:
            return OVS_BPF_TCPS_SYN_SENT2;
        case OVS_BPF_TCPS_TIME_WAIT:
            return OVS_BPF_TCPS_REOPEN;
        case OVS_BPF_TCPS_CLOSE:
            return reply ? OVS_BPF_TCPS_INVALID : OVS_BPF_TCPS_REOPEN;
        default:
            /* After the handshake: a client's SYN is ignored (the server
             * answers it, the kernel's tracker resyncs on that), a
             * server's is invalid. */
            return reply ? OVS_BPF_TCPS_INVALID : OVS_BPF_TCPS_KEEP;
        }
    }
    if (flags & OVS_BPF_TCP_FIN) {
        switch (old) {
        case OVS_BPF_TCPS_SYN_RECV:
        case OVS_BPF_TCPS_ESTABLISHED:
            return OVS_BPF_TCPS_FIN_WAIT;
        case OVS_BPF_TCPS_FIN_WAIT:
        case OVS_BPF_TCPS_CLOSE_WAIT:
            /* FINs in both directions (the kernel keeps one state for
             * both): the last ACK is awaited. */
            return OVS_BPF_TCPS_LAST_ACK;
        case OVS_BPF_TCPS_NONE:
        case OVS_BPF_TCPS_SYN_SENT:
        case OVS_BPF_TCPS_SYN_SENT2:
            /* No FIN before the SYN-ACK. */
            return invalid;
        default:
            return OVS_BPF_TCPS_KEEP;
        }
    }
    /* ACK (URG, PSH... aside: ovs_bpf_tcp_flags_valid() left no other). */
    switch (old) {
    case OVS_BPF_TCPS_NONE:
        /* A connection picked up in the middle, as the kernel does with
         * nf_conntrack_tcp_loose (its default). */
        return reply ? OVS_BPF_TCPS_KEEP : OVS_BPF_TCPS_ESTABLISHED;
    case OVS_BPF_TCPS_SYN_SENT:
    case OVS_BPF_TCPS_SYN_SENT2:
        /* Before the SYN-ACK: the client's ACK is invalid; the server's
         * may be that of a half-open connection, ignored. */
        return reply ? OVS_BPF_TCPS_KEEP : OVS_BPF_TCPS_INVALID;
    case OVS_BPF_TCPS_SYN_RECV:
        /* The third packet of the handshake. */
        return reply ? OVS_BPF_TCPS_KEEP : OVS_BPF_TCPS_ESTABLISHED;
    case OVS_BPF_TCPS_FIN_WAIT:
        return OVS_BPF_TCPS_CLOSE_WAIT;
    case OVS_BPF_TCPS_LAST_ACK:
        return OVS_BPF_TCPS_TIME_WAIT;
    default:
        return OVS_BPF_TCPS_KEEP;
    }
}

/* The most timeout policies, and connections with one, that the maps
 * below hold. */
#define OVS_BPF_MAX_CT_TPS 4096
#define OVS_BPF_MAX_CT_TP_CONNS 65536

/* A timeout policy: the value of the 'ct_tps' hash map, whose key is the
 * policy's id (a __u32 that ofproto-dpif allocates, never 0).  'timeout_ms'
 * is what the BPF programs and the ct slow path apply, by
 * enum ovs_bpf_ct_tp_state, the defaults filled in; 'present' and 'attrs'
 * are the policy as ovs-vswitchd was given it (ct_dpif_timeout_policy,
 * seconds), for it to give it back. */
#define OVS_BPF_CT_TP_MAX_ATTRS 32

struct ovs_bpf_ct_tp {
    __u32 timeout_ms[OVS_BPF_N_CT_TP_STATES];
    __u32 present;                          /* Bitmap of 'attrs'. */
    __u32 attrs[OVS_BPF_CT_TP_MAX_ATTRS];
};

/* The key of the 'ct_tp_conns' LRU hash map, whose value is the __u32 id of
 * the timeout policy that the commit of a connection gave it: its zone and
 * original tuple (IPv4 addresses in the first word of the arrays, the rest
 * zero).  For ICMP (the slow path's only), 'src_port' is the identifier
 * and 'dst_port' the type and code of the request. */
struct ovs_bpf_ct_tp_conn {
    __u16 zone;
    __u8 proto;
    __u8 pad;                   /* Zero. */
    __be32 src[4];
    __be32 dst[4];
    __be16 src_port;
    __be16 dst_port;
};

/* ------------------------------------------------------------------ */
/* TCP windows.                                                       */
/* ------------------------------------------------------------------ */

/* The window data of a TCP connection that ct() checks its segments
 * against (bpf/ct-tcp-win.h): the value of the 'ct_tcp_win' LRU hash map,
 * whose key is a struct ovs_bpf_ct_tp_conn.  'dir' is indexed by the
 * direction, 0 the original one.  ovs-vswitchd only deletes entries.  (An
 * LRU map cannot hold a bpf_spin_lock: the BPF programs take one of the
 * locks of their own 'ct_tcp_win_locks' array, by a hash of the key.) */
#define OVS_BPF_MAX_CT_TCP_WIN 65536

struct ovs_bpf_tcp_win_dir {
    __u32 end;                  /* Highest sequence number sent, + 1. */
    __u32 maxend;               /* Highest one the other side allows. */
    __u32 maxwin;               /* Largest window offered; 0: nothing seen
                                 * from this direction yet. */
    __u8 scale;                 /* Window scale of its window fields. */
    __u8 flags;                 /* OVS_BPF_TCPW_F_*. */
    __u16 pad;
};

#define OVS_BPF_TCPW_F_SCALE 0x01   /* Its SYN had the window scale option. */

struct ovs_bpf_tcp_win {
    struct ovs_bpf_tcp_win_dir dir[2];

    /* The last move of the connection's TCP state that a packet took up
     * for ovs-vswitchd to write (ovs_bpf_tcpw_move_up() of
     * bpf/ct-tcp-win.h): from state 'move_old' to 'move_new', at
     * 'move_ns' (bpf_ktime_get_ns()).  Zero: none (NONE to NONE is no
     * move). */
    __u64 move_ns;
    __u8 move_old;
    __u8 move_new;
    __u8 pad[6];
};

/* ------------------------------------------------------------------ */
/* Conntrack zone limits.                                             */
/* ------------------------------------------------------------------ */

/* An entry of the 'ct_zones' array map (BPF_F_MMAPABLE: ovs-vswitchd maps
 * it and updates 'count' with atomic operations as the BPF programs do),
 * indexed by zone; entry OVS_BPF_CT_ZONE_DEFAULT holds the default limit.
 * A commit that creates a connection in a zone adds one to its 'count'
 * first, and takes it back if that reaches the zone's limit (its own if
 * OVS_BPF_CT_ZONE_F_LIMIT, else the default; 0: none): the packet is
 * dropped, as the kernel datapath drops it.  The kernel tells the BPF
 * programs nothing when a connection ends, so ovs-vswitchd recounts the
 * zones that have a limit (lib/dpif-bpf-ct-limit.c). */
#define OVS_BPF_CT_ZONE_DEFAULT 65536
#define OVS_BPF_N_CT_ZONES (OVS_BPF_CT_ZONE_DEFAULT + 1)
#define OVS_BPF_CT_ZONE_F_LIMIT (1u << 0)

struct ovs_bpf_ct_zone {
    __u32 limit;
    __u32 flags;                /* OVS_BPF_CT_ZONE_F_*. */
    __s64 count;
};

#endif /* BPF_DATAPATH_ABI_H */
