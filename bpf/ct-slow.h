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

/* The slow path of ct(): the packets that the conntrack kfuncs cannot
 * track.
 *
 * bpf_skb_ct_lookup() and bpf_skb_ct_alloc() take TCP and UDP only
 * (-EPROTO for anything else).  ct() of an unfragmented IPv4 or IPv6
 * packet of any other protocol (ICMP, ICMPv6, SCTP, GRE, IGMP...) sends it
 * up to ovs-vswitchd as an OVS_BPF_UPCALL_CT upcall, with the action list
 * being run and the slot of the ct() in it.  ovs-vswitchd tracks it in the
 * same nf_conntrack table through ctnetlink (lib/dpif-bpf-ct-slow.c), with
 * the kernel's ICMP and generic trackers' rules, sets the conntrack fields
 * of the packet's metadata, translates it for NAT, and sends it back down
 * with the actions after the ct(): the rest of the list runs in BPF as if
 * the ct() had run here.
 *
 * Every packet of such a connection takes this path, the established ones
 * too (the kfuncs cannot look them up): "ct_slow_path" of "ovs-appctl
 * dpif-bpf/show" counts them.
 *
 * A ct(commit) with labels (OVS_BPF_CT_F_LABEL) of a TCP or UDP packet
 * takes it too when it has labels to write: no kfunc writes them, and a
 * connection that bpf_skb_ct_alloc() makes has no room for them (see
 * lib/dpif-bpf-ct-slow.c and lib/dpif-bpf-ct-labels.c).  One whose connection has the labels already
 * stays in BPF (bpf/actions-ct.h).
 *
 * Inside a clone(), the copy that the clone's actions work on goes up with
 * the actions up to the end of the clone, and the packet goes on after the
 * clone here, as after a meter that drops the copy. */

#ifndef BPF_CT_SLOW_H
#define BPF_CT_SLOW_H 1

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/maps.h"
#include "bpf/upcall.h"

/* True if ct() of the packet whose key is 'k' takes the slow path: an
 * unfragmented IP packet of a protocol other than TCP and UDP.  (IP
 * fragments are for reassembly, a packet that is not IP is +trk+inv.) */
static __always_inline bool
ovs_bpf_ct_is_slow(const struct ovs_bpf_flow_key *k)
{
    return (k->eth_type == bpf_htons(0x0800)
            || k->eth_type == bpf_htons(0x86dd))
           && !k->nw_frag
           && k->nw_proto != IPPROTO_TCP && k->nw_proto != IPPROTO_UDP;
}

/* Sends the packet of 's' up for the ct() in slot 'idx' and the actions
 * after it, and returns the program's verdict.  With 's->upcall.ct_tcp_new'
 * nonzero, the ct() ran here already, and the packet goes up only for
 * ovs-vswitchd to write its connection's new TCP state (see "TCP
 * connection states" in datapath-abi.h): counted as ct_tcp_state, not
 * ct_slow_path. */
static __always_inline int
ovs_bpf_ct_slow_path(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                     __u32 idx)
{
    struct ovs_bpf_upcall *u = &s->upcall;

    u->ct_slot = idx;
    u->ct_end = s->clone_active ? s->clone_end : s->n_actions;
    ovs_bpf_count(u->ct_tcp_new ? OVS_BPF_STAT_CT_TCP_STATE
                                : OVS_BPF_STAT_CT_SLOW_PATH);
    ovs_bpf_upcall__(skb, s, OVS_BPF_UPCALL_CT,
                     sizeof s->upcall + sizeof s->actions);
    skb->cb[OVS_BPF_CB_SENT] = 1;
    if (s->clone_active) {
        return ovs_bpf_run_actions(skb, s, s->clone_end);
    }
    return TC_ACT_SHOT;
}

#endif /* BPF_CT_SLOW_H */
