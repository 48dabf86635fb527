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

/* Flow dumps of the BPF datapath (the flow_dump operations of the dpif
 * class): they read the BPF flow tables in batches and report the flows of
 * the megaflow table (dpif-bpf-flow-table.c) whose entries they read. */

#include <config.h>

#include <bpf/bpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "dpif-bpf-flow-table.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_flow_dump);

COVERAGE_DEFINE(dpif_bpf_map_lookup_batch);

/* Flows returned per flow_dump_next() call, and BPF entries read per
 * BPF_MAP_LOOKUP_BATCH, at most (more if a hash bucket is larger). */
#define DP_BPF_DUMP_BATCH 50

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* A flow dump reads the BPF flow tables, one after the other, in batches
 * (BPF_MAP_LOOKUP_BATCH), and reports the flows of the entries it reads:
 * one system call brings the statistics of up to DP_BPF_DUMP_BATCH flows,
 * where a lookup per flow took one each. */
struct dpif_bpf_flow_dump {
    struct dpif_flow_dump up;
    struct ovs_mutex mutex;
    unsigned int table OVS_GUARDED;     /* BPF flow table being read. */
    bool started OVS_GUARDED;           /* 'batch' holds a position. */
    /* The kernel's position in 'table' (a bucket of a hash map, 4 bytes,
     * but it may be as large as a key). */
    struct ovs_bpf_flow_table_key batch OVS_GUARDED;
};

struct dpif_bpf_flow_dump_thread {
    struct dpif_flow_dump_thread up;
    struct dpif_bpf_flow_dump *dump;
    struct ofpbuf bufs[DP_BPF_DUMP_BATCH];

    /* The entries of the last batch read, from 'next' on not reported
     * yet. */
    size_t capacity;            /* Entries the arrays hold. */
    size_t n, next;
    uint8_t *raw_keys;          /* As the kernel writes them. */
    struct ovs_bpf_flow_table_key *tkeys;
    struct ovs_bpf_flow *values;
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

static void
dump_thread_resize(struct dpif_bpf_flow_dump_thread *thread, size_t capacity)
{
    thread->capacity = capacity;
    thread->raw_keys = xrealloc(thread->raw_keys,
                                capacity * sizeof *thread->tkeys);
    thread->tkeys = xrealloc(thread->tkeys, capacity * sizeof *thread->tkeys);
    thread->values = xrealloc(thread->values,
                              capacity * sizeof *thread->values);
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
    dump_thread_resize(thread, DP_BPF_DUMP_BATCH);
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
    free(thread->raw_keys);
    free(thread->tkeys);
    free(thread->values);
    free(thread);
}

/* Reads into 'thread' the next batch of BPF flow entries of 'dump', from
 * its current table or the next ones.  Returns false if the dump is done. */
static bool
dump_read_batch(struct dpif_bpf_flow_dump *dump,
                struct dpif_bpf_flow_dump_thread *thread)
{
    const struct dp_bpf *dp = get_dp_bpf(dump->up.dpif);
    bool more = false;

    ovs_mutex_lock(&dump->mutex);
    while (dump->table < OVS_BPF_N_FLOW_TABLES) {
        unsigned int t = dump->table;
        size_t key_size = (offsetof(struct ovs_bpf_flow_table_key, words)
                           + dpif_bpf_flow_table_words(t) * sizeof(uint64_t));
        struct ovs_bpf_flow_table_key out_batch;
        uint32_t count = thread->capacity;
        int error = 0;

        COVERAGE_INC(dpif_bpf_map_lookup_batch);
        if (bpf_map_lookup_batch(dp->obj->flow_table_fds[t],
                                 dump->started ? &dump->batch : NULL,
                                 &out_batch, thread->raw_keys,
                                 thread->values, &count, NULL)) {
            error = errno;
        }
        if (error == ENOSPC && !count) {
            /* A hash bucket holds more entries than the batch: the kernel
             * returns a bucket whole or not at all. */
            dump_thread_resize(thread, thread->capacity * 2);
            continue;
        }
        if (error && error != ENOENT) {
            VLOG_WARN_RL(&rl, "%s: cannot read BPF flow table %u (%s)",
                         dp->name, t, ovs_strerror(error));
            count = 0;
        }
        if (error) {
            /* The end of the table (ENOENT), maybe with a last batch. */
            dump->table++;
            dump->started = false;
        } else {
            dump->batch = out_batch;
            dump->started = true;
        }
        if (count) {
            memset(thread->tkeys, 0, count * sizeof *thread->tkeys);
            for (size_t i = 0; i < count; i++) {
                memcpy(&thread->tkeys[i], thread->raw_keys + i * key_size,
                       key_size);
            }
            thread->n = count;
            thread->next = 0;
            more = true;
            break;
        }
    }
    ovs_mutex_unlock(&dump->mutex);
    return more;
}

int
dpif_bpf_flow_dump_next(struct dpif_flow_dump_thread *thread_,
                        struct dpif_flow *flows, int max_flows)
{
    struct dpif_bpf_flow_dump_thread *thread
        = dpif_bpf_flow_dump_thread_cast(thread_);
    struct dpif_bpf_flow_dump *dump = thread->dump;
    struct dp_bpf *dp = get_dp_bpf(dump->up.dpif);
    int n = 0;

    max_flows = MIN(max_flows, DP_BPF_DUMP_BATCH);
    while (n < max_flows) {
        if (thread->next >= thread->n && !dump_read_batch(dump, thread)) {
            break;
        }

        ovs_mutex_lock(&dp->mutex);
        for (; thread->next < thread->n && n < max_flows; thread->next++) {
            const struct ovs_bpf_flow *value = &thread->values[thread->next];
            struct dp_bpf_flow *flow;

            /* An entry without a flow is one that a flow put is writing
             * now, or one of a killed ovs-vswitchd that nothing accounts
             * for. */
            flow = dp_bpf_find_flow_by_tkey(dp,
                                            &thread->tkeys[thread->next]);
            if (flow) {
                ofpbuf_clear(&thread->bufs[n]);
                dp_bpf_flow_to_dpif_flow(dp, flow, value, dump->up.terse,
                                         &thread->bufs[n], &flows[n]);
                n++;
            }
        }
        ovs_mutex_unlock(&dp->mutex);
    }
    return n;
}
