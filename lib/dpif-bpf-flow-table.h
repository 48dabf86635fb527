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

#ifndef DPIF_BPF_FLOW_TABLE_H
#define DPIF_BPF_FLOW_TABLE_H 1

/* The megaflow table of the BPF datapath (see dpif-bpf-flow-table.c and
 * the other dpif-bpf-flow-*.c files): what the rest of the datapath needs
 * of it.  dpif-bpf.c uses the dumps, the flush and what goes with the
 * datapath's life; dpif-bpf-execute.c the flow operations of
 * dpif_operate() and the lookups of layer 3 packets; dpif-bpf-recv.c the
 * lookups of the upcalls that ovs-vswitchd answers itself. */

#include <stdbool.h>
#include <stddef.h>

#include "dpif-bpf-private.h"

struct dpif;
struct dpif_flow;
struct dpif_flow_del;
struct dpif_flow_dump;
struct dpif_flow_dump_thread;
struct dpif_flow_dump_types;
struct dpif_flow_get;
struct dpif_flow_put;
struct dpif_flow_stats;

/* Operations of the dpif class. */
int dp_bpf_flow_put(struct dpif *, struct dpif_flow_put *);
void dp_bpf_flow_put_batch(struct dpif *, struct dpif_flow_put **puts,
                           int *errors, size_t n);
int dp_bpf_flow_put__(struct dp_bpf *, struct dpif_flow_put *);
int dp_bpf_flow_del(struct dpif *, struct dpif_flow_del *);
void dp_bpf_flow_del_batch(struct dpif *, struct dpif_flow_del **dels,
                           int *errors, size_t n);
int dp_bpf_flow_get(struct dpif *, struct dpif_flow_get *);
int dpif_bpf_flow_flush(struct dpif *);

/* Dumps (dpif-bpf-flow-dump.c). */
struct dpif_flow_dump *dpif_bpf_flow_dump_create(
    const struct dpif *, bool terse, struct dpif_flow_dump_types *);
int dpif_bpf_flow_dump_destroy(struct dpif_flow_dump *);
struct dpif_flow_dump_thread *dpif_bpf_flow_dump_thread_create(
    struct dpif_flow_dump *);
void dpif_bpf_flow_dump_thread_destroy(struct dpif_flow_dump_thread *);
int dpif_bpf_flow_dump_next(struct dpif_flow_dump_thread *,
                            struct dpif_flow *, int max_flows);

/* For the slow path and the datapath's destruction. */
struct dp_bpf_flow *dp_bpf_find_flow_by_tkey(
    const struct dp_bpf *dp, const struct ovs_bpf_flow_table_key *)
    OVS_REQUIRES(dp->mutex);
void dp_bpf_flows_remove_all(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);

/* For the datapath's close without destruction (the flows stay in BPF)
 * and its takeover by the next ovs-vswitchd (dpif-bpf-flow-adopt.c). */
void dp_bpf_flows_forget_all(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);
void dp_bpf_flows_adopt(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);
size_t dp_bpf_flows_carry_over(struct dp_bpf *dp, int saved_fd)
    OVS_EXCLUDED(dp->mutex);

/* For upcalls of packets whose flow was installed meanwhile. */
struct dp_bpf_flow *dp_bpf_lookup_flow(const struct dp_bpf *dp,
                                       const struct flow *)
    OVS_REQUIRES(dp->mutex);
struct dp_bpf_flow *dp_bpf_lookup_l3_flow(const struct dp_bpf *dp,
                                          const struct flow *)
    OVS_REQUIRES(dp->mutex);
void dp_bpf_flow_credit(struct dp_bpf *dp, struct dp_bpf_flow *,
                        const struct flow *, size_t n_bytes)
    OVS_REQUIRES(dp->mutex);

/* Reorders the mask search by recent hits (dpif-bpf.c runs it
 * periodically; dpif-bpf-flow-masks.c). */
void dp_bpf_masks_rebalance(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);

/* For tests: with 'disable', flow installs, deletes and dumps use no batch
 * operation of the BPF maps (BPF_MAP_{UPDATE,DELETE,LOOKUP}_BATCH), as
 * with a kernel that refuses them, but go one entry per system call
 * (dpif-bpf-map-batch.c). */
void dp_bpf_map_batches_disable(bool disable);

#endif /* dpif-bpf-flow-table.h */
