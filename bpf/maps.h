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

/* The maps of the BPF datapath.  Every map except 'scratch' is part of the
 * ABI with ovs-vswitchd (names and value types in datapath-abi.h); the
 * loader may change 'max_entries' of the flow tables before loading.
 *
 * The maps of the ABI are pinned by libbpf, by name, in the directory the
 * loader gives as 'pin_root_path' (/sys/fs/bpf/ovs-bpf/<datapath>/), so
 * that bpftool and the tests find them.  The loader removes that directory
 * before loading: libbpf would otherwise reuse the maps a killed
 * ovs-vswitchd left pinned there. */

#ifndef BPF_MAPS_H
#define BPF_MAPS_H 1

#include <linux/bpf.h>
#include <stdbool.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"

/* Megaflows: masked key -> actions and statistics, one table per key
 * length (see "Flow tables" in datapath-abi.h).  The key type of table
 * 'flow_table_wN' is the first 8 + 8 * N bytes of struct
 * ovs_bpf_flow_table_key, declared for the map's BTF (bpftool shows keys
 * with it; the kernel refuses a map with a value type and no key type).
 * Not preallocated: a preallocated table would pin its memory whether or
 * not it is used, and a deleted entry of a preallocated map is reused at
 * once, under a lookup that may still read it. */
#define OVS_BPF_FLOW_TABLE_MAP(WORDS)                       \
    struct ovs_bpf_flow_table_key_w##WORDS {                \
        __u32 mask_id;                                      \
        __u32 pad;                                          \
        __u64 words[WORDS];                                 \
    };                                                      \
    struct {                                                \
        __uint(type, BPF_MAP_TYPE_HASH);                    \
        __type(key, struct ovs_bpf_flow_table_key_w##WORDS); \
        __type(value, struct ovs_bpf_flow);                 \
        __uint(max_entries, 65536);                         \
        __uint(map_flags, BPF_F_NO_PREALLOC);               \
        __uint(pinning, LIBBPF_PIN_BY_NAME);                \
    } flow_table_w##WORDS SEC(".maps")

OVS_BPF_FLOW_TABLE_MAP(2);
OVS_BPF_FLOW_TABLE_MAP(4);
OVS_BPF_FLOW_TABLE_MAP(6);
OVS_BPF_FLOW_TABLE_MAP(8);
OVS_BPF_FLOW_TABLE_MAP(12);
OVS_BPF_FLOW_TABLE_MAP(16);
OVS_BPF_FLOW_TABLE_MAP(24);
OVS_BPF_FLOW_TABLE_MAP(32);

/* The action lists of the flows with more than OVS_BPF_FLOW_INLINE_ACTIONS
 * slots, by the flow entry's 'actions_id' (see struct ovs_bpf_flow).  The
 * loader sizes it as the flow tables. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u64);
    __type(value, struct ovs_bpf_flow_actions);
    __uint(max_entries, 65536);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} flow_actions SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_mask);
    __uint(max_entries, OVS_BPF_MAX_MASKS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} flow_masks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_mask_order);
    __uint(max_entries, 2);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} mask_order SEC(".maps");

/* Packets that hit a flow of each mask, per CPU: a plain increment. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, __u64);
    __uint(max_entries, OVS_BPF_MAX_MASKS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} mask_stats SEC(".maps");

/* The mask cache (struct ovs_bpf_mask_cache_entry).  Not pinned: it is
 * only a hint, which a new object may start without. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_mask_cache_entry);
    __uint(max_entries, OVS_BPF_MASK_CACHE_SIZE);
} mask_cache SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_dp_config);
    __uint(max_entries, 1);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} dp_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, __u64);
    __uint(max_entries, OVS_BPF_N_DP_STATS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} dp_stats SEC(".maps");

/* Meters by id (struct ovs_bpf_meter): an array, since a meter id is an
 * index that ovs-vswitchd allocates from 0. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_meter);
    __uint(max_entries, OVS_BPF_MAX_METERS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} meters SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_port);
    __uint(max_entries, OVS_BPF_MAX_PORTS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ports SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, __u32);
    __uint(max_entries, OVS_BPF_IFINDEX_PORTS_SIZE);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ifindex_ports SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u32);
    __type(value, __u32);
    __uint(max_entries, OVS_BPF_MAX_PORTS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ifindexes SEC(".maps");

/* Stores in '*port' the odp port number of the device 'ifindex' and returns
 * true, or returns false if the device is not a port of this datapath (see
 * 'ifindex_ports' in datapath-abi.h). */
static __always_inline bool
ovs_bpf_ifindex_to_port(__u32 ifindex, __u32 *port)
{
    __u32 *p;

    if (ifindex < OVS_BPF_IFINDEX_PORTS_SIZE) {
        p = bpf_map_lookup_elem(&ifindex_ports, &ifindex);
        if (!p || !*p) {
            return false;
        }
        *port = *p - 1;
        return true;
    }
    p = bpf_map_lookup_elem(&ifindexes, &ifindex);
    if (!p) {
        return false;
    }
    *port = *p;
    return true;
}

/* The upcall rings, one per handler thread of ovs-vswitchd, which creates
 * them (see struct ovs_bpf_upcall_config): this is only their template. */
struct ovs_bpf_upcall_ring {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, OVS_BPF_UPCALL_RING_SIZE);
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
    __uint(max_entries, OVS_BPF_MAX_UPCALL_RINGS);
    __type(key, __u32);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __array(values, struct ovs_bpf_upcall_ring);
} upcall_rings SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct ovs_bpf_upcall_config);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} upcall_config SEC(".maps");

/* The upcall budget of each port on each CPU: the theoretical arrival time
 * of its next upcall (see struct ovs_bpf_upcall_config).  Per CPU, so that
 * a miss never waits for another CPU's write; not pinned: a restart gives
 * every port a full bucket. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, OVS_BPF_MAX_PORTS);
    __type(key, __u32);
    __type(value, __u64);
} upcall_budget SEC(".maps");

/* The programs of bpf/datapath.bpf.c that tail calls enter. */
#define OVS_BPF_ACTION_PROG_DECL(ENUM, NAME) \
    int ovs_bpf_act_##NAME(struct __sk_buff *);
OVS_BPF_ACTIONS(OVS_BPF_ACTION_PROG_DECL)
#undef OVS_BPF_ACTION_PROG_DECL
int ovs_bpf_ingress(struct __sk_buff *);

/* The tail call targets by slot (enum ovs_bpf_action_type, then enum
 * ovs_bpf_tailcall): libbpf fills the array when it loads the object. */
struct {
    __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
    __uint(key_size, sizeof(__u32));
    __uint(max_entries, __OVS_BPF_TAILCALL_MAX);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __array(values, int (void *));
} tailcalls SEC(".maps") = {
    .values = {
#define OVS_BPF_ACTION_SLOT(ENUM, NAME) \
        [OVS_BPF_ACTION_##ENUM] = (void *) &ovs_bpf_act_##NAME,
        OVS_BPF_ACTIONS(OVS_BPF_ACTION_SLOT)
#undef OVS_BPF_ACTION_SLOT
        /* Recirculation enters the ingress program again (see
         * bpf/datapath.bpf.c). */
        [OVS_BPF_TAILCALL_LOOKUP] = (void *) &ovs_bpf_ingress,
    },
};

/* Bytes of packet headers saved by a clone() so that the original packet
 * can be restored after the nested actions: enough for Ethernet, two VLAN
 * tags, an IPv6 header with a few extension headers and a TCP header. */
#define OVS_BPF_SNAPSHOT_LEN 192

/* A packet's accelerated VLAN tag, the one in skb metadata rather than in
 * its bytes ('present' 0: none), as the actions that must put it back
 * save it (ovs_bpf_vlan_tag_get() and ovs_bpf_vlan_tag_push() in
 * bpf/actions.h).  The TPID is kept whole: the kernel takes 802.1Q and
 * 802.1ad tags, and bpf_skb_vlan_push() turns any other TPID into
 * 802.1Q. */
struct ovs_bpf_vlan_tag {
    __u32 present;
    __be16 tpid;
    __u16 tci;                  /* Host order, as skb->vlan_tci. */
};

/* The per-CPU state of the packet being processed.  All programs of one
 * packet run on one CPU without being preempted by another packet (TC runs
 * in softirq context and tail calls do not leave it; bpf_clone_redirect()
 * queues to the backlog of the target device instead of processing it
 * synchronously), so one entry per CPU is enough and nothing here is
 * shared between CPUs.  Not part of the ABI: the tests read it by name. */
struct ovs_bpf_scratch {
    /* The packet's key: parsed headers plus the metadata (in_port,
     * recirc_id, dp_hash, skb_priority, skb_mark) of this pass. */
    struct ovs_bpf_flow_key key;

    /* The upcall header, built in place.  'upcall.flow' doubles as the
     * masked lookup key, so a SLOW_PATH or ACTION upcall of a flow carries
     * the flow table key of that flow with no extra copy. */
    struct ovs_bpf_upcall upcall;

    /* Actions of the current downcall, or the slots of the current flow
     * that the chain of tail calls runs (from the first one that the
     * lookup program does not run in the flow's entry on), copied at
     * lookup time, at the same indexes.  Right after 'upcall': an
     * OVS_BPF_UPCALL_CT record is both (bpf/ct-slow.h). */
    struct ovs_bpf_action actions[OVS_BPF_MAX_ACTIONS];

    /* Offsets found by the parser, from the first byte of packet data
     * (which at TC is the Ethernet header); only meaningful for IPv4/IPv6.
     * 'l4_ofs' is 0 when there is no L4 header (later fragment, truncated
     * or unknown protocol). */
    __u16 l3_ofs;
    __u16 l4_ofs;

    /* The IPv6 header is followed by a routing header with segments left:
     * the destination in the header is not the final one, so a change of
     * it does not change the L4 checksum (as in OVS and the kernel). */
    __u32 ipv6_rh;

    /* The number of slots of 'actions'. */
    __u32 n_actions;

    /* clone()/sample() being run: its nested actions end before slot
     * 'clone_end'; the original packet is restored there. */
    __u32 clone_active;
    __u32 clone_end;
    __u32 clone_len;            /* skb->len at clone time. */
    __u32 clone_priority;
    __u32 clone_mark;
    __u32 clone_snap_len;
    __u32 clone_dirty;          /* A nested action changed packet bytes. */
    struct ovs_bpf_vlan_tag clone_vlan;
    struct ovs_bpf_flow_key clone_key;
    __u8 clone_snap[OVS_BPF_SNAPSHOT_LEN];

    /* The tunnel key of the last OVS_BPF_ACTION_SET_TUNNEL of this packet,
     * ready for bpf_skb_set_tunnel_key() with 'tun_flags', for the outputs
     * to tunnel ports (bpf/tunnel.h).  'tun_valid' is cleared for every
     * packet that enters from a port or a downcall and kept across
     * recirculation, as the kernel datapath keeps a set(tunnel) in the
     * skb. */
    struct bpf_tunnel_key tun_key;
    __u32 tun_flags;
    __u32 tun_valid;
    /* The same, saved by clone() and restored after its actions, as a
     * set(tunnel(...)) inside a clone() does not last beyond it. */
    struct bpf_tunnel_key clone_tun_key;
    __u32 clone_tun_flags;
    __u32 clone_tun_valid;

    /* How the ingress program, which is also 'tailcalls' slot
     * OVS_BPF_TAILCALL_LOOKUP, was entered: enum ovs_bpf_reentry.  Set
     * just before the tail call, cleared by the ingress program.  A tail
     * call runs on the same CPU, right away. */
    __u32 reentry;

    /* Nonzero if the packet fields of 'key' (and 'l3_ofs', 'l4_ofs',
     * 'ipv6_rh') are the parser's for the packet as it is now: set by a
     * complete parse, cleared by every action that may change the packet
     * (ovs_bpf_action_keeps_packet()).  A recirculation then looks the
     * packet up again without parsing it again (ovs_bpf_process()), as
     * the kernel datapath re-extracts its key only if an action
     * invalidated it. */
    __u32 key_parsed;

    /* ovs_bpf_coarse_now(): the tick of this CPU ('jiffies') for which
     * 'clock_ns' holds bpf_ktime_get_coarse_ns(). */
    __u64 clock_jiffies;
    __u64 clock_ns;
};

_Static_assert(__builtin_offsetof(struct ovs_bpf_scratch, actions)
               == __builtin_offsetof(struct ovs_bpf_scratch, upcall)
                  + sizeof(struct ovs_bpf_upcall),
               "an OVS_BPF_UPCALL_CT record is 'upcall' and 'actions'");

/* ovs_bpf_scratch 'reentry'. */
enum ovs_bpf_reentry {
    OVS_BPF_REENTRY_NONE,       /* A packet received on a port. */
    OVS_BPF_REENTRY_RECIRC,     /* recirc(): parse and look up again, with
                                 * the metadata in 'key'. */
    OVS_BPF_REENTRY_DOWNCALL,   /* A downcall: parse, then run the actions
                                 * in 'actions', with the metadata in
                                 * 'key'. */
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_scratch);
    __uint(max_entries, 1);
} scratch SEC(".maps");

static __always_inline struct ovs_bpf_scratch *
ovs_bpf_scratch_get(void)
{
    __u32 zero = 0;

    return bpf_map_lookup_elem(&scratch, &zero);
}

/* ct() of a reassembled IP fragment (bpf/ct-reass.h): the entry that
 * ovs-vswitchd writes and reads back, and the scratch area of the run.
 * That one is not per-CPU: the program runs in ovs-vswitchd's
 * BPF_PROG_TEST_RUN, where a softirq of the same CPU may run the ingress
 * program in between and take the per-CPU 'scratch'; ovs-vswitchd runs it
 * one packet at a time. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_ct_reass);
    __uint(max_entries, 1);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ct_reass SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_scratch);
    __uint(max_entries, 1);
} ct_reass_scratch SEC(".maps");

/* Conntrack timeout policies by id, and the policy of each connection that
 * a commit gave one (see datapath-abi.h).  The connections' map is an LRU:
 * the kernel says nothing to the BPF programs when a connection ends, so
 * its entry stays until a new commit of the same tuple replaces it or the
 * LRU takes it back. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u32);
    __type(value, struct ovs_bpf_ct_tp);
    __uint(max_entries, OVS_BPF_MAX_CT_TPS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ct_tps SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __type(key, struct ovs_bpf_ct_tp_conn);
    __type(value, __u32);
    __uint(max_entries, OVS_BPF_MAX_CT_TP_CONNS);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ct_tp_conns SEC(".maps");

/* Zone limits and the zones' connection counts (see datapath-abi.h). */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ovs_bpf_ct_zone);
    __uint(max_entries, OVS_BPF_N_CT_ZONES);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
} ct_zones SEC(".maps");

static __always_inline struct ovs_bpf_dp_config *
ovs_bpf_config_get(void)
{
    __u32 zero = 0;

    return bpf_map_lookup_elem(&dp_config, &zero);
}

/* Per-CPU counters: a plain increment is race free. */
static __always_inline void
ovs_bpf_count(__u32 stat)
{
    __u64 *v = bpf_map_lookup_elem(&dp_stats, &stat);

    if (v) {
        *v += 1;
    }
}

static __always_inline void
ovs_bpf_count_n(__u32 stat, __u64 n)
{
    __u64 *v = bpf_map_lookup_elem(&dp_stats, &stat);

    if (v) {
        *v += n;
    }
}

/* Counts a drop for 'reason' (enum ovs_bpf_drop_reason) and returns the
 * verdict that drops the packet.  Only drop paths call this, so a packet
 * that goes through pays nothing for the drop counters. */
static __always_inline int
ovs_bpf_drop(__u32 reason)
{
    ovs_bpf_count(OVS_BPF_STAT_DROP(reason));
    return TC_ACT_SHOT;
}

/* Counts a drop for a failure of an action of 'type' (enum
 * ovs_bpf_action_type) and returns the verdict that drops the packet. */
static __always_inline int
ovs_bpf_action_failed(__u32 type)
{
    ovs_bpf_count(OVS_BPF_STAT_ACTION_FAILED(type));
    return TC_ACT_SHOT;
}

#endif /* BPF_MAPS_H */
