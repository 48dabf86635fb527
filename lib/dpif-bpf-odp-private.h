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

/* What the three parts of the ODP translation (dpif-bpf-odp.c,
 * dpif-bpf-odp-actions.c and dpif-bpf-odp-format.c) share and nothing else
 * uses: how the bytes of a BPF flow key are laid out. */

#ifndef DPIF_BPF_ODP_PRIVATE_H
#define DPIF_BPF_ODP_PRIVATE_H 1

#include <stddef.h>
#include <stdint.h>

#include "flow.h"
#include "packets.h"

/* BPF key fields whose meaning is narrower than the 'struct flow' field of
 * the same name: the bits outside these masks are always zero in packets, so
 * a mask that covers them is normalized to one that does not. */
#define BPF_TCP_FLAGS_MASK 0x0fff
#define BPF_IPV6_LABEL_MASK IPV6_LABEL_MASK

/* What the bytes of 'ipv6_src' and 'ipv6_dst' of a BPF key hold (see struct
 * ovs_bpf_flow_key). */
enum key_layout {
    KEY_IPV6,                   /* The IPv6 addresses (zero if not IPv6). */
    KEY_MPLS,                   /* The MPLS labels, then 'ipv6_dst'. */
    KEY_NSH,                    /* The NSH headers. */
};

/* The layout of the key of 'flow' under mask 'm': only a flow that matches
 * the ethertype exactly can match the fields of MPLS or NSH. */
static inline enum key_layout
flow_key_layout(ovs_be16 dl_type, ovs_be16 dl_type_mask)
{
    if (dl_type_mask != OVS_BE16_MAX) {
        return KEY_IPV6;
    } else if (eth_type_mpls(dl_type)) {
        return KEY_MPLS;
    } else if (dl_type == htons(ETH_TYPE_NSH)) {
        return KEY_NSH;
    } else {
        return KEY_IPV6;
    }
}

/* '*dst_ &= *mask_' over 'n' bytes. */
static inline void
and_bytes(void *dst_, const void *mask_, size_t n)
{
    uint8_t *dst = dst_;
    const uint8_t *mask = mask_;

    for (size_t i = 0; i < n; i++) {
        dst[i] &= mask[i];
    }
}

#endif /* dpif-bpf-odp-private.h */
