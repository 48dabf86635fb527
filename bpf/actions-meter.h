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

/* meter(id): the packet goes through an OpenFlow meter, a set of token
 * buckets (struct ovs_bpf_meter in bpf/datapath-abi.h), and is dropped if
 * it exceeds one of them.
 *
 * The meter is shared by every CPU: it is updated under its spin lock,
 * with no helper call inside (the verifier forbids calls while a lock is
 * held, so the clock is read before).  Inside a clone() or sample(), a
 * drop ends the nested actions only, as the kernel datapath drops the
 * clone's copy of the packet. */

#ifndef BPF_ACTIONS_METER_H
#define BPF_ACTIONS_METER_H 1

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"

/* Takes a packet of 'len' bytes through 'm' at time 'now'.  Returns the
 * band the packet exceeds with the highest rate, or -1 if it exceeds none.
 * The caller holds the meter's lock. */
static __always_inline int
ovs_bpf_meter_run(struct ovs_bpf_meter *m, __u64 now, __u32 len)
{
    __u64 delta = now > m->used_ns ? now - m->used_ns : 0;
    __u64 cost, best_rate = 0;
    int exceeded = -1;

    m->used_ns = now;
    m->packets++;
    m->bytes += len;
    cost = (m->flags & OVS_BPF_METER_F_PKTPS
            ? OVS_BPF_METER_PKT_COST
            : (__u64) len * 8 * OVS_BPF_METER_BIT_COST);

    /* Bounded by the constant, not by 'n_bands', which the verifier cannot
     * bound without a check it would walk in every iteration anyway. */
    for (int i = 0; i < OVS_BPF_MAX_METER_BANDS; i++) {
        struct ovs_bpf_meter_band *b = &m->bands[i];
        __u64 d, bucket;

        if (i >= m->n_bands) {
            break;
        }
        d = delta < b->max_delta_ns ? delta : b->max_delta_ns;
        bucket = b->bucket + d * b->rate;
        if (bucket > b->max_bucket) {
            bucket = b->max_bucket;
        }
        if (bucket >= cost) {
            bucket -= cost;
        } else if (b->rate > best_rate) {
            best_rate = b->rate;
            exceeded = i;
        }
        b->bucket = bucket;
    }
    if (exceeded >= 0) {
        /* Verifier: the AND bounds the index (a power of 2 bands). */
        struct ovs_bpf_meter_band *b
            = &m->bands[exceeded & (OVS_BPF_MAX_METER_BANDS - 1)];

        b->packets++;
        b->bytes += len;
    }
    return exceeded;
}

_Static_assert((OVS_BPF_MAX_METER_BANDS & (OVS_BPF_MAX_METER_BANDS - 1))
               == 0, "band indexes are bounded with a mask");

static __always_inline int
ovs_bpf_act_meter__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                    struct ovs_bpf_action *a, __u32 idx)
{
    struct ovs_bpf_meter *m;
    __u32 id, len;
    __u64 now;
    int exceeded;

    id = a->u.meter.id;
    m = bpf_map_lookup_elem(&meters, &id);
    if (!m) {
        /* The translator refuses ids out of range. */
        return ovs_bpf_action_failed(OVS_BPF_ACTION_METER);
    }
    /* The length the kernel datapath meters: the frame as received, with
     * an accelerated VLAN tag. */
    len = skb->len + (skb->vlan_present ? 4 : 0);
    now = bpf_ktime_get_ns();

    bpf_spin_lock(&m->lock);
    exceeded = ovs_bpf_meter_run(m, now, len);
    bpf_spin_unlock(&m->lock);

    if (exceeded < 0) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    ovs_bpf_drop(OVS_BPF_DROP_METER);
    if (s->clone_active) {
        /* Only the copy that the clone's actions work on is dropped: go on
         * after them (the clone program restores the packet). */
        return ovs_bpf_run_actions(skb, s, s->clone_end);
    }
    return TC_ACT_SHOT;
}

/* The meter of a packet that ovs-vswitchd runs the actions of (a flow that
 * only it can run): it runs this program with BPF_PROG_TEST_RUN on the
 * packet, with the meter id in cb[0], so that the packet goes through the
 * same buckets under the same lock as the packets of the BPF programs.
 * Returns TC_ACT_OK if the packet passes, TC_ACT_SHOT if the meter drops
 * it (counted as OVS_BPF_DROP_METER, as in the action program). */
static __always_inline int
ovs_bpf_meter_packet__(struct __sk_buff *skb)
{
    __u32 id = skb->cb[0];
    struct ovs_bpf_meter *m = bpf_map_lookup_elem(&meters, &id);
    __u64 now = bpf_ktime_get_ns();
    int exceeded;

    if (!m) {
        return TC_ACT_OK;
    }
    bpf_spin_lock(&m->lock);
    exceeded = ovs_bpf_meter_run(m, now, skb->len);
    bpf_spin_unlock(&m->lock);
    if (exceeded < 0) {
        return TC_ACT_OK;
    }
    return ovs_bpf_drop(OVS_BPF_DROP_METER);
}

#endif /* BPF_ACTIONS_METER_H */
