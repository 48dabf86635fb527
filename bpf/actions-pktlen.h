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

/* check_pkt_len(size=N, gt(A), le(B)): one of two nested action lists,
 * chosen by the length of the packet.
 *
 * The slots are [CHECK_PKT_LEN][A...][END][B...]: A stops at the END slot,
 * B at the end of the flow's actions.  The translator (lib/dpif-bpf-odp.c)
 * emits this only when nothing follows the check_pkt_len, which is how
 * ovs-vswitchd uses it (the rest of the pipeline is in both lists).
 *
 * The length is the kernel datapath's: the whole frame from the Ethernet
 * header (skb->len at TC ingress includes it), plus 4 bytes for an
 * accelerated VLAN tag.  The kernel also sends a GSO packet whose every
 * segment fits to B; the segments' header length is not known here, so a
 * GSO packet is measured whole (documented in dpif-bpf.rst). */

#ifndef BPF_ACTIONS_PKTLEN_H
#define BPF_ACTIONS_PKTLEN_H 1

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"

#define OVS_BPF_VLAN_HLEN 4

static __always_inline int
ovs_bpf_act_check_pkt_len__(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                            struct ovs_bpf_action *a, __u32 idx)
{
    __u32 len, n_gt;

    len = skb->len + (skb->vlan_present ? OVS_BPF_VLAN_HLEN : 0);
    n_gt = a->u.check_pkt_len.n_gt;
    if (n_gt >= OVS_BPF_MAX_ACTIONS) {
        return ovs_bpf_action_failed(OVS_BPF_ACTION_CHECK_PKT_LEN);
    }
    if (len > a->u.check_pkt_len.pkt_len) {
        return ovs_bpf_run_actions(skb, s, idx + 1);
    }
    /* Past A and the END slot that ends it. */
    return ovs_bpf_run_actions(skb, s, idx + 2 + n_gt);
}

#endif /* BPF_ACTIONS_PKTLEN_H */
