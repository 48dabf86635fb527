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

/* push_vlan and pop_vlan.  The kernel keeps the outermost tag of a packet
 * in skb metadata when it can (an "accelerated" tag); the helpers know
 * that: bpf_skb_vlan_push() puts the new tag in the metadata and moves a
 * tag already there into the packet bytes, bpf_skb_vlan_pop() removes the
 * metadata tag if there is one, else the first tag in the bytes.  Either
 * way the outermost tag is the one pushed or popped, as in OVS. */

#ifndef BPF_ACTIONS_VLAN_H
#define BPF_ACTIONS_VLAN_H 1

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"
#include "bpf/parse.h"

/* The packet grew or shrank in front of its L3 header by 'delta' bytes:
 * move the offsets the set-field actions use. */
static __always_inline void
ovs_bpf_shift_l3(struct ovs_bpf_scratch *s, int delta)
{
    if (s->l3_ofs) {
        s->l3_ofs += delta;
    }
    if (s->l4_ofs) {
        s->l4_ofs += delta;
    }
}

/* OVS_BPF_ACTION_PUSH_VLAN: pushes the tag of 'pv' on the packet and in
 * the key.  Returns false if it cannot, which the caller counts as a
 * failure of the action.  Also run by the lookup program (see
 * ovs_bpf_run_leading_step()). */
static __always_inline bool
ovs_bpf_push_vlan(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                  const struct ovs_bpf_act_push_vlan *pv)
{
    __u32 len = skb->len;
    __u16 tci;

    if (s->clone_active && skb->vlan_present) {
        /* The clone program can restore a changed metadata tag but not a
         * tag moved into the bytes; only allow the first case. */
        return false;
    }
    tci = bpf_ntohs(pv->tci) & ~OVS_BPF_VLAN_CFI;
    if (bpf_skb_vlan_push(skb, pv->tpid, tci)) {
        return false;
    }
    ovs_bpf_shift_l3(s, (int) skb->len - (int) len);
    s->key.vlans[1] = s->key.vlans[0];
    s->key.vlans[0].tpid = pv->tpid;
    s->key.vlans[0].tci = bpf_htons(tci | OVS_BPF_VLAN_CFI);
    return true;
}

/* OVS_BPF_ACTION_POP_VLAN, as ovs_bpf_push_vlan(). */
static __always_inline bool
ovs_bpf_pop_vlan(struct __sk_buff *skb, struct ovs_bpf_scratch *s)
{
    __u32 len = skb->len;

    if (s->clone_active && !skb->vlan_present) {
        /* Would change the bytes. */
        return false;
    }
    if (bpf_skb_vlan_pop(skb)) {
        return false;
    }
    ovs_bpf_shift_l3(s, (int) skb->len - (int) len);
    s->key.vlans[0] = s->key.vlans[1];
    s->key.vlans[1].tpid = 0;
    s->key.vlans[1].tci = 0;
    return true;
}

#endif /* BPF_ACTIONS_VLAN_H */
