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

/* The action chain.  A flow's (or a downcall's) actions are slots in the
 * per-CPU scratch area; each action type has its own program in the
 * 'tailcalls' prog array at index = enum ovs_bpf_action_type.  A program
 * runs its slot (or a run of slots of its type), then tail-calls the
 * program of the next slot.  The chain ends, and the packet is consumed
 * (TC_ACT_SHOT), at an OVS_BPF_ACTION_END slot or after the last slot;
 * a final OUTPUT returns TC_ACT_REDIRECT instead, and is done by the
 * program before it, without a tail call, when no trunc() or clone() is
 * pending.  The leading slots of a chain that are set_eth, push_vlan,
 * pop_vlan or sets of skb_priority and skb_mark are run by the lookup
 * program itself (ovs_bpf_run_leading() in bpf/lookup.h), read in the
 * flow's entry: the common flows, a few rewrites and an output, take no
 * tail call and no copy of their slots at all.  A chain that
 * ends without having run an OUTPUT or USERSPACE action (no actions at
 * all, for example) is the drop the flow asked for,
 * OVS_BPF_DROP_FLOW_DROP.
 *
 * The kernel allows 33 tail calls per packet (MAX_TAIL_CALL_CNT): one for
 * the first slot that the lookup program does not run, one per later slot
 * (a run of OUTPUT slots counts once; a final OUTPUT done without one,
 * none; a RECIRC slot, which the program before it does, none), one per
 * recirculation and one per clone() restore.  A chain that
 * needs more fails its tail call and is dropped as OVS_BPF_DROP_TAIL_CALL.
 *
 * An action that fails, or refuses what it cannot do, drops the packet and
 * counts it under its own type (ovs_bpf_action_failed()).
 *
 * Packet state that survives tail calls lives in skb->cb[] (TC leaves it to
 * the program; the entry programs initialise it): */

#ifndef BPF_ACTIONS_H
#define BPF_ACTIONS_H 1

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "bpf/datapath-abi.h"
#include "bpf/maps.h"
#include "bpf/tunnel.h"

#define OVS_BPF_CB_ACTION 0         /* Slot being run. */
#define OVS_BPF_CB_RECIRC 1         /* Recirculations so far. */
#define OVS_BPF_CB_TRUNC 2          /* trunc(max_len) for the next output,
                                     * 0 if none. */
#define OVS_BPF_CB_SENT 3           /* An OUTPUT or USERSPACE action ran in
                                     * this pass: the end of the chain is
                                     * not a drop of the flow's. */
#define OVS_BPF_CB_NO_ETH 4         /* A pop_eth ran: the Ethernet header
                                     * still in the bytes is no longer the
                                     * packet's (see ovs_bpf_output()). */

static __always_inline void
ovs_bpf_cb_init(struct __sk_buff *skb)
{
    skb->cb[OVS_BPF_CB_ACTION] = 0;
    skb->cb[OVS_BPF_CB_RECIRC] = 0;
    skb->cb[OVS_BPF_CB_TRUNC] = 0;
    skb->cb[OVS_BPF_CB_SENT] = 0;
    skb->cb[OVS_BPF_CB_NO_ETH] = 0;
}

/* The accelerated VLAN tag of 'skb'. */
static __always_inline struct ovs_bpf_vlan_tag
ovs_bpf_vlan_tag_get(const struct __sk_buff *skb)
{
    struct ovs_bpf_vlan_tag tag = { 0 };

    if (skb->vlan_present) {
        tag.present = 1;
        tag.tpid = skb->vlan_proto;
        tag.tci = skb->vlan_tci;
    }
    return tag;
}

static __always_inline bool
ovs_bpf_vlan_tag_equals(const struct ovs_bpf_vlan_tag *a,
                        const struct ovs_bpf_vlan_tag *b)
{
    return a->present == b->present
           && (!a->present || (a->tpid == b->tpid && a->tci == b->tci));
}

/* Puts 'tag', if present, back as the accelerated tag of 'skb', with its
 * own TPID: a tag in skb metadata now goes into the bytes behind it.
 * Returns 0 or the helper's negative errno. */
static __always_inline long
ovs_bpf_vlan_tag_push(struct __sk_buff *skb,
                      const struct ovs_bpf_vlan_tag *tag)
{
    return tag->present ? bpf_skb_vlan_push(skb, tag->tpid, tag->tci) : 0;
}

/* True if an action of 'type' never changes the packet's bytes, its VLAN
 * tag or its length, so that the parsed key stays the packet's (see
 * 'key_parsed' in struct ovs_bpf_scratch): outputs (a truncated one is
 * the last action), upcalls, recirculation, meters, dp_hash, skb_priority
 * and skb_mark (which the lookup reads from the skb again), and the
 * conntrack actions, whose fields are not the parser's (a ct() that NATs
 * the packet clears 'key_parsed' itself).  Every other action, and an
 * action type added later, counts as a change: the next lookup parses the
 * packet again. */
static __always_inline bool
ovs_bpf_action_keeps_packet(__u32 type)
{
    switch (type) {
    case OVS_BPF_ACTION_OUTPUT:
    case OVS_BPF_ACTION_USERSPACE:
    case OVS_BPF_ACTION_RECIRC:
    case OVS_BPF_ACTION_HASH:
    case OVS_BPF_ACTION_METER:
    case OVS_BPF_ACTION_SET_PRIORITY:
    case OVS_BPF_ACTION_SET_MARK:
    case OVS_BPF_ACTION_CT:
    case OVS_BPF_ACTION_CT_CLEAR:
        return true;
    default:
        return false;
    }
}

/* Slot 'idx' of 's', or NULL if 'idx' is out of range.
 *
 * Verifier: the empty asm makes 'idx' opaque to clang, so that the bound
 * check and the address computation use the same register.  Without it
 * clang turns "s->actions[idx]" in a loop into a pointer it increments on
 * its own, whose range the verifier cannot tie to the checked index. */
static __always_inline struct ovs_bpf_action *
ovs_bpf_slot(struct ovs_bpf_scratch *s, __u32 idx)
{
    asm volatile("" : "+r"(idx));
    if (idx >= OVS_BPF_MAX_ACTIONS) {
        return NULL;
    }
    return &s->actions[idx];
}

/* The end of the action chain: the packet is consumed.  If no output or
 * userspace action ran in this pass, the flow dropped it. */
static __always_inline int
ovs_bpf_actions_end(struct __sk_buff *skb)
{
    if (!skb->cb[OVS_BPF_CB_SENT]) {
        return ovs_bpf_drop(OVS_BPF_DROP_FLOW_DROP);
    }
    return TC_ACT_SHOT;
}

/* True if slot 'idx' is the last one the chain runs. */
static __always_inline bool
ovs_bpf_is_last_action(struct ovs_bpf_scratch *s, __u32 idx)
{
    struct ovs_bpf_action *next = ovs_bpf_slot(s, idx + 1);

    return idx + 1 >= s->n_actions || !next
           || next->type == OVS_BPF_ACTION_END;
}

/* Outputs 'skb' to datapath port 'odp_port'.  The last output of a chain
 * redirects the packet itself (no copy) and returns TC_ACT_REDIRECT; an
 * earlier one sends a clone and returns 0.  Output to the input port works:
 * it is a redirect to that device's egress.  A port that does not exist
 * (deleted while the flow was in flight) drops this output only, as in the
 * kernel datapath, counted as OVS_BPF_DROP_NO_PORT.  A clone that cannot be
 * handed to the device (bpf_clone_redirect() returns a negative errno: the
 * device is gone, no memory for the copy) is counted as a failure of
 * OUTPUT.  A clone that the device takes and drops (a positive NET_XMIT_* or
 * NET_RX_DROP: the peer of a veth is down, as the visible end of a down
 * internal port; the packet is above the MTU of the receiving end; the
 * qdisc dropped it) is the device's drop, counted where the kernel counts
 * it (the hidden end of a down internal port's veth pair counts it as
 * tx_dropped) and not in ours, as the kernel datapath leaves an output to
 * a down internal port to its device; so is whatever happens to the last
 * output after TC_ACT_REDIRECT, which the program cannot see.  An output to
 * a tunnel port first gives the packet the tunnel key of the last
 * set(tunnel(...)) (bpf/tunnel.h); without one, the output fails.
 *
 * A layer 3 port (OVS_BPF_PORT_F_L3) takes only packets that a pop_eth
 * left without Ethernet header, and the other ports only packets with
 * one: the header that pop_eth leaves in the bytes goes at the redirect,
 * since the kernel pulls everything in front of the network header off a
 * packet redirected to a device without link layer
 * (__bpf_redirect_no_mac()).  Any other output fails: it is a flow that
 * ofproto would not give (it pops the Ethernet header before an output to
 * a layer 3 port and pushes one before any other). */
static __always_inline int
ovs_bpf_output(struct __sk_buff *skb, __u32 odp_port, bool last)
{
    struct ovs_bpf_port *port = bpf_map_lookup_elem(&ports, &odp_port);
    __u64 flags;

    if (!port || !port->ifindex) {
        ovs_bpf_drop(OVS_BPF_DROP_NO_PORT);
        return last ? TC_ACT_SHOT : 0;
    }
    if (!(port->flags & OVS_BPF_PORT_F_L3) != !skb->cb[OVS_BPF_CB_NO_ETH]) {
        ovs_bpf_action_failed(OVS_BPF_ACTION_OUTPUT);
        return last ? TC_ACT_SHOT : 0;
    }
    if (port->flags & OVS_BPF_PORT_F_TUNNEL && !ovs_bpf_tunnel_tx(skb)) {
        /* No set(tunnel(...)) before it, or the key was refused. */
        ovs_bpf_action_failed(OVS_BPF_ACTION_OUTPUT);
        return last ? TC_ACT_SHOT : 0;
    }
    flags = port->flags & OVS_BPF_PORT_F_INGRESS ? BPF_F_INGRESS : 0;
    if (last) {
        return bpf_redirect(port->ifindex, flags);
    }
    if (bpf_clone_redirect(skb, port->ifindex, flags) < 0) {
        ovs_bpf_action_failed(OVS_BPF_ACTION_OUTPUT);
    }
    return 0;
}

/* Looks the packet of 's' up again, as the next pass with recirc_id 'id'
 * (keeping in_port and dp_hash): the recirc action, and tnl_pop for the
 * decapsulated packet.  A tail call to the lookup program, which parses
 * the packet again unless nothing changed it (see 'key_parsed' in struct
 * ovs_bpf_scratch).  Returns only if the tail call failed. */
static __always_inline int
ovs_bpf_recirc(struct __sk_buff *skb, struct ovs_bpf_scratch *s, __u32 id)
{
    __u32 depth = skb->cb[OVS_BPF_CB_RECIRC];

    if (depth >= OVS_BPF_MAX_RECIRC) {
        return ovs_bpf_drop(OVS_BPF_DROP_RECIRC_LIMIT);
    }
    skb->cb[OVS_BPF_CB_RECIRC] = depth + 1;
    /* Outputs before the recirculation sent copies: the next pass's
     * actions decide whether the packet itself is dropped. */
    skb->cb[OVS_BPF_CB_SENT] = 0;
    s->key.recirc_id = id;
    s->reentry = OVS_BPF_REENTRY_RECIRC;
    bpf_tail_call(skb, &tailcalls, OVS_BPF_TAILCALL_LOOKUP);
    /* Not taken: the next packet on this CPU is a new one. */
    s->reentry = OVS_BPF_REENTRY_NONE;
    return ovs_bpf_drop(OVS_BPF_DROP_TAIL_CALL);
}

/* Runs the actions of 's' from slot 'idx' on: tail-calls the program of
 * slot 'idx'.  Returns only if there is nothing to run or the tail call
 * failed. */
static __always_inline int
ovs_bpf_run_actions(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                    __u32 idx)
{
    struct ovs_bpf_action *a = ovs_bpf_slot(s, idx);
    __u32 type;

    if (!a || idx >= s->n_actions) {
        return ovs_bpf_actions_end(skb);
    }
    skb->cb[OVS_BPF_CB_ACTION] = idx;
    if (s->clone_active && idx >= s->clone_end) {
        /* The nested actions of a clone() are done and more actions
         * follow: the clone program restores the packet first. */
        type = OVS_BPF_ACTION_CLONE;
    } else {
        type = a->type;
        if (type == OVS_BPF_ACTION_END) {
            return ovs_bpf_actions_end(skb);
        }
        if (type == OVS_BPF_ACTION_OUTPUT && !s->clone_active
            && !skb->cb[OVS_BPF_CB_TRUNC]
            && ovs_bpf_is_last_action(s, idx)) {
            /* The usual end of a chain, a final output without trunc():
             * redirect from here instead of a tail call to the output
             * program, which would do just this (a tail call and the
             * program's own start cost more than the redirect). */
            skb->cb[OVS_BPF_CB_SENT] = 1;
            return ovs_bpf_output(skb, a->u.output.port, true);
        }
        if (type == OVS_BPF_ACTION_RECIRC) {
            /* A recirculation (the end of a list: see
             * ovs_bpf_act_recirc__()) from here, without the tail call to
             * the recirc program, which would do just this: the common
             * ct(...),recirc(N) takes one tail call less. */
            return ovs_bpf_recirc(skb, s, a->u.recirc.id);
        }
    }
    bpf_tail_call(skb, &tailcalls, type);

    /* No program for this action, or out of tail calls. */
    return ovs_bpf_drop(OVS_BPF_DROP_TAIL_CALL);
}

/* Fetches the scratch area and the current slot for an action program.
 * Returns NULL if either is missing (cannot happen once loaded; the
 * verifier needs the checks). */
static __always_inline struct ovs_bpf_action *
ovs_bpf_action_begin(struct __sk_buff *skb, struct ovs_bpf_scratch **sp,
                     __u32 *idxp)
{
    struct ovs_bpf_scratch *s = ovs_bpf_scratch_get();
    __u32 idx = skb->cb[OVS_BPF_CB_ACTION];
    struct ovs_bpf_action *a;

    if (!s) {
        return NULL;
    }
    *sp = s;
    *idxp = idx;
    a = ovs_bpf_slot(s, idx);
    if (a && !ovs_bpf_action_keeps_packet(a->type)) {
        s->key_parsed = 0;
    }
    return a;
}

/* The end of an action program that did its slot 'idx' if 'ok': goes on
 * with the next slot, or else drops the packet as a failure of an action
 * of 'type'.  For the actions that the lookup program also runs, whose
 * functions say only whether they did it. */
static __always_inline int
ovs_bpf_action_next(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                    __u32 idx, bool ok, __u32 type)
{
    if (!ok) {
        return ovs_bpf_action_failed(type);
    }
    return ovs_bpf_run_actions(skb, s, idx + 1);
}

/* Defines ovs_bpf_act_NAME, the program of an action type, whose work is
 * BODY: an expression over 'skb', 's' (the scratch area), 'a' (the slot
 * being run) and 'idx' (its index), which returns the program's verdict.
 * The prologue, the same for every action, is here once: fetch the scratch
 * area and the slot, or drop the packet as OVS_BPF_DROP_INTERNAL.  The
 * functions that implement the actions (bpf/actions-*.h) take those four
 * arguments. */
#define OVS_BPF_ACTION_PROG(NAME, BODY)                                 \
    SEC("tc")                                                           \
    int                                                                 \
    ovs_bpf_act_##NAME(struct __sk_buff *skb)                           \
    {                                                                   \
        struct ovs_bpf_scratch *s;                                      \
        struct ovs_bpf_action *a;                                       \
        __u32 idx;                                                      \
                                                                        \
        a = ovs_bpf_action_begin(skb, &s, &idx);                        \
        if (!a) {                                                       \
            return ovs_bpf_drop(OVS_BPF_DROP_INTERNAL);                 \
        }                                                               \
        return BODY;                                                    \
    }

/* To be called before an action changes packet bytes [0, 'end').  Inside
 * a clone() the clone program restores the packet from a snapshot of its
 * first bytes afterwards: a change beyond the snapshot could not be undone,
 * so it is refused (the caller drops the packet as a failure of its
 * action). */
static __always_inline bool
ovs_bpf_may_write(struct ovs_bpf_scratch *s, __u32 end)
{
    if (!s->clone_active) {
        return true;
    }
    if (end > s->clone_snap_len) {
        return false;
    }
    s->clone_dirty = 1;
    return true;
}

#endif /* BPF_ACTIONS_H */
