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

/* Tests of the megaflow table of the BPF datapath
 * (lib/dpif-bpf-flow-table.c) through the dpif interface, on a datapath of
 * its own that the test creates and deletes:
 *
 *   ovstest test-dpif-bpf-flow-table <case> <datapath name>
 *
 * Needs root (a datapath loads BPF programs and makes a TAP device):
 * tests/system-bpf.at runs it.  It prints what it finds, for the test to
 * compare. */

#include <config.h>
#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpf/datapath-abi.h"
#include "command-line.h"
#include "dpif.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-private.h"
#include "odp-util.h"
#include "openvswitch/ofpbuf.h"
#include "ovstest.h"
#include "util.h"

/* A flow put of the test: key and mask parsed from 'match' (ODP syntax),
 * ufid the hash of the key, no actions (drop). */
struct test_put {
    struct ofpbuf key, mask;
    ovs_u128 ufid;
    struct dpif_op op;
};

static void
test_put_init(struct test_put *tp, const char *match)
{
    char *error = NULL;

    ofpbuf_init(&tp->key, 0);
    ofpbuf_init(&tp->mask, 0);
    if (odp_flow_from_string(match, NULL, &tp->key, &tp->mask, &error)) {
        ovs_fatal(0, "%s: %s", match, error);
    }
    odp_flow_key_hash(tp->key.data, tp->key.size, &tp->ufid);

    memset(&tp->op, 0, sizeof tp->op);
    tp->op.type = DPIF_OP_FLOW_PUT;
    tp->op.flow_put.flags = DPIF_FP_CREATE;
    tp->op.flow_put.key = tp->key.data;
    tp->op.flow_put.key_len = tp->key.size;
    tp->op.flow_put.mask = tp->mask.data;
    tp->op.flow_put.mask_len = tp->mask.size;
    tp->op.flow_put.ufid = &tp->ufid;
}

static void
test_put_uninit(struct test_put *tp)
{
    ofpbuf_uninit(&tp->key);
    ofpbuf_uninit(&tp->mask);
}

/* Hands the 'n' puts of 'tps' to dpif_operate() at once and prints the
 * result of each. */
static void
operate(struct dpif *dpif, struct test_put *tps, size_t n)
{
    struct dpif_op *ops[16];

    assert(n <= ARRAY_SIZE(ops));
    for (size_t i = 0; i < n; i++) {
        tps[i].op.error = -1;
        ops[i] = &tps[i].op;
    }
    dpif_operate(dpif, ops, n, DPIF_OFFLOAD_AUTO);
    for (size_t i = 0; i < n; i++) {
        printf("put %"PRIuSIZE": %s\n", i,
               tps[i].op.error ? ovs_strerror(tps[i].op.error) : "ok");
    }
}

/* Prints the number of flows that a dump of 'dpif' returns. */
static void
print_dump(struct dpif *dpif)
{
    struct dpif_flow_dump_thread *thread;
    struct dpif_flow_dump *dump;
    struct dpif_flow flows[8];
    size_t n_flows = 0;
    int n;

    dump = dpif_flow_dump_create(dpif, true, NULL);
    thread = dpif_flow_dump_thread_create(dump);
    while ((n = dpif_flow_dump_next(thread, flows, ARRAY_SIZE(flows))) > 0) {
        n_flows += n;
    }
    dpif_flow_dump_thread_destroy(thread);
    assert(!dpif_flow_dump_destroy(dump));
    printf("dump: %"PRIuSIZE" flows\n", n_flows);
}

/* Prints the number of entries of the BPF map 'fd'. */
static void
print_map_entries(const char *name, int fd)
{
    struct ovs_bpf_flow_table_key keys[2];
    size_t n = 0;

    memset(keys, 0, sizeof keys);
    while (!bpf_map_get_next_key(fd, n ? &keys[(n - 1) % 2] : NULL,
                                 &keys[n % 2])) {
        n++;
    }
    printf("%s: %"PRIuSIZE" entries\n", name, n);
}

/* The flow table key of 'tp' under the mask of 'dp' that it uses, and
 * that mask's BPF flow table. */
static void
table_key(struct dp_bpf *dp, const struct test_put *tp,
          struct ovs_bpf_flow_table_key *tkey, int *table)
    OVS_REQUIRES(dp->mutex)
{
    struct ovs_bpf_flow_key bkey, bmask;
    struct ovs_bpf_mask entry;

    assert(!dpif_bpf_odp_to_key(tp->key.data, tp->key.size, tp->mask.data,
                                tp->mask.size, &bkey, &bmask));
    dpif_bpf_mask_compile(&bmask, &entry);
    for (int i = 0; i < OVS_BPF_MAX_MASKS; i++) {
        if (dp->masks[i].refcnt
            && !memcmp(&dp->masks[i].entry, &entry, sizeof entry)) {
            dpif_bpf_table_key(i, &entry, &bkey, tkey);
            *table = entry.table;
            return;
        }
    }
    ovs_fatal(0, "the mask of the flow is not in the mask list");
}

#define MATCH(SRC) \
    "recirc_id(0),in_port(1),eth(src=00:00:00:00:00:01," \
    "dst=00:00:00:00:00:02)," \
    "eth_type(0x0800),ipv4(src=" SRC ",dst=10.0.1.1,proto=17,tos=0," \
    "ttl=64,frag=no),udp(src=1,dst=2)"
#define MATCH_ETH(TYPE) \
    "recirc_id(0),in_port(1),eth(src=00:00:00:00:00:01," \
    "dst=00:00:00:00:00:02),eth_type(" TYPE ")"

/* The BPF flow table of the flows of 'tp'. */
static int
flow_table_of(const struct test_put *tp)
{
    struct ovs_bpf_flow_key bkey, bmask;
    struct ovs_bpf_mask entry;

    assert(!dpif_bpf_odp_to_key(tp->key.data, tp->key.size, tp->mask.data,
                                tp->mask.size, &bkey, &bmask));
    dpif_bpf_mask_compile(&bmask, &entry);
    return entry.table;
}

/* Batches of flow puts with bad ones among them: each bad one fails with
 * its own error, and the others, before and after it, are installed.
 *
 * First, puts that fail in ovs-vswitchd: a key that the BPF datapath cannot
 * match, a ufid put twice.  Then one that the kernel refuses in the middle
 * of a BPF_MAP_UPDATE_BATCH: the test gives the datapath, for the table of
 * those flows, a map of its own that is full after the first flow of the
 * batch.  The last flow of the batch has an entry there already (left by
 * someone else), which it replaces, as a full map allows. */
static void
test_put_batch(struct ovs_cmdl_context *ctx)
{
    static const char *matches[] = {
        MATCH("10.0.0.1"), MATCH("10.0.0.2"), MATCH("10.0.0.3"),
        MATCH("10.0.0.4"),
    };
    struct test_put tps[ARRAY_SIZE(matches)], eth[4], batch[3];
    struct ovs_bpf_flow_table_key tkey;
    struct ovs_bpf_flow *stale;
    int table, real_fd, fd;
    struct dpif *dpif;
    struct dp_bpf *dp;

    assert(!dpif_create_and_open(ctx->argv[1], "bpf", &dpif));
    dp = get_dp_bpf(dpif);

    /* Failures in ovs-vswitchd. */
    test_put_init(&eth[0], MATCH_ETH("0x1234"));
    test_put_init(&eth[1], "recirc_id(0),in_port(1),eth_type(0x8847),"
                  "mpls(label=1,tc=0,ttl=64,bos=1)");
    test_put_init(&eth[2], MATCH_ETH("0x1234"));
    test_put_init(&eth[3], MATCH_ETH("0x1235"));
    operate(dpif, eth, ARRAY_SIZE(eth));
    print_dump(dpif);

    /* A failure in the kernel. */
    for (size_t i = 0; i < ARRAY_SIZE(matches); i++) {
        test_put_init(&tps[i], matches[i]);
    }
    table = flow_table_of(&tps[0]);
    assert(table != flow_table_of(&eth[0]));
    real_fd = dp->obj->flow_table_fds[table];
    fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_flows",
                        (offsetof(struct ovs_bpf_flow_table_key, words)
                         + (dpif_bpf_flow_table_words(table)
                            * sizeof(uint64_t))),
                        sizeof(struct ovs_bpf_flow), 3, NULL);
    assert(fd >= 0);
    dp->obj->flow_table_fds[table] = fd;

    /* The first flow alone makes the mask, then the fourth's entry. */
    operate(dpif, tps, 1);
    ovs_mutex_lock(&dp->mutex);
    table_key(dp, &tps[3], &tkey, &table);
    ovs_mutex_unlock(&dp->mutex);
    stale = xzalloc(sizeof *stale);
    stale->flags = OVS_BPF_FLOW_F_USERSPACE;
    stale->stats.packets = 42;
    assert(!bpf_map_update_elem(fd, &tkey, stale, BPF_NOEXIST));

    /* The map is full after the second flow: the third fails. */
    batch[0] = tps[1];
    batch[1] = tps[2];
    batch[2] = tps[3];
    operate(dpif, batch, ARRAY_SIZE(batch));
    print_dump(dpif);
    print_map_entries("BPF flow table", fd);
    print_map_entries("saved flows", dp->obj->saved_flows_fd);
    assert(!bpf_map_lookup_elem(fd, &tkey, stale));
    printf("the entry already there: %s\n",
           stale->stats.packets == 42 ? "unchanged" : "replaced");
    free(stale);

    dp->obj->flow_table_fds[table] = real_fd;
    close(fd);
    for (size_t i = 0; i < ARRAY_SIZE(eth); i++) {
        test_put_uninit(&eth[i]);
    }
    for (size_t i = 0; i < ARRAY_SIZE(tps); i++) {
        test_put_uninit(&tps[i]);
    }
    dpif_delete(dpif);
    dpif_close(dpif);
}

static const struct ovs_cmdl_command commands[] = {
    {"put-batch", "dp", 1, 1, test_put_batch, OVS_RO},
    {NULL, NULL, 0, 0, NULL, OVS_RO},
};

static void
test_dpif_bpf_flow_table_main(int argc, char *argv[])
{
    struct ovs_cmdl_context ctx = {
        .argc = argc - 1,
        .argv = argv + 1,
    };

    set_program_name(argv[0]);
    ovs_cmdl_run_command(&ctx, commands);
}

OVSTEST_REGISTER("test-dpif-bpf-flow-table", test_dpif_bpf_flow_table_main);
