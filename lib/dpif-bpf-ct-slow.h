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

/* The slow path of the BPF datapath's ct(): connection tracking, in the
 * kernel's nf_conntrack through ctnetlink, of the packets that the
 * conntrack kfuncs cannot track, and of the commits that write labels (see
 * bpf/ct-slow.h). */

#ifndef DPIF_BPF_CT_SLOW_H
#define DPIF_BPF_CT_SLOW_H 1

#include <stdbool.h>
#include <stdint.h>

struct dp_packet;
struct dpif_bpf_obj;
struct flow;
struct ovs_bpf_act_ct;
struct ovs_bpf_act_ct_label;

/* The ct() 'act' and, if it has OVS_BPF_CT_F_LABEL, its labels 'lbl' (the
 * argument slot after it), else NULL. */
bool dpif_bpf_ct_slow_execute(const struct dpif_bpf_obj *,
                              const struct ovs_bpf_act_ct *,
                              const struct ovs_bpf_act_ct_label *,
                              struct dp_packet *, const struct flow *);

/* A TCP packet whose ct() ran in BPF and moves its connection from state
 * 'old' to 'new' (enum ovs_bpf_tcp_state of bpf/datapath-abi.h). */
void dpif_bpf_ct_tcp_state(const struct dpif_bpf_obj *, uint8_t old,
                           uint8_t new, const struct dp_packet *,
                           const struct flow *);

#endif /* dpif-bpf-ct-slow.h */
