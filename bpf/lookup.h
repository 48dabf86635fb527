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

/* Tuple-space search: the parsed key, masked with the mask that the
 * per-CPU mask cache gives, then with each mask of the mask list in turn,
 * is looked up in the flow table until a flow matches. */

#ifndef BPF_LOOKUP_H
#define BPF_LOOKUP_H 1

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/datapath-abi.h"
#include "bpf/actions.h"
#include "bpf/actions-meta.h"
#include "bpf/actions-output.h"
#include "bpf/actions-set.h"
#include "bpf/actions-vlan.h"
#include "bpf/maps.h"
#include "bpf/parse.h"
#include "bpf/upcall.h"

_Static_assert(sizeof(struct ovs_bpf_flow_key) == OVS_BPF_KEY_WORDS * 8,
               "the key is masked 8 bytes at a time");
_Static_assert((OVS_BPF_KEY_WORDS & (OVS_BPF_KEY_WORDS - 1)) == 0,
               "word indexes are bounded with a mask");
_Static_assert(__builtin_offsetof(struct ovs_bpf_flow_key, ct_state)
               == OVS_BPF_KEY_CT_TUN_OFS, "metadata kept by the parser");

/* Builds in 'tkey->words' the first 'n' words of the table key of 'key'
 * under mask 'm'.  'n' is a constant: the loop unrolls into 'n' loads of a
 * word index, a key word and a mask word, an AND and a store. */
static __always_inline void
ovs_bpf_mask_key(struct ovs_bpf_flow_table_key *tkey, const __u64 *key,
                 const struct ovs_bpf_mask *m, const int n)
{
#pragma unroll
    for (int j = 0; j < n; j++) {
        /* Verifier: the AND bounds the variable offset into the key
         * (OVS_BPF_KEY_WORDS is a power of 2; userspace never writes a
         * larger index). */
        tkey->words[j] = key[m->word[j] & (OVS_BPF_KEY_WORDS - 1)]
                         & m->mask[j];
    }
}

/* A case of ovs_bpf_flow_table_lookup(): the table of WORDS key words.
 *
 * Verifier: each table has a lookup call of its own, which the verifier
 * inlines into a direct call of the hash map's lookup, its map being known
 * there.  clang merges the eight calls of the switch into one, with the map
 * in a register, if they end the same way; the verifier cannot inline a
 * call site that sees several maps, which then goes through the generic
 * bpf_map_lookup_elem() helper, an indirect call through the map's
 * operations (a retpoline on this machine), about 20 ns per hit (see
 * "Performance" in Documentation/topics/dpif-bpf.rst).  An empty asm
 * statement of its own text after each call keeps them apart. */
#define OVS_BPF_FLOW_TABLE_CASE(WORDS)                              \
    case OVS_BPF_FLOW_TABLE_W##WORDS:                               \
        ovs_bpf_mask_key(tkey, key, m, WORDS);                      \
        flow = bpf_map_lookup_elem(&flow_table_w##WORDS, tkey);     \
        asm volatile("/* flow_table_w" #WORDS " */" : "+r"(flow));  \
        return flow

/* Looks up 'key' under mask 'm' in the flow table of the mask, building
 * the table key in 'tkey' (whose 'mask_id' the caller has set). */
static __always_inline struct ovs_bpf_flow *
ovs_bpf_flow_table_lookup(struct ovs_bpf_flow_table_key *tkey,
                          const __u64 *key, const struct ovs_bpf_mask *m)
{
    struct ovs_bpf_flow *flow;

    /* One case per table: the verifier needs the map of each lookup to be
     * a constant, and a constant word count unrolls the masking. */
    switch (m->table) {
    OVS_BPF_FLOW_TABLE_CASE(2);
    OVS_BPF_FLOW_TABLE_CASE(4);
    OVS_BPF_FLOW_TABLE_CASE(6);
    OVS_BPF_FLOW_TABLE_CASE(8);
    OVS_BPF_FLOW_TABLE_CASE(12);
    OVS_BPF_FLOW_TABLE_CASE(16);
    OVS_BPF_FLOW_TABLE_CASE(24);
    OVS_BPF_FLOW_TABLE_CASE(32);
    default:
        return NULL;
    }
}
#undef OVS_BPF_FLOW_TABLE_CASE

/* Searches the masks for a flow matching 's->key': first the mask that
 * the mask cache gives for the key's hash (struct
 * ovs_bpf_mask_cache_entry), then the others in the order of the mask
 * order in use (struct ovs_bpf_mask_order).  A flow found by the search in
 * order puts its mask in the cache entry, so that the next packets of the
 * microflow find it with one probe however far down the order it is.  With
 * a single mask the cache could save nothing and is left alone.
 *
 * The table key is built in 's->upcall.flow', which is also the flow key a
 * SLOW_PATH or ACTION upcall carries (its words beyond those of the flow's
 * table are left from other masks: ovs-vswitchd ignores them).
 * '*n_searched' gets the number of masks probed. */
static __always_inline struct ovs_bpf_flow *
ovs_bpf_flow_lookup(struct ovs_bpf_scratch *s, __u32 *n_searched)
{
    struct ovs_bpf_dp_config *cfg = ovs_bpf_config_get();
    struct ovs_bpf_flow_table_key *tkey = &s->upcall.flow;
    const __u64 *key = (const __u64 *) &s->key;
    struct ovs_bpf_mask_cache_entry *ce = NULL;
    struct ovs_bpf_mask_order *order;
    __u32 sel, n_masks, i, hash = 0;
    __u32 cached = OVS_BPF_MAX_MASKS;   /* None. */
    __u32 n_probes = 0;

    if (!cfg) {
        return NULL;
    }
    sel = cfg->mask_order;
    order = bpf_map_lookup_elem(&mask_order, &sel);
    if (!order) {
        return NULL;
    }
    n_masks = order->n_masks;
    tkey->pad = 0;
    if (n_masks > 1) {
        __u32 idx;

        hash = ovs_bpf_mask_cache_hash(key);
        idx = hash & (OVS_BPF_MASK_CACHE_SIZE - 1);
        ce = bpf_map_lookup_elem(&mask_cache, &idx);
        /* The index check: the mask is used only if it is still where it
         * was found in the search order, so a mask since removed (or its
         * slot given to another mask, listed elsewhere) is not probed.
         * (Verifier: the first bound on 'pos' is the array's, which the
         * verifier needs; n_masks is not known to it.) */
        if (ce && ce->valid && ce->hash == hash
            && ce->pos < OVS_BPF_MAX_MASKS && ce->pos < n_masks
            && order->mask_id[ce->pos] == ce->mask_id) {
            cached = ce->mask_id;
        }
    }
    /* Step 0 probes the cached mask, step i > 0 the mask at i - 1 of the
     * order.  A loop, not unrolled: its bound is the configured mask count,
     * not the maximum, and the verifier walks it at most
     * OVS_BPF_MAX_MASKS + 1 times. */
#pragma clang loop unroll(disable)
    for (i = 0; i <= OVS_BPF_MAX_MASKS; i++) {
        struct ovs_bpf_flow *flow;
        struct ovs_bpf_mask *m;
        __u32 mask_id;

        if (!i) {
            if (cached >= OVS_BPF_MAX_MASKS) {
                continue;
            }
            mask_id = cached;
        } else {
            if (i > n_masks) {
                break;
            }
            /* Verifier: the map key is a copy, not the loop counter's own
             * stack slot (which the helper may write, so that the verifier
             * would lose the counter's value and report an infinite
             * loop). */
            mask_id = order->mask_id[i - 1];
            if (mask_id == cached) {
                continue;       /* Probed at step 0. */
            }
        }
        m = bpf_map_lookup_elem(&flow_masks, &mask_id);
        if (!m) {
            continue;
        }
        if (!m->in_use) {
            continue;
        }
        n_probes++;
        tkey->mask_id = mask_id;
        flow = ovs_bpf_flow_table_lookup(tkey, key, m);
        if (flow) {
            __u64 *hits = bpf_map_lookup_elem(&mask_stats, &mask_id);

            if (hits) {
                *hits += 1;
            }
            *n_searched = n_probes;
            if (ce) {
                if (!i) {
                    ovs_bpf_count(OVS_BPF_STAT_MASK_CACHE_HIT);
                } else {
                    ovs_bpf_count(OVS_BPF_STAT_MASK_CACHE_MISS);
                    ce->hash = hash;
                    ce->valid = 1;
                    ce->mask_id = mask_id;
                    ce->pos = i - 1;
                }
            }
            return flow;
        }
    }
    if (ce) {
        ovs_bpf_count(OVS_BPF_STAT_MASK_CACHE_MISS);
    }
    return NULL;
}

/* The coarse CLOCK_MONOTONIC time of this CPU's current tick.
 *
 * bpf_ktime_get_coarse_ns() is a helper call that costs about 15 ns per
 * packet here (a tenth of a hit), for a value that changes once per tick;
 * bpf_jiffies64() is inlined by the verifier into a load of 'jiffies'.  So
 * the time is read once per tick and CPU, and kept in the scratch area.
 * (At a tick, 'jiffies' may move before the coarse clock: the time kept is
 * then a tick late, which a "used" time in milliseconds does not see.) */
static __always_inline __u64
ovs_bpf_coarse_now(struct ovs_bpf_scratch *s)
{
    __u64 jiffies = bpf_jiffies64();

    if (jiffies != s->clock_jiffies) {
        s->clock_jiffies = jiffies;
        s->clock_ns = bpf_ktime_get_coarse_ns();
    }
    return s->clock_ns;
}

/* Statistics of a hit, in this CPU's slot of the flow's statistics (see
 * OVS_BPF_FLOW_STATS_SLOTS): plain additions in a slot that no other CPU
 * writes, atomic ones in the last slot, which the CPUs beyond the others
 * share.  Byte counts include an accelerated VLAN tag, as the kernel
 * datapath counts. */
static __always_inline void
ovs_bpf_flow_stats_update(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                          struct ovs_bpf_flow *flow)
{
    __u64 bytes = skb->len + (skb->vlan_present ? 4 : 0);
    /* The verifier inlines the helper into a per-CPU load. */
    __u32 cpu = bpf_get_smp_processor_id();
    /* 'tcp_flags' of the key is the ND options type for ICMPv6. */
    __u32 tcp_flags = (s->key.nw_proto == IPPROTO_TCP
                       ? bpf_ntohs(s->key.tcp_flags) : 0);
    struct ovs_bpf_flow_stats *st;

    if (cpu < OVS_BPF_FLOW_STATS_SLOTS - 1) {
        st = &flow->stats[cpu];
        st->packets += 1;
        st->bytes += bytes;
        if (tcp_flags) {
            st->tcp_flags |= tcp_flags;
        }
    } else {
        st = &flow->stats[OVS_BPF_FLOW_STATS_SLOTS - 1];
        __sync_fetch_and_add(&st->packets, 1);
        __sync_fetch_and_add(&st->bytes, bytes);
        if (tcp_flags) {
            __sync_fetch_and_or(&st->tcp_flags, tcp_flags);
        }
    }
    /* CLOCK_MONOTONIC at tick resolution: OVS keeps "used" in
     * milliseconds. */
    st->used_ns = ovs_bpf_coarse_now(s);
}

/* Sends the packet up as a miss: ovs-vswitchd extracts its key, decides
 * and sends it back down with the actions to run. */
static __always_inline int
ovs_bpf_miss(struct __sk_buff *skb, struct ovs_bpf_scratch *s)
{
    ovs_bpf_count(OVS_BPF_STAT_MISSED);
    __builtin_memset(&s->upcall.flow, 0, sizeof s->upcall.flow);
    ovs_bpf_upcall(skb, s, OVS_BPF_UPCALL_MISS);
    return TC_ACT_SHOT;
}

/* The leading actions of a chain, for ovs_bpf_run_leading_step(). */
struct ovs_bpf_leading {
    struct __sk_buff *skb;
    struct ovs_bpf_scratch *s;
    struct ovs_bpf_action *actions;     /* The flow's slots, or the scratch
                                         * area's. */
    __u32 n;                    /* Number of slots. */
    __u32 next;                 /* First slot not run yet. */
    __u32 failed;               /* Type of the action that failed, or 0. */
};

/* Runs slot 'i' if it is an action that needs no program of its own:
 * set_eth, push_vlan, pop_vlan, set of skb_priority or skb_mark.  A
 * bpf_loop() callback: returns 1 to stop at the first other slot. */
static __always_inline long
ovs_bpf_run_leading_step__(__u32 i, struct ovs_bpf_leading *l, __u32 max)
{
    struct __sk_buff *skb = l->skb;
    struct ovs_bpf_scratch *s = l->s;
    struct ovs_bpf_action *a;
    bool ok = true;
    __u32 type;

    /* Verifier: as in ovs_bpf_slot(), the bound check and the address
     * use the same register. */
    asm volatile("" : "+r"(i));
    if (i >= max || i >= l->n) {
        return 1;
    }
    a = &l->actions[i];
    type = a->type;
    if (!ovs_bpf_action_keeps_packet(type)) {
        s->key_parsed = 0;
    }
    switch (type) {
    case OVS_BPF_ACTION_SET_ETH:
        ok = ovs_bpf_set_eth(skb, s, &a->u.eth);
        break;
    case OVS_BPF_ACTION_PUSH_VLAN:
        ok = ovs_bpf_push_vlan(skb, s, &a->u.push_vlan);
        break;
    case OVS_BPF_ACTION_POP_VLAN:
        ok = ovs_bpf_pop_vlan(skb, s);
        break;
    case OVS_BPF_ACTION_SET_PRIORITY:
    case OVS_BPF_ACTION_SET_MARK:
        ok = ovs_bpf_set_meta(skb, s, &a->u.meta,
                              type == OVS_BPF_ACTION_SET_MARK);
        break;
    default:
        return 1;
    }
    if (!ok) {
        l->failed = type;
        return 1;
    }
    l->next = i + 1;
    return 0;
}

/* ovs_bpf_run_leading_step() for an array of OVS_BPF_MAX_ACTIONS slots (a
 * downcall's, a long list's in 'flow_actions'). */
static long
ovs_bpf_run_leading_step(__u32 i, void *l)
{
    return ovs_bpf_run_leading_step__(i, l, OVS_BPF_MAX_ACTIONS);
}

/* ovs_bpf_run_leading_step() for the OVS_BPF_FLOW_INLINE_ACTIONS slots of a
 * flow's entry: the verifier checks each read against the array's size. */
static long
ovs_bpf_run_leading_step_inline(__u32 i, void *l)
{
    return ovs_bpf_run_leading_step__(i, l, OVS_BPF_FLOW_INLINE_ACTIONS);
}

/* Runs the leading slots of the 'n' slots 'actions' (a flow's, or a
 * downcall's in 's') that need no program of their own, here
 * (ovs_bpf_run_leading_step()): most flows are a few such rewrites and an
 * output, which ovs_bpf_run_actions() then does from here too, so the
 * whole list runs in this program, without the tail call and the prologue
 * of an action program for each slot (see "Performance" in dpif-bpf.rst).
 * 'inline_' says that 'actions' are the OVS_BPF_FLOW_INLINE_ACTIONS slots
 * of a flow's entry rather than an array of OVS_BPF_MAX_ACTIONS.  Sets
 * '*next' to the first slot not run.  Returns false if an action failed
 * (counted).
 *
 * Verifier: a bpf_loop() callback is verified once per kind of 'actions'
 * whatever the number of slots it runs (an inlined or bounded loop took
 * over 1M instructions: once per slot and per state of the caller). */
static __always_inline bool
ovs_bpf_run_leading(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                    struct ovs_bpf_action *actions, __u32 n, bool inline_,
                    __u32 *next)
{
    struct ovs_bpf_leading l = { .skb = skb, .s = s, .actions = actions,
                                 .n = n };

    if (inline_) {
        bpf_loop(OVS_BPF_FLOW_INLINE_ACTIONS,
                 ovs_bpf_run_leading_step_inline, &l, 0);
    } else {
        bpf_loop(OVS_BPF_MAX_ACTIONS, ovs_bpf_run_leading_step, &l, 0);
    }
    *next = l.next;
    if (l.failed) {
        ovs_bpf_action_failed(l.failed);
        return false;
    }
    return true;
}

/* Runs the actions in 's' (a downcall's): the leading ones here, then the
 * chain of tail calls from the first slot of another type. */
static __always_inline int
ovs_bpf_run_flow(struct __sk_buff *skb, struct ovs_bpf_scratch *s)
{
    __u32 next;

    if (!ovs_bpf_run_leading(skb, s, s->actions, s->n_actions, false,
                             &next)) {
        return TC_ACT_SHOT;
    }
    return ovs_bpf_run_actions(skb, s, next);
}

/* Runs the leading slots of a flow's 'n' slots 'actions', an array of
 * 'max' slots (a constant: OVS_BPF_FLOW_INLINE_ACTIONS for the flow's
 * entry, OVS_BPF_MAX_ACTIONS for a long list in 'flow_actions'), in place,
 * and copies the slots of the chain of tail calls into the scratch area,
 * whose programs read them there by index.  Sets '*next' to the first
 * slot of the chain.  Returns false if an action failed (counted). */
static __always_inline bool
ovs_bpf_run_flow_slots(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                       struct ovs_bpf_action *actions, __u32 n, __u32 max,
                       __u32 *next)
{
    __u32 i;

    if (!ovs_bpf_run_leading(skb, s, actions, n,
                             max == OVS_BPF_FLOW_INLINE_ACTIONS, next)) {
        return false;
    }
    for (i = 0; i < max; i++) {
        __u32 j = *next + i;

        /* Verifier: the same register is checked and used. */
        asm volatile("" : "+r"(j));
        if (j >= n || j >= max) {
            break;
        }
        s->actions[j] = actions[j];
    }
    return true;
}

/* Looks up 's->key' and runs the actions of the flow it matches, or sends
 * the packet up as a miss. */
static __always_inline int
ovs_bpf_lookup_and_run(struct __sk_buff *skb, struct ovs_bpf_scratch *s)
{
    struct ovs_bpf_flow *flow;
    __u32 n_searched = 0;
    __u32 n, next;
    bool ok;

    flow = ovs_bpf_flow_lookup(s, &n_searched);
    if (!flow) {
        return ovs_bpf_miss(skb, s);
    }
    ovs_bpf_count(OVS_BPF_STAT_HIT);
    ovs_bpf_count_n(OVS_BPF_STAT_MASK_HIT, n_searched);
    ovs_bpf_flow_stats_update(skb, s, flow);

    if (flow->flags & OVS_BPF_FLOW_F_USERSPACE) {
        ovs_bpf_count(OVS_BPF_STAT_SLOW_PATH);
        ovs_bpf_upcall(skb, s, OVS_BPF_UPCALL_SLOW_PATH);
        return TC_ACT_SHOT;
    }

    n = flow->n_actions;
    if (n == 1 && flow->actions[0].type == OVS_BPF_ACTION_OUTPUT
        && !skb->cb[OVS_BPF_CB_TRUNC]) {
        /* Fast path for the most common flow, a single output: redirect
         * from here, with no copy of the actions.  Only the port number is
         * read from the flow, so a concurrent change of the flow cannot
         * give a mix of old and new actions. */
        return ovs_bpf_output(skb, flow->actions[0].u.output.port, true);
    }
    if (n == 2 && flow->actions[0].type == OVS_BPF_ACTION_SET_ETH
        && flow->actions[1].type == OVS_BPF_ACTION_OUTPUT
        && !skb->cb[OVS_BPF_CB_TRUNC]) {
        /* The next most common flow, a rewrite of the Ethernet addresses
         * and an output (a routing hop, a learning switch's rewrite): run
         * it from here too, reading the slots in place.  Copying them
         * into the scratch area, the bpf_loop() and the chain's bookkeeping
         * cost more than the rewrite itself (see "Performance" in
         * dpif-bpf.rst).  The slots are read once each, as the copy
         * would. */
        if (!ovs_bpf_set_eth(skb, s, &flow->actions[0].u.eth)) {
            return ovs_bpf_action_failed(OVS_BPF_ACTION_SET_ETH);
        }
        return ovs_bpf_output(skb, flow->actions[1].u.output.port, true);
    }
    /* Userspace never writes more than OVS_BPF_MAX_ACTIONS; the clamp
     * keeps the chain inside the scratch array whatever the map says. */
    if (n > OVS_BPF_MAX_ACTIONS) {
        n = OVS_BPF_MAX_ACTIONS;
    }
    /* The leading slots are read in place, the slots of the chain of tail
     * calls (its programs read them by index from the scratch area) are
     * copied there: a chain that is only rewrites and an output copies
     * at most its output.  Reading in place or copying, a concurrent
     * change of the flow could be seen half way alike (a change of a flow
     * replaces its entry with a new one, whose memory may be reused).
     * The slots are in the entry, or for a long list in 'flow_actions'
     * (the verifier checks the reads against each array's size). */
    s->n_actions = n;
    if (n <= OVS_BPF_FLOW_INLINE_ACTIONS) {
        ok = ovs_bpf_run_flow_slots(skb, s, flow->actions, n,
                                    OVS_BPF_FLOW_INLINE_ACTIONS, &next);
    } else {
        __u64 id = flow->actions_id;
        struct ovs_bpf_flow_actions *fa;

        fa = bpf_map_lookup_elem(&flow_actions, &id);
        if (!fa) {
            /* The flow was modified or deleted since the lookup found it
             * (see struct ovs_bpf_flow): ovs-vswitchd decides. */
            return ovs_bpf_miss(skb, s);
        }
        ok = ovs_bpf_run_flow_slots(skb, s, fa->actions, n,
                                    OVS_BPF_MAX_ACTIONS, &next);
    }
    if (!ok) {
        return TC_ACT_SHOT;
    }
    return ovs_bpf_run_actions(skb, s, next);
}

/* Builds the key of this pass (in_port, recirc_id, dp_hash and the
 * conntrack and tunnel metadata as the caller set them in 's->key',
 * priority and mark from the skb, packet fields from the parser), then
 * looks it up and runs the actions, or with 'downcall' runs the actions
 * already in 's'.  With 'parsed' (a recirculation of a packet that no
 * action changed since its last parse, see 'key_parsed' in struct
 * ovs_bpf_scratch), the packet fields of 's->key' are kept as they are. */
static __always_inline int
ovs_bpf_process(struct __sk_buff *skb, struct ovs_bpf_scratch *s,
                bool downcall, bool parsed)
{
    struct ovs_bpf_flow_key *key = &s->key;
    __u32 in_port = key->in_port;
    __u32 recirc_id = key->recirc_id;
    __u32 dp_hash = key->dp_hash;

    s->clone_active = 0;
    if (!parsed) {
        __builtin_memset(key, 0, OVS_BPF_KEY_CT_TUN_OFS);
        key->in_port = in_port;
        key->recirc_id = recirc_id;
        key->dp_hash = dp_hash;
    }
    key->skb_priority = skb->priority;
    key->skb_mark = skb->mark;
    if (parsed) {
        /* Verifier: one call of the lookup for both ways, so that it is
         * verified once (a second copy took a third more load time). */
        goto lookup;
    }
    s->key_parsed = 0;
    switch (ovs_bpf_parse_packet(skb, key, s)) {
    case OVS_BPF_PARSE_OK:
        s->key_parsed = 1;
        break;
    case OVS_BPF_PARSE_INCOMPLETE:
        if (downcall) {
            /* No harm here: nothing is looked up with the partial key,
             * and the actions come from ovs-vswitchd, which parsed the
             * whole packet. */
            break;
        }
        /* A partial key may equal the key of another packet, whose flow
         * must not apply to this one: ovs-vswitchd decides with the full
         * key (bpf/parse.h). */
        ovs_bpf_count(OVS_BPF_STAT_PARSE_INCOMPLETE);
        return ovs_bpf_miss(skb, s);
    default:
        return ovs_bpf_drop(OVS_BPF_DROP_PARSE_ERROR);
    }
    if (downcall) {
        /* No flow: a userspace() action of a downcall carries no flow
         * key. */
        __builtin_memset(&s->upcall.flow, 0, sizeof s->upcall.flow);
        return ovs_bpf_run_flow(skb, s);
    }
lookup:
    return ovs_bpf_lookup_and_run(skb, s);
}

#endif /* BPF_LOOKUP_H */
