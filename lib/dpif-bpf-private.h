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

#ifndef DPIF_BPF_PRIVATE_H
#define DPIF_BPF_PRIVATE_H 1

/* The state of a BPF datapath, shared by the files of the dpif provider:
 * dpif-bpf.c, which owns it, and the files of its parts (the megaflow table
 * in dpif-bpf-flow-table.c and its parts, the ports in dpif-bpf-port.c, the
 * execute path in dpif-bpf-execute.c...).  Not for use outside
 * lib/dpif-bpf*.c. */

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/datapath-abi.h"
#include "dpif-bpf.h"
#include "dpif-bpf-upcall.h"
#include "dpif-provider.h"
#include "openvswitch/hmap.h"
#include "openvswitch/list.h"
#include "openvswitch/types.h"
#include "ovs-thread.h"
#include "util.h"

struct dpif_bpf_obj;
struct dpif_bpf_upcalls;
struct match;
struct seq;

/* One mask of the BPF mask list. */
struct dp_bpf_mask {
    struct ovs_bpf_mask entry;  /* As in 'flow_masks' (compiled). */
    unsigned int refcnt;        /* Flows using it; 0 = free slot. */
    uint64_t hits;              /* 'mask_stats' at the last rebalance. */
};

struct dp_bpf_flow {
    struct hmap_node ufid_node; /* In struct dp_bpf's 'flows'. */
    struct hmap_node tkey_node; /* In struct dp_bpf's 'flows_by_tkey'. */
    ovs_u128 ufid;
    struct ovs_bpf_flow_table_key tkey;
    uint32_t flags;             /* OVS_BPF_FLOW_F_*. */
    uint64_t actions_id;        /* Of its BPF entry (struct ovs_bpf_flow). */

    /* struct dp_bpf's 'flow_seq' when the flow's BPF entry was written
     * with statistics of its own (a new flow, a modify): a dump whose
     * batch read of the BPF flow tables began earlier reads its statistics
     * alone (see dp_bpf_dump_snapshot in dpif-bpf-flow-dump.c). */
    uint64_t seq;

    /* The statistics of the flow's BPF entry as the batch read of the dump
     * snapshot 'snap_gen' found them (see dp_bpf_dump_snapshot in
     * dpif-bpf-flow-dump.c); 0 if none has. */
    uint64_t snap_gen;
    struct dpif_flow_stats snap_stats;

    /* Packets that ovs-vswitchd forwarded with the flow's actions, on
     * behalf of the flow (see dp_bpf_forward_miss() in dpif-bpf-recv.c), added
     * to the statistics of its BPF entry. */
    struct dpif_flow_stats up_stats;

    /* Nonnull for a flow of packets that are not Ethernet frames (a layer
     * 3 packet_type), which the BPF programs never see: it has no BPF entry
     * ('tkey' unused, not in 'flows_by_tkey'), ovs-vswitchd matches
     * packets against '*l3_match' and runs its actions (see "Layer 3
     * packets" in Documentation/topics/dpif-bpf.rst). */
    struct match *l3_match;
    struct ovs_list l3_node;    /* In struct dp_bpf's 'l3_flows'. */

    /* As given to flow_put(), for dumps and the slow path. */
    struct nlattr *key;
    size_t key_len;
    struct nlattr *mask;
    size_t mask_len;
    struct nlattr *actions;
    size_t actions_len;
};

struct dp_bpf {
    char *name;
    const struct dpif_class *class;
    int ref_cnt;                /* Protected by dp_bpf_mutex. */
    bool destroyed;

    struct dpif_bpf_obj *obj;
    uint8_t secret[OVS_BPF_SECRET_LEN];

    /* Names of the kernel objects of this datapath: the TAP device, the pin
     * directory and the hidden ends of internal ports are named after the
     * datapath and, if set, the OVS_BPF_INSTANCE environment variable. */
    char *instance;

    /* Downcall TAP device. */
    int tap_fd;
    int tap_ifindex;
    char tap_name[IFNAMSIZ];
    bool tap_created_qdisc;

    struct ovs_mutex mutex;
    struct hmap ports OVS_GUARDED;
    struct seq *port_seq;       /* Changes when ports change. */
    struct hmap flows OVS_GUARDED;          /* By ufid. */
    struct hmap flows_by_tkey OVS_GUARDED;  /* By flow table key. */
    struct ovs_list l3_flows OVS_GUARDED;   /* Flows with 'l3_match'. */
    uint64_t flow_seq OVS_GUARDED;          /* Last 'seq' of a flow. */
    uint64_t actions_id OVS_GUARDED;        /* Last 'actions_id' given. */
    struct dp_bpf_mask masks[OVS_BPF_MAX_MASKS] OVS_GUARDED;
    uint32_t n_masks OVS_GUARDED;           /* Masks in use. */
    /* The search order of the masks in use (struct ovs_bpf_mask_order),
     * busiest first, and the 'mask_order' entry that holds it. */
    uint8_t mask_order[OVS_BPF_MAX_MASKS] OVS_GUARDED;
    uint32_t mask_order_sel OVS_GUARDED;
    /* Timeout policies in 'ct_tps', for 'dp_config' (dpif-bpf-ct-tp.c). */
    uint32_t n_ct_tps OVS_GUARDED;
    /* TCP window checks off (dpctl/ct-disable-tcp-seq-chk), for
     * 'dp_config' (dpif-bpf-ct.c). */
    bool ct_tcp_liberal OVS_GUARDED;
    long long int next_rebalance OVS_GUARDED;   /* In msec. */
    uint32_t flow_limit OVS_GUARDED;
    uint32_t max_masks OVS_GUARDED;

    /* ofproto's callback for the misses of layer 3 packets, which
     * ovs-vswitchd itself recirculates (register_upcall_cb()). */
    upcall_callback *upcall_cb OVS_GUARDED;
    void *upcall_aux OVS_GUARDED;

    /* Upcalls.  Nonnull while upcalls are enabled (recv_set()). */
    struct ovs_rwlock upcall_rwlock;
    struct dpif_bpf_upcalls *upcalls OVS_GUARDED_BY(upcall_rwlock);
    uint32_t n_handlers OVS_GUARDED_BY(upcall_rwlock);
    struct dpif_bpf_upcall_budget upcall_budget OVS_GUARDED_BY(upcall_rwlock);

    /* IP fragments through ct() (dpif-bpf-ipf.c): reassembly, and the one
     * run at a time of the ct program on a reassembled packet. */
    struct ipf *ipf;
    uint32_t ipf_hash_basis;
    struct ovs_mutex ct_reass_mutex;
};

struct dpif_bpf {
    struct dpif dpif;
    struct dp_bpf *dp;
    uint64_t last_port_seq;
};

static inline struct dpif_bpf *
dpif_bpf_cast(const struct dpif *dpif)
{
    dpif_assert_class(dpif, &dpif_bpf_class);
    return CONTAINER_OF(dpif, struct dpif_bpf, dpif);
}

static inline struct dp_bpf *
get_dp_bpf(const struct dpif *dpif)
{
    return dpif_bpf_cast(dpif)->dp;
}

/* Writes the mask order in use, the TAP's ifindex, the secret and the
 * number of timeout policies into the BPF 'dp_config' map (dpif-bpf.c). */
int dp_bpf_write_config(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);

/* Sum over the CPUs of a __u64 entry of a per-CPU array map
 * (dpif-bpf.c). */
int dp_bpf_percpu_sum(int fd, uint32_t idx, uint64_t *sum);

#endif /* dpif-bpf-private.h */
