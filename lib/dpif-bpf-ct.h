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

#ifndef DPIF_BPF_CT_H
#define DPIF_BPF_CT_H 1

/* The conntrack operations of the dpif class of the BPF datapath (see
 * dpif-bpf-ct.c): they act on the kernel's nf_conntrack of the network
 * namespace that ovs-vswitchd runs in, which the BPF programs use through
 * the conntrack kfuncs.  Each returns 0 or a positive errno value, as the
 * dpif class says. */

#include <stdint.h>

#include "ct-dpif.h"

struct ct_dpif_dump_state;
struct ct_dpif_entry;
struct ct_dpif_tuple;
struct dpif;

int dpif_bpf_ct_dump_start(struct dpif *, struct ct_dpif_dump_state **,
                           const uint16_t *zone, int *ptot_bkts);
int dpif_bpf_ct_dump_next(struct dpif *, struct ct_dpif_dump_state *,
                          struct ct_dpif_entry *);
int dpif_bpf_ct_dump_done(struct dpif *, struct ct_dpif_dump_state *);
int dpif_bpf_ct_flush(struct dpif *, const uint16_t *zone,
                      const struct ct_dpif_tuple *);
int dpif_bpf_ct_set_maxconns(struct dpif *, uint32_t maxconns);
int dpif_bpf_ct_get_maxconns(struct dpif *, uint32_t *maxconns);
int dpif_bpf_ct_get_nconns(struct dpif *, uint32_t *nconns);
int dpif_bpf_ct_get_features(struct dpif *, enum ct_features *);
int dpif_bpf_ct_set_tcp_seq_chk(struct dpif *, bool enabled);
int dpif_bpf_ct_get_tcp_seq_chk(struct dpif *, bool *enabled);

#endif /* dpif-bpf-ct.h */
