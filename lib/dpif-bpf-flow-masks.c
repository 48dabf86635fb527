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

/* The mask list of the megaflow table of the BPF datapath: the masks of
 * the flows, each with a reference count, mirrored into the BPF
 * 'flow_masks' map, and the order in which the BPF lookup searches them
 * ('mask_order'), busiest first. */

#include <config.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dpif-bpf-flow-private.h"
#include "dpif-bpf-flow-table.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "openvswitch/vlog.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_flow_masks);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

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
void
dp_bpf_mask_order_write(struct dp_bpf *dp)
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
int
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
        dp_bpf_mask_order_write(dp);
    }
    return free_slot;
}

void
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
        dp_bpf_mask_order_write(dp);
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
        dp_bpf_mask_order_write(dp);
    }
}
