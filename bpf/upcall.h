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

/* Upcalls: a packet and its metadata go up to ovs-vswitchd through one of
 * the ring buffers of 'upcall_rings' (one per handler thread, chosen by
 * the packet's hash), one record per packet: struct ovs_bpf_upcall, then
 * 'cap_len' packet bytes copied straight from the skb into the ring. */

#ifndef BPF_UPCALL_H
#define BPF_UPCALL_H 1

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/maps.h"
#include "bpf/parse.h"
#include "bpf/skb-csum.h"

/* At most this much of a (GSO) packet goes up; 'pkt_len' tells userspace
 * the real length.  (The limit of the perf records that carried upcalls
 * before the ring buffers, kept: ofproto has no use for more.) */
#define OVS_BPF_UPCALL_MAX_CAP 65000

/* Kfuncs (Linux 6.15 and later for bpf_dynptr_copy()): the packet goes
 * from the skb to the ring in one copy, linear or not. */
extern int bpf_dynptr_from_skb(struct __sk_buff *skb, __u64 flags,
                               struct bpf_dynptr *ptr) __ksym;
extern int bpf_dynptr_copy(struct bpf_dynptr *dst, __u32 dst_off,
                           struct bpf_dynptr *src, __u32 src_off,
                           __u32 size) __ksym;

/* Returns true if a miss of 'port' is over the port's upcall budget on
 * this CPU while 'ring' fills up, and takes the upcall's cost from the
 * budget otherwise (see struct ovs_bpf_upcall_config). */
static __always_inline bool
ovs_bpf_upcall_over_budget(const struct ovs_bpf_upcall_config *cfg,
                           __u32 port, void *ring)
{
    __u64 now, *tat;

    if (!cfg->budget_interval_ns) {
        return false;
    }
    tat = bpf_map_lookup_elem(&upcall_budget, &port);
    if (!tat) {
        return false;
    }
    now = bpf_ktime_get_ns();
    if (*tat < now) {
        *tat = now;             /* A full bucket holds no more. */
    }
    if (*tat - now > cfg->budget_burst_ns) {
        /* Empty: no upcall of this port's is owed room while its ring
         * still has plenty.  The bucket is not charged, so that it is full
         * again as soon as the port slows down. */
        return (!cfg->budget_fill
                || bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA)
                   >= cfg->budget_fill);
    }
    *tat += cfg->budget_interval_ns;
    return false;
}

/* Writes the upcall record 'u' ('hdr_len' bytes) and 'cap' bytes of 'skb'
 * from offset 'ofs' into the ring of the packet's hash.  A miss
 * ('budgeted') first passes its port's upcall budget. */
static __always_inline void
ovs_bpf_upcall_output(struct __sk_buff *skb, const struct ovs_bpf_upcall *u,
                      __u32 hdr_len, __u32 ofs, __u32 cap, bool budgeted)
{
    const struct ovs_bpf_upcall_config *cfg;
    struct bpf_dynptr rec, pkt;
    __u32 zero = 0, idx;
    void *ring;

    cfg = bpf_map_lookup_elem(&upcall_config, &zero);
    if (!cfg || !cfg->n_rings) {
        ovs_bpf_drop(OVS_BPF_DROP_UPCALL_LOST);
        return;
    }
    idx = ((__u64) bpf_get_hash_recalc(skb) * cfg->n_rings) >> 32;
    ring = bpf_map_lookup_elem(&upcall_rings, &idx);
    if (!ring) {
        ovs_bpf_drop(OVS_BPF_DROP_UPCALL_LOST);
        return;
    }
    if (budgeted && ovs_bpf_upcall_over_budget(cfg, u->in_port, ring)) {
        ovs_bpf_drop(OVS_BPF_DROP_UPCALL_BUDGET);
        return;
    }
    if (bpf_ringbuf_reserve_dynptr(ring, hdr_len + cap, 0, &rec)) {
        /* Full.  (A failed reservation is to be discarded all the same.) */
        bpf_ringbuf_discard_dynptr(&rec, 0);
        ovs_bpf_drop(OVS_BPF_DROP_UPCALL_LOST);
        return;
    }
    if (bpf_dynptr_write(&rec, 0, (void *) u, hdr_len, 0)
        || bpf_dynptr_from_skb(skb, 0, &pkt)
        || bpf_dynptr_copy(&rec, hdr_len, &pkt, ofs, cap)) {
        bpf_ringbuf_discard_dynptr(&rec, 0);
        ovs_bpf_drop(OVS_BPF_DROP_UPCALL_LOST);
        return;
    }
    bpf_ringbuf_submit_dynptr(&rec, 0);
}

/* Sends 'skb' up as an upcall of 'type', with the metadata of this pass
 * from 's': the record starts with the first 'hdr_len' bytes of
 * 's->upcall' and what follows it in 's' (struct ovs_bpf_upcall, or with
 * OVS_BPF_UPCALL_CT the action slots as well).  The caller has filled
 * 's->upcall.flow' (and, for OVS_BPF_UPCALL_ACTION, the userdata, for
 * OVS_BPF_UPCALL_CT 'ct_slot' and 'ct_end').  The packet that goes up is
 * what follows the first 'ofs' bytes of 'skb' (which must have more).
 * Counts OVS_BPF_DROP_UPCALL_LOST if the ring is full or no one listens,
 * and OVS_BPF_DROP_UPCALL_BUDGET for a miss over its port's budget. */
static __always_inline void
ovs_bpf_upcall_ofs(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                   __u32 type, __u32 hdr_len, __u32 ofs)
{
    struct ovs_bpf_upcall *u = &s->upcall;
    __u64 cap = skb->len > ofs ? skb->len - ofs : 0;

    if (cap > OVS_BPF_UPCALL_MAX_CAP) {
        cap = OVS_BPF_UPCALL_MAX_CAP;
    }
    u->type = type;
    u->in_port = s->key.in_port;
    u->pkt_len = skb->len - ofs;
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
    if (ovs_bpf_skb_csum_partial(skb, &u->csum_start, &u->csum_offset)
        && u->csum_start >= ofs) {
        u->flags = OVS_BPF_UPCALL_F_CSUM_PARTIAL;
        u->csum_start -= ofs;
    } else {
        /* (A checksum to fill in the bytes left behind is no concern of
         * the packet that goes up.) */
        u->flags = 0;
        u->csum_start = 0;
        u->csum_offset = 0;
    }
    u->gso_size = skb->gso_size;
    u->pad0 = 0;
    if (type != OVS_BPF_UPCALL_ACTION) {
        u->userdata_len = 0;
    }
    ovs_bpf_upcall_output(skb, u, hdr_len, ofs, cap,
                          type == OVS_BPF_UPCALL_MISS
                          || type == OVS_BPF_UPCALL_L3);
}

static __always_inline void
ovs_bpf_upcall__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                 __u32 type, __u32 hdr_len)
{
    ovs_bpf_upcall_ofs(skb, s, type, hdr_len, 0);
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
 * Documentation/topics/dpif-bpf.rst).  The packet, of ethertype
 * 'l3_type', starts 'ofs' bytes into 'skb' (after the outer headers of a
 * VXLAN-GPE packet that tnl_pop takes off, 0 on the port's own device).
 * Counted as a miss: the packet left the BPF programs without a flow. */
static __always_inline int
ovs_bpf_l3_upcall(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                  __be16 l3_type, __u32 ofs)
{
    ovs_bpf_count(OVS_BPF_STAT_MISSED);
    __builtin_memset(&s->upcall.flow, 0, sizeof s->upcall.flow);
    s->upcall.l3_type = l3_type;
    s->upcall.ct_tcp_old = 0;
    s->upcall.ct_tcp_new = 0;
    ovs_bpf_upcall_ofs(skb, s, OVS_BPF_UPCALL_L3, sizeof s->upcall, ofs);
    return TC_ACT_SHOT;
}

#endif /* BPF_UPCALL_H */
