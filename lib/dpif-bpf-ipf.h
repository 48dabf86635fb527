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

#ifndef DPIF_BPF_IPF_H
#define DPIF_BPF_IPF_H 1

/* IP fragments through ct() on the BPF datapath: reassembly in ovs-vswitchd
 * with OVS's lib/ipf.c, conntrack of the reassembled packet in BPF, and the
 * dpctl/ipf-* commands. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dp_bpf;
struct dp_packet;
struct dp_packet_batch;
struct dpif;
struct dpif_ipf_status;
struct flow;
struct ipf_dump_ctx;
struct nlattr;
struct ovs_bpf_act_ct;
struct ovs_bpf_act_ct_label;
struct ovs_bpf_flow_key;

void dp_bpf_ipf_init(struct dp_bpf *);
void dp_bpf_ipf_destroy(struct dp_bpf *);

/* True if a megaflow of (masked) key 'key' with 'actions' must be run by
 * ovs-vswitchd: it matches IP fragments and has a ct() action. */
bool dp_bpf_ipf_flow_is_userspace(const struct ovs_bpf_flow_key *key,
                                  const struct nlattr *actions, size_t len);

/* An execute of 'actions' on a packet of flow 'flow' must run in
 * ovs-vswitchd if there is a ct() among the actions (at any depth) and the
 * packet is an IP fragment: ipf keeps it.  The caller tests the actions
 * first, so that the common execute without ct() needs no flow. */
bool dp_bpf_ipf_actions_have_ct(const struct nlattr *actions, size_t len);
bool dp_bpf_ipf_flow_is_frag(const struct flow *);

/* Runs ct() 'act' (with labels 'lbl', or NULL) on 'batch' if its packets
 * are IP fragments, whose packets ovs-vswitchd owns: on return the batch
 * holds the packets that go on to the actions after the ct(), with their
 * conntrack state; the others are kept by ipf.  Returns false, leaving
 * 'batch' alone, if they are not fragments. */
bool dp_bpf_ipf_ct(struct dp_bpf *, struct dp_packet_batch *,
                   const struct ovs_bpf_act_ct *,
                   const struct ovs_bpf_act_ct_label *);

int dpif_bpf_ipf_set_enabled(struct dpif *, bool v6, bool enable);
int dpif_bpf_ipf_set_min_frag(struct dpif *, bool v6, uint32_t min_frag);
int dpif_bpf_ipf_set_max_nfrags(struct dpif *, uint32_t max_frags);
int dpif_bpf_ipf_get_status(struct dpif *, struct dpif_ipf_status *);
int dpif_bpf_ipf_dump_start(struct dpif *, struct ipf_dump_ctx **);
int dpif_bpf_ipf_dump_next(struct dpif *, void *ctx, char **dump);
int dpif_bpf_ipf_dump_done(struct dpif *, void *ctx);

#endif /* dpif-bpf-ipf.h */
