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

#ifndef DPIF_BPF_PORT_H
#define DPIF_BPF_PORT_H 1

/* The ports of the BPF datapath (see dpif-bpf-port.c): the port operations
 * of the dpif class, and what the rest of dpif-bpf.c needs of them. */

#include <stdbool.h>

#include "dpif-bpf-private.h"

struct dpif;
struct dpif_port;
struct netdev;

/* Operations of the dpif class. */
int dpif_bpf_port_add(struct dpif *, struct netdev *, odp_port_t *port_nop);
int dpif_bpf_port_del(struct dpif *, odp_port_t);
int dpif_bpf_port_query_by_number(const struct dpif *, odp_port_t,
                                  struct dpif_port *);
int dpif_bpf_port_query_by_name(const struct dpif *, const char *devname,
                                struct dpif_port *);
int dpif_bpf_port_dump_start(const struct dpif *, void **statep);
int dpif_bpf_port_dump_next(const struct dpif *, void *state,
                            struct dpif_port *);
int dpif_bpf_port_dump_done(const struct dpif *, void *state);
int dpif_bpf_port_poll(const struct dpif *, char **devnamep);
void dpif_bpf_port_poll_wait(const struct dpif *);

/* For the datapath's destruction, its close without destruction (the ports
 * stay in the kernel) and its takeover by the next ovs-vswitchd. */
void dp_bpf_ports_remove_all(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);
void dp_bpf_ports_forget_all(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);
void dp_bpf_ports_adopt(struct dp_bpf *dp) OVS_REQUIRES(dp->mutex);
bool dp_bpf_port_exists(const struct dp_bpf *dp, odp_port_t)
    OVS_REQUIRES(dp->mutex);
uint32_t dp_bpf_port_next_gre_seq(struct dp_bpf *dp, odp_port_t);
void dp_bpf_ports_carry_over(struct dp_bpf *dp, int saved_fd)
    OVS_REQUIRES(dp->mutex);
struct dpif_bpf_obj_config;
void dp_bpf_ports_remove_stale(const char *dp_name,
                               const struct dpif_bpf_obj_config *);

#endif /* dpif-bpf-port.h */
