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

/* Flow dumps of the megaflow table of the BPF datapath (the dpif class's
 * flow_dump_*() operations, which the revalidators use), and the snapshot
 * of the statistics of the BPF flow tables that each dump reads in
 * batches. */

#include <config.h>

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "dpif-bpf-flow-private.h"
#include "dpif-bpf-flow-table.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "openvswitch/hmap.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_flow_dump);

COVERAGE_DEFINE(dpif_bpf_map_lookup_batch);

/* Flows returned per flow_dump_next() call, at most. */
#define DP_BPF_DUMP_BATCH 50

/* BPF flow table entries read per BPF_MAP_LOOKUP_BATCH call, at first (a
 * bucket with more entries makes it grow). */
#define DP_BPF_LOOKUP_BATCH 256

/* A dump reads a BPF flow table in batches if it has this many flows or
 * more, otherwise each flow's entry alone.  A batch lookup of a hash map
 * visits every bucket of it (65,536 in a flow table), each empty one
 * cheaply; below this many flows, the lookups of the flows alone cost less
 * (see "Flow installs, dumps and deletes" in
 * Documentation/topics/dpif-bpf.rst). */
#define DP_BPF_DUMP_BATCH_MIN 256

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* A dump returns the flows of ovs-vswitchd's flow table, as they are when
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

/* Stores the statistics slots 'stats' of the BPF flow table entry with key
 * 'tkey', read by 'snap' from BPF flow table 't', summed, in the flow of
 * 'dp' that has that entry, if that flow's entry was written before 'snap'
 * began. */
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
        dp_bpf_stats_from_bpf(stats, &flow->snap_stats);
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
    size_t key_size = dp_bpf_flow_table_key_size(t);
    uint32_t max = DP_BPF_LOOKUP_BATCH;
    struct ovs_bpf_flow *values;
    uint32_t in_batch, out_batch;
    bool unsupported;
    bool first = true;
    uint8_t *keys;
    int error;

    atomic_read_relaxed(&batch_unsupported, &unsupported);
    if (unsupported || dp_bpf_map_batches_disabled()) {
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
                                    key_size, values[i].stats);
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
        *stats = flow->snap_stats;
        dp_bpf_stats_add(stats, &flow->up_stats);
        return true;
    }
    return false;
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
        dp_bpf_stats_from_bpf(value.stats, &flows[r->i].stats);
    }

    ovs_mutex_lock(&dp->mutex);
    for (size_t i = 0; i < n; i++) {
        const struct dp_bpf_dump_read *r = &reads[i];
        struct dpif_flow *out = &flows[r->i];
        struct dp_bpf_flow *flow = dp_bpf_find_flow(dp, &out->ufid);

        if (flow && flow->seq == r->seq) {
            dp_bpf_stats_add(&out->stats, &flow->up_stats);
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
        dp_bpf_flow_to_dpif_flow(flow, dump->up.terse, &thread->bufs[n],
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
