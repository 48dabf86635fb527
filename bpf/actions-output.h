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

/* OUTPUT, USERSPACE and TRUNC: the actions that send the packet
 * somewhere. */

#ifndef BPF_ACTIONS_OUTPUT_H
#define BPF_ACTIONS_OUTPUT_H 1

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"
#include "bpf/upcall.h"

/* Applies a pending trunc(max_len) to the output about to be done.  The
 * skb cannot be truncated for one copy only, so a truncated output must be
 * the last action of the chain (the translator installs other uses of
 * trunc as userspace flows); a truncated output that is not last is
 * skipped and counted as a failure of TRUNC rather than sent whole.
 * Returns false if the output must be skipped. */
static __always_inline bool
ovs_bpf_apply_trunc(struct __sk_buff *skb, bool last)
{
    __u32 max_len = skb->cb[OVS_BPF_CB_TRUNC];

    skb->cb[OVS_BPF_CB_TRUNC] = 0;      /* One output only, as OVS. */
    if (!max_len || max_len >= skb->len) {
        return true;
    }
    if (!last || bpf_skb_change_tail(skb, max_len, 0)) {
        ovs_bpf_action_failed(OVS_BPF_ACTION_TRUNC);
        return false;
    }
    return true;
}

/* OVS_BPF_ACTION_OUTPUT: runs this slot and every OUTPUT slot right after
 * it in one program, so flooding to N ports costs one tail call, not N. */
static __always_inline int
ovs_bpf_act_output__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                     struct ovs_bpf_action *a, __u32 idx)
{
    int i;

    for (i = 0; i < OVS_BPF_MAX_ACTIONS; i++) {
        bool last;
        int ret;

        a = ovs_bpf_slot(s, idx);
        if (!a) {
            break;
        }
        last = ovs_bpf_is_last_action(s, idx);
        if (a->type != OVS_BPF_ACTION_OUTPUT
            || (s->clone_active && idx >= s->clone_end)) {
            break;
        }
        skb->cb[OVS_BPF_CB_SENT] = 1;
        if (ovs_bpf_apply_trunc(skb, last)) {
            ret = ovs_bpf_output(skb, a->u.output.port, last);
            if (last) {
                return ret;
            }
        } else if (last) {
            return TC_ACT_SHOT;
        }
        idx++;
    }
    return ovs_bpf_run_actions(skb, s, idx);
}

/* OVS_BPF_ACTION_USERSPACE: an OVS_BPF_UPCALL_ACTION upcall with the
 * action's userdata; the chain goes on with the (unchanged) packet. */
static __always_inline int
ovs_bpf_act_userspace__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                        struct ovs_bpf_action *a, __u32 idx)
{
    __u32 len;

    len = a->u.userspace.userdata_len;
    s->upcall.userdata_len = len < OVS_BPF_USERDATA_LEN
                             ? len : OVS_BPF_USERDATA_LEN;
    __builtin_memcpy(s->upcall.userdata, a->u.userspace.userdata,
                     OVS_BPF_USERDATA_LEN);
    ovs_bpf_upcall(skb, s, OVS_BPF_UPCALL_ACTION);
    skb->cb[OVS_BPF_CB_SENT] = 1;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* OVS_BPF_ACTION_TRUNC: remembered for the next output only. */
static __always_inline int
ovs_bpf_act_trunc__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                    struct ovs_bpf_action *a, __u32 idx)
{
    skb->cb[OVS_BPF_CB_TRUNC] = a->u.trunc.max_len;
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

#endif /* BPF_ACTIONS_OUTPUT_H */
