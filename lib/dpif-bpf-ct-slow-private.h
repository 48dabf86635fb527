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


#ifndef DPIF_BPF_CT_SLOW_PRIVATE_H
#define DPIF_BPF_CT_SLOW_PRIVATE_H 1

/* What the files of the BPF datapath's ct() slow path share among
 * themselves: the action and the TCP state moves (dpif-bpf-ct-slow.c),
 * the packets' tuples and NAT (dpif-bpf-ct-packet.c) and the ctnetlink
 * requests (dpif-bpf-ct-nl.c).  Not for use outside these files: what the
 * rest of the datapath uses is in dpif-bpf-ct-slow.h. */

#include <stdbool.h>
#include <stdint.h>

#include "ct-dpif.h"

struct dp_packet;
struct flow;
struct ovs_bpf_act_ct;

/* ct(commit) with labels: the value and the mask (of the action), as
 * ctnetlink's CTA_LABELS and CTA_LABELS_MASK take them. */
struct ct_slow_labels {
    uint8_t value[16];
    uint8_t mask[16];
};

/* What ct() needs to know of a packet. */
struct ct_slow_pkt {
    struct ct_dpif_tuple tuple;     /* The packet's own. */
    bool is_icmp;                   /* ICMP (IPv4) or ICMPv6. */
    bool is_error;                  /* An ICMP error... */
    struct ct_dpif_tuple inner;     /* ...and the packet it embeds. */
    uint8_t *inner_l3;              /* The embedded IP header. */
    uint8_t *inner_l4;              /* Its L4 header (8 bytes at least). */
};

/* Packets: their tuples and their NAT (dpif-bpf-ct-packet.c). */
bool ct_slow_is_icmp(int af, uint8_t proto);
uint8_t ct_slow_icmp_invert_type(int af, uint8_t type);
bool ct_slow_icmp_is_request(int af, uint8_t type);
bool ct_slow_parse_packet(struct dp_packet *, const struct flow *,
                          struct ct_slow_pkt *);
bool ct_slow_invert_tuple(const struct ct_dpif_tuple *,
                          struct ct_dpif_tuple *inv);
bool ct_slow_tuple_equal(const struct ct_dpif_tuple *,
                         const struct ct_dpif_tuple *);
uint16_t ct_slow_nat_packet(struct dp_packet *, struct ct_slow_pkt *,
                            const struct ct_dpif_entry *, bool reply);

/* Connections, through ctnetlink (dpif-bpf-ct-nl.c). */
int ct_slow_nl_get(const struct ct_dpif_tuple *, uint16_t zone,
                   struct ct_dpif_entry *);
int ct_slow_nl_create(const struct ct_dpif_tuple *orig, uint16_t zone,
                      uint32_t timeout, uint32_t mark,
                      const struct ovs_bpf_act_ct *, bool nat,
                      const struct ct_slow_labels *);
int ct_slow_nl_update(const struct ct_dpif_tuple *orig, uint16_t zone,
                      uint32_t timeout, uint32_t status, uint32_t mark,
                      uint32_t mark_mask, const struct ct_slow_labels *,
                      int tcp_state);
int ct_slow_nl_delete(const struct ct_dpif_tuple *orig, uint16_t zone);
int ct_slow_nl_recreate(const struct ct_dpif_entry *, uint16_t zone,
                        uint32_t timeout, uint32_t mark,
                        const struct ct_slow_labels *);
uint8_t ct_slow_tcp_state_of(const struct ct_dpif_entry *, uint8_t seen);

#endif /* dpif-bpf-ct-slow-private.h */
