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

#ifndef DPIF_BPF_EXECUTE_H
#define DPIF_BPF_EXECUTE_H 1

/* The execute path of the BPF datapath (see dpif-bpf-execute.c): the
 * operations of the dpif class that run packets, and what the receive side
 * (dpif-bpf-recv.c) needs of it to run the packets of upcalls. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dpif-bpf-private.h"
#include "dpif-provider.h"

struct dp_packet;
struct dp_packet_batch;
struct flow;
struct nlattr;

/* Operations of the dpif class. */
void dpif_bpf_operate(struct dpif *, struct dpif_op **, size_t n_ops,
                      enum dpif_offload_type);
void dpif_bpf_register_upcall_cb(struct dpif *, upcall_callback *,
                                 void *aux);

/* Sends 'packet' down with 'n_actions' action slots, cut into its segments
 * if it is a GSO packet longer than 'mru' (nonzero for the packet of a GSO
 * upcall). */
int dp_bpf_downcall(struct dp_bpf *, const struct dp_packet *,
                    const struct ovs_bpf_action *, uint32_t n_actions,
                    unsigned int mru);

/* What running actions on packets in ovs-vswitchd needs to know besides
 * the packets: dp_bpf_execute_userspace() (whose callers set 'dp', 'steal'
 * and 'mru'), its dp_bpf_execute_cb() (all), dp_bpf_ct_resume() ('dp' and
 * 'mru'). */
struct dp_bpf_execute_aux {
    struct dp_bpf *dp;
    const struct nlattr *actions;   /* The whole list being executed. */
    size_t actions_len;
    bool steal;                     /* odp_execute_actions() may free the
                                     * packets. */
    unsigned int mru;               /* Of the packets: see
                                     * dp_bpf_downcall(). */
};

int dp_bpf_execute_userspace(const struct dp_bpf_execute_aux *,
                             struct dp_packet *, const struct flow *,
                             bool probe, const struct nlattr *actions,
                             size_t actions_len);

/* Resuming a packet in BPF after a ct() that ran in ovs-vswitchd. */
uint32_t dp_bpf_ct_decode(const struct ovs_bpf_action *slots, uint32_t idx,
                          uint32_t n_slots, const struct ovs_bpf_act_ct **,
                          const struct ovs_bpf_act_ct_label **);
void dp_bpf_ct_resume(const struct dp_bpf_execute_aux *,
                      const struct dp_packet_batch *,
                      const struct ovs_bpf_action *slots, uint32_t n_slots);

/* Forwards the packet of an OVS_BPF_UPCALL_L3 upcall through the layer 3
 * flows. */
void dp_bpf_l3_upcall(struct dp_bpf *, const struct ovs_bpf_upcall *,
                      const void *pkt);

#endif /* dpif-bpf-execute.h */
