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

/* The BPF datapath: one object, loaded by lib/dpif-bpf-loader.c.
 *
 *   ovs_bpf_ingress     TC ingress of every datapath port: parse, look up,
 *                       run the flow's actions or send a miss upcall.  Also
 *                       'tailcalls' slot OVS_BPF_TAILCALL_LOOKUP: parse and
 *                       look up again after recirc(), or parse and run the
 *                       actions of a downcall.  (One program for all, so
 *                       that the kernel verifies the parser, the bulk of
 *                       the object's load time, once.)
 *   ovs_bpf_act_*       'tailcalls' slot = enum ovs_bpf_action_type: one
 *                       program per action type.
 *   ovs_bpf_downcall    TC ingress of the datapath's TAP device: checks the
 *                       actions sent down by ovs-vswitchd and tail calls
 *                       ovs_bpf_ingress to run them.
 *
 * The 'tailcalls' prog array is initialised with the programs in
 * bpf/maps.h: an action's program is ovs_bpf_act_NAME for each
 * OVS_BPF_ACTION(ENUM, NAME) of datapath-abi.h.  This file only declares the
 * programs; each concern is in its own header. */

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"

/* The ABI version that this object declares and checks downcalls against.
 * The test suite builds a second object, bpf/datapath-abi-next.bpf.o, with
 * -DOVS_BPF_TEST_ABI_BUMP=1: the same programs and layouts under the next
 * version, which an ovs-vswitchd run with the environment variable of the
 * same name accepts, to test an upgrade across ABI versions. */
#ifndef OVS_BPF_TEST_ABI_BUMP
#define OVS_BPF_TEST_ABI_BUMP 0
#endif
#define OVS_BPF_OBJ_ABI_VERSION (OVS_BPF_ABI_VERSION + OVS_BPF_TEST_ABI_BUMP)
#include "bpf/maps.h"
#include "bpf/parse.h"
#include "bpf/upcall.h"
#include "bpf/lookup.h"
#include "bpf/actions.h"
#include "bpf/actions-output.h"
#include "bpf/actions-set.h"
#include "bpf/actions-vlan.h"
#include "bpf/actions-mpls.h"
#include "bpf/actions-nsh.h"
#include "bpf/actions-mpls-eth.h"
#include "bpf/actions-tnl.h"
#include "bpf/actions-meta.h"
#include "bpf/actions-clone.h"
#include "bpf/actions-meter.h"
#include "bpf/actions-pktlen.h"
#include "bpf/actions-tunnel.h"
#include "bpf/tunnel.h"
#include "bpf/actions-ct.h"
#include "bpf/ct-reass.h"
#include "bpf/downcall.h"

/* Checked by ovs-vswitchd against the OVS_BPF_ABI_VERSION it was built
 * with.  The first .rodata variable in every version of the object, so that
 * the loader finds it at the same place in an object of another version. */
const volatile __u32 ovs_bpf_abi_version = OVS_BPF_OBJ_ABI_VERSION;

/* Set by the loader to OVS's flow_vlan_limit before loading: see
 * bpf/parse.h. */
const volatile __u32 ovs_bpf_vlan_limit = 2;

SEC("tc")
int
ovs_bpf_ingress(struct __sk_buff *skb)
{
    struct ovs_bpf_port *port;
    struct ovs_bpf_scratch *s;
    bool downcall, parsed;
    __u32 in_port;

    s = ovs_bpf_scratch_get();
    if (!s) {
        return ovs_bpf_drop(OVS_BPF_DROP_INTERNAL);
    }
    if (s->reentry == OVS_BPF_REENTRY_NONE) {
        if (!ovs_bpf_ifindex_to_port(skb->ingress_ifindex, &in_port)) {
            /* Not (or no longer) a port of this datapath: leave the packet
             * to the kernel stack rather than black-holing it. */
            return TC_ACT_OK;
        }
        ovs_bpf_cb_init(skb);
        s->key.in_port = in_port;
        s->key.recirc_id = 0;
        s->key.dp_hash = 0;
        ovs_bpf_key_zero(&s->key, OVS_BPF_KEY_CT_TUN_OFS, sizeof s->key);
        s->tun_valid = 0;
        port = bpf_map_lookup_elem(&ports, &in_port);
        if (port && port->flags & OVS_BPF_PORT_F_TUNNEL) {
            ovs_bpf_tunnel_rx(skb, &s->key);
        }
        /* A layer 3 port's IP packets have no Ethernet header for the
         * parser; what it carries with one (ETH_P_TEB, Ethernet over
         * VXLAN-GPE) is an Ethernet frame like any other. */
        if (port && port->flags & OVS_BPF_PORT_F_L3
            && (skb->protocol == bpf_htons(ETH_P_IP)
                || skb->protocol == bpf_htons(ETH_P_IPV6))) {
            return ovs_bpf_l3_upcall(skb, s, (__be16) skb->protocol, 0);
        }
    } else if (s->reentry == OVS_BPF_REENTRY_DOWNCALL) {
        s->tun_valid = 0;
    }
    /* Otherwise, tail called by the recirc action or by the downcall
     * program: 'key' has the metadata of this pass.
     *
     * Verifier: one call to the parser for every way in, with arguments
     * read back from the map.  The compiler barrier keeps clang from
     * forwarding the values stored above, so all paths reach the call with
     * the same (unknown) values and the verifier prunes all but the first:
     * the parser, most of the verification time of this object, is
     * verified once, here, instead of once more in a lookup program and
     * once more in the downcall program. */
    asm volatile("" ::: "memory");
    downcall = s->reentry == OVS_BPF_REENTRY_DOWNCALL;
    parsed = s->reentry == OVS_BPF_REENTRY_RECIRC && s->key_parsed;
    s->reentry = OVS_BPF_REENTRY_NONE;
    return ovs_bpf_process(skb, s, downcall, parsed);
}

SEC("tc")
int
ovs_bpf_downcall(struct __sk_buff *skb)
{
    return ovs_bpf_downcall__(skb);
}

/* The action programs, one per OVS_BPF_ACTION of datapath-abi.h (see
 * OVS_BPF_ACTION_PROG in bpf/actions.h). */
OVS_BPF_ACTION_PROG(output, ovs_bpf_act_output__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(userspace, ovs_bpf_act_userspace__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(trunc, ovs_bpf_act_trunc__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(set_eth,
                    ovs_bpf_action_next(skb, s, idx,
                                        ovs_bpf_set_eth(skb, s, &a->u.eth),
                                        OVS_BPF_ACTION_SET_ETH))
OVS_BPF_ACTION_PROG(set_ipv4, ovs_bpf_act_set_ipv4__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(set_ipv6_src, ovs_bpf_set_ipv6_addr(skb, s, a, idx, 8))
OVS_BPF_ACTION_PROG(set_ipv6_dst, ovs_bpf_set_ipv6_addr(skb, s, a, idx, 24))
OVS_BPF_ACTION_PROG(set_ipv6_misc,
                    ovs_bpf_act_set_ipv6_misc__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(set_tcp, ovs_bpf_set_l4_ports(skb, s, a, idx,
                                                  IPPROTO_TCP))
OVS_BPF_ACTION_PROG(set_udp, ovs_bpf_set_l4_ports(skb, s, a, idx,
                                                  IPPROTO_UDP))
OVS_BPF_ACTION_PROG(push_vlan,
                    ovs_bpf_action_next(skb, s, idx,
                                        ovs_bpf_push_vlan(skb, s,
                                                          &a->u.push_vlan),
                                        OVS_BPF_ACTION_PUSH_VLAN))
OVS_BPF_ACTION_PROG(pop_vlan,
                    ovs_bpf_action_next(skb, s, idx, ovs_bpf_pop_vlan(skb, s),
                                        OVS_BPF_ACTION_POP_VLAN))
OVS_BPF_ACTION_PROG(recirc, ovs_bpf_act_recirc__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(hash, ovs_bpf_act_hash__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(clone, ovs_bpf_act_clone__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(sample, ovs_bpf_act_sample__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(set_priority,
                    ovs_bpf_action_next(skb, s, idx,
                                        ovs_bpf_set_meta(skb, s, &a->u.meta,
                                                         false),
                                        OVS_BPF_ACTION_SET_PRIORITY))
OVS_BPF_ACTION_PROG(set_mark,
                    ovs_bpf_action_next(skb, s, idx,
                                        ovs_bpf_set_meta(skb, s, &a->u.meta,
                                                         true),
                                        OVS_BPF_ACTION_SET_MARK))
OVS_BPF_ACTION_PROG(check_pkt_len,
                    ovs_bpf_act_check_pkt_len__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(meter, ovs_bpf_act_meter__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(ct, ovs_bpf_act_ct__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(set_tunnel, ovs_bpf_act_set_tunnel__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(pop_eth, ovs_bpf_act_pop_eth__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(ct_clear, ovs_bpf_act_ct_clear__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(push_mpls, ovs_bpf_act_push_mpls__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(pop_mpls, ovs_bpf_act_pop_mpls__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(set_mpls, ovs_bpf_act_set_mpls__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(push_nsh_eth, ovs_bpf_act_push_nsh_eth__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(pop_eth_nsh, ovs_bpf_act_pop_eth_nsh__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(set_nsh, ovs_bpf_act_set_nsh__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(add_mpls_eth, ovs_bpf_act_add_mpls_eth__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(pop_eth_mpls, ovs_bpf_act_pop_eth_mpls__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(tnl_push, ovs_bpf_act_tnl_push__(skb, s, a, idx))
OVS_BPF_ACTION_PROG(tnl_pop, ovs_bpf_act_tnl_pop__(skb, s, a, idx))

/* OVS_BPF_ACTION_CT_LABEL is the argument slot of the ct() before it, and
 * OVS_BPF_ACTION_TNL_HDR of the tnl_push before it, which skip them: a
 * chain that comes to run one is malformed. */
SEC("tc")
int
ovs_bpf_act_ct_label(struct __sk_buff *skb)
{
    (void) skb;
    return ovs_bpf_drop(OVS_BPF_DROP_INTERNAL);
}

SEC("tc")
int
ovs_bpf_act_tnl_hdr(struct __sk_buff *skb)
{
    (void) skb;
    return ovs_bpf_drop(OVS_BPF_DROP_INTERNAL);
}

/* Not attached anywhere: ovs-vswitchd runs it with BPF_PROG_TEST_RUN. */
SEC("tc")
int
ovs_bpf_meter_packet(struct __sk_buff *skb)
{
    return ovs_bpf_meter_packet__(skb);
}

/* Run by ovs-vswitchd on reassembled IP fragments, never attached. */
SEC("tc")
int
ovs_bpf_ct_reass(struct __sk_buff *skb)
{
    return ovs_bpf_ct_reass__(skb);
}

/* The kernel makes some helpers this object needs (bpf_perf_event_output()
 * among them) available only to programs that declare a GPL-compatible
 * license, which "Apache-2.0" is not for the kernel's check. */
char _license[] SEC("license") = "Dual BSD/GPL";
