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
 * flows, by ufid, mirrored into the BPF flow tables and the BPF mask list
 * (with a reference count per mask), and the flow put, delete, get, flush
 * and dump operations of the dpif class on it. */

#include <config.h>

#include "dpif-bpf-flow-table.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "dpif-bpf-ipf.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-port.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "flow.h"
#include "hash.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/match.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_flow_table);

COVERAGE_DEFINE(dpif_bpf_flow_table_full);
COVERAGE_DEFINE(dpif_bpf_flow_userspace);
COVERAGE_DEFINE(dpif_bpf_flow_l3);
COVERAGE_DEFINE(dpif_bpf_masks_full);
COVERAGE_DEFINE(dpif_bpf_flow_unsaved);
COVERAGE_DEFINE(dpif_bpf_map_update_batch);
COVERAGE_DEFINE(dpif_bpf_map_lookup_batch);
COVERAGE_DEFINE(dpif_bpf_map_delete_batch);

/* Flows returned per flow_dump_next() call, at most. */
#define DP_BPF_DUMP_BATCH 50

/* Flow puts installed together, at most: the puts that a handler thread
 * hands over for one batch of upcalls (ofproto-dpif-upcall.c's
 * UPCALL_MAX_BATCH) fit. */
#define DP_BPF_PUT_BATCH 64

/* BPF flow table entries read per BPF_MAP_LOOKUP_BATCH call, at first (a
 * bucket with more entries makes it grow), and keys deleted per
 * BPF_MAP_DELETE_BATCH call, at most. */
#define DP_BPF_LOOKUP_BATCH 256
#define DP_BPF_DELETE_BATCH 1024

/* A dump reads a BPF flow table in batches if it has this many flows or
 * more, otherwise each flow's entry alone.  A batch lookup of a hash map
 * visits every bucket of it (65,536 in a flow table), each empty one
 * cheaply; below this many flows, the lookups of the flows alone cost less
 * (see "Flow installs, dumps and deletes" in
 * Documentation/topics/dpif-bpf.rst). */
#define DP_BPF_DUMP_BATCH_MIN 256

/* The kernel's "operation not supported" (524), which it returns for a
 * batch operation that a map type lacks; not in the C library's errno. */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

static uint32_t
ufid_hash(const ovs_u128 *ufid)
{
    return ufid->u32[0];
}

/* The hash of 'tkey', normalized: its words after those of its table are
 * zero, so the hash stops at the last nonzero word, which equal keys share.
 * Handlers and revalidators hash a key for every flow put, miss and dumped
 * flow; hash_bytes() of all 264 bytes was the handler's largest function in
 * a profile of a flow setup. */
static uint32_t
tkey_hash(const struct ovs_bpf_flow_table_key *tkey)
{
    size_t n = OVS_BPF_KEY_WORDS;

    while (n && !tkey->words[n - 1]) {
        n--;
    }
    return hash_words64((const uint64_t *) tkey->words, n, tkey->mask_id);
}

static struct dp_bpf_flow *
dp_bpf_find_flow(const struct dp_bpf *dp, const ovs_u128 *ufid)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_flow *flow;

    HMAP_FOR_EACH_WITH_HASH (flow, ufid_node, ufid_hash(ufid), &dp->flows) {
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

    HMAP_FOR_EACH_WITH_HASH (flow, tkey_node, tkey_hash(tkey),
                             &dp->flows_by_tkey) {
        if (!memcmp(&flow->tkey, tkey, sizeof *tkey)) {
            return flow;
        }
    }
    return NULL;
}

/* The ufid of a flow: the one given, or else the hash of its key, as
 * dpctl computes it. */
static void
get_ufid(const ovs_u128 *ufid,
         const struct nlattr *key, size_t key_len, ovs_u128 *out)
{
    if (ufid) {
        *out = *ufid;
    } else {
        odp_flow_key_hash(key, key_len, out);
    }
}

/* Zeroes the 'mask_stats' counters of the mask list slot 'idx', which is
 * taking a new mask. */
static void
mask_stats_clear(struct dp_bpf *dp, uint32_t idx)
    OVS_REQUIRES(dp->mutex)
{
    int n_cpus = libbpf_num_possible_cpus();

    if (n_cpus > 0) {
        uint64_t *zeros = xcalloc(n_cpus, sizeof *zeros);

        bpf_map_update_elem(dp->obj->mask_stats_fd, &idx, zeros, BPF_ANY);
        free(zeros);
    }
}

/* Makes the lookup search the masks in the order of 'dp->mask_order': the
 * 'mask_order' entry that the lookup does not use gets the order, then
 * 'dp_config' points the lookup to it (see struct ovs_bpf_mask_order). */
static void
mask_order_write(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    uint32_t sel = !dp->mask_order_sel;
    struct ovs_bpf_mask_order order;
    int error;

    memset(&order, 0, sizeof order);
    order.n_masks = dp->n_masks;
    memcpy(order.mask_id, dp->mask_order, dp->n_masks);
    error = (bpf_map_update_elem(dp->obj->mask_order_fd, &sel, &order,
                                 BPF_ANY)
             ? errno : 0);
    if (!error) {
        dp->mask_order_sel = sel;
        error = dp_bpf_write_config(dp);
    }
    if (error) {
        VLOG_WARN_RL(&rl, "%s: cannot write the mask search order (%s)",
                     dp->name, ovs_strerror(error));
    }
}

/* Finds the mask list slot for 'mask', taking a reference, or takes a free
 * slot for it.  Returns the slot or -1 if the list is full. */
static int
dp_bpf_mask_ref(struct dp_bpf *dp, const struct ovs_bpf_flow_key *mask)
    OVS_REQUIRES(dp->mutex)
{
    struct ovs_bpf_mask entry;
    int free_slot = -1;

    /* Compiling is one-to-one: equal masks have equal entries. */
    dpif_bpf_mask_compile(mask, &entry);
    for (int i = 0; i < dp->max_masks; i++) {
        struct dp_bpf_mask *m = &dp->masks[i];

        if (m->refcnt && !memcmp(&m->entry, &entry, sizeof entry)) {
            m->refcnt++;
            return i;
        } else if (!m->refcnt && free_slot < 0) {
            free_slot = i;
        }
    }
    if (free_slot >= 0) {
        struct dp_bpf_mask *m = &dp->masks[free_slot];
        uint32_t idx = free_slot;

        if (bpf_map_update_elem(dp->obj->flow_masks_fd, &idx, &entry,
                                BPF_ANY)) {
            VLOG_WARN_RL(&rl, "%s: cannot write mask %d (%s)", dp->name,
                         free_slot, ovs_strerror(errno));
            return -1;
        }
        m->entry = entry;
        m->refcnt = 1;
        m->hits = 0;
        mask_stats_clear(dp, idx);
        /* Last in the search order until it proves busier. */
        dp->mask_order[dp->n_masks++] = idx;
        mask_order_write(dp);
    }
    return free_slot;
}

static void
dp_bpf_mask_unref(struct dp_bpf *dp, uint32_t idx)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_mask *m = &dp->masks[idx];

    ovs_assert(m->refcnt);
    if (!--m->refcnt) {
        struct ovs_bpf_mask entry;

        memset(&entry, 0, sizeof entry);
        bpf_map_update_elem(dp->obj->flow_masks_fd, &idx, &entry, BPF_ANY);
        for (uint32_t i = 0; i < dp->n_masks; i++) {
            if (dp->mask_order[i] == idx) {
                memmove(&dp->mask_order[i], &dp->mask_order[i + 1],
                        dp->n_masks - i - 1);
                break;
            }
        }
        dp->n_masks--;
        mask_order_write(dp);
    }
}

/* Orders the masks in use by the packets that hit their flows since the
 * last call, busiest first (ties keep their order), as the kernel
 * datapath's periodic rebalance of its mask array does, so that the
 * packets of the busiest flows find them at the first probe.  Writes the
 * new order if it changed. */
void
dp_bpf_masks_rebalance(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    uint64_t delta[OVS_BPF_MAX_MASKS];
    uint8_t order[OVS_BPF_MAX_MASKS];
    uint32_t n = dp->n_masks;

    for (uint32_t i = 0; i < n; i++) {
        struct dp_bpf_mask *m = &dp->masks[dp->mask_order[i]];
        uint64_t hits;

        if (dp_bpf_percpu_sum(dp->obj->mask_stats_fd, dp->mask_order[i],
                              &hits)) {
            return;
        }
        delta[i] = hits - m->hits;
        m->hits = hits;
    }

    /* Insertion sort: at most OVS_BPF_MAX_MASKS entries, mostly in order
     * already.  'delta' moves with 'order'. */
    memcpy(order, dp->mask_order, n);
    for (uint32_t i = 1; i < n; i++) {
        uint64_t d = delta[i];
        uint8_t id = order[i];
        uint32_t j = i;

        for (; j > 0 && delta[j - 1] < d; j--) {
            delta[j] = delta[j - 1];
            order[j] = order[j - 1];
        }
        delta[j] = d;
        order[j] = id;
    }
    if (memcmp(order, dp->mask_order, n)) {
        memcpy(dp->mask_order, order, n);
        mask_order_write(dp);
    }
}

static void
stats_from_bpf(const struct ovs_bpf_flow_stats *b,
               struct dpif_flow_stats *stats)
{
    stats->n_packets = b->packets;
    stats->n_bytes = b->bytes;
    /* bpf_ktime_get_ns() and time_msec() both read CLOCK_MONOTONIC. */
    stats->used = b->used_ns ? b->used_ns / (1000 * 1000) : 0;
    stats->tcp_flags = b->tcp_flags;
}

/* The size of the keys of BPF flow table 't': the first words of struct
 * ovs_bpf_flow_table_key. */
static size_t
flow_table_key_size(unsigned int t)
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
static int
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

/* Adds 'b' to 'stats'. */
static void
stats_add(struct dpif_flow_stats *stats, const struct dpif_flow_stats *b)
{
    stats->n_packets += b->n_packets;
    stats->n_bytes += b->n_bytes;
    stats->used = MAX(stats->used, b->used);
    stats->tcp_flags |= b->tcp_flags;
}

static void
dp_bpf_flow_get_stats(const struct dp_bpf *dp, const struct dp_bpf_flow *flow,
                      struct dpif_flow_stats *stats)
{
    struct ovs_bpf_flow value;

    if (flow->l3_match) {
        /* No BPF entry: ovs-vswitchd forwards all of its packets. */
        memset(stats, 0, sizeof *stats);
    } else {
        dp_bpf_flow_read(dp, flow, &value);
        stats_from_bpf(&value.stats, stats);
    }
    stats_add(stats, &flow->up_stats);
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

    stats_add(&f->up_stats, &stats);
}

static void dp_bpf_flow_free(struct dp_bpf *, struct dp_bpf_flow *)
    OVS_REQUIRES(dp->mutex);

/* Fills 'sf' with the key, mask and actions of 'flow', to be saved under
 * its ufid for the next ovs-vswitchd (see dp_bpf_flows_adopt()).  Returns
 * false if they do not fit. */
static bool
saved_flow_fill(const struct dp_bpf_flow *flow,
                struct dpif_bpf_saved_flow *sf)
{
    if (flow->key_len + flow->mask_len + flow->actions_len
        > DPIF_BPF_SAVED_FLOW_DATA) {
        return false;
    }
    memset(sf, 0, sizeof *sf);
    sf->key_len = flow->key_len;
    sf->mask_len = flow->mask_len;
    sf->actions_len = flow->actions_len;
    memcpy(sf->data, flow->key, flow->key_len);
    memcpy(sf->data + flow->key_len, flow->mask, flow->mask_len);
    memcpy(sf->data + flow->key_len + flow->mask_len, flow->actions,
           flow->actions_len);
    return true;
}

/* Saves the ufid, key, mask and actions of 'flow' for the next ovs-vswitchd
 * (see dp_bpf_flows_adopt()).  A flow whose attributes do not fit is not
 * saved: the next ovs-vswitchd deletes it from BPF. */
static void
dp_bpf_flow_save(struct dp_bpf *dp, const struct dp_bpf_flow *flow)
    OVS_REQUIRES(dp->mutex)
{
    struct dpif_bpf_saved_flow *sf = xmalloc(sizeof *sf);

    if (!saved_flow_fill(flow, sf)) {
        COVERAGE_INC(dpif_bpf_flow_unsaved);
        bpf_map_delete_elem(dp->obj->saved_flows_fd, &flow->ufid);
    } else if (bpf_map_update_elem(dp->obj->saved_flows_fd, &flow->ufid, sf,
                                   BPF_ANY)) {
        COVERAGE_INC(dpif_bpf_flow_unsaved);
    }
    free(sf);
}

/* Frees 'flow', leaving its BPF entry alone. */
static void
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

/* Translates 'actions' into the BPF flow entry 'value', keeping 'stats',
 * and into 'fa', which has the slots of a list too long for the entry
 * (see struct ovs_bpf_flow; 'value->actions_id' is left 0 for the caller).
 * Actions that are valid but beyond the BPF programs make the flow a
 * userspace one. */
static int
build_flow_value(const struct nlattr *actions, size_t actions_len,
                 const struct ovs_bpf_flow_stats *stats,
                 struct ovs_bpf_flow *value, struct ovs_bpf_flow_actions *fa)
{
    int error;

    memset(value, 0, sizeof *value);
    memset(fa, 0, sizeof *fa);
    if (stats) {
        value->stats = *stats;
    }
    error = dpif_bpf_odp_to_actions(actions, actions_len, fa->actions,
                                    &value->n_actions);
    if (error == E2BIG) {
        COVERAGE_INC(dpif_bpf_flow_userspace);
        memset(fa, 0, sizeof *fa);
        value->n_actions = 0;
        value->flags = OVS_BPF_FLOW_F_USERSPACE;
        error = 0;
    }
    if (!error && value->n_actions <= OVS_BPF_FLOW_INLINE_ACTIONS) {
        memcpy(value->actions, fa->actions,
               value->n_actions * sizeof *value->actions);
    }
    return error;
}

/* Whether the BPF entry 'value' keeps its slots in 'flow_actions'. */
static bool
flow_value_is_long(const struct ovs_bpf_flow *value)
{
    return value->n_actions > OVS_BPF_FLOW_INLINE_ACTIONS;
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

/* The BPF map operations that go in batches (BPF_MAP_UPDATE_BATCH,
 * BPF_MAP_DELETE_BATCH), each with its one-entry fallback. */
enum map_batch_op {
    MAP_BATCH_UPDATE,
    MAP_BATCH_DELETE,
    N_MAP_BATCH_OPS
};

/* Set once a kernel has refused a batch of 'op' where the entry alone was
 * fine: the entries then go alone from then on. */
static atomic_bool map_batch_unsupported[N_MAP_BATCH_OPS];

/* Set by dp_bpf_map_batches_disable() (tests): the entries go alone, as
 * with a kernel without batch operations. */
static atomic_bool map_batches_disabled;

void
dp_bpf_map_batches_disable(bool disable)
{
    atomic_store_relaxed(&map_batches_disabled, disable);
}

static bool
map_batch_usable(enum map_batch_op op)
{
    bool unsupported, disabled;

    atomic_read_relaxed(&map_batch_unsupported[op], &unsupported);
    atomic_read_relaxed(&map_batches_disabled, &disabled);
    return !unsupported && !disabled;
}

/* Runs 'op' on the 'n' entries of the BPF map 'fd' whose keys ('key_size'
 * bytes each) and, for an update, values ('value_size' bytes each) lie back
 * to back in 'keys' and 'values', with the update flags 'flags', in as few
 * batch calls of at most 'max_batch' entries as the kernel allows.  Stores
 * in 'errors[i]' 0 or the errno value of entry 'i' (ENOENT for a delete of
 * a key without an entry).
 *
 * The kernel runs the entries of a batch in order and stops at the first
 * one it refuses, saying how many it did: the refused entry goes again
 * alone, which gives its own error (a batch error may also be about the
 * batch as a whole), and the batch goes on after it.  A kernel or map
 * without the batch operation makes every entry go alone from then on. */
static void
map_batch(enum map_batch_op op, int fd, const void *keys_, size_t key_size,
          const void *values_, size_t value_size, size_t n, uint32_t max_batch,
          uint64_t flags, int *errors)
{
    static const char *const names[N_MAP_BATCH_OPS] = {
        [MAP_BATCH_UPDATE] = "updates: flows are installed",
        [MAP_BATCH_DELETE] = "deletes: flows are deleted",
    };
    LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = flags);
    const uint8_t *values = values_;
    const uint8_t *keys = keys_;
    size_t i = 0;

    while (i < n) {
        const void *key, *value;
        uint32_t count = 0;
        int batch_error = 0;

        if (n - i > 1 && map_batch_usable(op)) {
            uint32_t asked = MIN(n - i, max_batch);
            int retval;

            count = asked;
            key = keys + i * key_size;
            if (op == MAP_BATCH_UPDATE) {
                COVERAGE_INC(dpif_bpf_map_update_batch);
                retval = bpf_map_update_batch(fd, key, values + i * value_size,
                                              &count, &opts);
            } else {
                COVERAGE_INC(dpif_bpf_map_delete_batch);
                retval = bpf_map_delete_batch(fd, key, &count, &opts);
            }
            if (!retval) {
                memset(&errors[i], 0, asked * sizeof *errors);
                i += asked;
                continue;
            }
            batch_error = errno;
            if (count >= asked) {
                /* Refused before the first entry. */
                count = 0;
            }
        }
        memset(&errors[i], 0, count * sizeof *errors);
        i += count;

        key = keys + i * key_size;
        value = values ? values + i * value_size : NULL;
        errors[i] = ((op == MAP_BATCH_UPDATE
                      ? bpf_map_update_elem(fd, key, value, flags)
                      : bpf_map_delete_elem(fd, key))
                     ? errno : 0);
        if (!errors[i] && (batch_error == EINVAL
                           || batch_error == EOPNOTSUPP
                           || batch_error == ENOTSUPP)) {
            /* The entry alone was fine: the kernel cannot run 'op' on this
             * map in batches. */
            bool was;

            atomic_read_relaxed(&map_batch_unsupported[op], &was);
            if (!was) {
                VLOG_INFO("BPF map batch %s one system call each (%s)",
                          names[op], ovs_strerror(batch_error));
                atomic_store_relaxed(&map_batch_unsupported[op], true);
            }
        }
        i++;
    }
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

/* Saves the 'n' flows of 'pending' for the next ovs-vswitchd, as
 * dp_bpf_flow_save() does, in batches. */
static void
put_batch_save(struct dp_bpf *dp, struct dp_bpf_pending_put *pending,
               size_t n)
    OVS_REQUIRES(dp->mutex)
{
    struct dpif_bpf_saved_flow *sfs = xmalloc(n * sizeof *sfs);
    ovs_u128 *ufids = xmalloc(n * sizeof *ufids);
    int *errors = xmalloc(n * sizeof *errors);
    size_t n_sfs = 0;

    for (size_t i = 0; i < n; i++) {
        const struct dp_bpf_flow *flow = pending[i].flow;

        if (saved_flow_fill(flow, &sfs[n_sfs])) {
            ufids[n_sfs++] = flow->ufid;
        } else {
            /* Not saved, and any earlier copy deleted. */
            dp_bpf_flow_save(dp, flow);
        }
    }
    map_batch(MAP_BATCH_UPDATE, dp->obj->saved_flows_fd, ufids,
              sizeof *ufids, sfs, sizeof *sfs, n_sfs, UINT32_MAX, BPF_ANY,
              errors);
    for (size_t i = 0; i < n_sfs; i++) {
        if (errors[i]) {
            COVERAGE_INC(dpif_bpf_flow_unsaved);
        }
    }
    free(errors);
    free(ufids);
    free(sfs);
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
    map_batch(MAP_BATCH_UPDATE, dp->obj->flow_actions_fd, ids, sizeof *ids,
              fas, sizeof *fas, n, UINT32_MAX, BPF_ANY, errors);
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
    struct dp_bpf_pending_put *done;
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
        size_t key_size = flow_table_key_size(t);
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
        map_batch(MAP_BATCH_UPDATE, dp->obj->flow_table_fds[t], keys,
                  key_size, values, sizeof *values, n, UINT32_MAX, BPF_ANY,
                  errors);
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
                done[n_done++] = *p;
            }
        }
    }
    put_batch_save(dp, done, n_done);
    b->n = 0;

    free(errors);
    free(keys);
    free(values);
    free(done);
}

/* A flow put translated, before it meets the flow table. */
struct dp_bpf_put_prep {
    ovs_u128 ufid;
    struct ovs_bpf_flow_key bkey, bmask;
    struct ovs_bpf_flow value;
    struct ovs_bpf_flow_actions *fa;    /* A long list (see struct
                                         * ovs_bpf_flow), or NULL. */
    struct match *l3_match;     /* A layer 3 flow (see struct dp_bpf_flow),
                                 * owned by the prep until the flow takes
                                 * it. */
};

static int
dp_bpf_flow_put_prepare(struct dpif_flow_put *put,
                        struct dp_bpf_put_prep *prep)
{
    struct match l3_match;
    int error;

    if (put->stats) {
        memset(put->stats, 0, sizeof *put->stats);
    }
    prep->l3_match = NULL;
    prep->fa = NULL;
    error = dpif_bpf_odp_to_l3_match(put->key, put->key_len, put->mask,
                                     put->mask_len, &l3_match);
    if (error != ENOENT) {
        /* Not an Ethernet frame: its flow stays in ovs-vswitchd. */
        if (!error) {
            error = dpif_bpf_odp_check_l3_actions(l3_match.flow.packet_type,
                                                  put->actions,
                                                  put->actions_len);
        }
        if (!error) {
            get_ufid(put->ufid, put->key, put->key_len, &prep->ufid);
            prep->l3_match = xmemdup(&l3_match, sizeof l3_match);
            COVERAGE_INC(dpif_bpf_flow_l3);
        }
        return error;
    }

    error = dpif_bpf_odp_to_key(put->key, put->key_len, put->mask,
                                put->mask_len, &prep->bkey, &prep->bmask);
    if (!error) {
        /* On the stack: a handler prepares up to DP_BPF_PUT_BATCH puts in
         * one array, which with 2 kB more each would be a block that glibc
         * maps and unmaps at each batch (above its mmap threshold, see
         * ovs_libbpf_log_init()), page faults for every page of it. */
        struct ovs_bpf_flow_actions fa;

        error = build_flow_value(put->actions, put->actions_len, NULL,
                                 &prep->value, &fa);
        if (!error && flow_value_is_long(&prep->value)) {
            prep->fa = xmemdup(&fa, sizeof fa);
        }
    }
    if (!error) {
        get_ufid(put->ufid, put->key, put->key_len, &prep->ufid);
    }
    if (!error
        && !(prep->value.flags & OVS_BPF_FLOW_F_USERSPACE)
        && dp_bpf_ipf_flow_is_userspace(&prep->bkey, put->actions,
                                        put->actions_len)) {
        /* IP fragments to ct(): reassembled in ovs-vswitchd. */
        memset(prep->value.actions, 0, sizeof prep->value.actions);
        prep->value.n_actions = 0;
        prep->value.flags = OVS_BPF_FLOW_F_USERSPACE;
    }
    return error;
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
        stats_from_bpf(&old.stats, put->stats);
        stats_add(put->stats, &flow->up_stats);
    }
    if (!(put->flags & DPIF_FP_ZERO_STATS)) {
        value->stats = old.stats;
    } else {
        memset(&flow->up_stats, 0, sizeof flow->up_stats);
    }
    value->actions_id = 0;
    if (flow_value_is_long(value)) {
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
    hmap_insert(&dp->flows, &flow->ufid_node, ufid_hash(ufid));
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
    hmap_insert(&dp->flows_by_tkey, &flow->tkey_node, tkey_hash(&tkey));
    if (flow_value_is_long(&prep->value)) {
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
        size_t key_size = flow_table_key_size(t);
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
            map_batch(MAP_BATCH_DELETE, dp->obj->flow_table_fds[t], keys,
                      key_size, NULL, 0, m, DP_BPF_DELETE_BATCH, 0, errs);
            for (size_t j = 0; j < m; j++) {
                if (errs[j] && errors) {
                    errors[idx[j]] = errs[j];
                }
            }
        }
    }
    /* A flow that did not fit has no saved copy (ENOENT). */
    map_batch(MAP_BATCH_DELETE, dp->obj->saved_flows_fd, ufids,
              sizeof *ufids, NULL, 0, n_ufids, DP_BPF_DELETE_BATCH, 0, errs);

    /* The long action lists after the entries that point to them. */
    ids = xmalloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        if (flows[i]->actions_id) {
            ids[n_ids++] = flows[i]->actions_id;
        }
    }
    map_batch(MAP_BATCH_DELETE, dp->obj->flow_actions_fd, ids, sizeof *ids,
              NULL, 0, n_ids, DP_BPF_DELETE_BATCH, 0, errs);
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

        get_ufid(dels[i]->ufid, dels[i]->key, dels[i]->key_len, &ufid);
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

/* Flow dumps.
 *
 * A dump returns the flows of ovs-vswitchd's flow table, as they are when
 * it reaches them, so that a flow deleted meanwhile never comes out of it.
 * Their statistics come from the BPF flow tables, which it reads at its
 * start, in batches (BPF_MAP_LOOKUP_BATCH), into a snapshot: a few bpf()
 * calls for the whole table where each flow took one.  A flow whose
 * entry the snapshot lacks, or whose entry was written after the
 * snapshot began (a new flow, a modified one), has its entry read alone.
 * Small tables are read flow by flow (see DP_BPF_DUMP_BATCH_MIN).
 *
 * The snapshot's statistics go into the flows themselves ('snap_stats',
 * marked with the snapshot's 'gen'), which the dump reads anyway, rather
 * than into a table of their own: a dump of a large flow table visits every
 * flow, and the revalidators dump it every half second or so while flows
 * are set up; an allocation, a hash and a table lookup more per flow were
 * about a third of their samples in a profile of a setup of 100,000 flows.
 * Two dumps at once each mark the flows with their own 'gen': the flows
 * that the later one's read marked are read alone by the earlier one. */

struct dp_bpf_dump_snapshot {
    uint64_t seq;               /* struct dp_bpf's 'flow_seq' before the
                                 * reads. */
    uint64_t gen;               /* Marks the flows that the reads found; 0
                                 * before the reads. */
};

static void
dump_snapshot_init(struct dp_bpf_dump_snapshot *snap)
{
    snap->seq = 0;
    snap->gen = 0;
}

/* Stores the statistics 'stats' of the BPF flow table entry with key 'tkey',
 * read by 'snap' from BPF flow table 't', in the flow of 'dp' that has that
 * entry, if that flow's entry was written before 'snap' began. */
static void
dump_snapshot_store(struct dp_bpf *dp, unsigned int t,
                    const struct dp_bpf_dump_snapshot *snap,
                    const void *tkey_, size_t key_size,
                    const struct ovs_bpf_flow_stats *stats)
    OVS_REQUIRES(dp->mutex)
{
    struct ovs_bpf_flow_table_key tkey;
    struct dp_bpf_flow *flow;

    memset(&tkey, 0, sizeof tkey);
    memcpy(&tkey, tkey_, key_size);
    dpif_bpf_table_key_normalize(t, &tkey);
    flow = dp_bpf_find_flow_by_tkey(dp, &tkey);
    if (flow && flow->seq <= snap->seq) {
        flow->snap_stats = *stats;
        flow->snap_gen = snap->gen;
    }
}

/* Reads the entries of BPF flow table 't' of 'dp' with BPF_MAP_LOOKUP_BATCH
 * calls and stores their statistics in the flows of 'dp' as 'snap'.
 * Returns 0 if it read them all, otherwise an errno value (those not read
 * are read alone by the dump).  A kernel or map without batch lookups makes
 * every dump read entries alone from then on. */
static int
dump_snapshot_read_table(struct dp_bpf *dp, unsigned int t,
                         const struct dp_bpf_dump_snapshot *snap)
    OVS_EXCLUDED(dp->mutex)
{
    static atomic_bool batch_unsupported = false;
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    int fd = dp->obj->flow_table_fds[t];
    size_t key_size = flow_table_key_size(t);
    uint32_t max = DP_BPF_LOOKUP_BATCH;
    struct ovs_bpf_flow *values;
    uint32_t in_batch, out_batch;
    bool unsupported, disabled;
    bool first = true;
    uint8_t *keys;
    int error;

    atomic_read_relaxed(&batch_unsupported, &unsupported);
    atomic_read_relaxed(&map_batches_disabled, &disabled);
    if (unsupported || disabled) {
        return EOPNOTSUPP;
    }

    keys = xmalloc(max * key_size);
    values = xmalloc(max * sizeof *values);
    for (;;) {
        uint32_t count = max;

        /* A hash map's batch position is a bucket index (32 bits). */
        COVERAGE_INC(dpif_bpf_map_lookup_batch);
        error = (bpf_map_lookup_batch(fd, first ? NULL : &in_batch,
                                      &out_batch, keys, values, &count,
                                      &opts)
                 ? errno : 0);
        if (error && error != ENOENT) {
            count = 0;
        }
        if (count) {
            /* The mutex for a batch at a time: the handlers' flow puts
             * wait for it. */
            ovs_mutex_lock(&dp->mutex);
            for (uint32_t i = 0; i < count; i++) {
                dump_snapshot_store(dp, t, snap, keys + i * key_size,
                                    key_size, &values[i].stats);
            }
            ovs_mutex_unlock(&dp->mutex);
        }

        if (error == ENOENT) {
            /* The end of the map. */
            error = 0;
            break;
        } else if (error == ENOSPC && max < 65536) {
            /* A bucket holds more entries than 'max': read it again with
             * room for them. */
            max *= 2;
            keys = xrealloc(keys, max * key_size);
            values = xrealloc(values, max * sizeof *values);
            continue;
        } else if (error) {
            if (first && (error == EINVAL || error == EOPNOTSUPP
                          || error == ENOTSUPP)) {
                VLOG_INFO_ONCE("BPF map batch lookups fail (%s): flow dumps "
                               "read each flow's entry with a system call "
                               "of its own", ovs_strerror(error));
                atomic_store_relaxed(&batch_unsupported, true);
            } else {
                VLOG_DBG_RL(&rl, "%s: batch lookup in BPF flow table %u "
                            "failed (%s)", dp->name, t,
                            ovs_strerror(error));
            }
            break;
        }
        in_batch = out_batch;
        first = false;
    }
    free(values);
    free(keys);
    return error;
}

/* Reads into the flows of 'dp', as 'snap', the statistics of the entries of
 * the BPF flow tables of 'dp' that hold DP_BPF_DUMP_BATCH_MIN flows or
 * more. */
static void
dump_snapshot_read(struct dp_bpf *dp, struct dp_bpf_dump_snapshot *snap)
    OVS_EXCLUDED(dp->mutex)
{
    static atomic_uint64_t next_gen = ATOMIC_VAR_INIT(1);
    size_t n_flows[OVS_BPF_N_FLOW_TABLES];

    memset(n_flows, 0, sizeof n_flows);
    atomic_add_relaxed(&next_gen, 1, &snap->gen);
    ovs_mutex_lock(&dp->mutex);
    snap->seq = dp->flow_seq;
    /* A mask's reference count is the number of its flows: counted by
     * mask rather than by a walk of every flow, which under the mutex took
     * a cache miss per flow. */
    for (uint32_t i = 0; i < dp->n_masks; i++) {
        const struct dp_bpf_mask *m = &dp->masks[dp->mask_order[i]];

        n_flows[m->entry.table] += m->refcnt;
    }
    ovs_mutex_unlock(&dp->mutex);

    /* Without the mutex: the handlers install flows meanwhile, and a flow
     * whose entry is written from now on has a later 'seq'. */
    for (unsigned int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        if (n_flows[t] >= DP_BPF_DUMP_BATCH_MIN) {
            dump_snapshot_read_table(dp, t, snap);
        }
    }
}

/* Stores in 'stats' the statistics of 'flow' from 'snap' and returns true,
 * if 'snap' has them; otherwise returns false. */
static bool
dump_snapshot_get_stats(const struct dp_bpf_dump_snapshot *snap,
                        const struct dp_bpf_flow *flow,
                        struct dpif_flow_stats *stats)
{
    if (snap->gen && flow->snap_gen == snap->gen && !flow->l3_match
        && flow->seq <= snap->seq) {
        stats_from_bpf(&flow->snap_stats, stats);
        stats_add(stats, &flow->up_stats);
        return true;
    }
    return false;
}

/* Fills 'out' with 'flow', its key, mask and actions copied into 'buf',
 * but for its statistics, which it zeroes. */
static void
dp_bpf_flow_to_dpif_flow(const struct dp_bpf *dp OVS_UNUSED,
                         const struct dp_bpf_flow *flow, bool terse,
                         struct ofpbuf *buf, struct dpif_flow *out)
    OVS_REQUIRES(dp->mutex)
{
    memset(out, 0, sizeof *out);
    if (!terse) {
        size_t key_ofs, mask_ofs, actions_ofs;

        key_ofs = buf->size;
        ofpbuf_put(buf, flow->key, flow->key_len);
        mask_ofs = buf->size;
        /* A flow put without a mask is an exact match, which a dump
         * without a mask means too. */
        if (flow->mask_len) {
            ofpbuf_put(buf, flow->mask, flow->mask_len);
        }
        actions_ofs = buf->size;
        ofpbuf_put(buf, flow->actions, flow->actions_len);

        out->key = ofpbuf_at_assert(buf, key_ofs, flow->key_len);
        out->key_len = flow->key_len;
        out->mask_len = actions_ofs - mask_ofs;
        out->mask = out->mask_len ? ofpbuf_at_assert(buf, mask_ofs,
                                                     out->mask_len) : NULL;
        out->actions_len = flow->actions_len;
        out->actions = ofpbuf_at(buf, actions_ofs, flow->actions_len);
    }
    out->ufid = flow->ufid;
    out->ufid_present = true;
    out->pmd_id = PMD_ID_NULL;
    out->attrs.offloaded = false;
    out->attrs.dp_layer = "bpf";
    out->attrs.dp_extra_info = NULL;
}

int
dp_bpf_flow_get(struct dpif *dpif, struct dpif_flow_get *get)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_flow *flow;
    ovs_u128 ufid;
    int error = 0;

    get_ufid(get->ufid, get->key, get->key_len, &ufid);
    ovs_mutex_lock(&dp->mutex);
    flow = dp_bpf_find_flow(dp, &ufid);
    if (flow) {
        dp_bpf_flow_to_dpif_flow(dp, flow, false, get->buffer, get->flow);
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

struct dpif_bpf_flow_dump {
    struct dpif_flow_dump up;
    struct ovs_mutex mutex;
    struct hmap_position pos OVS_GUARDED;
    bool done OVS_GUARDED;
    bool snap_read OVS_GUARDED;     /* 'snap' read yet? */
    struct dp_bpf_dump_snapshot snap OVS_GUARDED;
};

struct dpif_bpf_flow_dump_thread {
    struct dpif_flow_dump_thread up;
    struct dpif_bpf_flow_dump *dump;
    struct ofpbuf bufs[DP_BPF_DUMP_BATCH];
};

static struct dpif_bpf_flow_dump *
dpif_bpf_flow_dump_cast(struct dpif_flow_dump *dump)
{
    return CONTAINER_OF(dump, struct dpif_bpf_flow_dump, up);
}

static struct dpif_bpf_flow_dump_thread *
dpif_bpf_flow_dump_thread_cast(struct dpif_flow_dump_thread *thread)
{
    return CONTAINER_OF(thread, struct dpif_bpf_flow_dump_thread, up);
}

struct dpif_flow_dump *
dpif_bpf_flow_dump_create(const struct dpif *dpif, bool terse,
                          struct dpif_flow_dump_types *types OVS_UNUSED)
{
    struct dpif_bpf_flow_dump *dump = xzalloc(sizeof *dump);

    dpif_flow_dump_init(&dump->up, dpif);
    dump->up.terse = terse;
    ovs_mutex_init(&dump->mutex);
    dump_snapshot_init(&dump->snap);
    return &dump->up;
}

int
dpif_bpf_flow_dump_destroy(struct dpif_flow_dump *dump_)
{
    struct dpif_bpf_flow_dump *dump = dpif_bpf_flow_dump_cast(dump_);

    ovs_mutex_destroy(&dump->mutex);
    free(dump);
    return 0;
}

struct dpif_flow_dump_thread *
dpif_bpf_flow_dump_thread_create(struct dpif_flow_dump *dump_)
{
    struct dpif_bpf_flow_dump *dump = dpif_bpf_flow_dump_cast(dump_);
    struct dpif_bpf_flow_dump_thread *thread = xzalloc(sizeof *thread);

    dpif_flow_dump_thread_init(&thread->up, &dump->up);
    thread->dump = dump;
    for (int i = 0; i < DP_BPF_DUMP_BATCH; i++) {
        ofpbuf_init(&thread->bufs[i], 0);
    }
    return &thread->up;
}

void
dpif_bpf_flow_dump_thread_destroy(struct dpif_flow_dump_thread *thread_)
{
    struct dpif_bpf_flow_dump_thread *thread
        = dpif_bpf_flow_dump_thread_cast(thread_);

    for (int i = 0; i < DP_BPF_DUMP_BATCH; i++) {
        ofpbuf_uninit(&thread->bufs[i]);
    }
    free(thread);
}

/* A flow of a dump batch whose statistics the snapshot lacks: its BPF entry
 * is read after the batch, without the datapath's mutex, which the
 * handlers' flow puts wait for (while flows are set up, most flows of a
 * dump are newer than its snapshot). */
struct dp_bpf_dump_read {
    int i;                      /* Index in the batch. */
    int fd;                     /* BPF flow table. */
    uint64_t seq;               /* The flow's 'seq' when it was dumped. */
    struct ovs_bpf_flow_table_key tkey;
};

/* Reads the statistics of the 'n' flows of 'reads' into 'flows', then
 * checks under the mutex that each flow's entry is still the one read, and
 * reads it again if not. */
static void
dump_read_stats(struct dp_bpf *dp, const struct dp_bpf_dump_read *reads,
                size_t n, struct dpif_flow *flows)
    OVS_EXCLUDED(dp->mutex)
{
    for (size_t i = 0; i < n; i++) {
        const struct dp_bpf_dump_read *r = &reads[i];
        struct ovs_bpf_flow value;

        if (bpf_map_lookup_elem(r->fd, &r->tkey, &value)) {
            memset(&value, 0, sizeof value);
        }
        stats_from_bpf(&value.stats, &flows[r->i].stats);
    }

    ovs_mutex_lock(&dp->mutex);
    for (size_t i = 0; i < n; i++) {
        const struct dp_bpf_dump_read *r = &reads[i];
        struct dpif_flow *out = &flows[r->i];
        struct dp_bpf_flow *flow = dp_bpf_find_flow(dp, &out->ufid);

        if (flow && flow->seq == r->seq) {
            stats_add(&out->stats, &flow->up_stats);
        } else if (flow) {
            /* Modified, or deleted and put again, meanwhile. */
            dp_bpf_flow_get_stats(dp, flow, &out->stats);
        }
        /* A flow deleted meanwhile keeps what was read: its revalidator
         * finds it gone when it deletes it. */
    }
    ovs_mutex_unlock(&dp->mutex);
}

int
dpif_bpf_flow_dump_next(struct dpif_flow_dump_thread *thread_,
                        struct dpif_flow *flows, int max_flows)
{
    struct dpif_bpf_flow_dump_thread *thread
        = dpif_bpf_flow_dump_thread_cast(thread_);
    struct dpif_bpf_flow_dump *dump = thread->dump;
    struct dp_bpf *dp = get_dp_bpf(dump->up.dpif);
    struct dp_bpf_dump_read reads[DP_BPF_DUMP_BATCH];
    size_t n_reads = 0;
    int n = 0;

    max_flows = MIN(max_flows, DP_BPF_DUMP_BATCH);

    ovs_mutex_lock(&dump->mutex);
    if (!dump->snap_read) {
        /* At the first call rather than at the dump's creation: the
         * revalidators create a dump, then wait for each other. */
        dump->snap_read = true;
        dump_snapshot_read(dp, &dump->snap);
    }
    ovs_mutex_lock(&dp->mutex);
    while (!dump->done && n < max_flows) {
        struct hmap_node *node = hmap_at_position(&dp->flows, &dump->pos);
        struct dp_bpf_flow *flow;

        if (!node) {
            dump->done = true;
            break;
        }
        flow = CONTAINER_OF(node, struct dp_bpf_flow, ufid_node);
        ofpbuf_clear(&thread->bufs[n]);
        dp_bpf_flow_to_dpif_flow(dp, flow, dump->up.terse, &thread->bufs[n],
                                 &flows[n]);
        if (dump_snapshot_get_stats(&dump->snap, flow, &flows[n].stats)) {
            /* Done. */
        } else if (flow->l3_match) {
            dp_bpf_flow_get_stats(dp, flow, &flows[n].stats);
        } else {
            struct dp_bpf_dump_read *r = &reads[n_reads++];

            r->i = n;
            r->fd = dp_bpf_flow_table_fd(dp, flow->tkey.mask_id);
            r->seq = flow->seq;
            r->tkey = flow->tkey;
        }
        n++;
    }
    ovs_mutex_unlock(&dp->mutex);
    ovs_mutex_unlock(&dump->mutex);

    if (n_reads) {
        dump_read_stats(dp, reads, n_reads, flows);
    }
    return n;
}

/* Forgets every flow of 'dp' and leaves them in BPF, as the close of a
 * datapath that outlives ovs-vswitchd does. */
void
dp_bpf_flows_forget_all(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    struct dp_bpf_flow *flow;

    HMAP_FOR_EACH_SAFE (flow, ufid_node, &dp->flows) {
        dp_bpf_flow_free(dp, flow);
    }
}

/* Adopts the flow that the previous ovs-vswitchd saved under 'ufid' as 'sf',
 * if its BPF entry is there with a mask of the mask list.  Returns true if
 * it did. */
static bool
dp_bpf_flow_adopt(struct dp_bpf *dp, const ovs_u128 *ufid,
                  const struct dpif_bpf_saved_flow *sf)
    OVS_REQUIRES(dp->mutex)
{
    const uint8_t *key = sf->data;
    const uint8_t *mask = key + sf->key_len;
    const uint8_t *actions = mask + sf->mask_len;
    struct ovs_bpf_flow_table_key tkey;
    struct ovs_bpf_flow_key bkey, bmask;
    struct ovs_bpf_mask entry;
    struct dp_bpf_flow *flow;
    struct ovs_bpf_flow *value;
    int mask_id = -1;
    bool found;

    if ((size_t) sf->key_len + sf->mask_len + sf->actions_len
        > sizeof sf->data
        || dpif_bpf_odp_to_key(ALIGNED_CAST(const struct nlattr *, key),
                               sf->key_len,
                               ALIGNED_CAST(const struct nlattr *, mask),
                               sf->mask_len,
                               &bkey, &bmask)) {
        return false;
    }
    if (bmask.in_port && !dp_bpf_port_exists(dp, u32_to_odp(bkey.in_port))) {
        /* Its input port went away while no ovs-vswitchd ran. */
        return false;
    }
    dpif_bpf_mask_compile(&bmask, &entry);
    for (int i = 0; i < OVS_BPF_MAX_MASKS; i++) {
        if (dp->masks[i].entry.in_use
            && !memcmp(&dp->masks[i].entry, &entry, sizeof entry)) {
            mask_id = i;
            break;
        }
    }
    if (mask_id < 0) {
        return false;
    }
    dpif_bpf_table_key(mask_id, &dp->masks[mask_id].entry, &bkey, &tkey);
    if (dp_bpf_find_flow(dp, ufid) || dp_bpf_find_flow_by_tkey(dp, &tkey)) {
        return false;
    }
    value = xmalloc(sizeof *value);
    found = !bpf_map_lookup_elem(dp_bpf_flow_table_fd(dp, mask_id), &tkey,
                                 value);
    if (found) {
        flow = xzalloc(sizeof *flow);
        flow->ufid = *ufid;
        flow->tkey = tkey;
        flow->flags = value->flags;
        flow->actions_id = (flow_value_is_long(value) ? value->actions_id
                            : 0);
        flow->key = xmemdup(key, sf->key_len);
        flow->key_len = sf->key_len;
        if (sf->mask_len) {
            flow->mask = xmemdup(mask, sf->mask_len);
            flow->mask_len = sf->mask_len;
        }
        flow->actions = xmemdup(actions, sf->actions_len);
        flow->actions_len = sf->actions_len;
        hmap_insert(&dp->flows, &flow->ufid_node, ufid_hash(ufid));
        hmap_insert(&dp->flows_by_tkey, &flow->tkey_node, tkey_hash(&tkey));
        dp->masks[mask_id].refcnt++;
    }
    free(value);
    return found;
}

/* Collects the keys of the hash map 'fd' into a new array (returned, to be
 * freed by the caller) of '*n' zero-padded keys spaced 'stride' bytes
 * apart ('stride' is at least the map's key size). */
static void *
collect_keys(int fd, size_t stride, size_t *n)
{
    size_t allocated = 0;
    uint8_t *keys = NULL;

    *n = 0;
    for (;;) {
        if (*n >= allocated) {
            keys = x2nrealloc(keys, &allocated, stride);
            memset(keys + *n * stride, 0, (allocated - *n) * stride);
        }
        if (bpf_map_get_next_key(fd, *n ? keys + (*n - 1) * stride : NULL,
                                 keys + *n * stride)) {
            break;
        }
        ++*n;
    }
    return keys;
}

static int
compare_u64(const void *a_, const void *b_)
{
    uint64_t a = *(const uint64_t *) a_;
    uint64_t b = *(const uint64_t *) b_;

    return a < b ? -1 : a > b;
}

/* After the flows of 'dp' are taken over: deletes the long action lists
 * (see struct ovs_bpf_flow) that no flow points to (their flows were
 * deleted as stale, or the previous ovs-vswitchd was killed between the
 * writes), and makes the ids given from now on larger than every id
 * there, so that none is given twice. */
static void
dp_bpf_flow_actions_adopt(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    size_t n_keys, n_used = 0, n_stale = 0;
    uint64_t *used, *keys;
    struct dp_bpf_flow *flow;

    used = xmalloc(MAX(hmap_count(&dp->flows), 1) * sizeof *used);
    HMAP_FOR_EACH (flow, ufid_node, &dp->flows) {
        if (flow->actions_id) {
            used[n_used++] = flow->actions_id;
            dp->actions_id = MAX(dp->actions_id, flow->actions_id);
        }
    }
    qsort(used, n_used, sizeof *used, compare_u64);

    keys = collect_keys(dp->obj->flow_actions_fd, sizeof *keys, &n_keys);
    for (size_t i = 0; i < n_keys; i++) {
        dp->actions_id = MAX(dp->actions_id, keys[i]);
        if (!bsearch(&keys[i], used, n_used, sizeof *used, compare_u64)) {
            bpf_map_delete_elem(dp->obj->flow_actions_fd, &keys[i]);
            n_stale++;
        }
    }
    free(keys);
    free(used);
    if (n_stale) {
        VLOG_INFO("%s: deleted %"PRIuSIZE" action lists without a flow",
                  dp->name, n_stale);
    }
}

/* Takes over the flows that the previous ovs-vswitchd left in BPF: the
 * mask list as it is, each flow whose ufid, key, mask and actions it saved
 * and whose BPF entry is there.  Deletes BPF entries without a saved flow
 * (it was killed between the two writes, or the flow did not fit) and
 * saved flows without a BPF entry, and masks without flows. */
void
dp_bpf_flows_adopt(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    size_t n_adopted = 0, n_dropped = 0, n_stale = 0;
    struct ovs_bpf_mask_order order;
    struct ovs_bpf_dp_config cfg;
    uint32_t zero = 0;
    ovs_u128 *ufids;
    size_t n;

    /* The mask list, and the order the lookup uses now. */
    for (uint32_t i = 0; i < OVS_BPF_MAX_MASKS; i++) {
        struct dp_bpf_mask *m = &dp->masks[i];

        memset(m, 0, sizeof *m);
        if (bpf_map_lookup_elem(dp->obj->flow_masks_fd, &i, &m->entry)
            || !m->entry.in_use
            || m->entry.table >= OVS_BPF_N_FLOW_TABLES) {
            memset(&m->entry, 0, sizeof m->entry);
        }
    }

    /* The saved flows. */
    ufids = collect_keys(dp->obj->saved_flows_fd, sizeof *ufids, &n);
    for (size_t i = 0; i < n; i++) {
        struct dpif_bpf_saved_flow *sf = xmalloc(sizeof *sf);

        if (!bpf_map_lookup_elem(dp->obj->saved_flows_fd, &ufids[i], sf)
            && dp_bpf_flow_adopt(dp, &ufids[i], sf)) {
            n_adopted++;
        } else {
            bpf_map_delete_elem(dp->obj->saved_flows_fd, &ufids[i]);
            n_dropped++;
        }
        free(sf);
    }
    free(ufids);

    /* BPF entries that no saved flow accounts for. */
    for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        int fd = dp->obj->flow_table_fds[t];
        struct ovs_bpf_flow_table_key *tkeys;

        tkeys = collect_keys(fd, sizeof *tkeys, &n);
        for (size_t i = 0; i < n; i++) {
            struct ovs_bpf_flow_table_key tkey = tkeys[i];

            dpif_bpf_table_key_normalize(t, &tkey);
            if (!dp_bpf_find_flow_by_tkey(dp, &tkey)) {
                bpf_map_delete_elem(fd, &tkeys[i]);
                n_stale++;
            }
        }
        free(tkeys);
    }
    dp_bpf_flow_actions_adopt(dp);

    /* Masks without flows go; the others keep their place in the search
     * order. */
    memset(&order, 0, sizeof order);
    if (!bpf_map_lookup_elem(dp->obj->dp_config_fd, &zero, &cfg)) {
        uint32_t sel = cfg.mask_order ? 1 : 0;

        if (bpf_map_lookup_elem(dp->obj->mask_order_fd, &sel, &order)) {
            memset(&order, 0, sizeof order);
        }
    }
    dp->n_masks = 0;
    for (uint32_t i = 0; i < MIN(order.n_masks, OVS_BPF_MAX_MASKS); i++) {
        uint8_t id = order.mask_id[i];

        if (id < OVS_BPF_MAX_MASKS && dp->masks[id].refcnt
            && !memchr(dp->mask_order, id, dp->n_masks)) {
            dp->mask_order[dp->n_masks++] = id;
        }
    }
    for (uint32_t i = 0; i < OVS_BPF_MAX_MASKS; i++) {
        struct dp_bpf_mask *m = &dp->masks[i];

        if (m->refcnt) {
            if (!memchr(dp->mask_order, i, dp->n_masks)) {
                dp->mask_order[dp->n_masks++] = i;
            }
            dp_bpf_percpu_sum(dp->obj->mask_stats_fd, i, &m->hits);
        } else {
            struct ovs_bpf_mask empty;

            memset(&empty, 0, sizeof empty);
            memset(&m->entry, 0, sizeof m->entry);
            bpf_map_update_elem(dp->obj->flow_masks_fd, &i, &empty, BPF_ANY);
        }
    }
    mask_order_write(dp);

    VLOG_INFO("%s: took over %"PRIuSIZE" flows with %"PRIu32" masks; "
              "deleted %"PRIuSIZE" saved flows without a BPF entry and "
              "%"PRIuSIZE" BPF entries without a saved flow", dp->name,
              n_adopted, dp->n_masks, n_dropped, n_stale);
}

/* Installs in 'dp', whose maps are new, the flows that the previous
 * ovs-vswitchd saved in the map 'saved_fd' of a datapath that 'dp'
 * replaces (one of another ABI version), translated anew, so that the new
 * programs forward them from their first packet.  Returns the number of
 * flows carried over; the others are logged (each at DBG, their number at
 * INFO) and left to upcalls. */
size_t
dp_bpf_flows_carry_over(struct dp_bpf *dp, int saved_fd)
{
    size_t n, n_done = 0, n_failed = 0;
    ovs_u128 *ufids;

    ufids = collect_keys(saved_fd, sizeof *ufids, &n);
    for (size_t i = 0; i < n; i++) {
        struct dpif_bpf_saved_flow *sf = xmalloc(sizeof *sf);
        int error;

        if (bpf_map_lookup_elem(saved_fd, &ufids[i], sf)) {
            error = errno;
        } else if ((size_t) sf->key_len + sf->mask_len + sf->actions_len
                   > sizeof sf->data) {
            error = EPROTO;
        } else {
            struct dpif_flow_put put = {
                .flags = DPIF_FP_CREATE,
                .key = ALIGNED_CAST(const struct nlattr *, sf->data),
                .key_len = sf->key_len,
                .mask = ALIGNED_CAST(const struct nlattr *,
                                     sf->data + sf->key_len),
                .mask_len = sf->mask_len,
                .actions = ALIGNED_CAST(const struct nlattr *,
                                        sf->data + sf->key_len
                                        + sf->mask_len),
                .actions_len = sf->actions_len,
                .ufid = &ufids[i],
            };

            error = dp_bpf_flow_put__(dp, &put);
        }
        if (!error) {
            n_done++;
        } else {
            n_failed++;
            if (!VLOG_DROP_DBG(&rl)) {
                struct ds ds = DS_EMPTY_INITIALIZER;

                odp_format_ufid(&ufids[i], &ds);
                VLOG_DBG("%s: flow %s not carried over to the new datapath "
                         "(%s)", dp->name, ds_cstr(&ds), ovs_strerror(error));
                ds_destroy(&ds);
            }
        }
        free(sf);
    }
    if (n_failed) {
        VLOG_INFO("%s: %"PRIuSIZE" of the %"PRIuSIZE" flows of the replaced "
                  "datapath could not be carried over (upcalls will set them "
                  "up again)", dp->name, n_failed, n);
    }
    free(ufids);
    return n_done;
}
