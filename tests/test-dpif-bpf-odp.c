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

/* Unit tests of lib/dpif-bpf-odp.c (and of the upcall checksum completion
 * in lib/dpif-bpf-upcall.c), driven by tests/dpif-bpf-odp.at.
 *
 * Every command reads one ODP flow or action list per line from stdin (the
 * syntax of ovs-dpctl, parsed by odp-util) and prints what the translation
 * gives, so that the expected output in the .at file documents the
 * translation. */

#include <config.h>
#undef NDEBUG
#include "dpif-bpf-odp.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "command-line.h"
#include "csum.h"
#include "dp-packet.h"
#include "dpif-bpf-upcall.h"
#include "flow.h"
#include "netlink.h"
#include "odp-netlink.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/match.h"
#include "openvswitch/ofp-flow.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovstest.h"
#include "packets.h"
#include "util.h"

static const char *
error_name(int error)
{
    return (error == EINVAL ? "EINVAL"
            : error == E2BIG ? "E2BIG"
            : error == ENOENT ? "ENOENT"
            : ovs_strerror(error));
}

/* Translates the ODP flow 'key' and 'mask' to a BPF key and mask and prints
 * them, then translates them back to ODP and checks that this gives the same
 * BPF key and mask again.  With 'exact', 'mask' is ignored: the flow is
 * translated as an exact-match key, as dpif_flow_put() without a mask does
 * (ofproto's feature probes).  Returns 1 on a failed check, else 0. */
static int
translate_key(const struct ofpbuf *key, const struct ofpbuf *mask,
              bool exact)
{
    struct ovs_bpf_flow_key bkey, bmask, bkey2, bmask2;
    struct ds out = DS_EMPTY_INITIALIZER;
    struct ofpbuf key2, mask2;
    int exit_code = 0;
    int error;

    ofpbuf_init(&key2, 0);
    ofpbuf_init(&mask2, 0);
    error = dpif_bpf_odp_to_key(key->data, key->size,
                                mask->data, exact ? 0 : mask->size,
                                &bkey, &bmask);
    if (error) {
        printf("%s\n", error_name(error));
        goto out;
    }

    /* Masked keys: no bit of the key outside the mask. */
    for (size_t i = 0; i < sizeof bkey; i++) {
        if (((uint8_t *) &bkey)[i] & ~((uint8_t *) &bmask)[i]) {
            printf("key not masked at byte %"PRIuSIZE"\n", i);
            exit_code = 1;
        }
    }

    dpif_bpf_format_key(&out, &bkey, &bmask);
    printf("bpf: %s\n", ds_cstr(&out));

    /* Back to ODP, as a flow dump does, and once more to BPF. */
    dpif_bpf_key_to_odp(&bkey, &bmask, &key2, &mask2);
    ds_clear(&out);
    odp_flow_format(key2.data, key2.size, mask2.data, mask2.size, NULL,
                    &out, false);
    printf("odp: %s\n", ds_cstr(&out));

    error = dpif_bpf_odp_to_key(key2.data, key2.size,
                                mask2.data, mask2.size, &bkey2, &bmask2);
    if (error) {
        printf("round trip: %s\n", error_name(error));
        exit_code = 1;
    } else if (memcmp(&bkey, &bkey2, sizeof bkey)
               || memcmp(&bmask, &bmask2, sizeof bmask)) {
        ds_clear(&out);
        dpif_bpf_format_key(&out, &bkey2, &bmask2);
        printf("round trip differs: %s\n", ds_cstr(&out));
        exit_code = 1;
    }

out:
    ds_destroy(&out);
    ofpbuf_uninit(&key2);
    ofpbuf_uninit(&mask2);
    return exit_code;
}

/* translate_key() of the flow on each input line. */
static int
translate_keys(bool exact)
{
    int exit_code = 0;
    struct ds in;

    ds_init(&in);
    while (!ds_get_test_line(&in, stdin)) {
        struct ofpbuf key, mask;
        char *error_s;
        int error;

        ofpbuf_init(&key, 0);
        ofpbuf_init(&mask, 0);
        error = odp_flow_from_string(ds_cstr(&in), NULL, &key, &mask,
                                     &error_s);
        if (error) {
            printf("parse error: %s\n", error_s);
            free(error_s);
            exit_code = 1;
        } else {
            exit_code |= translate_key(&key, &mask, exact);
        }
        ofpbuf_uninit(&key);
        ofpbuf_uninit(&mask);
    }
    ds_destroy(&in);
    return exit_code;
}

static void
test_keys(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    exit(translate_keys(false));
}

static void
test_exact_keys(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    exit(translate_keys(true));
}

/* NSH flows, built here: odp_flow_from_string() cannot parse NSH keys.
 * Prints each flow's ODP form, then what translate_key() prints.  Masks
 * that no ODP key can carry go to dpif_bpf_flow_to_key() directly. */
static void
test_nsh_keys(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    int exit_code = 0;

    for (int i = 0; ; i++) {
        struct odp_flow_key_parms parms;
        struct flow_wildcards wc;
        struct ds s = DS_EMPTY_INITIALIZER;
        struct ofpbuf key, mask;
        struct flow flow;
        bool exact = false;
        bool direct = false;

        memset(&flow, 0, sizeof flow);
        flow.packet_type = htonl(PT_ETH);
        flow.in_port.odp_port = u32_to_odp(1);
        flow.dl_src = (struct eth_addr) ETH_ADDR_C(00, 01, 02, 03, 04, 05);
        flow.dl_dst = (struct eth_addr) ETH_ADDR_C(10, 11, 12, 13, 14, 15);
        flow.dl_type = htons(ETH_TYPE_NSH);
        flow.nsh.ttl = 63;
        flow.nsh.mdtype = NSH_M_TYPE1;
        flow.nsh.np = NSH_P_ETHERNET;
        flow.nsh.path_hdr = htonl(0x100 << NSH_SPI_SHIFT | 2);
        for (int j = 0; j < 4; j++) {
            flow.nsh.context[j] = htonl(0x01020304 * (j + 1));
        }

        memset(&wc, 0, sizeof wc);
        WC_MASK_FIELD(&wc, in_port);
        WC_MASK_FIELD(&wc, recirc_id);
        WC_MASK_FIELD(&wc, packet_type);
        WC_MASK_FIELD(&wc, dl_src);
        WC_MASK_FIELD(&wc, dl_dst);
        WC_MASK_FIELD(&wc, dl_type);
        switch (i) {
        case 0:
            printf("# MD type 1, every field exact (no mask).\n");
            exact = true;
            break;
        case 1:
            printf("# The megaflow of a match on SPI and SI.\n");
            wc.masks.nsh.path_hdr = OVS_BE32_MAX;
            break;
        case 2:
            printf("# The megaflow of decap(): the next protocol.\n");
            wc.masks.nsh.np = UINT8_MAX;
            break;
        case 3:
            printf("# Part of the context, without the MD type.\n");
            wc.masks.nsh.context[0] = htonl(0xffff0000);
            break;
        case 4:
            printf("# MD type 2: no context; flags and TTL.\n");
            flow.nsh.mdtype = NSH_M_TYPE2;
            flow.nsh.flags = 1;
            memset(flow.nsh.context, 0, sizeof flow.nsh.context);
            exact = true;
            break;
        case 5:
            printf("# Rejected: NSH fields of a flow that is not NSH.\n");
            flow.dl_type = htons(ETH_TYPE_IP);
            wc.masks.nsh.path_hdr = OVS_BE32_MAX;
            direct = true;
            break;
        case 6:
            printf("# Rejected: NSH fields without the exact ethertype.\n");
            wc.masks.dl_type = htons(0xff00);
            wc.masks.nsh.path_hdr = OVS_BE32_MAX;
            break;
        case 7:
            printf("# Rejected: an NSH flow that matches an IPv6 "
                   "address.\n");
            wc.masks.ipv6_dst = in6addr_exact;
            direct = true;
            break;
        default:
            exit(exit_code);
        }
        if (exact) {
            flow_wildcards_init_for_packet(&wc, &flow);
        }
        if (direct) {
            struct ovs_bpf_flow_key bkey, bmask;

            printf("%s\n", (dpif_bpf_flow_to_key(&flow, &wc, &bkey, &bmask)
                            ? "EINVAL" : "accepted"));
            continue;
        }

        ofpbuf_init(&key, 0);
        ofpbuf_init(&mask, 0);
        memset(&parms, 0, sizeof parms);
        parms.flow = &flow;
        parms.mask = &wc.masks;
        parms.support.max_vlan_headers = 2;
        parms.support.recirc = true;
        odp_flow_key_from_flow(&parms, &key);
        parms.key_buf = &key;
        odp_flow_key_from_mask(&parms, &mask);
        odp_flow_format(key.data, key.size, exact ? NULL : mask.data,
                        exact ? 0 : mask.size, NULL, &s, false);
        printf("in: %s\n", ds_cstr(&s));
        exit_code |= translate_key(&key, &mask, exact);
        ds_destroy(&s);
        ofpbuf_uninit(&key);
        ofpbuf_uninit(&mask);
    }
}

/* Translates 'actions' and prints the slots, or the error.  Also checks that
 * unused slots are zeroed. */
static void
print_translation(const struct ofpbuf *actions)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    uint32_t n = UINT32_MAX;
    int error;

    memset(slots, 0xcc, sizeof slots);
    error = dpif_bpf_odp_to_actions(actions->data, actions->size, slots, &n);
    if (error) {
        printf("%s\n", error_name(error));
    } else {
        struct ds out = DS_EMPTY_INITIALIZER;

        ovs_assert(n <= OVS_BPF_MAX_ACTIONS);
        for (uint32_t i = n; i < OVS_BPF_MAX_ACTIONS; i++) {
            ovs_assert(is_all_zeros(&slots[i], sizeof slots[i]));
        }
        dpif_bpf_format_actions(&out, slots, n);
        printf("%"PRIu32": %s\n", n, ds_cstr(&out));
        ds_destroy(&out);
    }
}

/* Translates the actions on each input line. */
static void
test_actions(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    int exit_code = 0;
    struct ds in;

    ds_init(&in);
    while (!ds_get_test_line(&in, stdin)) {
        struct ofpbuf actions;
        int error;

        ofpbuf_init(&actions, 0);
        error = odp_actions_from_string(ds_cstr(&in), NULL, &actions);
        if (error) {
            printf("parse error: %s\n", ovs_strerror(error));
            exit_code = 1;
        } else {
            print_translation(&actions);
        }
        ofpbuf_uninit(&actions);
    }
    ds_destroy(&in);
    exit(exit_code);
}

/* For each input line "KEY | ACTIONS": whether KEY is the key of a layer 3
 * flow (dpif_bpf_odp_to_l3_match()), its match if it is, and whether
 * ACTIONS can run on its packets (dpif_bpf_odp_check_l3_actions()). */
static void
test_l3_flows(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    int exit_code = 0;
    struct ds in;

    ds_init(&in);
    while (!ds_get_test_line(&in, stdin)) {
        struct ofpbuf key, mask, actions;
        char *line = ds_cstr(&in);
        char *bar = strchr(line, '|');
        char *error_s = NULL;
        struct match match;
        int error;

        if (!bar) {
            printf("no '|' in the line\n");
            exit_code = 1;
            continue;
        }
        *bar = '\0';
        ofpbuf_init(&key, 0);
        ofpbuf_init(&mask, 0);
        ofpbuf_init(&actions, 0);
        if (odp_flow_from_string(line, NULL, &key, &mask, &error_s)
            || odp_actions_from_string(bar + 1 + strspn(bar + 1, " "), NULL,
                                       &actions)) {
            printf("parse error: %s\n", error_s ? error_s : "actions");
            free(error_s);
            exit_code = 1;
        } else {
            error = dpif_bpf_odp_to_l3_match(key.data, key.size, mask.data,
                                             mask.size, &match);
            if (error) {
                printf("%s\n", error_name(error));
            } else {
                char *s = match_to_string(&match, NULL, OFP_DEFAULT_PRIORITY);

                error = dpif_bpf_odp_check_l3_actions(match.flow.packet_type,
                                                      actions.data,
                                                      actions.size);
                printf("%s -> %s\n", s, error ? error_name(error) : "ok");
                free(s);
            }
        }
        ofpbuf_uninit(&key);
        ofpbuf_uninit(&mask);
        ofpbuf_uninit(&actions);
    }
    ds_destroy(&in);
    exit(exit_code);
}

static void
put_hash(struct ofpbuf *b, uint32_t alg, uint32_t basis)
{
    struct ovs_action_hash hash = { .hash_alg = alg, .hash_basis = basis };

    nl_msg_put_unspec(b, OVS_ACTION_ATTR_HASH, &hash, sizeof hash);
}

static void
put_push_eth(struct ofpbuf *b)
{
    struct ovs_action_push_eth push_eth = {
        .addresses = {
            .eth_src = ETH_ADDR_C(00, 01, 02, 03, 04, 05),
            .eth_dst = ETH_ADDR_C(10, 11, 12, 13, 14, 15),
        },
    };

    nl_msg_put_unspec(b, OVS_ACTION_ATTR_PUSH_ETH, &push_eth,
                      sizeof push_eth);
}

/* NSH attributes for put_nsh(). */
enum {
    NSH_MD1 = 1 << 0,           /* An MD type 1 context attribute. */
    NSH_MD2 = 1 << 1,           /* An MD type 2 TLV attribute. */
    NSH_MASKED = 1 << 2,        /* Values with masks, for set_masked(). */
    NSH_SHORT_BASE = 1 << 3,    /* A base attribute 4 bytes short. */
};

/* Puts OVS_KEY_ATTR_NSH with a base header of MD type 'mdtype' (SPI 0x101,
 * SI 4, TTL 7) and what 'flags' says. */
static void
put_nsh(struct ofpbuf *b, uint8_t mdtype, unsigned int flags)
{
    struct ovs_nsh_key_base base = {
        .ttl = 7, .mdtype = mdtype, .np = NSH_P_ETHERNET,
        .path_hdr = htonl(0x101 << NSH_SPI_SHIFT | 4),
    };
    struct ovs_nsh_key_base base_mask = { .path_hdr = htonl(NSH_SI_MASK) };
    struct ovs_nsh_key_md1 md1[2] = {
        { .context = { htonl(1), htonl(2), htonl(3), htonl(4) } },
        { .context = { OVS_BE32_MAX, 0, 0, 0 } },
    };
    static const uint8_t md2[8] = { 0, 1, 4, 1, 0xa, 0xb, 0xc, 0xd };
    size_t ofs = nl_msg_start_nested(b, OVS_KEY_ATTR_NSH);
    size_t base_len = flags & NSH_SHORT_BASE ? 4 : sizeof base;

    if (flags & NSH_MASKED) {
        char *p = nl_msg_put_unspec_uninit(b, OVS_NSH_KEY_ATTR_BASE,
                                           2 * sizeof base);

        memcpy(p, &base, sizeof base);
        memcpy(p + sizeof base, &base_mask, sizeof base_mask);
    } else {
        nl_msg_put_unspec(b, OVS_NSH_KEY_ATTR_BASE, &base, base_len);
    }
    if (flags & NSH_MD1) {
        nl_msg_put_unspec(b, OVS_NSH_KEY_ATTR_MD1, md1,
                          (flags & NSH_MASKED ? 2 : 1) * sizeof md1[0]);
    }
    if (flags & NSH_MD2) {
        nl_msg_put_unspec(b, OVS_NSH_KEY_ATTR_MD2, md2, sizeof md2);
    }
    nl_msg_end_nested(b, ofs);
}

static void
put_push_nsh(struct ofpbuf *b, uint8_t mdtype, unsigned int flags)
{
    size_t ofs = nl_msg_start_nested(b, OVS_ACTION_ATTR_PUSH_NSH);

    put_nsh(b, mdtype, flags);
    nl_msg_end_nested(b, ofs);
}

static void
put_set_nsh(struct ofpbuf *b, uint8_t mdtype, unsigned int flags)
{
    size_t ofs = nl_msg_start_nested(b, (flags & NSH_MASKED
                                         ? OVS_ACTION_ATTR_SET_MASKED
                                         : OVS_ACTION_ATTR_SET));

    put_nsh(b, mdtype, flags);
    nl_msg_end_nested(b, ofs);
}

/* NSH action lists, as ofproto's encap() and decap() make them and as they
 * are refused.  Sets '*name' for lists that format_odp_actions() cannot
 * print (it reads past a malformed push_nsh). */
static bool
put_nsh_case(struct ofpbuf *b, int i, const char **name)
{
    struct ovs_action_add_mpls add = {
        .mpls_lse = htonl(10 << MPLS_LABEL_SHIFT | MPLS_BOS_MASK | 64),
        .mpls_ethertype = htons(ETH_TYPE_MPLS),
    };

    switch (i) {
    /* Userspace only (E2BIG). */
    case 0:
        /* encap(nsh(md_type=1)),encap(ethernet). */
        put_push_nsh(b, NSH_M_TYPE1, NSH_MD1);
        put_push_eth(b);
        break;
    case 1:
        /* encap(nsh(md_type=2)) without and with TLVs. */
        put_push_nsh(b, NSH_M_TYPE2, 0);
        put_push_eth(b);
        break;
    case 2:
        put_push_nsh(b, NSH_M_TYPE2, NSH_MD2);
        put_push_eth(b);
        break;
    case 3:
        /* decap(),decap(): the recirculation follows pop_nsh. */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_NSH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_RECIRC, 1);
        return true;
    case 4:
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_NSH);
        return true;
    case 5:
        /* set_field of NSH fields. */
        put_set_nsh(b, NSH_M_TYPE1, NSH_MD1);
        break;
    case 6:
        put_set_nsh(b, NSH_M_TYPE1, NSH_MASKED);
        break;
    case 7:
        put_set_nsh(b, NSH_M_TYPE1, NSH_MASKED | NSH_MD1);
        break;
    case 8:
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        put_set_nsh(b, NSH_M_TYPE1, NSH_MASKED);
        put_push_eth(b);
        break;
    case 9:
        /* NSH over IPv4 that MPLS carried. */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_be16(b, OVS_ACTION_ATTR_POP_MPLS, htons(ETH_TYPE_IP));
        put_push_nsh(b, NSH_M_TYPE1, NSH_MD1);
        put_push_eth(b);
        break;

    /* Refused (EINVAL). */
    case 10:
        /* An output without an Ethernet header. */
        put_push_nsh(b, NSH_M_TYPE1, NSH_MD1);
        break;
    case 11:
        /* pop_nsh of an Ethernet frame. */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_NSH);
        break;
    case 12:
        /* After pop_nsh, anything but a recirculation. */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_NSH);
        break;
    case 13:
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_NSH);
        put_push_eth(b);
        break;
    case 14:
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_NSH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_RECIRC, 1);
        break;
    case 15:
        /* push_nsh on what pop_eth left (the flow's ethertype)... */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        put_push_nsh(b, NSH_M_TYPE1, NSH_MD1);
        put_push_eth(b);
        break;
    case 16:
        /* ...and on an MPLS packet without an Ethernet header. */
        nl_msg_put_unspec(b, OVS_ACTION_ATTR_ADD_MPLS, &add, sizeof add);
        put_push_nsh(b, NSH_M_TYPE1, NSH_MD1);
        put_push_eth(b);
        break;
    case 17:
        /* set(nsh) of an MPLS packet. */
        nl_msg_put_unspec(b, OVS_ACTION_ATTR_ADD_MPLS, &add, sizeof add);
        put_set_nsh(b, NSH_M_TYPE1, NSH_MASKED);
        put_push_eth(b);
        break;
    case 18:
        /* Bad arguments. */
        *name = "push_nsh(mdtype=2 with an MD type 1 context),push_eth,1";
        put_push_nsh(b, NSH_M_TYPE2, NSH_MD1);
        put_push_eth(b);
        break;
    case 19:
        *name = "push_nsh(mdtype=1 without context),push_eth,1";
        put_push_nsh(b, NSH_M_TYPE1, 0);
        put_push_eth(b);
        break;
    case 20:
        *name = "set(nsh(a 4-byte base header)),1";
        put_set_nsh(b, NSH_M_TYPE1, NSH_SHORT_BASE);
        break;
    case 21:
        *name = "set(nsh(mdtype=2 with TLVs)),1";
        put_set_nsh(b, NSH_M_TYPE2, NSH_MD2);
        break;

    /* Userspace only (E2BIG) although BPF runs the pairs: a push_nsh that
     * push_eth does not follow right away, a pair inside clone(), a pop
     * that is not the flow's first action. */
    case 22:
        put_push_nsh(b, NSH_M_TYPE1, NSH_MD1);
        put_set_nsh(b, NSH_M_TYPE1, NSH_MASKED);
        put_push_eth(b);
        break;
    case 23: {
        size_t ofs = nl_msg_start_nested(b, OVS_ACTION_ATTR_CLONE);

        put_push_nsh(b, NSH_M_TYPE1, NSH_MD1);
        put_push_eth(b);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 2);
        nl_msg_end_nested(b, ofs);
        break;
    }
    case 24:
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 2);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_NSH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_RECIRC, 1);
        return true;
    case 25:
        /* BPF: set(nsh) of an NSH Ethernet frame, and the pairs around
         * it. */
        put_set_nsh(b, NSH_M_TYPE1, NSH_MASKED | NSH_MD1);
        put_push_nsh(b, NSH_M_TYPE2, NSH_MD2);
        put_push_eth(b);
        break;
    default:
        return false;
    }
    nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 1);
    return true;
}

/* pop_eth before outputs to a layer 3 port (VXLAN-GPE), as ofproto gives
 * it (after the set(tunnel(...))), which BPF runs, and what BPF does not
 * run after it. */
static bool
put_l3_port_case(struct ofpbuf *b, int i)
{
    struct flow_tnl tnl;
    struct ovs_key_ipv4 ipv4 = {
        .ipv4_src = htonl(0x0a000001),
        .ipv4_dst = htonl(0x0a000002),
        .ipv4_proto = 1,
        .ipv4_ttl = 63,
    };
    size_t ofs;

    memset(&tnl, 0, sizeof tnl);
    tnl.ip_dst = htonl(0xac1f0101);         /* 172.31.1.1 */
    tnl.ip_ttl = 64;
    tnl.flags = FLOW_TNL_F_DONT_FRAGMENT | FLOW_TNL_F_KEY;

    switch (i) {
    case 0:
        /* BPF: the tunnel, pop_eth, the output. */
        odp_put_tunnel_action(&tnl, b, "vxlan");
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 3);
        break;
    case 1:
        /* BPF: the tunnel after pop_eth, two outputs. */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        odp_put_tunnel_action(&tnl, b, "vxlan");
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 3);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 4);
        break;
    case 2: {
        /* Userspace only: push_eth after it... */
        struct ovs_action_push_eth push_eth = {
            .addresses = {
                .eth_src = ETH_ADDR_C(00, 01, 02, 03, 04, 05),
                .eth_dst = ETH_ADDR_C(10, 11, 12, 13, 14, 15),
            },
        };

        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 3);
        nl_msg_put_unspec(b, OVS_ACTION_ATTR_PUSH_ETH, &push_eth,
                          sizeof push_eth);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 2);
        break;
    }
    case 3:
        /* ...or a recirculation (in ovs-vswitchd's layer 3 flows). */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_RECIRC, 1);
        break;
    case 4:
        /* Refused: a rewrite after it... */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        ofs = nl_msg_start_nested(b, OVS_ACTION_ATTR_SET);
        nl_msg_put_unspec(b, OVS_KEY_ATTR_IPV4, &ipv4, sizeof ipv4);
        nl_msg_end_nested(b, ofs);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 3);
        break;
    case 5:
        /* ...a second pop_eth... */
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 3);
        break;
    case 6:
        /* ...and the output of a pop_eth in clone(), which BPF does not
         * run (the clone could not put the header back). */
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 2);
        ofs = nl_msg_start_nested(b, OVS_ACTION_ATTR_CLONE);
        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        nl_msg_put_u32(b, OVS_ACTION_ATTR_OUTPUT, 3);
        nl_msg_end_nested(b, ofs);
        break;
    case 7:
    case 8: {
        /* The native tunnel output to a VXLAN-GPE port: BPF pushes a GPE
         * header that carries IPv4 in place of the Ethernet header; a
         * plain VXLAN header on a packet without one is pushed by
         * ovs-vswitchd (userspace only). */
        static const char *tnl_push =
            "tnl_push(tnl_port(4),header(size=50,type=4,"
            "eth(dst=aa:bb:cc:dd:ee:ff,src=11:22:33:44:55:66,"
            "dl_type=0x0800),ipv4(src=172.31.1.100,dst=172.31.1.1,"
            "proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,"
            "csum=0x0),vxlan(flags=%s,vni=0x0)),out_port(1)),1";
        char *s = xasprintf(tnl_push, i == 7 ? "0xc000001" : "0x8000000");

        nl_msg_put_flag(b, OVS_ACTION_ATTR_POP_ETH);
        ovs_assert(!odp_actions_from_string(s, NULL, b));
        free(s);
        break;
    }
    default:
        return false;
    }
    return true;
}

/* Actions that odp_actions_from_string() cannot parse (hash, MPLS, Ethernet
 * push and pop, NSH), built here as Netlink attributes, with the ODP form
 * in the output. */
static void
test_built_actions(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    for (int i = 0; ; i++) {
        struct ovs_action_push_mpls mpls = {
            .mpls_lse = htonl(10 << MPLS_LABEL_SHIFT | MPLS_BOS_MASK | 64),
            .mpls_ethertype = htons(ETH_TYPE_MPLS),
        };
        struct ds s = DS_EMPTY_INITIALIZER;
        const char *name = NULL;
        struct ofpbuf b;
        size_t ofs;

        ofpbuf_init(&b, 0);
        switch (i) {
        case 0:
            put_hash(&b, OVS_HASH_ALG_L4, 5);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_RECIRC, 0x10);
            break;
        case 1:
            /* Symmetric hash: userspace only. */
            put_hash(&b, OVS_HASH_ALG_SYM_L4, 0);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_RECIRC, 1);
            break;
        case 2:
            /* Unknown algorithm. */
            put_hash(&b, 7, 0);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_RECIRC, 1);
            break;
        case 3:
            /* Recirculation in a clone with actions after it. */
            ofs = nl_msg_start_nested(&b, OVS_ACTION_ATTR_CLONE);
            put_hash(&b, OVS_HASH_ALG_L4, 0);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_RECIRC, 1);
            nl_msg_end_nested(&b, ofs);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 2);
            break;
        case 4:
            /* The same as the last action: fine. */
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 2);
            ofs = nl_msg_start_nested(&b, OVS_ACTION_ATTR_CLONE);
            put_hash(&b, OVS_HASH_ALG_L4, 0);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_RECIRC, 1);
            nl_msg_end_nested(&b, ofs);
            break;
        case 5:
            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_PUSH_MPLS, &mpls,
                              sizeof mpls);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        case 6:
            nl_msg_put_be16(&b, OVS_ACTION_ATTR_POP_MPLS,
                            htons(ETH_TYPE_IP));
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        case 7: {
            struct ovs_action_push_eth push_eth = {
                .addresses = {
                    .eth_src = ETH_ADDR_C(00, 01, 02, 03, 04, 05),
                    .eth_dst = ETH_ADDR_C(10, 11, 12, 13, 14, 15),
                },
            };

            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_PUSH_ETH, &push_eth,
                              sizeof push_eth);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        }
        case 8:
            nl_msg_put_flag(&b, OVS_ACTION_ATTR_POP_ETH);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        case 9:
        case 10:
        case 11: {
            /* MPLS decap to IP then encap: ovs-vswitchd runs them; encap
             * of an Ethernet frame (add_mpls, push_eth): BPF, one slot;
             * a packet without an Ethernet header is not sent. */
            struct ovs_action_push_eth push_eth = {
                .addresses = {
                    .eth_src = ETH_ADDR_C(00, 01, 02, 03, 04, 05),
                    .eth_dst = ETH_ADDR_C(10, 11, 12, 13, 14, 15),
                },
            };
            struct ovs_action_add_mpls add = {
                .mpls_lse = mpls.mpls_lse,
                .mpls_ethertype = htons(ETH_TYPE_MPLS),
            };

            if (i == 9) {
                nl_msg_put_flag(&b, OVS_ACTION_ATTR_POP_ETH);
                nl_msg_put_be16(&b, OVS_ACTION_ATTR_POP_MPLS,
                                htons(ETH_TYPE_IP));
            } else {
                nl_msg_put_unspec(&b, OVS_ACTION_ATTR_ADD_MPLS, &add,
                                  sizeof add);
            }
            if (i != 11) {
                nl_msg_put_unspec(&b, OVS_ACTION_ATTR_PUSH_ETH, &push_eth,
                                  sizeof push_eth);
            }
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        }
        case 12:
            /* decap() of MPLS that carries IP: the layer 3 packet
             * recirculates in ovs-vswitchd. */
            nl_msg_put_flag(&b, OVS_ACTION_ATTR_POP_ETH);
            nl_msg_put_be16(&b, OVS_ACTION_ATTR_POP_MPLS, htons(ETH_TYPE_IP));
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_RECIRC, 1);
            break;
        case 13:
            /* pop_mpls to a VLAN ethertype: ovs-vswitchd runs it. */
            nl_msg_put_be16(&b, OVS_ACTION_ATTR_POP_MPLS,
                            htons(ETH_TYPE_VLAN_8021Q));
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        case 14:
            /* Two labels pushed, one popped: BPF. */
            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_PUSH_MPLS, &mpls,
                              sizeof mpls);
            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_PUSH_MPLS, &mpls,
                              sizeof mpls);
            nl_msg_put_be16(&b, OVS_ACTION_ATTR_POP_MPLS,
                            htons(ETH_TYPE_MPLS));
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        case 15:
            /* A push in a clone with actions after it: the BPF clone()
             * cannot restore a packet whose length changed. */
            ofs = nl_msg_start_nested(&b, OVS_ACTION_ATTR_CLONE);
            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_PUSH_MPLS, &mpls,
                              sizeof mpls);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            nl_msg_end_nested(&b, ofs);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 2);
            break;
        case 16: {
            /* set(mpls) of a packet without an Ethernet header (after
             * add_mpls): ovs-vswitchd runs it. */
            struct ovs_action_add_mpls add = {
                .mpls_lse = mpls.mpls_lse,
                .mpls_ethertype = htons(ETH_TYPE_MPLS),
            };
            struct ovs_action_push_eth push_eth = {
                .addresses = {
                    .eth_src = ETH_ADDR_C(00, 01, 02, 03, 04, 05),
                    .eth_dst = ETH_ADDR_C(10, 11, 12, 13, 14, 15),
                },
            };
            struct ovs_key_mpls lse = { .mpls_lse = mpls.mpls_lse };

            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_ADD_MPLS, &add, sizeof add);
            ofs = nl_msg_start_nested(&b, OVS_ACTION_ATTR_SET);
            nl_msg_put_unspec(&b, OVS_KEY_ATTR_MPLS, &lse, sizeof lse);
            nl_msg_end_nested(&b, ofs);
            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_PUSH_ETH, &push_eth,
                              sizeof push_eth);
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        }
        case 17:
        case 18: {
            /* decap(),decap() of MPLS that carries Ethernet: BPF, one
             * slot, when the recirculation of decap() follows; otherwise
             * ovs-vswitchd runs it. */
            nl_msg_put_flag(&b, OVS_ACTION_ATTR_POP_ETH);
            nl_msg_put_be16(&b, OVS_ACTION_ATTR_POP_MPLS,
                            htons(ETH_TYPE_TEB));
            if (i == 17) {
                nl_msg_put_u32(&b, OVS_ACTION_ATTR_RECIRC, 1);
            } else {
                nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            }
            break;
        }
        case 19:
        case 20: {
            /* encap(mpls),encap(ethernet) inside clone() (ovs-vswitchd),
             * and multicast MPLS with set(mpls) after it (BPF). */
            struct ovs_action_add_mpls add = {
                .mpls_lse = mpls.mpls_lse,
                .mpls_ethertype = htons(ETH_TYPE_MPLS_MCAST),
            };
            struct ovs_key_mpls lse = { .mpls_lse = htonl(0x2140) };

            if (i == 19) {
                ofs = nl_msg_start_nested(&b, OVS_ACTION_ATTR_CLONE);
            }
            nl_msg_put_unspec(&b, OVS_ACTION_ATTR_ADD_MPLS, &add, sizeof add);
            put_push_eth(&b);
            if (i == 19) {
                nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 2);
                nl_msg_end_nested(&b, ofs);
            } else {
                ofs = nl_msg_start_nested(&b, OVS_ACTION_ATTR_SET);
                nl_msg_put_unspec(&b, OVS_KEY_ATTR_MPLS, &lse, sizeof lse);
                nl_msg_end_nested(&b, ofs);
            }
            nl_msg_put_u32(&b, OVS_ACTION_ATTR_OUTPUT, 1);
            break;
        }
        default:
            /* 26 NSH cases, then the layer 3 port ones. */
            if (i - 21 < 26 ? !put_nsh_case(&b, i - 21, &name)
                : !put_l3_port_case(&b, i - 21 - 26)) {
                ofpbuf_uninit(&b);
                exit(0);
            }
            break;
        }

        if (name) {
            ds_put_cstr(&s, name);
        } else {
            format_odp_actions(&s, b.data, b.size, NULL);
        }
        printf("%s -> ", ds_cstr(&s));
        print_translation(&b);
        ds_destroy(&s);
        ofpbuf_uninit(&b);
    }
}

/* Prints 'n' outputs, comma-separated, for the slot-limit tests. */
static void
test_gen_outputs(struct ovs_cmdl_context *ctx)
{
    int n = atoi(ctx->argv[1]);

    for (int i = 0; i < n; i++) {
        printf("%s%d", i ? "," : "", i + 1);
    }
    putchar('\n');
}

/* Returns the descriptor number, in process 'pid', of the TAP device
 * 'tap_name' (tun descriptors say "iff: <name>" in their fdinfo), or -1. */
static int
find_tap_fd(pid_t pid, const char *tap_name)
{
    char *dir_name = xasprintf("/proc/%ld/fdinfo", (long) pid);
    DIR *dir = opendir(dir_name);
    struct dirent *de;
    int found = -1;

    if (!dir) {
        ovs_fatal(errno, "%s", dir_name);
    }
    while (found < 0 && (de = readdir(dir)) != NULL) {
        char *name = xasprintf("%s/%s", dir_name, de->d_name);
        FILE *f = fopen(name, "r");
        char line[128];

        while (f && fgets(line, sizeof line, f)) {
            char iff[IFNAMSIZ + 1];

            if (sscanf(line, "iff: %16s", iff) == 1
                && !strcmp(iff, tap_name)) {
                found = atoi(de->d_name);
                break;
            }
        }
        if (f) {
            fclose(f);
        }
        free(name);
    }
    closedir(dir);
    free(dir_name);
    return found;
}

/* send-downcall PIN_DIR TAP PID IN_PORT OUT_PORT ETH_DST good|bad
 *
 * Writes to the downcall TAP device 'TAP' of ovs-vswitchd (process PID) one
 * downcall frame: an Ethernet frame to ETH_DST with ethertype 0x88b5, whose
 * only action is OUTPUT to odp port OUT_PORT.  With "good", the trailer
 * carries the datapath's secret, read from the 'dp_config' map pinned in
 * PIN_DIR; with "bad", the same secret with one bit flipped, as a forger
 * who cannot read the map would send.  The TAP is opened by duplicating
 * ovs-vswitchd's descriptor (pidfd_getfd()): a TAP that is not persistent
 * cannot be attached twice. */
static void
test_send_downcall(struct ovs_cmdl_context *ctx)
{
    const char *pin_dir = ctx->argv[1];
    const char *tap_name = ctx->argv[2];
    pid_t pid = atoi(ctx->argv[3]);
    uint32_t in_port = atoi(ctx->argv[4]);
    uint32_t out_port = atoi(ctx->argv[5]);
    bool good = !strcmp(ctx->argv[7], "good");
    struct ovs_bpf_dp_config config;
    struct iovec iov[DPIF_BPF_DOWNCALL_IOVS];
    static const uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN];
    struct ovs_bpf_downcall dc;
    struct ovs_bpf_action action;
    struct eth_header eth;
    struct eth_addr dst;
    uint8_t frame[256];
    size_t ofs = 0, n_iov;
    uint32_t zero = 0;
    int map_fd, pidfd, tap_fd, fd;
    char *path;

    if (!eth_addr_from_string(ctx->argv[6], &dst)) {
        ovs_fatal(0, "%s: bad Ethernet address", ctx->argv[6]);
    }

    path = xasprintf("%s/%s", pin_dir, OVS_BPF_MAP_DP_CONFIG);
    map_fd = bpf_obj_get(path);
    if (map_fd < 0 || bpf_map_lookup_elem(map_fd, &zero, &config)) {
        ovs_fatal(errno, "%s", path);
    }
    free(path);
    close(map_fd);

    fd = find_tap_fd(pid, tap_name);
    if (fd < 0) {
        ovs_fatal(0, "process %ld has no descriptor for %s", (long) pid,
                  tap_name);
    }
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    pidfd = syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        ovs_fatal(errno, "pidfd_open");
    }
    tap_fd = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    if (tap_fd < 0) {
        ovs_fatal(errno, "pidfd_getfd");
    }
#else
    ovs_fatal(0, "this system has no pidfd_getfd()");
#endif

    /* The packet. */
    eth.eth_dst = dst;
    eth.eth_src = (struct eth_addr) ETH_ADDR_C(02, 00, 00, 00, 00, 01);
    eth.eth_type = htons(0x88b5);
    memcpy(frame, &eth, sizeof eth);
    ofs = sizeof eth;
    memset(&frame[ofs], 0, 46);
    ovs_strlcpy((char *) &frame[ofs], "ovs-bpf downcall test", 46);
    ofs += 46;

    /* Its action. */
    memset(&action, 0, sizeof action);
    action.type = OVS_BPF_ACTION_OUTPUT;
    action.u.output.port = out_port;

    /* The trailer. */
    memset(&dc, 0, sizeof dc);
    dc.magic = OVS_BPF_DOWNCALL_MAGIC;
    dc.abi_version = OVS_BPF_ABI_VERSION;
    memcpy(dc.secret, config.secret, sizeof dc.secret);
    if (!good) {
        dc.secret[0] ^= 1;
    }
    dc.in_port = in_port;
    dc.n_actions = 1;

    n_iov = dpif_bpf_downcall_iov(iov, frame, ofs, &action, 1, key_meta,
                                  &dc);
    if (writev(tap_fd, iov, n_iov) < 0) {
        ovs_fatal(errno, "write to %s", tap_name);
    }
    close(tap_fd);
    close(pidfd);
}

/* Puts into 'b' an Ethernet header and an IPv4 or IPv6 header from
 * 10.0.0.1 (or 2001:db8::1) to 10.0.0.2 (2001:db8::2) of protocol (next
 * header) 'proto' and payload length 'len'.  Returns the IP header, which
 * the next put into 'b' may move. */
static void *
put_eth_ip(struct ofpbuf *b, bool ipv6, uint8_t proto, size_t len)
{
    struct eth_header *eth;

    eth = ofpbuf_put_zeros(b, sizeof *eth);
    eth->eth_dst = (struct eth_addr) ETH_ADDR_C(02, 00, 00, 00, 00, 02);
    eth->eth_src = (struct eth_addr) ETH_ADDR_C(02, 00, 00, 00, 00, 01);
    if (!ipv6) {
        struct ip_header *ip = ofpbuf_put_zeros(b, sizeof *ip);

        eth->eth_type = htons(ETH_TYPE_IP);
        ip->ip_ihl_ver = IP_IHL_VER(5, 4);
        ip->ip_tot_len = htons(IP_HEADER_LEN + len);
        ip->ip_ttl = 64;
        ip->ip_proto = proto;
        put_16aligned_be32(&ip->ip_src, htonl(0x0a000001));
        put_16aligned_be32(&ip->ip_dst, htonl(0x0a000002));
        ip->ip_csum = csum(ip, sizeof *ip);
        return ip;
    } else {
        struct ovs_16aligned_ip6_hdr *ip6 = ofpbuf_put_zeros(b, sizeof *ip6);
        struct in6_addr src, dst;

        eth->eth_type = htons(ETH_TYPE_IPV6);
        put_16aligned_be32(&ip6->ip6_flow, htonl(6 << 28));
        ip6->ip6_plen = htons(len);
        ip6->ip6_nxt = proto;
        ip6->ip6_hlim = 64;
        ovs_assert(inet_pton(AF_INET6, "2001:db8::1", &src) == 1);
        ovs_assert(inet_pton(AF_INET6, "2001:db8::2", &dst) == 1);
        memcpy(&ip6->ip6_src, &src, sizeof src);
        memcpy(&ip6->ip6_dst, &dst, sizeof dst);
        return ip6;
    }
}

/* Builds an Ethernet + IPv4 or IPv6 + TCP or UDP packet from 10.0.0.1 (or
 * 2001:db8::1) to 10.0.0.2 (2001:db8::2) into 'b', whose checksum field
 * holds the folded pseudo-header sum, what a CHECKSUM_PARTIAL skb holds.
 * Stores the checksum's start and field offsets from the Ethernet header
 * in '*startp' and '*offsetp'. */
static void
build_partial_packet(struct ofpbuf *b, bool ipv6, uint8_t proto,
                     uint16_t *startp, uint16_t *offsetp)
{
    static const char payload[] = "partial checksum";
    size_t l4_len = (proto == IPPROTO_TCP ? TCP_HEADER_LEN : UDP_HEADER_LEN)
                    + sizeof payload;
    void *ip = put_eth_ip(b, ipv6, proto, l4_len);
    uint32_t pseudo;
    ovs_be16 sum;
    size_t l4_ofs;
    uint8_t *l4;

    pseudo = (ipv6 ? packet_csum_pseudoheader6(ip)
              : packet_csum_pseudoheader(ip));
    l4_ofs = b->size;
    l4 = ofpbuf_put_zeros(b, l4_len);
    if (proto == IPPROTO_TCP) {
        struct tcp_header *tcp = ALIGNED_CAST(struct tcp_header *, l4);

        tcp->tcp_src = htons(1234);
        tcp->tcp_dst = htons(80);
        tcp->tcp_ctl = TCP_CTL(TCP_ACK, 5);
        memcpy(tcp + 1, payload, sizeof payload);
        *offsetp = offsetof(struct tcp_header, tcp_csum);
    } else {
        struct udp_header *udp = ALIGNED_CAST(struct udp_header *, l4);

        udp->udp_src = htons(1234);
        udp->udp_dst = htons(53);
        udp->udp_len = htons(l4_len);
        memcpy(udp + 1, payload, sizeof payload);
        *offsetp = offsetof(struct udp_header, udp_csum);
    }
    /* Not the complement: the field holds the sum itself, which is what
     * the kernel's ~csum_tcpudp_magic() gives. */
    sum = ~csum_finish(pseudo);
    memcpy(l4 + *offsetp, &sum, sizeof sum);
    *startp = l4_ofs;
}

/* Describes the TCP or UDP checksum of 'packet', whose field is at
 * 'field_ofs' and held 'orig' before: "unchanged", or "valid" if it changed
 * into the right checksum, or the wrong value it changed into. */
static char *
l4_csum_state(const struct dp_packet *packet, const struct flow *flow,
              size_t field_ofs, ovs_be16 orig)
{
    const uint8_t *l4 = dp_packet_l4(packet);
    ovs_be16 field;

    memcpy(&field, (const uint8_t *) dp_packet_data(packet) + field_ofs,
           sizeof field);
    if (field == orig) {
        return xstrdup("unchanged");
    }
    if (l4) {
        uint32_t pseudo = (flow->dl_type == htons(ETH_TYPE_IP)
                           ? packet_csum_pseudoheader(dp_packet_l3(packet))
                           : packet_csum_pseudoheader6(dp_packet_l3(packet)));

        if (!csum_finish(csum_continue(pseudo, l4,
                                       dp_packet_l4_size(packet)))) {
            return xstrdup("valid");
        }
    }
    return xasprintf("wrong (0x%04"PRIx16")", ntohs(field));
}

/* dpif_bpf_upcall_packet() completes a checksum exactly when the upcall
 * says that the skb was CHECKSUM_PARTIAL, at the place it says, also when
 * it pushes back a VLAN tag in front of it.  Prints one line per case. */
static void
test_upcall_csum(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    static const struct {
        const char *name;
        bool ipv6;
        uint8_t proto;
        bool partial;
        bool vlan;
        bool cut;
    } cases[] = {
        { "ipv4 udp partial", false, IPPROTO_UDP, true, false, false },
        { "ipv4 tcp partial", false, IPPROTO_TCP, true, false, false },
        { "ipv6 udp partial", true, IPPROTO_UDP, true, false, false },
        { "ipv6 tcp partial vlan", true, IPPROTO_TCP, true, true, false },
        { "ipv4 udp partial vlan", false, IPPROTO_UDP, true, true, false },
        { "ipv4 udp not partial", false, IPPROTO_UDP, false, false, false },
        { "ipv6 tcp not partial vlan", true, IPPROTO_TCP, false, true,
          false },
        { "ipv4 tcp partial cut short", false, IPPROTO_TCP, true, false,
          true },
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct ovs_bpf_upcall up;
        struct dp_packet packet;
        struct ofpbuf b;
        struct flow flow;
        uint16_t start, offset;
        ovs_be16 orig;
        char *state;

        ofpbuf_init(&b, 128);
        build_partial_packet(&b, cases[i].ipv6, cases[i].proto,
                             &start, &offset);
        memcpy(&orig, (uint8_t *) b.data + start + offset, sizeof orig);

        memset(&up, 0, sizeof up);
        up.type = OVS_BPF_UPCALL_MISS;
        up.in_port = 1;
        up.pkt_len = b.size;
        up.cap_len = cases[i].cut ? b.size - 1 : b.size;
        if (cases[i].partial) {
            up.flags = OVS_BPF_UPCALL_F_CSUM_PARTIAL;
            up.csum_start = start;
            up.csum_offset = offset;
        }
        if (cases[i].vlan) {
            up.vlan_tci = htons(10 | VLAN_CFI);
            up.vlan_proto = htons(ETH_TYPE_VLAN);
        }

        dpif_bpf_upcall_packet(&up, b.data, &packet, &flow);
        state = l4_csum_state(&packet, &flow, start + offset
                              + (cases[i].vlan ? VLAN_HEADER_LEN : 0), orig);
        printf("%s: %s%s\n", cases[i].name,
               flow.vlans[0].tci ? "tagged, " : "", state);
        free(state);
        dp_packet_uninit(&packet);
        ofpbuf_uninit(&b);
    }
}

/* Builds into 'b' a GSO packet as a veth would send it up: Ethernet, IPv4
 * or IPv6 (IPv6 only: with an 8-byte extension header of type 'ext'
 * before the L4 header, if 'ext' is nonnegative), TCP (ACK, PSH, FIN,
 * CWR, sequence number 1000) or UDP, and 'n' bytes of payload. */
static void
build_gso_packet(struct ofpbuf *b, bool ipv6, int ext, uint8_t proto,
                 size_t n)
{
    size_t l4_len = (proto == IPPROTO_TCP ? TCP_HEADER_LEN : UDP_HEADER_LEN)
                    + n;
    size_t ext_len = ext >= 0 ? 8 : 0;
    uint8_t *l4;

    put_eth_ip(b, ipv6, ext >= 0 ? ext : proto, ext_len + l4_len);
    if (ext >= 0) {
        /* Next header, length 0 (8 bytes), and padding (PadN, or a type 0
         * routing header with no segments left). */
        uint8_t *e = ofpbuf_put_zeros(b, ext_len);

        e[0] = proto;
        if (ext != IPPROTO_ROUTING) {
            e[2] = 1;
            e[3] = 4;
        }
    }
    l4 = ofpbuf_put_zeros(b, l4_len);
    for (size_t i = 0; i < n; i++) {
        l4[l4_len - n + i] = i;
    }
    if (proto == IPPROTO_TCP) {
        struct tcp_header *tcp = ALIGNED_CAST(struct tcp_header *, l4);

        tcp->tcp_src = htons(1234);
        tcp->tcp_dst = htons(80);
        put_16aligned_be32(&tcp->tcp_seq, htonl(1000));
        tcp->tcp_ctl = TCP_CTL(TCP_ACK | TCP_PSH | TCP_FIN | TCP_CWR, 5);
    } else {
        struct udp_header *udp = ALIGNED_CAST(struct udp_header *, l4);

        udp->udp_src = htons(1234);
        udp->udp_dst = htons(53);
        udp->udp_len = htons(l4_len);
    }
}

struct gso_seg_aux {
    struct ds *ds;
    size_t n_seen;              /* Payload bytes in the earlier segments. */
};

/* dpif_bpf_gso_segment() callback: appends to 'aux->ds' a description of
 * segment 'seg_', on a line of its own: its IPv4 ID, IP length, TCP
 * sequence number and flags, and whether its checksums and payload bytes
 * are right (the payload of the whole packet counts up from 0). */
static void
gso_seg_describe(const struct dp_packet *seg_, void *aux_)
{
    struct gso_seg_aux *aux = aux_;
    struct dp_packet *seg = dp_packet_clone(seg_);
    const struct tcp_header *tcp;
    const uint8_t *payload;
    size_t ip_len, l4_size, n;
    bool csum_ok, data_ok;
    struct flow flow;

    flow_extract(seg, &flow);
    tcp = dp_packet_l4(seg);
    l4_size = dp_packet_l4_size(seg);
    if (flow.dl_type == htons(ETH_TYPE_IP)) {
        const struct ip_header *ip = dp_packet_l3(seg);

        ip_len = ntohs(ip->ip_tot_len);
        csum_ok = !csum(ip, IP_HEADER_LEN)
                  && !csum_finish(csum_continue(packet_csum_pseudoheader(ip),
                                                tcp, l4_size));
        ds_put_format(aux->ds, "\n  id %"PRIu16", ", ntohs(ip->ip_id));
    } else {
        const struct ovs_16aligned_ip6_hdr *ip6 = dp_packet_l3(seg);

        ip_len = IPV6_HEADER_LEN + ntohs(ip6->ip6_plen);
        csum_ok = !packet_csum_upperlayer6(ip6, tcp, IPPROTO_TCP, l4_size);
        ds_put_cstr(aux->ds, "\n  ");
    }
    if (ip_len != dp_packet_size(seg) - seg->l3_ofs) {
        ds_put_format(aux->ds, " frame of %"PRIu32" bytes WRONG",
                      dp_packet_size(seg));
    }
    n = l4_size - TCP_OFFSET(tcp->tcp_ctl) * 4;
    payload = (const uint8_t *) tcp + TCP_OFFSET(tcp->tcp_ctl) * 4;
    data_ok = true;
    for (size_t i = 0; i < n; i++) {
        data_ok = data_ok && payload[i] == (uint8_t) (aux->n_seen + i);
    }
    aux->n_seen += n;
    ds_put_format(aux->ds, "%"PRIuSIZE" bytes, seq %"PRIu32", flags %#"
                  PRIx16", checksums %s, payload %s", ip_len,
                  ntohl(get_16aligned_be32(&tcp->tcp_seq)),
                  TCP_FLAGS(tcp->tcp_ctl), csum_ok ? "ok" : "WRONG",
                  data_ok ? "ok" : "WRONG");
    dp_packet_delete(seg);
}

/* A GSO packet that goes up gets an MRU if ovs-vswitchd can cut it into
 * its segments on the way down (TCP over IPv4 and IPv6, also after IPv6
 * hop-by-hop and destination options headers), none otherwise, and the
 * segments are what the kernel's GSO would make.  Prints one line per
 * case. */
static void
test_gso(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    static const struct {
        const char *name;
        bool ipv6;
        int ext;
        uint8_t proto;
    } cases[] = {
        { "ipv4 tcp", false, -1, IPPROTO_TCP },
        { "ipv6 tcp", true, -1, IPPROTO_TCP },
        { "ipv6 hop-by-hop tcp", true, IPPROTO_HOPOPTS, IPPROTO_TCP },
        { "ipv6 dstopts tcp", true, IPPROTO_DSTOPTS, IPPROTO_TCP },
        { "ipv6 routing tcp", true, IPPROTO_ROUTING, IPPROTO_TCP },
        { "ipv4 udp", false, -1, IPPROTO_UDP },
        { "ipv6 udp", true, -1, IPPROTO_UDP },
    };

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct ds ds = DS_EMPTY_INITIALIZER;
        struct gso_seg_aux aux = { .ds = &ds };
        struct ovs_bpf_upcall up;
        struct dp_packet packet;
        struct ofpbuf b;
        struct flow flow;
        unsigned int mru;

        ofpbuf_init(&b, 3000);
        build_gso_packet(&b, cases[i].ipv6, cases[i].ext, cases[i].proto,
                         2500);
        memset(&up, 0, sizeof up);
        up.type = OVS_BPF_UPCALL_MISS;
        up.in_port = 1;
        up.pkt_len = up.cap_len = b.size;
        up.gso_size = 1000;

        dpif_bpf_upcall_packet(&up, b.data, &packet, &flow);
        mru = dpif_bpf_upcall_mru(&up, &packet);
        if (mru && !dpif_bpf_gso_segment(&packet, mru, gso_seg_describe,
                                         &aux)) {
            ds_put_cstr(&ds, " not cut");
        }
        printf("%s: mru %u%s\n", cases[i].name, mru, ds_cstr(&ds));
        ds_destroy(&ds);
        dp_packet_uninit(&packet);
        ofpbuf_uninit(&b);
    }
}

static const struct ovs_cmdl_command commands[] = {
    { "keys", NULL, 0, 0, test_keys, OVS_RO },
    { "exact-keys", NULL, 0, 0, test_exact_keys, OVS_RO },
    { "nsh-keys", NULL, 0, 0, test_nsh_keys, OVS_RO },
    { "actions", NULL, 0, 0, test_actions, OVS_RO },
    { "built-actions", NULL, 0, 0, test_built_actions, OVS_RO },
    { "l3-flows", NULL, 0, 0, test_l3_flows, OVS_RO },
    { "gen-outputs", "n", 1, 1, test_gen_outputs, OVS_RO },
    { "upcall-csum", NULL, 0, 0, test_upcall_csum, OVS_RO },
    { "gso", NULL, 0, 0, test_gso, OVS_RO },
    { "send-downcall", "pin_dir tap pid in_port out_port eth_dst good|bad",
      7, 7, test_send_downcall, OVS_RO },
    { NULL, NULL, 0, 0, NULL, OVS_RO },
};

static void
test_dpif_bpf_odp_main(int argc, char *argv[])
{
    struct ovs_cmdl_context ctx = {
        .argc = argc - 1,
        .argv = argv + 1,
    };

    set_program_name(argv[0]);

    /* "-v..." options first, for debugging: e.g. -vdpif_bpf_odp:dbg shows
     * why a flow is rejected. */
    while (ctx.argc && !strncmp(ctx.argv[0], "-v", 2)) {
        vlog_set_verbosity(ctx.argv[0][2] ? &ctx.argv[0][2] : NULL);
        ctx.argc--;
        ctx.argv++;
    }
    /* "--ct-labels": as in an ovs-vswitchd whose slow path can write
     * conntrack labels (dpif_bpf_ct_labels_enable() succeeded). */
    if (ctx.argc && !strcmp(ctx.argv[0], "--ct-labels")) {
        dpif_bpf_odp_set_ct_labels(true);
        ctx.argc--;
        ctx.argv++;
    }
    ovs_cmdl_run_command(&ctx, commands);
}

OVSTEST_REGISTER("test-dpif-bpf-odp", test_dpif_bpf_odp_main);
