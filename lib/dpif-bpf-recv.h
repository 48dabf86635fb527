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

#ifndef DPIF_BPF_RECV_H
#define DPIF_BPF_RECV_H 1

/* The receive side of the BPF datapath (see dpif-bpf-recv.c): the upcall
 * operations of the dpif class. */

#include <stdbool.h>
#include <stdint.h>

struct dpif;
struct dpif_upcall;
struct ofpbuf;

int dpif_bpf_recv_set(struct dpif *, bool enable);
int dpif_bpf_handlers_set(struct dpif *, uint32_t n_handlers);
int dpif_bpf_recv(struct dpif *, uint32_t handler_id, struct dpif_upcall *,
                  struct ofpbuf *);
void dpif_bpf_recv_wait(struct dpif *, uint32_t handler_id);
void dpif_bpf_recv_purge(struct dpif *);

#endif /* dpif-bpf-recv.h */
