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

/* clone() and sample(): nested actions that run on a copy of the packet.
 *
 * BPF cannot copy an skb for itself, so the nested actions run on the
 * packet itself, after the clone program has saved what they may change:
 * the first OVS_BPF_SNAPSHOT_LEN bytes, the length, the accelerated VLAN
 * tag, skb->priority and skb->mark, and the key.  When the chain reaches
 * the end of the nested slots ('clone_end') and more actions follow, the
 * run dispatcher sends it back to this program, which puts all of that
 * back.  When the nested actions are the last ones, nothing needs saving.
 *
 * What cannot be undone is refused rather than done wrong (the packet is
 * dropped and counted as a failure of the action refused: the nested
 * action, or the CLONE or SAMPLE of a nested clone):
 *  - a nested change of bytes beyond the snapshot, or a nested push/pop of
 *    a VLAN tag in the packet bytes (the length changes);
 *  - a clone inside a clone whose nested actions end before the outer
 *    one's;
 *  - recirc inside a clone followed by more actions (recirculation
 *    replaces the actions; the translator must not emit it).
 * lib/dpif-bpf-odp-actions.c installs flows needing these as userspace
 * flows. */

#ifndef BPF_ACTIONS_CLONE_H
#define BPF_ACTIONS_CLONE_H 1

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"

/* Puts the packet saved by the clone back, then goes on at 'clone_end'. */
static __always_inline int
ovs_bpf_clone_restore(struct __sk_buff *skb, struct ovs_bpf_scratch *s)
{
    struct ovs_bpf_vlan_tag vlan = ovs_bpf_vlan_tag_get(skb);
    __u32 snap_len = s->clone_snap_len;
    __u32 end = s->clone_end;

    s->clone_active = 0;
    if (skb->len != s->clone_len) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_CLONE);
    }
    if (!ovs_bpf_vlan_tag_equals(&vlan, &s->clone_vlan)) {
        /* Only the metadata tag changed (the length did not): TPID (802.1Q
         * or 802.1ad), PCP, DEI and VID go back as they were. */
        if ((vlan.present && bpf_skb_vlan_pop(skb))
            || ovs_bpf_vlan_tag_push(skb, &s->clone_vlan)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_CLONE);
        }
    }
    if (s->clone_dirty) {
        /* skb->csum of a CHECKSUM_COMPLETE packet covers the bytes after
         * the Ethernet header: restore those with BPF_F_RECOMPUTE_CSUM so
         * it follows, the Ethernet header without.
         *
         * Verifier: the length of the second store must be provably in
         * [1, OVS_BPF_SNAPSHOT_LEN - ETH_HLEN]. */
        __u32 rest = snap_len - ETH_HLEN;

        if (snap_len <= ETH_HLEN || rest > OVS_BPF_SNAPSHOT_LEN - ETH_HLEN
            || bpf_skb_store_bytes(skb, 0, s->clone_snap, ETH_HLEN, 0)
            || bpf_skb_store_bytes(skb, ETH_HLEN, s->clone_snap + ETH_HLEN,
                                   rest, BPF_F_RECOMPUTE_CSUM)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_CLONE);
        }
    }
    skb->priority = s->clone_priority;
    skb->mark = s->clone_mark;
    s->key = s->clone_key;
    s->tun_key = s->clone_tun_key;
    s->tun_flags = s->clone_tun_flags;
    s->tun_valid = s->clone_tun_valid;
    return ovs_bpf_run_actions(skb, s, end);
}

/* Starts the nested actions of the CLONE or SAMPLE slot 'idx'; 'type' is
 * which, for the drop counters. */
static __always_inline int
ovs_bpf_clone_start(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                    __u32 idx, __u32 n_nested, __u32 type)
{
    __u32 end = idx + 1 + n_nested;
    __u32 len = skb->len;
    __u32 snap_len;

    if (end >= s->n_actions) {
        /* Nothing after the nested actions: no copy needed. */
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    if (s->clone_active) {
        if (end != s->clone_end) {
            return ovs_bpf_action_failed(type);
        }
        /* Ends with the outer clone, whose restore covers both. */
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }

    snap_len = len < OVS_BPF_SNAPSHOT_LEN ? len : OVS_BPF_SNAPSHOT_LEN;
    /* Verifier: helper sizes must be provably nonzero. */
    if (snap_len < 1
        || bpf_skb_load_bytes(skb, 0, s->clone_snap, snap_len)) {
        return ovs_bpf_action_failed(type);
    }
    s->clone_snap_len = snap_len;
    s->clone_len = len;
    s->clone_vlan = ovs_bpf_vlan_tag_get(skb);
    s->clone_priority = skb->priority;
    s->clone_mark = skb->mark;
    s->clone_key = s->key;
    s->clone_tun_key = s->tun_key;
    s->clone_tun_flags = s->tun_flags;
    s->clone_tun_valid = s->tun_valid;
    s->clone_dirty = 0;
    s->clone_end = end;
    s->clone_active = 1;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_CLONE; also the restore point of a clone or sample (the
 * dispatcher tail-calls this program at 'clone_end'). */
static __always_inline int
ovs_bpf_act_clone__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                    struct ovs_bpf_action *a, __u32 idx)
{
    if (s->clone_active && idx >= s->clone_end) {
        return ovs_bpf_clone_restore(skb, s);
    }
    return ovs_bpf_clone_start(skb, s, idx, a->u.nested.n_actions,
                               OVS_BPF_ACTION_CLONE);
}

/* OVS_BPF_ACTION_SAMPLE: the nested actions with probability
 * 'probability' / UINT32_MAX, else skip them. */
static __always_inline int
ovs_bpf_act_sample__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                     struct ovs_bpf_action *a, __u32 idx)
{
    __u32 n, p;

    if (s->clone_active && idx >= s->clone_end) {
        /* Defensive: the dispatcher sends restores to the clone program. */
        return ovs_bpf_clone_restore(skb, s);
    }
    n = a->u.nested.n_actions;
    p = a->u.nested.probability;
    /* As the kernel datapath: 0 never samples, UINT32_MAX always. */
    if (p != 0xffffffff && (!p || bpf_get_prandom_u32() > p)) {
        return ovs_bpf_run_actions(skb, s, idx + 1 + n);
    }
    return ovs_bpf_clone_start(skb, s, idx, n, OVS_BPF_ACTION_SAMPLE);
}

#endif /* BPF_ACTIONS_CLONE_H */
