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

#ifndef DPIF_BPF_ODP_H
#define DPIF_BPF_ODP_H 1

/* Translation between OVS's datapath (ODP) Netlink formats and the structs
 * of the BPF datapath ABI (bpf/datapath-abi.h).
 *
 * This is the only place where ODP flow keys, masks and actions are turned
 * into 'struct ovs_bpf_flow_key' and 'struct ovs_bpf_action' and back.  Keys
 * go through OVS's own 'struct flow' / 'struct flow_wildcards' with
 * lib/odp-util.c, so the BPF datapath accepts exactly the keys that
 * odp_flow_key_from_flow() produces for the fields it can hold.
 *
 * Error convention of every function that returns an int:
 *
 *   0       Translated.
 *
 *   E2BIG   (actions only) Valid, and ovs-vswitchd can run the actions with
 *           odp_execute_actions(), but the BPF programs cannot: more than
 *           OVS_BPF_MAX_ACTIONS slots, a userdata longer than
 *           OVS_BPF_USERDATA_LEN, or a nested action list whose effect the
 *           BPF programs cannot reproduce.  The caller installs the flow with
 *           OVS_BPF_FLOW_F_USERSPACE ("userspace only"); 'slots' is then
 *           unspecified.
 *
 *   EINVAL  The BPF datapath cannot do this at all: a key attribute or mask
 *           bit that struct ovs_bpf_flow_key cannot hold (tunnel options,
 *           ct_*, MPLS labels or NSH fields of a flow that does not match
 *           their ethertype exactly, a non-Ethernet packet_type, a partial
 *           in_port mask...), or an action that needs a feature this
 *           datapath does not have (ct, tnl_push/tnl_pop, set(tunnel) with
 *           Geneve options...), or that would leave a packet without an
 *           Ethernet header where one is needed.
 *           Reported to ofproto as is, so its feature probing sees the
 *           truth.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bpf/datapath-abi.h"
#include "openvswitch/types.h"

struct ds;
struct flow;
struct flow_tnl;
struct flow_wildcards;
struct nlattr;
struct odp_support;
struct pkt_metadata;
struct ofpbuf;

/* The datapath features, in the form odp_flow_key_from_flow() wants them:
 * two VLAN headers, recirculation, no MPLS, no conntrack, ...  Keys produced
 * with these settings are accepted by dpif_bpf_odp_to_key(). */
void dpif_bpf_odp_support(struct odp_support *);

/* Whether the datapath has conntrack labels (ct(label=...) and flows that
 * match ct_label): set once the slow path made room for them, see
 * dpif_bpf_ct_labels_enable(). */
void dpif_bpf_odp_set_ct_labels(bool enabled);
bool dpif_bpf_odp_ct_labels(void);

/* Keys and masks. */

/* Makes '*slot' the OVS_BPF_ACTION_SET_TUNNEL of set(tunnel(...)) with
 * 'tnl'.  Returns EINVAL for what bpf_skb_set_tunnel_key() cannot give a
 * VXLAN device: Geneve options, GBP, ERSPAN and GTP-U fields, the OAM
 * flag, no destination.  The UDP ports are the device's, as for the kernel
 * datapath's VXLAN devices, which ignore 'tp_src' too; ofproto puts the
 * port's 'dst_port' in 'tp_dst' and outputs to the device of that port. */
int dpif_bpf_tunnel_action(const struct flow_tnl *tnl,
                           struct ovs_bpf_action *slot);

/* Translates the ODP flow key 'key' (of 'key_len' bytes) and its mask
 * 'mask' (of 'mask_len' bytes; 'mask_len' == 0 means exact match of every
 * field present in 'key', as for dpif_flow_put() without a mask) into
 * '*bkey' and '*bmask'.  '*bkey' is returned already masked with '*bmask',
 * and both have all padding zeroed, so '*bkey' can be used as part of a
 * flow table key as is.
 *
 * Fields of 'struct flow' that struct ovs_bpf_flow_key cannot hold are
 * accepted only if the mask wildcards them entirely (for instance a key
 * with OVS_KEY_ATTR_CT_STATE(0) and no mask for it).  The in_port mask must
 * be exact, the packet_type must be Ethernet.
 *
 * Returns 0, or EINVAL (see above); '*bkey' and '*bmask' are unspecified on
 * error. */
int dpif_bpf_odp_to_key(const struct nlattr *key, size_t key_len,
                        const struct nlattr *mask, size_t mask_len,
                        struct ovs_bpf_flow_key *bkey,
                        struct ovs_bpf_flow_key *bmask);

/* Appends to 'key' the ODP flow key of 'bkey' and, if 'mask' is nonnull, to
 * 'mask' the ODP mask of 'bmask', in the form odp_flow_key_from_flow() and
 * odp_flow_key_from_mask() give them (as for a flow dump).  Unmasked bits of
 * 'bkey' need not be zero.  A round trip through dpif_bpf_odp_to_key() gives
 * back the same 'bkey'/'bmask'. */
void dpif_bpf_key_to_odp(const struct ovs_bpf_flow_key *bkey,
                         const struct ovs_bpf_flow_key *bmask,
                         struct ofpbuf *key, struct ofpbuf *mask);

/* The same two translations at the level of 'struct flow' and 'struct
 * flow_wildcards', for callers that already have them (e.g. after
 * flow_extract() of an upcalled or executed packet).  'wc' may be null for an
 * exact match of the fields the BPF key holds; dpif_bpf_flow_to_key() then
 * accepts any value in the other fields (they are not matched). */
int dpif_bpf_flow_to_key(const struct flow *flow,
                         const struct flow_wildcards *wc,
                         struct ovs_bpf_flow_key *bkey,
                         struct ovs_bpf_flow_key *bmask);

/* Flow tables (see "Flow tables" in bpf/datapath-abi.h). */

/* Compiles 'mask' into the mask list entry '*m' (in use): the key words
 * that 'mask' covers and the flow table they select. */
void dpif_bpf_mask_compile(const struct ovs_bpf_flow_key *mask,
                           struct ovs_bpf_mask *m);

/* Number of key words of flow table 'table' (enum ovs_bpf_flow_table). */
unsigned int dpif_bpf_flow_table_words(unsigned int table);

/* Builds in '*tkey' the flow table key of 'key' (masked or not) under the
 * mask list entry 'mask_id', compiled into 'm'; the words beyond those of
 * the table are zero, so that whole table keys compare as bytes. */
void dpif_bpf_table_key(uint32_t mask_id, const struct ovs_bpf_mask *m,
                        const struct ovs_bpf_flow_key *key,
                        struct ovs_bpf_flow_table_key *tkey);

/* Zeroes the words of 'tkey' beyond those of flow table 'table', as in a
 * key that dpif_bpf_table_key() builds (the BPF programs leave them
 * unspecified in upcalls). */
void dpif_bpf_table_key_normalize(unsigned int table,
                                  struct ovs_bpf_flow_table_key *tkey);

/* Actions. */

/* Translates the ODP actions 'actions' ('len' bytes) into action slots.  On
 * success stores the number of slots used (0 .. OVS_BPF_MAX_ACTIONS; 0 means
 * drop) in '*n_slots' and zeroes the unused slots, so that the whole array can
 * be written to the flow table.
 *
 * The translation:
 *   output(p)                   OUTPUT p
 *   trunc(n), output(p)         TRUNC n, OUTPUT p, if that output is the
 *                               last action of the flow (the BPF programs
 *                               cannot cut one copy of a packet and send
 *                               another whole); E2BIG for other uses
 *   userspace(pid, userdata, actions)
 *                               USERSPACE (pid ignored: upcalls go through
 *                               the perf ring; userdata up to 48 bytes)
 *   set(ethernet|ipv4|ipv6|tcp|udp|priority|skb_mark)
 *                               the SET_* slot with an all-ones mask
 *   set(sctp|arp|nd|icmp), set_masked(sctp|arp|nd)
 *                               E2BIG (odp-execute rewrites them)
 *   set(nd_ext), set_masked(nd_ext)
 *                               EINVAL (ofproto's probe for the ND
 *                               extension match fields, which the BPF key
 *                               does not have)
 *   set_masked(ipv6)            up to three slots: SET_IPV6_SRC,
 *                               SET_IPV6_DST, SET_IPV6_MISC (only those
 *                               whose mask is not zero)
 *   set_masked(others)          the matching SET_* slot
 *   push_vlan, pop_vlan         the matching slot
 *   clone(A), sample(p, A)      CLONE/SAMPLE whose nested.n_actions slots
 *                               that follow hold A.  If actions follow the
 *                               clone (at any level) and A changes the
 *                               packet or its metadata, E2BIG: the kernel
 *                               runs A on a copy, BPF on the packet itself
 *   recirc(id)                  RECIRC, if it is the last action of the
 *                               flow (it ends the BPF chain); else E2BIG,
 *                               and E2BIG for a packet without an
 *                               Ethernet header (ovs-vswitchd
 *                               recirculates it)
 *   hash(l4 or sym_l4, basis)   HASH
 *   drop (explicit)             no slot: the chain ends
 *   push_nsh, pop_nsh, set(nsh), set_masked(nsh), and the push_eth and
 *   pop_eth around them         E2BIG (odp-execute runs them); EINVAL for
 *                               sequences it could not run right (see
 *                               check_nsh_action() in
 *                               dpif-bpf-odp-actions.c)
 *
 * Returns 0, E2BIG or EINVAL as described at the top of this file. */
int dpif_bpf_odp_to_actions(const struct nlattr *actions, size_t len,
                            struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS],
                            uint32_t *n_slots);
struct dp_packet;
bool dpif_bpf_odp_execute_in_userspace(const struct ovs_bpf_action *,
                                       uint32_t n_slots,
                                       const struct dp_packet *);

/* Layer 3 flows: flows of packets that are not Ethernet frames (a
 * packet_type other than Ethernet, after pop_eth and a recirculation),
 * which the BPF programs never see: ovs-vswitchd keeps, matches and runs
 * them (see "Layer 3 packets" in Documentation/topics/dpif-bpf.rst).
 *
 * dpif_bpf_odp_to_l3_match() returns ENOENT if 'key' is of an Ethernet
 * frame (a flow for dpif_bpf_odp_to_key()), 0 with the flow's match in
 * '*match' if it is of another packet type, or EINVAL if odp-util does not
 * parse the key and mask perfectly or they do not match packet_type and
 * in_port exactly.
 *
 * dpif_bpf_odp_check_l3_actions() checks the actions of such a flow, whose
 * packets have no Ethernet header until push_eth, as
 * dpif_bpf_odp_to_actions() does; returns 0 or EINVAL. */
struct match;
int dpif_bpf_odp_to_l3_match(const struct nlattr *key, size_t key_len,
                             const struct nlattr *mask, size_t mask_len,
                             struct match *);
int dpif_bpf_odp_check_l3_actions(ovs_be32 packet_type,
                                  const struct nlattr *actions, size_t len);

/* Downcall frames. */

/* The key's conntrack and tunnel metadata block ('key_meta' of an upcall
 * or a downcall, OVS_BPF_KEY_CT_TUN_LEN bytes from OVS_BPF_KEY_CT_TUN_OFS of
 * struct ovs_bpf_flow_key) to and from the packet metadata. */
void dpif_bpf_key_meta_to_md(const uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN],
                             struct pkt_metadata *);
void dpif_bpf_md_to_key_meta(const struct pkt_metadata *,
                             uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN]);

/* The pieces of the downcall frame (see bpf/datapath-abi.h) of the 'len'
 * bytes of 'packet' (at least an Ethernet header) with the 'n_actions'
 * 'actions', the OVS_BPF_KEY_CT_TUN_LEN bytes of key metadata 'key_meta'
 * and the trailer 'dc': fills 'iov' for writev(), without copying the
 * packet, and sets 'dc->eth_type' from the packet.  Returns the number of
 * elements of 'iov' used.  'key_meta' and 'dc' must stay valid until the
 * write. */
#define DPIF_BPF_DOWNCALL_IOVS 6
size_t dpif_bpf_downcall_iov(struct iovec iov[DPIF_BPF_DOWNCALL_IOVS],
                             const void *packet, size_t len,
                             const struct ovs_bpf_action *actions,
                             uint32_t n_actions, const uint8_t *key_meta,
                             struct ovs_bpf_downcall *dc);

/* Debugging and tests. */

/* Appends to 's' a human-readable form of 'bkey' under 'bmask' (only fields
 * with a nonzero mask), e.g. "in_port=1,recirc_id=0,eth_type=0x0800,...". */
void dpif_bpf_format_key(struct ds *s, const struct ovs_bpf_flow_key *bkey,
                         const struct ovs_bpf_flow_key *bmask);

/* The name of action type 'type' (enum ovs_bpf_action_type), as in
 * OVS_BPF_ACTIONS, or NULL if there is no such type ('type' is
 * __OVS_BPF_ACTION_MAX or more: every type below has a name). */
const char *dpif_bpf_action_name(uint32_t type);

/* Appends to 's' a human-readable form of the 'n' action slots 'slots'. */
void dpif_bpf_format_actions(struct ds *s, const struct ovs_bpf_action *slots,
                             uint32_t n);

#endif /* dpif-bpf-odp.h */
