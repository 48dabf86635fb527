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

#ifndef DPIF_BPF_CT_TP_H
#define DPIF_BPF_CT_TP_H 1

/* Conntrack timeout policies of the BPF datapath (see dpif-bpf-ct-tp.c):
 * the dpif class's operations, which return 0 or a positive errno value,
 * and the policy of a connection for the ct slow path. */

#include <stdbool.h>
#include <stdint.h>

#include "bpf/datapath-abi.h"

struct ct_dpif_timeout_policy;
struct ct_dpif_tuple;
struct dpif;
struct dpif_bpf_obj;

int dpif_bpf_ct_set_timeout_policy(struct dpif *,
                                   const struct ct_dpif_timeout_policy *);
int dpif_bpf_ct_get_timeout_policy(struct dpif *, uint32_t tp_id,
                                   struct ct_dpif_timeout_policy *);
int dpif_bpf_ct_del_timeout_policy(struct dpif *, uint32_t tp_id);
int dpif_bpf_ct_timeout_policy_dump_start(struct dpif *, void **statep);
int dpif_bpf_ct_timeout_policy_dump_next(struct dpif *, void *state,
                                         struct ct_dpif_timeout_policy *);
int dpif_bpf_ct_timeout_policy_dump_done(struct dpif *, void *state);
int dpif_bpf_ct_get_timeout_policy_name(struct dpif *, uint32_t tp_id,
                                        uint16_t dl_type, uint8_t nw_proto,
                                        char **tp_name, bool *is_generic);

/* The number of timeout policies in the 'ct_tps' map of 'obj'. */
uint32_t dpif_bpf_ct_tp_count(const struct dpif_bpf_obj *obj);

/* For the slow path: records that the connection 'orig' of 'zone', which
 * a commit just created, has policy 'tp_id' (0: none); and gives the
 * timeout in seconds of 'state' under 'tp_id', or if that is 0 under the
 * policy recorded for 'orig' (if not NULL), or else the default.  'obj'
 * may be NULL (no maps: the defaults). */
void dpif_bpf_ct_tp_conn_set(const struct dpif_bpf_obj *obj,
                             const struct ct_dpif_tuple *orig, uint16_t zone,
                             uint32_t tp_id);
uint32_t dpif_bpf_ct_tp_timeout(const struct dpif_bpf_obj *obj,
                                const struct ct_dpif_tuple *orig,
                                uint16_t zone, uint32_t tp_id,
                                enum ovs_bpf_ct_tp_state);

#endif /* dpif-bpf-ct-tp.h */
