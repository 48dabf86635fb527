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

#ifndef DPIF_BPF_UPCALL_H
#define DPIF_BPF_UPCALL_H 1

/* Upcalls of the BPF datapath: packets that the BPF programs send to
 * ovs-vswitchd through BPF ring buffers, one per handler thread of
 * ofproto-dpif-upcall, in the 'upcall_rings' array of maps (see struct
 * ovs_bpf_upcall_config).
 *
 * Handler i reads ring i only, from its own thread, so handlers never
 * share a ring; the BPF programs choose the ring by the packet's hash, so
 * that the packets of a flow stay in order.  A record is read in place, in
 * the ring: its packet is copied once, into the upcall's struct
 * dp_packet, and the ring's space is freed as soon as that is done. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/datapath-abi.h"

struct dp_packet;
struct ds;
struct flow;
struct dpif_upcall;
struct ofpbuf;

/* The upcall budget of each port on each CPU (other_config:bpf-upcall-*):
 * 'rate' misses per second ('burst' at once) go up whatever the rings
 * hold; more go up while their ring holds less than 'fill_pct' percent of
 * its size unread, and are dropped otherwise.  'rate' 0: no budget. */
struct dpif_bpf_upcall_budget {
    unsigned int rate;
    unsigned int burst;
    unsigned int fill_pct;
};

struct dpif_bpf_upcalls *dpif_bpf_upcalls_create(
    int rings_fd, int config_fd, const struct dpif_bpf_upcall_budget *);
void dpif_bpf_upcalls_destroy(struct dpif_bpf_upcalls *, bool keep_rings);
int dpif_bpf_upcalls_set_handlers(struct dpif_bpf_upcalls *,
                                  uint32_t n_handlers);
void dpif_bpf_upcalls_set_budget(struct dpif_bpf_upcalls *,
                                 const struct dpif_bpf_upcall_budget *);
void dpif_bpf_upcalls_format(struct dpif_bpf_upcalls *, struct ds *);

/* Called with a record 'up' (checked for consistency) and its 'cap_len'
 * bytes of packet at 'data', both valid only for the duration of the call.
 * Returns true if it took the record as the upcall to return. */
typedef bool dpif_bpf_upcall_fn(const struct ovs_bpf_upcall *up,
                                const void *data, void *aux);

/* Passes the next records of the ring of 'handler_id' to 'fn' until it
 * takes one, then returns 0, or returns EAGAIN if the ring runs empty
 * first. */
int dpif_bpf_upcalls_recv(struct dpif_bpf_upcalls *, uint32_t handler_id,
                          dpif_bpf_upcall_fn *fn, void *aux);
void dpif_bpf_upcalls_wait(struct dpif_bpf_upcalls *, uint32_t handler_id);
void dpif_bpf_upcalls_purge(struct dpif_bpf_upcalls *);

/* Turns the packet of 'up' (whose 'cap_len' bytes are at 'data') into
 * 'packet', initializing it: the VLAN tag that the kernel had moved into
 * skb metadata is pushed back, the packet metadata is set from 'up', a
 * checksum left partial by the sender is completed, and the flow is
 * extracted into 'flow'. */
void dpif_bpf_upcall_packet(const struct ovs_bpf_upcall *up, const void *data,
                            struct dp_packet *packet, struct flow *flow);

/* Translates the record 'up' (with its packet at 'data') into 'upcall' for
 * 'dpif_recv()': packet, flow key, ufid, type and userdata.  The key and
 * userdata are stored in 'buf', and so is the packet, which does not own
 * its memory (DPBUF_STUB); the packet's flow is stored in 'flow'.  Returns
 * 0 or a positive errno value (the record is then ignored). */
int dpif_bpf_upcall_to_dpif(const struct ovs_bpf_upcall *, const void *data,
                            struct dpif_upcall *, struct ofpbuf *buf,
                            struct flow *flow);

/* GSO packets.  The kernel datapath cuts a GSO packet into its segments
 * before it goes up (queue_gso_packets()); the BPF programs cannot, so it
 * goes up whole, with its segment size in 'gso_size', and is cut on its
 * way down instead, as the kernel datapath refragments a reassembled IP
 * packet: the upcall gives ofproto an MRU (the IP length of a full
 * segment), which comes back with the actions as dpif_execute's 'mtu',
 * and each downcall of a packet longer than it goes down as its
 * segments. */
unsigned int dpif_bpf_upcall_mru(const struct ovs_bpf_upcall *,
                                 const struct dp_packet *);
bool dpif_bpf_gso_segment(const struct dp_packet *, unsigned int mru,
                          void (*fn)(const struct dp_packet *seg, void *aux),
                          void *aux);

#endif /* dpif-bpf-upcall.h */
