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

/* The megaflow table of the BPF datapath: the authoritative copy of the
 * flows, by ufid and by BPF flow table key, mirrored into the BPF flow
 * tables, the flow put, delete, get and flush operations of the dpif class
 * on it, and the lookups of the slow path.  Its other parts have files of
 * their own: dpif-bpf-flow-xlate.c translates flows, dpif-bpf-flow-masks.c
 * keeps the mask list, dpif-bpf-map-batch.c runs BPF map operations in
 * batches, dpif-bpf-flow-dump.c dumps the flows and dpif-bpf-flow-adopt.c
 * saves them for the next ovs-vswitchd, which takes them over. */

#include <config.h>

#include "dpif-bpf-flow-table.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "dpif-bpf-flow-private.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "flow.h"
#include "hash.h"
#include "openvswitch/hmap.h"
#include "openvswitch/list.h"
#include "openvswitch/match.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_flow_table);

COVERAGE_DEFINE(dpif_bpf_flow_table_full);
COVERAGE_DEFINE(dpif_bpf_masks_full);

/* Flow puts installed together, at most: the puts that a handler thread
 * hands over for one batch of upcalls (ofproto-dpif-upcall.c's
 * UPCALL_MAX_BATCH) fit. */
#define DP_BPF_PUT_BATCH 64

/* Keys deleted per BPF_MAP_DELETE_BATCH call, at most. */
#define DP_BPF_DELETE_BATCH 1024

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

uint32_t
dp_bpf_ufid_hash(const ovs_u128 *ufid)
{
    return ufid->u32[0];
}

/* The hash of 'tkey', normalized: its words after those of its table are
 * zero, so the hash stops at the last nonzero word, which equal keys share.
 * Handlers and revalidators hash a key for every flow put, miss and dumped
 * flow; hash_bytes() of all 264 bytes was the handler's largest function in
 * a profile of a flow setup. */
uint32_t
dp_bpf_tkey_hash(const struct ovs_bpf_flow_table_key *tkey)
{
    size_t n = OVS_BPF_KEY_WORDS;

    while (n && !tkey->words[n - 1]) {
        n--;
    }
    return hash_words64((const uint64_t *) tkey->words, n, tkey->mask_id);
}

struct dp_bpf_flow *
dp_bpf_find_flow(const struct dp_bpf *dp, const ovs_u128 *ufid)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_flow *flow;

    HMAP_FOR_EACH_WITH_HASH (flow, ufid_node, dp_bpf_ufid_hash(ufid),
                             &dp->flows) {
        if (ovs_u128_equals(flow->ufid, *ufid)) {
            return flow;
        }
    }
    return NULL;
}

struct dp_bpf_flow *
dp_bpf_find_flow_by_tkey(const struct dp_bpf *dp,
                         const struct ovs_bpf_flow_table_key *tkey)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_flow *flow;

    HMAP_FOR_EACH_WITH_HASH (flow, tkey_node, dp_bpf_tkey_hash(tkey),
                             &dp->flows_by_tkey) {
        if (!memcmp(&flow->tkey, tkey, sizeof *tkey)) {
            return flow;
        }
    }
    return NULL;
}

/* The size of the keys of BPF flow table 't': the first words of struct
 * ovs_bpf_flow_table_key. */
size_t
dp_bpf_flow_table_key_size(unsigned int t)
{
    return (offsetof(struct ovs_bpf_flow_table_key, words)
            + dpif_bpf_flow_table_words(t) * sizeof(uint64_t));
}

/* The BPF flow table of the flows of mask list entry 'mask_id'. */
static unsigned int
dp_bpf_flow_table_of(const struct dp_bpf *dp, uint32_t mask_id)
{
    return dp->masks[mask_id].entry.table;
}

/* The fd of the BPF flow table of the flows of mask list entry
 * 'mask_id'. */
int
dp_bpf_flow_table_fd(const struct dp_bpf *dp, uint32_t mask_id)
{
    return dp->obj->flow_table_fds[dp->masks[mask_id].entry.table];
}

/* Reads the BPF flow entry of 'flow' into 'value'. */
static int
dp_bpf_flow_read(const struct dp_bpf *dp, const struct dp_bpf_flow *flow,
                 struct ovs_bpf_flow *value)
{
    if (bpf_map_lookup_elem(dp_bpf_flow_table_fd(dp, flow->tkey.mask_id),
                            &flow->tkey, value)) {
        memset(value, 0, sizeof *value);
        return errno;
    }
    return 0;
}
void
dp_bpf_flow_get_stats(const struct dp_bpf *dp, const struct dp_bpf_flow *flow,
                      struct dpif_flow_stats *stats)
{
    struct ovs_bpf_flow value;

    if (flow->l3_match) {
        /* No BPF entry: ovs-vswitchd forwards all of its packets. */
        memset(stats, 0, sizeof *stats);
    } else {
        dp_bpf_flow_read(dp, flow, &value);
        dp_bpf_stats_from_bpf(value.stats, stats);
    }
    dp_bpf_stats_add(stats, &flow->up_stats);
}

struct dp_bpf_flow *
dp_bpf_lookup_flow(const struct dp_bpf *dp, const struct flow *flow)
    OVS_REQUIRES(dp->mutex)
{
    struct ovs_bpf_flow_key bkey, bmask;

    if (hmap_is_empty(&dp->flows)
        || dpif_bpf_flow_to_key(flow, NULL, &bkey, &bmask)) {
        return NULL;
    }
    /* The masks in the order the BPF lookup tries them. */
    for (uint32_t i = 0; i < dp->n_masks; i++) {
        uint32_t mask_id = dp->mask_order[i];
        struct ovs_bpf_flow_table_key tkey;
        struct dp_bpf_flow *f;

        dpif_bpf_table_key(mask_id, &dp->masks[mask_id].entry, &bkey, &tkey);
        f = dp_bpf_find_flow_by_tkey(dp, &tkey);
        if (f) {
            return f;
        }
    }
    return NULL;
}

struct dp_bpf_flow *
dp_bpf_lookup_l3_flow(const struct dp_bpf *dp, const struct flow *flow)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_flow *f;

    /* Megaflows do not overlap: the first that matches is the one.  There
     * are few of these (the recirculations of decapsulated packets), so a
     * walk of the list does. */
    LIST_FOR_EACH (f, l3_node, &dp->l3_flows) {
        if (flow_equal_except(flow, &f->l3_match->flow, &f->l3_match->wc)) {
            return f;
        }
    }
    return NULL;
}

void
dp_bpf_flow_credit(struct dp_bpf *dp OVS_UNUSED, struct dp_bpf_flow *f,
                   const struct flow *flow, size_t n_bytes)
    OVS_REQUIRES(dp->mutex)
{
    struct dpif_flow_stats stats = {
        .n_packets = 1,
        .n_bytes = n_bytes,
        .used = time_msec(),
        .tcp_flags = (flow->nw_proto == IPPROTO_TCP
                      ? ntohs(flow->tcp_flags) : 0),
    };

    dp_bpf_stats_add(&f->up_stats, &stats);
}

/* Frees 'flow', leaving its BPF entry alone. */
void
dp_bpf_flow_free(struct dp_bpf *dp, struct dp_bpf_flow *flow)
    OVS_REQUIRES(dp->mutex)
{
    /* A batch of deletes takes its flows out of 'flows' first (see
     * dp_bpf_flow_del_batch()). */
    if (!hmap_node_is_null(&flow->ufid_node)) {
        hmap_remove(&dp->flows, &flow->ufid_node);
    }
    if (flow->l3_match) {
        ovs_list_remove(&flow->l3_node);
        free(flow->l3_match);
    } else {
        hmap_remove(&dp->flows_by_tkey, &flow->tkey_node);
    }
    free(flow->key);
    free(flow->mask);
    free(flow->actions);
    free(flow);
}

static int
flow_put_errno(int error)
{
    /* A full table is not the caller's fault: say so in a way that shows
     * in "ovs-appctl coverage/show" too. */
    if (error == E2BIG || error == ENOMEM || error == ENOSPC) {
        COVERAGE_INC(dpif_bpf_flow_table_full);
        return ENOSPC;
    }
    return error;
}

/* The new flows of a batch of puts (see dp_bpf_flow_put_batch()), in the
 * flow table of 'dp' already, whose BPF entries are not written yet. */
struct dp_bpf_put_batch {
    size_t n;
    struct dp_bpf_pending_put {
        struct dp_bpf_flow *flow;
        const struct dpif_flow_put *put;
        const struct ovs_bpf_flow *value;
        const struct ovs_bpf_flow_actions *fa;  /* If the flow's
                                                 * 'actions_id'. */
        int *error;
    } *pending;
};

static bool
put_batch_contains(const struct dp_bpf_put_batch *b,
                   const struct dp_bpf_flow *flow)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->pending[i].flow == flow) {
            return true;
        }
    }
    return false;
}

/* Fails the pending put 'p', whose BPF entry the kernel refused with
 * 'error': its flow leaves the flow table again. */
static void
put_batch_fail(struct dp_bpf *dp, struct dp_bpf_pending_put *p, int error)
    OVS_REQUIRES(dp->mutex)
{
    error = flow_put_errno(error);
    if (!(p->put->flags & DPIF_FP_PROBE)) {
        VLOG_INFO_RL(&rl, "%s: cannot insert flow into the BPF flow table "
                     "(%s)", dp->name, ovs_strerror(error));
    }
    dp_bpf_mask_unref(dp, p->flow->tkey.mask_id);
    dp_bpf_flow_free(dp, p->flow);
    *p->error = error;
}

/* Writes the long action lists of the new flows of 'b' (see struct
 * ovs_bpf_flow) in one batch, before the entries that point to them, and
 * fails the puts whose list the kernel refuses: their flows are left out
 * of 'b'. */
static void
put_batch_write_actions(struct dp_bpf *dp, struct dp_bpf_put_batch *b)
    OVS_REQUIRES(dp->mutex)
{
    struct ovs_bpf_flow_actions *fas;
    size_t n = 0, n_kept = 0;
    uint64_t *ids;
    int *errors;

    for (size_t i = 0; i < b->n; i++) {
        n += b->pending[i].flow->actions_id != 0;
    }
    if (!n) {
        return;
    }
    fas = xmalloc(n * sizeof *fas);
    ids = xmalloc(n * sizeof *ids);
    errors = xmalloc(n * sizeof *errors);
    n = 0;
    for (size_t i = 0; i < b->n; i++) {
        const struct dp_bpf_pending_put *p = &b->pending[i];

        if (p->flow->actions_id) {
            ids[n] = p->flow->actions_id;
            fas[n++] = *p->fa;
        }
    }
    /* The keys are new: BPF_ANY, the only flag of a batch update. */
    dp_bpf_map_batch(DP_BPF_MAP_BATCH_UPDATE, dp->obj->flow_actions_fd, ids,
                     sizeof *ids, fas, sizeof *fas, n, UINT32_MAX, BPF_ANY,
                     errors);
    n = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct dp_bpf_pending_put *p = &b->pending[i];

        if (p->flow->actions_id && errors[n++]) {
            put_batch_fail(dp, p, errors[n - 1]);
        } else {
            b->pending[n_kept++] = *p;
        }
    }
    b->n = n_kept;
    free(errors);
    free(ids);
    free(fas);
}

/* Writes the BPF entries of the new flows of 'b', one batch per BPF flow
 * table, then saves them.  A flow whose entry the kernel refuses leaves the
 * flow table again, with the error in its put. */
static void
put_batch_flush(struct dp_bpf *dp, struct dp_bpf_put_batch *b)
    OVS_REQUIRES(dp->mutex)
{
    const struct dp_bpf_flow **done;
    struct ovs_bpf_flow *values;
    size_t n_done = 0;
    uint8_t *keys;
    int *errors;

    put_batch_write_actions(dp, b);
    if (!b->n) {
        return;
    }
    done = xmalloc(b->n * sizeof *done);
    values = xmalloc(b->n * sizeof *values);
    keys = xmalloc(b->n * sizeof(struct ovs_bpf_flow_table_key));
    errors = xmalloc(b->n * sizeof *errors);
    for (unsigned int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        size_t key_size = dp_bpf_flow_table_key_size(t);
        struct dp_bpf_pending_put *in_t[DP_BPF_PUT_BATCH];
        size_t n = 0;

        for (size_t i = 0; i < b->n; i++) {
            struct dp_bpf_pending_put *p = &b->pending[i];
            const struct dp_bpf_flow *flow = p->flow;

            if (dp->masks[flow->tkey.mask_id].entry.table != t) {
                continue;
            }
            memcpy(keys + n * key_size, &flow->tkey, key_size);
            memcpy(&values[n], p->value, sizeof *values);
            in_t[n++] = p;
        }
        if (!n) {
            continue;
        }
        /* BPF_ANY, as the kernel refuses any other flag in a batch update:
         * the flow table said that no flow has the key, and an entry with
         * it that none accounts for (a foreign write) is best replaced by
         * the flow that ovs-vswitchd knows. */
        dp_bpf_map_batch(DP_BPF_MAP_BATCH_UPDATE, dp->obj->flow_table_fds[t],
                         keys, key_size, values, sizeof *values, n,
                         UINT32_MAX, BPF_ANY, errors);
        for (size_t i = 0; i < n; i++) {
            struct dp_bpf_pending_put *p = in_t[i];

            if (errors[i]) {
                uint64_t id = p->flow->actions_id;

                if (id) {
                    bpf_map_delete_elem(dp->obj->flow_actions_fd, &id);
                }
                put_batch_fail(dp, p, errors[i]);
            } else {
                *p->error = 0;
                done[n_done++] = p->flow;
            }
        }
    }
    dp_bpf_flows_save(dp, done, n_done);
    b->n = 0;

    free(errors);
    free(keys);
    free(values);
    free(done);
}

/* Modifies 'flow' as 'put' says, writing its BPF entry now ('value', and
 * 'fa' for a long action list, which gets a new 'actions_id': a lookup
 * that read the old entry never finds the new list under the old id). */
static int
dp_bpf_flow_modify(struct dp_bpf *dp, struct dp_bpf_flow *flow,
                   struct dpif_flow_put *put, struct ovs_bpf_flow *value,
                   const struct ovs_bpf_flow_actions *fa)
    OVS_REQUIRES(dp->mutex)
{
    uint64_t old_id = flow->actions_id;
    struct ovs_bpf_flow old;

    if (!(put->flags & DPIF_FP_MODIFY)) {
        return EEXIST;
    }
    /* Modifying a flow changes its actions, never its match. */
    dp_bpf_flow_read(dp, flow, &old);
    if (put->stats) {
        dp_bpf_stats_from_bpf(old.stats, put->stats);
        dp_bpf_stats_add(put->stats, &flow->up_stats);
    }
    if (!(put->flags & DPIF_FP_ZERO_STATS)) {
        memcpy(value->stats, old.stats, sizeof value->stats);
    } else {
        memset(&flow->up_stats, 0, sizeof flow->up_stats);
    }
    value->actions_id = 0;
    if (dp_bpf_flow_value_is_long(value)) {
        value->actions_id = ++dp->actions_id;
        if (bpf_map_update_elem(dp->obj->flow_actions_fd,
                                &value->actions_id, fa, BPF_NOEXIST)) {
            return flow_put_errno(errno);
        }
    }
    if (bpf_map_update_elem(dp_bpf_flow_table_fd(dp, flow->tkey.mask_id),
                            &flow->tkey, value, BPF_EXIST)) {
        int error = errno;

        if (value->actions_id) {
            bpf_map_delete_elem(dp->obj->flow_actions_fd,
                                &value->actions_id);
        }
        return flow_put_errno(error);
    }
    if (old_id) {
        bpf_map_delete_elem(dp->obj->flow_actions_fd, &old_id);
    }
    flow->actions_id = value->actions_id;
    flow->seq = ++dp->flow_seq;
    flow->flags = value->flags;
    free(flow->actions);
    flow->actions = xmemdup(put->actions, put->actions_len);
    flow->actions_len = put->actions_len;
    dp_bpf_flow_save(dp, flow);
    return 0;
}

/* Adds to the flow table of 'dp' a new flow with 'ufid', 'flags' and the
 * key, mask and actions of 'put', and returns it. */
static struct dp_bpf_flow *
dp_bpf_flow_new(struct dp_bpf *dp, const struct dpif_flow_put *put,
                const ovs_u128 *ufid, uint32_t flags)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_flow *flow = xzalloc(sizeof *flow);

    flow->ufid = *ufid;
    flow->flags = flags;
    flow->seq = ++dp->flow_seq;
    flow->key = xmemdup(put->key, put->key_len);
    flow->key_len = put->key_len;
    if (put->mask_len) {
        flow->mask = xmemdup(put->mask, put->mask_len);
        flow->mask_len = put->mask_len;
    }
    flow->actions = xmemdup(put->actions, put->actions_len);
    flow->actions_len = put->actions_len;
    hmap_insert(&dp->flows, &flow->ufid_node, dp_bpf_ufid_hash(ufid));
    return flow;
}

/* Carries out 'put' of a layer 3 flow ('prep' has its match), or a put
 * with the ufid of one, 'flow' if it exists, on the flow table of 'dp'.
 * Such a flow has no BPF entry. */
static int
dp_bpf_l3_flow_put(struct dp_bpf *dp, struct dp_bpf_flow *flow,
                   struct dpif_flow_put *put, struct dp_bpf_put_prep *prep)
    OVS_REQUIRES(dp->mutex)
{
    if (flow) {
        if (!(put->flags & DPIF_FP_MODIFY)) {
            return EEXIST;
        }
        /* The same ufid for an Ethernet flow and a layer 3 one. */
        if (!prep->l3_match || !flow->l3_match) {
            return EINVAL;
        }
        /* Modifying a flow changes its actions, never its match. */
        if (put->stats) {
            *put->stats = flow->up_stats;
        }
        if (put->flags & DPIF_FP_ZERO_STATS) {
            memset(&flow->up_stats, 0, sizeof flow->up_stats);
        }
        free(flow->actions);
        flow->actions = xmemdup(put->actions, put->actions_len);
        flow->actions_len = put->actions_len;
        return 0;
    }

    if (!(put->flags & DPIF_FP_CREATE)) {
        return ENOENT;
    }
    if (hmap_count(&dp->flows) >= dp->flow_limit) {
        return flow_put_errno(ENOSPC);
    }
    flow = dp_bpf_flow_new(dp, put, &prep->ufid, OVS_BPF_FLOW_F_USERSPACE);
    flow->l3_match = prep->l3_match;
    prep->l3_match = NULL;
    ovs_list_push_back(&dp->l3_flows, &flow->l3_node);
    return 0;
}

/* Carries out 'put', translated into 'prep', on the flow table of 'dp',
 * storing its result in '*errorp'.  A new flow joins the flow table at
 * once, for the puts after it, and 'b', whose flush writes its BPF entry
 * and stores its result.  A put that meets a flow of 'b' flushes 'b' first,
 * so that each put sees the flow table as if the ones before it were done
 * one by one. */
static void
dp_bpf_flow_put_one(struct dp_bpf *dp, struct dpif_flow_put *put,
                    struct dp_bpf_put_prep *prep, struct dp_bpf_put_batch *b,
                    int *errorp)
    OVS_REQUIRES(dp->mutex)
{
    struct ovs_bpf_flow_table_key tkey;
    struct dp_bpf_flow *flow;
    int mask_id;

    flow = dp_bpf_find_flow(dp, &prep->ufid);
    if (flow && put_batch_contains(b, flow)) {
        put_batch_flush(dp, b);
        flow = dp_bpf_find_flow(dp, &prep->ufid);
    }
    if (prep->l3_match || (flow && flow->l3_match)) {
        *errorp = dp_bpf_l3_flow_put(dp, flow, put, prep);
        return;
    }
    if (flow) {
        *errorp = dp_bpf_flow_modify(dp, flow, put, &prep->value,
                                     prep->fa);
        return;
    }

    if (!(put->flags & DPIF_FP_CREATE)) {
        *errorp = ENOENT;
        return;
    }
    if (hmap_count(&dp->flows) >= dp->flow_limit) {
        if (!(put->flags & DPIF_FP_PROBE)) {
            VLOG_INFO_RL(&rl, "%s: flow table full (%"PRIu32" flows, "
                         "other_config:bpf-flow-limit): packets of new "
                         "flows go through ovs-vswitchd", dp->name,
                         dp->flow_limit);
        }
        *errorp = flow_put_errno(ENOSPC);
        return;
    }

    mask_id = dp_bpf_mask_ref(dp, &prep->bmask);
    if (mask_id < 0) {
        COVERAGE_INC(dpif_bpf_masks_full);
        if (!(put->flags & DPIF_FP_PROBE)) {
            VLOG_INFO_RL(&rl, "%s: mask list full (%"PRIu32" masks)",
                         dp->name, dp->max_masks);
        }
        *errorp = flow_put_errno(ENOSPC);
        return;
    }
    dpif_bpf_table_key(mask_id, &dp->masks[mask_id].entry, &prep->bkey,
                       &tkey);

    flow = dp_bpf_find_flow_by_tkey(dp, &tkey);
    if (flow && put_batch_contains(b, flow)) {
        put_batch_flush(dp, b);
        flow = dp_bpf_find_flow_by_tkey(dp, &tkey);
    }
    if (flow) {
        /* The same megaflow under another ufid. */
        dp_bpf_mask_unref(dp, mask_id);
        *errorp = EEXIST;
        return;
    }

    flow = dp_bpf_flow_new(dp, put, &prep->ufid, prep->value.flags);
    flow->tkey = tkey;
    hmap_insert(&dp->flows_by_tkey, &flow->tkey_node, dp_bpf_tkey_hash(&tkey));
    if (dp_bpf_flow_value_is_long(&prep->value)) {
        flow->actions_id = prep->value.actions_id = ++dp->actions_id;
    }

    b->pending[b->n++] = (struct dp_bpf_pending_put) {
        .flow = flow,
        .put = put,
        .value = &prep->value,
        .fa = prep->fa,
        .error = errorp,
    };
}

/* Carries out the 'n' flow puts 'puts' on 'dp', in order, storing the
 * result of 'puts[i]' in 'errors[i]', as if one by one: the BPF entries of
 * the new flows go in BPF_MAP_UPDATE_BATCH calls, one per BPF flow table,
 * and so do their saved copies.  A flow that the kernel refuses fails alone
 * and the others are installed. */
static void
dp_bpf_flow_put_batch__(struct dp_bpf *dp, struct dpif_flow_put **puts,
                        int *errors, size_t n)
{
    struct dp_bpf_put_prep *preps;
    struct dp_bpf_put_batch b;

    while (n > DP_BPF_PUT_BATCH) {
        dp_bpf_flow_put_batch__(dp, puts, errors, DP_BPF_PUT_BATCH);
        puts += DP_BPF_PUT_BATCH;
        errors += DP_BPF_PUT_BATCH;
        n -= DP_BPF_PUT_BATCH;
    }

    /* Translation needs no lock. */
    preps = xmalloc(n * sizeof *preps);
    for (size_t i = 0; i < n; i++) {
        errors[i] = dp_bpf_flow_put_prepare(puts[i], &preps[i]);
    }

    b.n = 0;
    b.pending = xmalloc(n * sizeof *b.pending);
    ovs_mutex_lock(&dp->mutex);
    for (size_t i = 0; i < n; i++) {
        if (!errors[i]) {
            dp_bpf_flow_put_one(dp, puts[i], &preps[i], &b, &errors[i]);
        }
    }
    put_batch_flush(dp, &b);
    ovs_mutex_unlock(&dp->mutex);

    for (size_t i = 0; i < n; i++) {
        free(preps[i].l3_match);
        free(preps[i].fa);
    }
    free(b.pending);
    free(preps);
}

void
dp_bpf_flow_put_batch(struct dpif *dpif, struct dpif_flow_put **puts,
                      int *errors, size_t n)
{
    dp_bpf_flow_put_batch__(get_dp_bpf(dpif), puts, errors, n);
}

int
dp_bpf_flow_put(struct dpif *dpif, struct dpif_flow_put *put)
{
    int error;

    dp_bpf_flow_put_batch(dpif, &put, &error, 1);
    return error;
}

int
dp_bpf_flow_put__(struct dp_bpf *dp, struct dpif_flow_put *put)
{
    int error;

    dp_bpf_flow_put_batch__(dp, &put, &error, 1);
    return error;
}

/* Removes the 'n' flows 'flows' from the flow table of 'dp' and their
 * entries from the BPF maps, with one BPF_MAP_DELETE_BATCH call (or a few)
 * per BPF flow table and one for their saved copies, instead of two
 * bpf() calls per flow.  If 'stats' and 'stats[i]' are nonnull, stores in
 * 'stats[i]' the statistics of 'flows[i]' just before.  If 'errors' is
 * nonnull, stores in 'errors[i]' 0, or the error of the delete of the BPF
 * entry of 'flows[i]' (ENOENT if it was gone already); the flow leaves the
 * flow table either way. */
static void
dp_bpf_flows_remove(struct dp_bpf *dp, struct dp_bpf_flow **flows, size_t n,
                    struct dpif_flow_stats **stats, int *errors)
    OVS_REQUIRES(dp->mutex)
{
    size_t n_ufids = 0, n_ids = 0;
    ovs_u128 *ufids;
    uint8_t *keys;
    uint64_t *ids;
    size_t *idx;
    int *errs;

    if (!n) {
        /* Nothing to do, and a datapath whose creation failed has no
         * maps. */
        return;
    }
    keys = xmalloc(n * sizeof(struct ovs_bpf_flow_table_key));
    ufids = xmalloc(n * sizeof *ufids);
    errs = xmalloc(n * sizeof *errs);
    idx = xmalloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i++) {
        if (errors) {
            errors[i] = 0;
        }
        if (stats && stats[i]) {
            dp_bpf_flow_get_stats(dp, flows[i], stats[i]);
        }
        if (!flows[i]->l3_match) {
            ufids[n_ufids++] = flows[i]->ufid;
        }
    }

    for (unsigned int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        size_t key_size = dp_bpf_flow_table_key_size(t);
        size_t m = 0;

        for (size_t i = 0; i < n; i++) {
            const struct dp_bpf_flow *flow = flows[i];

            if (!flow->l3_match
                && dp_bpf_flow_table_of(dp, flow->tkey.mask_id) == t) {
                memcpy(keys + m * key_size, &flow->tkey, key_size);
                idx[m++] = i;
            }
        }
        if (m) {
            dp_bpf_map_batch(DP_BPF_MAP_BATCH_DELETE,
                             dp->obj->flow_table_fds[t], keys, key_size,
                             NULL, 0, m, DP_BPF_DELETE_BATCH, 0, errs);
            for (size_t j = 0; j < m; j++) {
                if (errs[j] && errors) {
                    errors[idx[j]] = errs[j];
                }
            }
        }
    }
    /* A flow that did not fit has no saved copy (ENOENT). */
    dp_bpf_map_batch(DP_BPF_MAP_BATCH_DELETE, dp->obj->saved_flows_fd,
                     ufids, sizeof *ufids, NULL, 0, n_ufids,
                     DP_BPF_DELETE_BATCH, 0, errs);

    /* The long action lists after the entries that point to them. */
    ids = xmalloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        if (flows[i]->actions_id) {
            ids[n_ids++] = flows[i]->actions_id;
        }
    }
    dp_bpf_map_batch(DP_BPF_MAP_BATCH_DELETE, dp->obj->flow_actions_fd, ids,
                     sizeof *ids, NULL, 0, n_ids, DP_BPF_DELETE_BATCH, 0,
                     errs);
    free(ids);

    /* The masks after the flows' entries: a mask that goes leaves the
     * search order with no flow of it in BPF. */
    for (size_t i = 0; i < n; i++) {
        if (!flows[i]->l3_match) {
            dp_bpf_mask_unref(dp, flows[i]->tkey.mask_id);
        }
        dp_bpf_flow_free(dp, flows[i]);
    }

    free(idx);
    free(errs);
    free(ufids);
    free(keys);
}

/* Removes every flow of 'dp', as dp_bpf_flows_remove() does. */
void
dp_bpf_flows_remove_all(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    size_t n = hmap_count(&dp->flows);
    struct dp_bpf_flow **flows = xmalloc(n * sizeof *flows);
    struct dp_bpf_flow *flow;
    size_t i = 0;

    HMAP_FOR_EACH (flow, ufid_node, &dp->flows) {
        flows[i++] = flow;
    }
    dp_bpf_flows_remove(dp, flows, n, NULL, NULL);
    free(flows);
}

/* Carries out the 'n' flow deletes 'dels' on 'dp', in order, storing the
 * result of 'dels[i]' in 'errors[i]', as if one by one (a second delete
 * of a flow in the batch finds none): the BPF entries go in
 * BPF_MAP_DELETE_BATCH calls (see dp_bpf_flows_remove()).  A delete whose
 * flow's BPF entry was gone already fails alone with ENOENT (its
 * statistics unknown), and the flow leaves the flow table; the others are
 * carried out. */
void
dp_bpf_flow_del_batch(struct dpif *dpif, struct dpif_flow_del **dels,
                      int *errors, size_t n)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_flow **flows = xmalloc(n * sizeof *flows);
    struct dpif_flow_stats **stats = xmalloc(n * sizeof *stats);
    int *errs = xmalloc(n * sizeof *errs);
    size_t *idx = xmalloc(n * sizeof *idx);
    size_t m = 0;

    ovs_mutex_lock(&dp->mutex);
    for (size_t i = 0; i < n; i++) {
        struct dp_bpf_flow *flow;
        ovs_u128 ufid;

        dp_bpf_flow_ufid(dels[i]->ufid, dels[i]->key, dels[i]->key_len, &ufid);
        flow = dp_bpf_find_flow(dp, &ufid);
        if (!flow) {
            errors[i] = ENOENT;
            continue;
        }
        /* Out of the flow table at once, for the deletes after it. */
        hmap_remove(&dp->flows, &flow->ufid_node);
        hmap_node_nullify(&flow->ufid_node);
        flows[m] = flow;
        stats[m] = dels[i]->stats;
        idx[m++] = i;
    }
    if (m) {
        dp_bpf_flows_remove(dp, flows, m, stats, errs);
        for (size_t j = 0; j < m; j++) {
            errors[idx[j]] = errs[j];
        }
    }
    ovs_mutex_unlock(&dp->mutex);

    free(idx);
    free(errs);
    free(stats);
    free(flows);
}

int
dp_bpf_flow_del(struct dpif *dpif, struct dpif_flow_del *del)
{
    int error;

    dp_bpf_flow_del_batch(dpif, &del, &error, 1);
    return error;
}

int
dp_bpf_flow_get(struct dpif *dpif, struct dpif_flow_get *get)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_flow *flow;
    ovs_u128 ufid;
    int error = 0;

    dp_bpf_flow_ufid(get->ufid, get->key, get->key_len, &ufid);
    ovs_mutex_lock(&dp->mutex);
    flow = dp_bpf_find_flow(dp, &ufid);
    if (flow) {
        dp_bpf_flow_to_dpif_flow(flow, false, get->buffer, get->flow);
        dp_bpf_flow_get_stats(dp, flow, &get->flow->stats);
    } else {
        error = ENOENT;
    }
    ovs_mutex_unlock(&dp->mutex);
    return error;
}

int
dpif_bpf_flow_flush(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_mutex_lock(&dp->mutex);
    dp_bpf_flows_remove_all(dp);
    ovs_mutex_unlock(&dp->mutex);
    return 0;
}
