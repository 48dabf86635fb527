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

#ifndef DPIF_BPF_CT_LIMIT_H
#define DPIF_BPF_CT_LIMIT_H 1

/* Conntrack zone limits of the BPF datapath (see dpif-bpf-ct-limit.c): the
 * dpif class's operations, which return 0 or a positive errno value, and
 * the limit check of the ct slow path's commits. */

#include <stdint.h>

struct dpif;
struct dpif_bpf_obj;
struct ovs_bpf_ct_zone;
struct ovs_list;

int dpif_bpf_ct_set_limits(struct dpif *, const uint32_t *default_limit,
                           const struct ovs_list *zone_limits);
int dpif_bpf_ct_get_limits(struct dpif *, uint32_t *default_limit,
                           const struct ovs_list *zone_limits_in,
                           struct ovs_list *zone_limits_out);
int dpif_bpf_ct_del_limits(struct dpif *, const struct ovs_list *zone_limits);

/* Before a commit creates a connection in 'zone': returns 1 if it took a
 * place in the zone (give it back with dpif_bpf_ct_limit_unreserve() if no
 * connection is created), 0 if the zone has no limit, -1 if it is full. */
int dpif_bpf_ct_limit_reserve(const struct dpif_bpf_obj *, uint16_t zone);
void dpif_bpf_ct_limit_unreserve(const struct dpif_bpf_obj *, uint16_t zone);

/* The datapath whose object has 'zones' goes away. */
void dpif_bpf_ct_limit_forget(const struct ovs_bpf_ct_zone *zones);

#endif /* dpif-bpf-ct-limit.h */
