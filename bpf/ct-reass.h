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

/* ct() of a reassembled IP fragment, for ovs-vswitchd.
 *
 * BPF cannot hold packets, so IP fragments that meet a ct() are reassembled
 * in ovs-vswitchd (lib/ipf.c, through lib/dpif-bpf-ipf.c).  The reassembled
 * packet is tracked in the kernel's conntrack exactly as the ct action
 * tracks a packet, by this program, which ovs-vswitchd runs on the
 * packet's headers with BPF_PROG_TEST_RUN: the key, the action and the
 * header offsets are in the 'ct_reass' map entry (struct ovs_bpf_ct_reass),
 * and the key with its conntrack fields goes back there.  NAT rewrites the
 * headers it was given, which come back as the test run's output.
 *
 * The program runs ovs_bpf_ct_apply() of bpf/actions-ct.h: a fragmented
 * connection is the same kernel connection as an unfragmented one. */

#ifndef BPF_CT_REASS_H
#define BPF_CT_REASS_H 1

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions-ct.h"
#include "bpf/maps.h"

static __always_inline int
ovs_bpf_ct_reass__(struct __sk_buff *skb)
{
    struct ovs_bpf_ct_reass *io;
    struct ovs_bpf_scratch *s;
    __u32 zero = 0;
    int verdict;

    io = bpf_map_lookup_elem(&ct_reass, &zero);
    s = bpf_map_lookup_elem(&ct_reass_scratch, &zero);
    if (!io || !s) {
        return TC_ACT_SHOT;
    }
    __builtin_memcpy(&s->key, &io->key, sizeof s->key);
    s->l3_ofs = io->l3_ofs;
    s->l4_ofs = io->l4_ofs;
    s->ipv6_rh = 0;
    s->clone_active = 0;
    verdict = (ovs_bpf_ct_apply(skb, s, &io->act, NULL)
               ? TC_ACT_SHOT : TC_ACT_OK);
    __builtin_memcpy(&io->key, &s->key, sizeof io->key);
    return verdict;
}

#endif /* BPF_CT_REASS_H */
