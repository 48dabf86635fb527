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

/* Upcalls: a packet and its metadata go up to ovs-vswitchd through the
 * 'upcalls' perf event array, one record per packet on the ring of the
 * current CPU: struct ovs_bpf_upcall, then 'cap_len' packet bytes that
 * bpf_perf_event_output() copies straight from the skb. */

#ifndef BPF_UPCALL_H
#define BPF_UPCALL_H 1

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/maps.h"
#include "bpf/parse.h"
#include "bpf/skb-csum.h"

/* A perf record's size is a 16-bit field that also covers the record
 * header, the raw-data size word and struct ovs_bpf_upcall, so at most this
 * much of a (GSO) packet goes up; 'pkt_len' tells userspace the real
 * length. */
#define OVS_BPF_UPCALL_MAX_CAP 65000

/* Sends 'skb' up as an upcall of 'type', with the metadata of this pass
 * from 's': the record starts with the first 'hdr_len' bytes of
 * 's->upcall' and what follows it in 's' (struct ovs_bpf_upcall, or with
 * OVS_BPF_UPCALL_CT the action slots as well).  The caller has filled
 * 's->upcall.flow' (and, for OVS_BPF_UPCALL_ACTION, the userdata, for
 * OVS_BPF_UPCALL_CT 'ct_slot' and 'ct_end').  Counts
 * OVS_BPF_DROP_UPCALL_LOST if the ring is full or no one listens on this
 * CPU. */
static __always_inline void
ovs_bpf_upcall__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                 __u32 type, __u32 hdr_len)
{
    struct ovs_bpf_upcall *u = &s->upcall;
    __u64 cap = skb->len;

    if (cap > OVS_BPF_UPCALL_MAX_CAP) {
        cap = OVS_BPF_UPCALL_MAX_CAP;
    }
    u->type = type;
    u->in_port = s->key.in_port;
    u->pkt_len = skb->len;
    u->cap_len = cap;
    u->recirc_id = s->key.recirc_id;
    u->dp_hash = s->key.dp_hash;
    u->skb_priority = skb->priority;
    u->skb_mark = skb->mark;
    __builtin_memcpy(u->key_meta, (__u8 *) &s->key + OVS_BPF_KEY_CT_TUN_OFS,
                     OVS_BPF_KEY_CT_TUN_LEN);
    if (skb->vlan_present) {
        /* The TCI as it was on the wire: its DEI bit is the bit that
         * struct flow uses for "present" (VLAN_CFI), so presence is told
         * by 'vlan_proto' instead. */
        u->vlan_tci = bpf_htons((__u16) skb->vlan_tci);
        u->vlan_proto = (__be16) skb->vlan_proto;
    } else {
        u->vlan_tci = 0;
        u->vlan_proto = 0;
    }
    /* The bytes go up without the skb's checksum state: say it. */
    if (ovs_bpf_skb_csum_partial(skb, &u->csum_start, &u->csum_offset)) {
        u->flags = OVS_BPF_UPCALL_F_CSUM_PARTIAL;
    } else {
        u->flags = 0;
        u->csum_start = 0;
        u->csum_offset = 0;
    }
    u->gso_size = skb->gso_size;
    u->pad0 = 0;
    if (type != OVS_BPF_UPCALL_ACTION) {
        u->userdata_len = 0;
    }
    if (bpf_perf_event_output(skb, &upcalls, BPF_F_CURRENT_CPU | (cap << 32),
                              u, hdr_len) < 0) {
        ovs_bpf_drop(OVS_BPF_DROP_UPCALL_LOST);
    }
}

static __always_inline void
ovs_bpf_upcall(struct __sk_buff *skb, struct ovs_bpf_scratch *s, __u32 type)
{
    ovs_bpf_upcall__(skb, s, type, sizeof s->upcall);
}

/* Sends up 'skb', a packet without Ethernet header received on a layer 3
 * port (OVS_BPF_PORT_F_L3), as an OVS_BPF_UPCALL_L3 upcall: ovs-vswitchd
 * forwards it with its layer 3 flows, as it does the packets that lose
 * their Ethernet header in its own actions (see "Layer 3 ports" in
 * Documentation/topics/dpif-bpf.rst).  Counted as a miss: the packet left
 * the BPF programs without a flow. */
static __always_inline int
ovs_bpf_l3_upcall(struct __sk_buff *skb, struct ovs_bpf_scratch *s)
{
    ovs_bpf_count(OVS_BPF_STAT_MISSED);
    __builtin_memset(&s->upcall.flow, 0, sizeof s->upcall.flow);
    s->upcall.l3_type = (__be16) skb->protocol;
    s->upcall.ct_tcp_old = 0;
    s->upcall.ct_tcp_new = 0;
    ovs_bpf_upcall(skb, s, OVS_BPF_UPCALL_L3);
    return TC_ACT_SHOT;
}

#endif /* BPF_UPCALL_H */
