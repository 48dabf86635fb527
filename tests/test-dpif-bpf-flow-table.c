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
 * (lib/dpif-bpf-flow-*.c) through the dpif interface, on a datapath of its
 * own that the test creates and deletes:
 *
 *   ovstest test-dpif-bpf-flow-table <case> <datapath name>
 *
 *   ovstest test-dpif-bpf-flow-table <case> <datapath name> no-batch
 *
 * The second form makes the datapath use no batch operation of the BPF
 * maps, as on a kernel that refuses them: every entry goes alone, and the
 * case must print the same but for its "batch ...: no" lines.
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
#include "coverage.h"
#include "dpif.h"
#include "dpif-bpf-flow-table.h"
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

/* The coverage counters of the batch calls (dpif-bpf-map-batch.c,
 * dpif-bpf-flow-dump.c). */
extern struct coverage_counter counter_dpif_bpf_map_update_batch;
extern struct coverage_counter counter_dpif_bpf_map_lookup_batch;
extern struct coverage_counter counter_dpif_bpf_map_delete_batch;

/* The count of 'c' so far, of this thread (the test's only one). */
static unsigned long long int
counter_read(struct coverage_counter *c)
{
    c->total += c->count();
    return c->total;
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
    unsigned long long int n_batches;
    int table, real_fd, fd;
    struct dpif *dpif;
    struct dp_bpf *dp;

    assert(!dpif_create_and_open(ctx->argv[1], "bpf", &dpif));
    dp = get_dp_bpf(dpif);
    n_batches = counter_read(&counter_dpif_bpf_map_update_batch);

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
    stale->stats[0].packets = 42;
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
           stale->stats[0].packets == 42 ? "unchanged" : "replaced");
    free(stale);
    n_batches = counter_read(&counter_dpif_bpf_map_update_batch) - n_batches;
    printf("batch updates: %s\n", n_batches ? "yes" : "no");

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

/* Carries out the 'n' puts of 'tps' in batches of 16, each of which must
 * succeed. */
static void
many_puts__(struct dpif *dpif, struct test_put *tps, size_t n)
{
    struct dpif_op *ops[16];

    for (size_t i = 0; i < n; i += ARRAY_SIZE(ops)) {
        size_t m = MIN(n - i, ARRAY_SIZE(ops));

        for (size_t j = 0; j < m; j++) {
            tps[i + j].op.error = -1;
            ops[j] = &tps[i + j].op;
        }
        dpif_operate(dpif, ops, m, DPIF_OFFLOAD_AUTO);
        for (size_t j = 0; j < m; j++) {
            assert(!tps[i + j].op.error);
        }
    }
}

/* 'n' flows of one mask, "10.0.<i / 256>.<i % 256>" as their IPv4 source,
 * put in batches of 16 (each put must succeed). */
static struct test_put *
many_puts(struct dpif *dpif, size_t n)
{
    struct test_put *tps = xmalloc(n * sizeof *tps);

    for (size_t i = 0; i < n; i++) {
        char *src = xasprintf("10.0.%"PRIuSIZE".%"PRIuSIZE,
                              i / 256, i % 256);
        char *match = xasprintf(MATCH("%s"), src);

        test_put_init(&tps[i], match);
        free(match);
        free(src);
    }
    many_puts__(dpif, tps, n);
    return tps;
}

/* Sets the packet count of the BPF entry of the flow of 'tp' to
 * 'packets', split between the first and the last of its statistics slots
 * (as two CPUs would count them, see struct ovs_bpf_flow). */
static void
set_bpf_packets(struct dp_bpf *dp, const struct test_put *tp,
                uint64_t packets)
{
    struct ovs_bpf_flow *value = xmalloc(sizeof *value);
    struct ovs_bpf_flow_table_key tkey;
    int table;

    ovs_mutex_lock(&dp->mutex);
    table_key(dp, tp, &tkey, &table);
    ovs_mutex_unlock(&dp->mutex);
    assert(!bpf_map_lookup_elem(dp->obj->flow_table_fds[table], &tkey,
                                value));
    value->stats[0].packets = packets / 2;
    value->stats[OVS_BPF_FLOW_STATS_SLOTS - 1].packets = packets - packets / 2;
    assert(!bpf_map_update_elem(dp->obj->flow_table_fds[table], &tkey,
                                value, BPF_EXIST));
    free(value);
}

/* The index in 'tps' (of 'n') of the flow with 'ufid'. */
static size_t
put_index(const struct test_put *tps, size_t n, const ovs_u128 *ufid)
{
    for (size_t i = 0; i < n; i++) {
        if (ovs_u128_equals(tps[i].ufid, *ufid)) {
            return i;
        }
    }
    ovs_fatal(0, "the dump returned a flow that was not put");
}

/* Flow dumps that read the BPF flow table in batches.  300 flows in one
 * table (enough for the batch read), each with its own packet count in its
 * BPF entry: a dump returns each flow once with its count, from batch
 * lookups.  Then a dump whose batch read is done when all the flows are
 * modified with their statistics zeroed: the flows it returns after that
 * have their new (zero) counts, not those of the batch read. */
static void
test_dump_batch(struct ovs_cmdl_context *ctx)
{
    enum { N = 300 };
    struct dpif_flow_dump_thread *thread;
    struct dpif_flow_dump *dump;
    struct dpif_flow flows[8];
    unsigned long long int n_batches;
    size_t n_right = 0, n_flows = 0;
    bool seen[N] = { false };
    struct test_put *tps;
    struct dpif *dpif;
    struct dp_bpf *dp;
    int n;

    assert(!dpif_create_and_open(ctx->argv[1], "bpf", &dpif));
    dp = get_dp_bpf(dpif);
    tps = many_puts(dpif, N);
    for (size_t i = 0; i < N; i++) {
        set_bpf_packets(dp, &tps[i], 1000 + i);
    }

    n_batches = counter_read(&counter_dpif_bpf_map_lookup_batch);
    dump = dpif_flow_dump_create(dpif, false, NULL);
    thread = dpif_flow_dump_thread_create(dump);
    while ((n = dpif_flow_dump_next(thread, flows, ARRAY_SIZE(flows))) > 0) {
        for (int i = 0; i < n; i++) {
            size_t idx = put_index(tps, N, &flows[i].ufid);

            assert(!seen[idx]);
            seen[idx] = true;
            n_right += flows[i].stats.n_packets == 1000 + idx;
            n_flows++;
        }
    }
    dpif_flow_dump_thread_destroy(thread);
    assert(!dpif_flow_dump_destroy(dump));
    n_batches = counter_read(&counter_dpif_bpf_map_lookup_batch) - n_batches;
    printf("dump: %"PRIuSIZE" flows, %"PRIuSIZE" with their packet count, "
           "batch lookups: %s\n", n_flows, n_right,
           n_batches ? "yes" : "no");

    /* Modified between the batch read and their turn in the dump. */
    dump = dpif_flow_dump_create(dpif, true, NULL);
    thread = dpif_flow_dump_thread_create(dump);
    assert(dpif_flow_dump_next(thread, flows, 1) == 1);
    for (size_t i = 0; i < N; i++) {
        tps[i].op.flow_put.flags = DPIF_FP_MODIFY | DPIF_FP_ZERO_STATS;
    }
    many_puts__(dpif, tps, N);
    n_flows = 1;
    n_right = 0;
    while ((n = dpif_flow_dump_next(thread, flows, ARRAY_SIZE(flows))) > 0) {
        for (int i = 0; i < n; i++) {
            n_right += flows[i].stats.n_packets == 0;
            n_flows++;
        }
    }
    dpif_flow_dump_thread_destroy(thread);
    assert(!dpif_flow_dump_destroy(dump));
    printf("dump: %"PRIuSIZE" flows, %"PRIuSIZE" of the %d after the modify "
           "with zero packets\n", n_flows, n_right, N - 1);

    for (size_t i = 0; i < N; i++) {
        test_put_uninit(&tps[i]);
    }
    free(tps);
    dpif_delete(dpif);
    dpif_close(dpif);
}

/* Hands deletes of the flows of 'tps[idx[i]]' for i < 'n' to dpif_operate()
 * at once and prints the result of each, with its packet count. */
static void
operate_dels(struct dpif *dpif, const struct test_put *tps,
             const size_t *idx, size_t n)
{
    struct dpif_flow_stats stats[8];
    struct dpif_op ops_[8], *ops[8];

    assert(n <= ARRAY_SIZE(ops));
    for (size_t i = 0; i < n; i++) {
        const struct test_put *tp = &tps[idx[i]];

        memset(&ops_[i], 0, sizeof ops_[i]);
        ops_[i].type = DPIF_OP_FLOW_DEL;
        ops_[i].flow_del.key = tp->key.data;
        ops_[i].flow_del.key_len = tp->key.size;
        ops_[i].flow_del.ufid = &tp->ufid;
        ops_[i].flow_del.stats = &stats[i];
        ops_[i].error = -1;
        ops[i] = &ops_[i];
    }
    dpif_operate(dpif, ops, n, DPIF_OFFLOAD_AUTO);
    for (size_t i = 0; i < n; i++) {
        if (ops[i]->error) {
            printf("del %"PRIuSIZE": %s\n", i, ovs_strerror(ops[i]->error));
        } else {
            printf("del %"PRIuSIZE": ok, %"PRIu64" packets\n", i,
                   stats[i].n_packets);
        }
    }
}

/* Flow deletes in batches.  Four flows, the second with 42 packets in its
 * BPF entry, the third's BPF entry deleted behind ovs-vswitchd's back; a
 * batch deletes the four and the first again: the kernel stops the batch
 * at the third, which fails alone (ENOENT), and the ones after it are
 * deleted; the first's second delete finds no flow.  The second is put
 * again: its new BPF entry (likely in the memory of the one just freed)
 * starts with no packets.  Then a flush of 200 flows. */
static void
test_del_batch(struct ovs_cmdl_context *ctx)
{
    static const size_t idx[] = { 0, 1, 2, 3, 0 };
    struct ovs_bpf_flow_table_key tkey;
    unsigned long long int n_batches;
    struct test_put *tps;
    struct dpif *dpif;
    struct dp_bpf *dp;
    int table;

    assert(!dpif_create_and_open(ctx->argv[1], "bpf", &dpif));
    dp = get_dp_bpf(dpif);

    tps = many_puts(dpif, 4);
    set_bpf_packets(dp, &tps[1], 42);
    ovs_mutex_lock(&dp->mutex);
    table_key(dp, &tps[2], &tkey, &table);
    ovs_mutex_unlock(&dp->mutex);
    assert(!bpf_map_delete_elem(dp->obj->flow_table_fds[table], &tkey));

    n_batches = counter_read(&counter_dpif_bpf_map_delete_batch);
    operate_dels(dpif, tps, idx, ARRAY_SIZE(idx));
    n_batches = counter_read(&counter_dpif_bpf_map_delete_batch) - n_batches;
    printf("batch deletes: %s\n", n_batches ? "yes" : "no");
    print_dump(dpif);
    print_map_entries("BPF flow table", dp->obj->flow_table_fds[table]);
    print_map_entries("saved flows", dp->obj->saved_flows_fd);
    many_puts__(dpif, &tps[1], 1);
    operate_dels(dpif, tps, &idx[1], 1);
    for (size_t i = 0; i < 4; i++) {
        test_put_uninit(&tps[i]);
    }
    free(tps);

    /* A flush. */
    tps = many_puts(dpif, 200);
    print_dump(dpif);
    n_batches = counter_read(&counter_dpif_bpf_map_delete_batch);
    assert(!dpif_flow_flush(dpif));
    n_batches = counter_read(&counter_dpif_bpf_map_delete_batch) - n_batches;
    printf("flush: batch deletes: %s\n", n_batches ? "yes" : "no");
    print_dump(dpif);
    print_map_entries("BPF flow table", dp->obj->flow_table_fds[table]);
    print_map_entries("saved flows", dp->obj->saved_flows_fd);
    for (size_t i = 0; i < 200; i++) {
        test_put_uninit(&tps[i]);
    }
    free(tps);

    dpif_delete(dpif);
    dpif_close(dpif);
}

static const struct ovs_cmdl_command commands[] = {
    {"put-batch", "dp [no-batch]", 1, 2, test_put_batch, OVS_RO},
    {"dump-batch", "dp [no-batch]", 1, 2, test_dump_batch, OVS_RO},
    {"del-batch", "dp [no-batch]", 1, 2, test_del_batch, OVS_RO},
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
    if (argc > 3) {
        if (strcmp(argv[3], "no-batch")) {
            ovs_fatal(0, "%s: \"no-batch\" expected", argv[3]);
        }
        dp_bpf_map_batches_disable(true);
    }
    ovs_cmdl_run_command(&ctx, commands);
}

OVSTEST_REGISTER("test-dpif-bpf-flow-table", test_dpif_bpf_flow_table_main);
