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

/* The megaflow table of the BPF datapath across restarts of ovs-vswitchd:
 * each flow saved in the BPF 'saved_flows' map (its ufid, ODP key, mask and
 * actions) for the next ovs-vswitchd, which takes over the flows left in
 * BPF (dp_bpf_flows_adopt()), or carries them over into a datapath of a new
 * ABI version (dp_bpf_flows_carry_over()). */

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
#include "dpif-bpf-port.h"
#include "dpif-bpf-private.h"
#include "dpif-provider.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/vlog.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_flow_adopt);

COVERAGE_DEFINE(dpif_bpf_flow_unsaved);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

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
void
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

/* Saves the 'n' flows 'flows' for the next ovs-vswitchd, as
 * dp_bpf_flow_save() does, in batches. */
void
dp_bpf_flows_save(struct dp_bpf *dp, const struct dp_bpf_flow *const *flows,
                  size_t n)
    OVS_REQUIRES(dp->mutex)
{
    struct dpif_bpf_saved_flow *sfs = xmalloc(n * sizeof *sfs);
    ovs_u128 *ufids = xmalloc(n * sizeof *ufids);
    int *errors = xmalloc(n * sizeof *errors);
    size_t n_sfs = 0;

    for (size_t i = 0; i < n; i++) {
        const struct dp_bpf_flow *flow = flows[i];

        if (saved_flow_fill(flow, &sfs[n_sfs])) {
            ufids[n_sfs++] = flow->ufid;
        } else {
            /* Not saved, and any earlier copy deleted. */
            dp_bpf_flow_save(dp, flow);
        }
    }
    dp_bpf_map_batch(DP_BPF_MAP_BATCH_UPDATE, dp->obj->saved_flows_fd,
                     ufids, sizeof *ufids, sfs, sizeof *sfs, n_sfs,
                     UINT32_MAX, BPF_ANY, errors);
    for (size_t i = 0; i < n_sfs; i++) {
        if (errors[i]) {
            COVERAGE_INC(dpif_bpf_flow_unsaved);
        }
    }
    free(errors);
    free(ufids);
    free(sfs);
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
        flow->actions_id = (dp_bpf_flow_value_is_long(value)
                            ? value->actions_id : 0);
        flow->key = xmemdup(key, sf->key_len);
        flow->key_len = sf->key_len;
        if (sf->mask_len) {
            flow->mask = xmemdup(mask, sf->mask_len);
            flow->mask_len = sf->mask_len;
        }
        flow->actions = xmemdup(actions, sf->actions_len);
        flow->actions_len = sf->actions_len;
        hmap_insert(&dp->flows, &flow->ufid_node, dp_bpf_ufid_hash(ufid));
        hmap_insert(&dp->flows_by_tkey, &flow->tkey_node,
                    dp_bpf_tkey_hash(&tkey));
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
    dp_bpf_mask_order_write(dp);

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
