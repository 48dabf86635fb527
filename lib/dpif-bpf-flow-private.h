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

#ifndef DPIF_BPF_FLOW_PRIVATE_H
#define DPIF_BPF_FLOW_PRIVATE_H 1

/* What the files of the megaflow table of the BPF datapath share among
 * themselves: the table (dpif-bpf-flow-table.c), the translation of flows
 * (dpif-bpf-flow-xlate.c), the mask list (dpif-bpf-flow-masks.c), the
 * batched BPF map operations (dpif-bpf-map-batch.c), flow dumps
 * (dpif-bpf-flow-dump.c) and the saved flows that the next ovs-vswitchd
 * takes over (dpif-bpf-flow-adopt.c).  Not for use outside these files:
 * what the rest of the datapath uses is in dpif-bpf-flow-table.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/datapath-abi.h"
#include "dpif-bpf-private.h"
#include "openvswitch/types.h"

struct dpif_flow;
struct dpif_flow_put;
struct dpif_flow_stats;
struct match;
struct nlattr;
struct ofpbuf;

/* The kernel's "operation not supported" (524), which it returns for a
 * batch operation that a map type lacks; not in the C library's errno. */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

/* The flow table (dpif-bpf-flow-table.c). */
uint32_t dp_bpf_ufid_hash(const ovs_u128 *ufid);
uint32_t dp_bpf_tkey_hash(const struct ovs_bpf_flow_table_key *);
struct dp_bpf_flow *dp_bpf_find_flow(const struct dp_bpf *dp,
                                     const ovs_u128 *ufid)
    OVS_REQUIRES(dp->mutex);
void dp_bpf_flow_free(struct dp_bpf *dp, struct dp_bpf_flow *)
    OVS_REQUIRES(dp->mutex);
void dp_bpf_flow_get_stats(const struct dp_bpf *, const struct dp_bpf_flow *,
                           struct dpif_flow_stats *);
size_t dp_bpf_flow_table_key_size(unsigned int t);
int dp_bpf_flow_table_fd(const struct dp_bpf *, uint32_t mask_id);

/* Translation between the flows of the dpif interface and those of the
 * table (dpif-bpf-flow-xlate.c). */

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

int dp_bpf_flow_put_prepare(struct dpif_flow_put *, struct dp_bpf_put_prep *);
void dp_bpf_flow_ufid(const ovs_u128 *ufid, const struct nlattr *key,
                      size_t key_len, ovs_u128 *out);
bool dp_bpf_flow_value_is_long(const struct ovs_bpf_flow *);
void dp_bpf_stats_from_bpf(const struct ovs_bpf_flow_stats *,
                           struct dpif_flow_stats *);
void dp_bpf_stats_add(struct dpif_flow_stats *,
                      const struct dpif_flow_stats *);
void dp_bpf_flow_to_dpif_flow(const struct dp_bpf_flow *, bool terse,
                              struct ofpbuf *, struct dpif_flow *);

/* The mask list (dpif-bpf-flow-masks.c). */
int dp_bpf_mask_ref(struct dp_bpf *dp, const struct ovs_bpf_flow_key *mask)
    OVS_REQUIRES(dp->mutex);
void dp_bpf_mask_unref(struct dp_bpf *dp, uint32_t idx)
    OVS_REQUIRES(dp->mutex);
void dp_bpf_mask_order_write(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);

/* Batched BPF map operations (dpif-bpf-map-batch.c). */

/* The BPF map operations that go in batches (BPF_MAP_UPDATE_BATCH,
 * BPF_MAP_DELETE_BATCH), each with its one-entry fallback. */
enum dp_bpf_map_batch_op {
    DP_BPF_MAP_BATCH_UPDATE,
    DP_BPF_MAP_BATCH_DELETE,
    DP_BPF_N_MAP_BATCH_OPS
};

void dp_bpf_map_batch(enum dp_bpf_map_batch_op, int fd,
                      const void *keys, size_t key_size,
                      const void *values, size_t value_size, size_t n,
                      uint32_t max_batch, uint64_t flags, int *errors);
bool dp_bpf_map_batches_disabled(void);

/* Saved flows, for the next ovs-vswitchd (dpif-bpf-flow-adopt.c). */
void dp_bpf_flow_save(struct dp_bpf *dp, const struct dp_bpf_flow *)
    OVS_REQUIRES(dp->mutex);
void dp_bpf_flows_save(struct dp_bpf *dp,
                       const struct dp_bpf_flow *const *flows, size_t n)
    OVS_REQUIRES(dp->mutex);

#endif /* dpif-bpf-flow-private.h */
