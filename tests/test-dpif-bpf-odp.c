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

/* Unit tests of lib/dpif-bpf-odp.c, driven by tests/dpif-bpf-odp.at.
 *
 * Every command reads one ODP flow or action list per line from stdin (the
 * syntax of ovs-dpctl, parsed by odp-util) and prints what the translation
 * gives, so that the expected output in the .at file documents the
 * translation. */

#include <config.h>
#undef NDEBUG
#include "dpif-bpf-odp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "command-line.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/vlog.h"
#include "ovstest.h"
#include "util.h"

static const char *
error_name(int error)
{
    return (error == EINVAL ? "EINVAL"
            : error == E2BIG ? "E2BIG"
            : ovs_strerror(error));
}

/* Translates the flow on each input line to a BPF key and mask and prints
 * them, then translates them back to ODP and checks that this gives the same
 * BPF key and mask again.  With 'exact', the mask of the input is ignored:
 * the flow is translated as an exact-match key, as dpif_flow_put() without a
 * mask does (ofproto's feature probes). */
static int
translate_keys(bool exact)
{
    int exit_code = 0;
    struct ds in;

    ds_init(&in);
    while (!ds_get_test_line(&in, stdin)) {
        struct ovs_bpf_flow_key bkey, bmask, bkey2, bmask2;
        struct ofpbuf key, mask, key2, mask2;
        struct ds out = DS_EMPTY_INITIALIZER;
        char *error_s;
        int error;

        ofpbuf_init(&key, 0);
        ofpbuf_init(&mask, 0);
        ofpbuf_init(&key2, 0);
        ofpbuf_init(&mask2, 0);
        error = odp_flow_from_string(ds_cstr(&in), NULL, &key, &mask,
                                     &error_s);
        if (error) {
            printf("parse error: %s\n", error_s);
            free(error_s);
            exit_code = 1;
            goto next;
        }

        error = dpif_bpf_odp_to_key(key.data, key.size,
                                    mask.data, exact ? 0 : mask.size,
                                    &bkey, &bmask);
        if (error) {
            printf("%s\n", error_name(error));
            goto next;
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

    next:
        ds_destroy(&out);
        ofpbuf_uninit(&key);
        ofpbuf_uninit(&mask);
        ofpbuf_uninit(&key2);
        ofpbuf_uninit(&mask2);
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

/* Translates the actions on each input line and prints the slots, or the
 * error.  Also checks that unused slots are zeroed and that
 * dpif_bpf_odp_check_actions() agrees. */
static void
test_actions(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    int exit_code = 0;
    struct ds in;

    ds_init(&in);
    while (!ds_get_test_line(&in, stdin)) {
        struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
        struct ofpbuf actions;
        uint32_t n = UINT32_MAX;
        int error, check;

        ofpbuf_init(&actions, 0);
        error = odp_actions_from_string(ds_cstr(&in), NULL, &actions);
        if (error) {
            printf("parse error: %s\n", ovs_strerror(error));
            exit_code = 1;
            goto next;
        }

        memset(slots, 0xcc, sizeof slots);
        error = dpif_bpf_odp_to_actions(actions.data, actions.size,
                                        slots, &n);
        check = dpif_bpf_odp_check_actions(actions.data, actions.size);
        if (check != (error == E2BIG ? 0 : error)) {
            printf("check_actions disagrees: %s\n", error_name(check));
            exit_code = 1;
        }
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

    next:
        ofpbuf_uninit(&actions);
    }
    ds_destroy(&in);
    exit(exit_code);
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

static const struct ovs_cmdl_command commands[] = {
    { "keys", NULL, 0, 0, test_keys, OVS_RO },
    { "exact-keys", NULL, 0, 0, test_exact_keys, OVS_RO },
    { "actions", NULL, 0, 0, test_actions, OVS_RO },
    { "gen-outputs", "n", 1, 1, test_gen_outputs, OVS_RO },
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
    vlog_set_levels_from_string_assert("dpif_bpf_odp:console:off");
    ovs_cmdl_run_command(&ctx, commands);
}

OVSTEST_REGISTER("test-dpif-bpf-odp", test_dpif_bpf_odp_main);
