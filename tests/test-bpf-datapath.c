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

/* Unit tests of the BPF datapath programs (bpf/datapath.bpf.c), run in the
 * kernel with BPF_PROG_TEST_RUN:
 *
 *   ovstest test-bpf-datapath <case> [object]
 *
 * The object is the one the build compiled: the [object] argument, else
 * $OVS_BPF_DATAPATH_OBJ, else BPF_DATAPATH_BUILD_OBJ.  Needs root (loading
 * BPF programs); tests/bpf-datapath.at skips otherwise.
 *
 * The parser is checked against OVS itself: the key the BPF program leaves
 * in its per-CPU scratch area must equal, field by field, the key this
 * file derives from flow_extract() for the same bytes.  The test pins
 * itself to one CPU so that it knows which per-CPU entry to read, and runs
 * in a network namespace of its own, where the only device that outputs
 * reach is that namespace's loopback. */

#include <config.h>
#undef NDEBUG
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/ip6.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/datapath-abi.h"
#include "command-line.h"
#include "openvswitch/dynamic-string.h"
#include "csum.h"
#include "ct-dpif.h"
#include "dp-packet.h"
#include "dpif-bpf-ct-slow-private.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-upcall.h"
#include "flow.h"
#include "odp-util.h"
#include "openvswitch/ofpbuf.h"
#include "ovstest.h"
#include "packets.h"
#include "util.h"

#define IN_IFINDEX 42           /* ingress_ifindex given to test runs. */
#define IN_PORT 3               /* Its odp port in 'ifindex_ports'. */
#define LO_PORT1 1              /* Output ports: both are the loopback of */
#define LO_PORT2 2              /* the test's own network namespace. */
#define TNL_PORT 4              /* A tunnel port (OVS_BPF_PORT_F_TUNNEL)
                                 * that is the loopback too. */

static const uint8_t secret[OVS_BPF_SECRET_LEN] = {
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
    0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01,
};

/* The loaded datapath. */
static struct bpf_object *obj;
static int flow_table_fds[OVS_BPF_N_FLOW_TABLES];
static int flow_masks_fd, mask_order_fd, mask_stats_fd, dp_config_fd;
static int flow_actions_fd;
static int mask_cache_fd;
static int dp_stats_fd;
static int ports_fd, ifindex_ports_fd, ifindexes_fd, upcalls_fd;
static int tailcalls_fd, scratch_fd, meters_fd;
static int ingress_fd, downcall_fd, meter_packet_fd;
static int n_cpus;
static int test_cpu;
static int n_failures;
static uint32_t vlan_limit;     /* Nonzero: .rodata ovs_bpf_vlan_limit. */

/* Upcalls received through the upcall ring. */
struct upcall_rec {
    struct ovs_bpf_upcall hdr;
    uint8_t pkt[2048];
};
#define MAX_UPCALLS 8
static struct upcall_rec upcall_recs[MAX_UPCALLS];
static int n_upcalls;
static int n_received;          /* Upcalls received, also beyond
                                 * MAX_UPCALLS. */
static struct ring_buffer *upcall_rb;
static int upcall_config_fd, upcall_ring_fd;

/* The harness's one upcall ring: small, so that a few big packets fill
 * it. */
#define TEST_RING_SIZE (64 * 1024)

static void OVS_PRINTF_FORMAT(1, 2)
fail(const char *format, ...)
{
    va_list args;

    va_start(args, format);
    fputs("FAIL: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    n_failures++;
}

#define CHECK(COND, ...)                        \
    do {                                        \
        if (!(COND)) {                          \
            fail(__VA_ARGS__);                  \
        }                                       \
    } while (0)

static int
libbpf_quiet(enum libbpf_print_level level, const char *format, va_list args)
{
    if (getenv("OVS_BPF_TEST_VERBOSE") || level == LIBBPF_WARN) {
        return vfprintf(stderr, format, args);
    }
    return 0;
}

static int
map_fd(const char *name)
{
    struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

    if (!map) {
        ovs_fatal(0, "map %s not found in the object", name);
    }
    return bpf_map__fd(map);
}

static int
prog_fd(const char *name)
{
    struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

    return prog ? bpf_program__fd(prog) : -1;
}

/* Returns a pointer to the .rodata variable 'name' of the opened (not yet
 * loaded) object, which may be written until the object is loaded: this
 * is how the loader sets ovs_bpf_vlan_limit. */
static void *
rodata_var(const char *name, size_t size)
{
    struct bpf_map *map = bpf_object__find_map_by_name(obj, ".rodata");
    struct btf *btf = bpf_object__btf(obj);
    const struct btf_var_secinfo *vsi;
    const struct btf_type *sec;
    uint8_t *data;
    size_t data_size;
    int id, i;

    id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
    if (!map || id < 0) {
        ovs_fatal(0, "no .rodata in the object");
    }
    data = CONST_CAST(uint8_t *, bpf_map__initial_value(map, &data_size));
    sec = btf__type_by_id(btf, id);
    vsi = btf_var_secinfos(sec);
    for (i = 0; i < btf_vlen(sec); i++, vsi++) {
        const struct btf_type *var = btf__type_by_id(btf, vsi->type);

        if (!strcmp(btf__name_by_offset(btf, var->name_off), name)
            && vsi->size == size && vsi->offset + size <= data_size) {
            return data + vsi->offset;
        }
    }
    ovs_fatal(0, ".rodata has no %"PRIuSIZE"-byte variable %s", size, name);
}

/* Brings up the loopback of the test's network namespace, the only device
 * the output actions of the tests reach. */
static void
private_netns(void)
{
    struct ifreq ifr;
    int sock;

    if (unshare(CLONE_NEWNET)) {
        ovs_fatal(errno, "unshare(CLONE_NEWNET)");
    }
    sock = socket(AF_INET, SOCK_DGRAM, 0);
    if (sock < 0) {
        ovs_fatal(errno, "socket");
    }
    memset(&ifr, 0, sizeof ifr);
    ovs_strlcpy(ifr.ifr_name, "lo", sizeof ifr.ifr_name);
    ifr.ifr_flags = IFF_UP;
    if (ioctl(sock, SIOCSIFFLAGS, &ifr)) {
        ovs_fatal(errno, "bringing up lo");
    }
    close(sock);
}

static int
on_upcall(void *ctx OVS_UNUSED, void *data, size_t size)
{
    struct upcall_rec *rec;
    size_t pkt_len;

    n_received++;
    if (n_upcalls >= MAX_UPCALLS || size < sizeof rec->hdr) {
        return 0;
    }
    rec = &upcall_recs[n_upcalls++];
    memcpy(&rec->hdr, data, sizeof rec->hdr);
    pkt_len = MIN(size - sizeof rec->hdr, sizeof rec->pkt);
    memcpy(rec->pkt, (uint8_t *) data + sizeof rec->hdr, pkt_len);
    return 0;
}

/* Sets the upcall configuration: one ring, and the budget of each port on
 * each CPU ('interval_ns' 0: none). */
static void
set_upcall_config(uint64_t interval_ns, uint64_t burst_ns, uint32_t fill)
{
    struct ovs_bpf_upcall_config cfg = {
        .n_rings = 1,
        .budget_fill = fill,
        .budget_interval_ns = interval_ns,
        .budget_burst_ns = burst_ns,
    };
    uint32_t zero = 0;

    if (bpf_map_update_elem(upcall_config_fd, &zero, &cfg, BPF_ANY)) {
        ovs_fatal(errno, "upcall config update");
    }
}

static void
update(int fd, const void *key, const void *value)
{
    if (bpf_map_update_elem(fd, key, value, BPF_ANY)) {
        ovs_fatal(errno, "map update");
    }
}

/* Makes the lookup search the 'n' masks 'ids' in that order, as
 * ovs-vswitchd does: the 'mask_order' entry not in use gets the order, then
 * 'dp_config' selects it. */
/* 'ct_tcp_liberal' of 'dp_config' (dpctl/ct-disable-tcp-seq-chk). */
static bool tcp_liberal;

static void
set_mask_order(const uint8_t *ids, uint32_t n)
{
    static uint32_t sel;
    struct ovs_bpf_mask_order order;
    struct ovs_bpf_dp_config cfg;
    uint32_t zero = 0;

    memset(&order, 0, sizeof order);
    order.n_masks = n;
    memcpy(order.mask_id, ids, n);
    sel = !sel;
    update(mask_order_fd, &sel, &order);

    memset(&cfg, 0, sizeof cfg);
    cfg.mask_order = sel;
    cfg.ct_tcp_liberal = tcp_liberal;
    memcpy(cfg.secret, secret, sizeof cfg.secret);
    update(dp_config_fd, &zero, &cfg);
}

/* Searches masks 0 .. n_masks - 1 in order. */
static void
set_n_masks(uint32_t n_masks)
{
    uint8_t ids[OVS_BPF_MAX_MASKS] = { 0 };

    for (uint32_t i = 0; i < n_masks; i++) {
        ids[i] = i;
    }
    set_mask_order(ids, n_masks);
}

static void
add_port(uint32_t port, uint32_t ifindex, uint32_t flags)
{
    struct ovs_bpf_port p = { .ifindex = ifindex, .flags = flags };

    update(ports_fd, &port, &p);
}

/* Loads the object (libbpf fills its prog array), fills the port maps,
 * pins the test to a CPU and creates the upcall ring. */
static void
dp_open(const char *path)
{
    uint32_t ifindex = IN_IFINDEX, in_port = IN_PORT;
    struct bpf_map *map;
    cpu_set_t cpus;
    int i, err;

    if (!path) {
        path = getenv("OVS_BPF_DATAPATH_OBJ");
    }
#ifdef BPF_DATAPATH_BUILD_OBJ
    if (!path) {
        path = BPF_DATAPATH_BUILD_OBJ;
    }
#endif
    if (!path) {
        path = "bpf/datapath.bpf.o";
    }

    test_cpu = sched_getcpu();
    CPU_ZERO(&cpus);
    CPU_SET(test_cpu, &cpus);
    if (sched_setaffinity(0, sizeof cpus, &cpus)) {
        ovs_fatal(errno, "sched_setaffinity");
    }
    private_netns();

    libbpf_set_print(libbpf_quiet);
    obj = bpf_object__open_file(path, NULL);
    err = libbpf_get_error(obj);
    if (err) {
        ovs_fatal(-err, "%s: open failed", path);
    }
    if (vlan_limit) {
        *(uint32_t *) rodata_var(OVS_BPF_RODATA_VLAN_LIMIT, 4) = vlan_limit;
    }
    /* Nothing pinned: the maps are the test's own. */
    bpf_object__for_each_map (map, obj) {
        bpf_map__set_pin_path(map, NULL);
    }
    err = bpf_object__load(obj);
    if (err) {
        ovs_fatal(-err, "%s: load failed", path);
    }
    n_cpus = libbpf_num_possible_cpus();

    for (i = 0; i < OVS_BPF_N_FLOW_TABLES; i++) {
        static const char *const names[] = OVS_BPF_MAP_FLOW_TABLES;

        flow_table_fds[i] = map_fd(names[i]);
    }
    flow_masks_fd = map_fd(OVS_BPF_MAP_FLOW_MASKS);
    flow_actions_fd = map_fd(OVS_BPF_MAP_FLOW_ACTIONS);
    dp_config_fd = map_fd(OVS_BPF_MAP_DP_CONFIG);
    mask_order_fd = map_fd(OVS_BPF_MAP_MASK_ORDER);
    mask_stats_fd = map_fd(OVS_BPF_MAP_MASK_STATS);
    mask_cache_fd = map_fd(OVS_BPF_MAP_MASK_CACHE);
    dp_stats_fd = map_fd(OVS_BPF_MAP_DP_STATS);
    ports_fd = map_fd(OVS_BPF_MAP_PORTS);
    ifindex_ports_fd = map_fd(OVS_BPF_MAP_IFINDEX_PORTS);
    ifindexes_fd = map_fd(OVS_BPF_MAP_IFINDEXES);
    upcalls_fd = map_fd(OVS_BPF_MAP_UPCALLS);
    upcall_config_fd = map_fd(OVS_BPF_MAP_UPCALL_CONFIG);
    tailcalls_fd = map_fd(OVS_BPF_MAP_TAILCALLS);
    scratch_fd = map_fd("scratch");
    meters_fd = map_fd(OVS_BPF_MAP_METERS);
    ingress_fd = prog_fd(OVS_BPF_PROG_INGRESS);
    downcall_fd = prog_fd(OVS_BPF_PROG_DOWNCALL);
    meter_packet_fd = prog_fd("ovs_bpf_meter_packet");
    if (ingress_fd < 0 || downcall_fd < 0 || meter_packet_fd < 0) {
        ovs_fatal(0, "entry programs missing");
    }
    set_n_masks(0);
    in_port++;                  /* 'ifindex_ports' holds port + 1. */
    update(ifindex_ports_fd, &ifindex, &in_port);
    add_port(LO_PORT1, 1, 0);
    add_port(LO_PORT2, 1, 0);
    add_port(TNL_PORT, 1, OVS_BPF_PORT_F_TUNNEL);

    upcall_ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "test_upcalls", 0,
                                    0, TEST_RING_SIZE, NULL);
    if (upcall_ring_fd < 0) {
        ovs_fatal(errno, "creating the upcall ring");
    }
    update(upcalls_fd, &(uint32_t) { 0 }, &upcall_ring_fd);
    set_upcall_config(0, 0, 0);
    upcall_rb = ring_buffer__new(upcall_ring_fd, on_upcall, NULL, NULL);
    if (!upcall_rb) {
        ovs_fatal(errno, "ring_buffer__new failed");
    }
}

static void
dp_close(void)
{
    ring_buffer__free(upcall_rb);
    close(upcall_ring_fd);
    bpf_object__close(obj);
}

/* Collects the upcalls the last runs sent. */
static void
poll_upcalls(void)
{
    n_upcalls = 0;
    ring_buffer__consume(upcall_rb);
}

/* The sum over the CPUs of the __u64 entry 'key' of the per-CPU array
 * 'fd'. */
static uint64_t
percpu_sum(int fd, uint32_t key)
{
    uint64_t values[n_cpus];
    uint64_t sum = 0;

    if (bpf_map_lookup_elem(fd, &key, values)) {
        ovs_fatal(errno, "per-CPU map lookup");
    }
    for (int i = 0; i < n_cpus; i++) {
        sum += values[i];
    }
    return sum;
}

static uint64_t
stat_get(uint32_t stat)
{
    return percpu_sum(dp_stats_fd, stat);
}

/* Packets that hit a flow of mask 'idx', all CPUs. */
static uint64_t
mask_stats_get(uint32_t idx)
{
    return percpu_sum(mask_stats_fd, idx);
}

/* The drop counters of 'dp_stats': the drop reasons, then the failures of
 * each action type. */
#define N_DROP_STATS (OVS_BPF_N_DP_STATS - __OVS_BPF_STAT_MAX)
struct drops {
    uint64_t n[N_DROP_STATS];
};

static void
drops_get(struct drops *d)
{
    for (int i = 0; i < N_DROP_STATS; i++) {
        d->n[i] = stat_get(__OVS_BPF_STAT_MAX + i);
    }
}

static const char *
drop_name(uint32_t stat)
{
    static const char *const reasons[] = {
#define OVS_BPF_DROP_REASON_NAME(ENUM, NAME, DESCRIPTION) NAME,
        OVS_BPF_DROP_REASONS(OVS_BPF_DROP_REASON_NAME)
#undef OVS_BPF_DROP_REASON_NAME
    };
    static char buf[32];

    if (stat >= OVS_BPF_STAT_DROP(0)
        && stat < OVS_BPF_STAT_DROP(__OVS_BPF_DROP_MAX)) {
        return reasons[stat - OVS_BPF_STAT_DROP(0)];
    }
    snprintf(buf, sizeof buf, "action %d failed",
             (int) (stat - OVS_BPF_STAT_ACTION_FAILED(0)));
    return buf;
}

#define NO_DROP UINT32_MAX

/* Checks that, since 'before', the drop counter at 'dp_stats' index 'stat'
 * (NO_DROP for none) went up by 'n' and that no other drop counter
 * moved.  Returns true if so. */
static bool
check_drops(const char *name, const struct drops *before, uint32_t stat,
            uint64_t n)
{
    struct drops after;
    bool ok = true;

    drops_get(&after);
    for (int i = 0; i < N_DROP_STATS; i++) {
        uint32_t idx = __OVS_BPF_STAT_MAX + i;
        uint64_t delta = after.n[i] - before->n[i];
        uint64_t expected = idx == stat ? n : 0;

        if (delta != expected) {
            fail("%s: drop counter %s went up by %"PRIu64", expected "
                 "%"PRIu64, name, drop_name(idx), delta, expected);
            ok = false;
        }
    }
    return ok;
}

/* A run of a program on one packet. */
struct run {
    uint32_t retval;
    uint8_t out[4096];
    uint32_t out_len;
    struct __sk_buff ctx_out;
};

static const char *run_name = "";

/* Runs program 'fd' on the 'len' bytes 'pkt' with skb mark 'mark', as a
 * GSO packet of segments of 'gso_size' bytes if that is nonzero (the skb's
 * gso_size, which is all the programs look at). */
static void
run_prog_gso(int fd, const void *pkt, size_t len, uint32_t mark,
             uint32_t gso_size, struct run *r)
{
    struct __sk_buff ctx = {
        .ingress_ifindex = IN_IFINDEX,
        .mark = mark,
        .gso_size = gso_size,
    };
    LIBBPF_OPTS(bpf_test_run_opts, opts,
                .data_in = pkt,
                .data_size_in = len,
                .data_out = r->out,
                .data_size_out = sizeof r->out,
                .ctx_in = &ctx,
                .ctx_size_in = sizeof ctx,
                .ctx_out = &r->ctx_out,
                .ctx_size_out = sizeof r->ctx_out,
                .repeat = 1);

    if (bpf_prog_test_run_opts(fd, &opts)) {
        fail("%s: BPF_PROG_TEST_RUN (%"PRIuSIZE" bytes): %s",
             run_name, len, ovs_strerror(errno));
    }
    r->retval = opts.retval;
    r->out_len = opts.data_size_out;
}

static void
run_prog(int fd, const void *pkt, size_t len, uint32_t mark, struct run *r)
{
    run_prog_gso(fd, pkt, len, mark, 0, r);
}

static void
run_ingress(const struct ofpbuf *pkt, struct run *r)
{
    run_prog(ingress_fd, pkt->data, pkt->size, 0, r);
}

/* The key the last program run on this CPU left in the scratch area. */
static void
scratch_key(struct ovs_bpf_flow_key *key)
{
    size_t value_size = ROUND_UP(bpf_map__value_size(
                            bpf_object__find_map_by_name(obj, "scratch")), 8);
    uint8_t *values = xmalloc(value_size * n_cpus);
    uint32_t zero = 0;

    if (bpf_map_lookup_elem(scratch_fd, &zero, values)) {
        ovs_fatal(errno, "scratch lookup");
    }
    /* The key is the first member of struct ovs_bpf_scratch. */
    memcpy(key, values + value_size * test_cpu, sizeof *key);
    free(values);
}

/* The key OVS's flow_extract() gives for 'pkt' arriving on 'in_port',
 * converted field by field. */
static void
ovs_key(const struct ofpbuf *pkt, uint32_t in_port,
        struct ovs_bpf_flow_key *k)
{
    struct dp_packet *p = dp_packet_clone_data(pkt->data, pkt->size);
    struct flow flow;
    int i;

    pkt_metadata_init(&p->md, u32_to_odp(in_port));
    flow_extract(p, &flow);
    dp_packet_delete(p);

    memset(k, 0, sizeof *k);
    k->in_port = odp_to_u32(flow.in_port.odp_port);
    k->recirc_id = flow.recirc_id;
    k->dp_hash = flow.dp_hash;
    k->skb_priority = flow.skb_priority;
    k->skb_mark = flow.pkt_mark;
    memcpy(k->eth_dst, flow.dl_dst.ea, 6);
    memcpy(k->eth_src, flow.dl_src.ea, 6);
    k->eth_type = flow.dl_type;
    for (i = 0; i < 2; i++) {
        k->vlans[i].tpid = flow.vlans[i].tpid;
        k->vlans[i].tci = flow.vlans[i].tci;
    }
    k->ipv4_src = flow.nw_src;
    k->ipv4_dst = flow.nw_dst;
    if (eth_type_mpls(flow.dl_type)) {
        for (i = 0; i < FLOW_MAX_MPLS_LABELS; i++) {
            k->mpls_lse[i] = flow.mpls_lse[i];
        }
        memcpy(k->ipv6_dst, &flow.ipv6_dst, 16);
    } else if (flow.dl_type == htons(ETH_TYPE_NSH)) {
        k->nsh.flags = flow.nsh.flags;
        k->nsh.ttl = flow.nsh.ttl;
        k->nsh.mdtype = flow.nsh.mdtype;
        k->nsh.np = flow.nsh.np;
        k->nsh.path_hdr = flow.nsh.path_hdr;
        for (i = 0; i < OVS_BPF_NSH_CONTEXT_WORDS; i++) {
            k->nsh_context[i] = flow.nsh.context[i];
        }
    } else {
        memcpy(k->ipv6_src, &flow.ipv6_src, 16);
        memcpy(k->ipv6_dst, &flow.ipv6_dst, 16);
    }
    k->ipv6_label = flow.ipv6_label;
    k->nw_proto = flow.nw_proto;
    k->nw_tos = flow.nw_tos;
    k->nw_ttl = flow.nw_ttl;
    k->nw_frag = flow.nw_frag;
    k->tp_src = flow.tp_src;
    k->tp_dst = flow.tp_dst;
    k->tcp_flags = flow.tcp_flags;
    memcpy(k->arp_sha, flow.arp_sha.ea, 6);
    memcpy(k->arp_tha, flow.arp_tha.ea, 6);
    memcpy(k->nd_target, &flow.nd_target, 16);
}

static void
print_in6(struct ds *s, const uint8_t bytes[16])
{
    struct in6_addr addr;

    memcpy(&addr, bytes, sizeof addr);
    ipv6_format_addr(&addr, s);
}

static void
print_key(const char *title, const struct ovs_bpf_flow_key *k)
{
    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_format(&s, "  %s: in_port=%u recirc=%u dp_hash=%#x prio=%u "
                  "mark=%u\n", title, k->in_port, k->recirc_id, k->dp_hash,
                  k->skb_priority, k->skb_mark);
    ds_put_format(&s, "    eth " ETH_ADDR_FMT " > " ETH_ADDR_FMT
                  " type=%#06x vlans=%04x:%04x,%04x:%04x\n",
                  ETH_ADDR_BYTES_ARGS(k->eth_src),
                  ETH_ADDR_BYTES_ARGS(k->eth_dst), ntohs(k->eth_type),
                  ntohs(k->vlans[0].tpid), ntohs(k->vlans[0].tci),
                  ntohs(k->vlans[1].tpid), ntohs(k->vlans[1].tci));
    ds_put_format(&s, "    ipv4 "IP_FMT" > "IP_FMT" ipv6 ",
                  IP_ARGS(k->ipv4_src), IP_ARGS(k->ipv4_dst));
    print_in6(&s, k->ipv6_src);
    ds_put_cstr(&s, " > ");
    print_in6(&s, k->ipv6_dst);
    ds_put_format(&s, " label=%#x\n    proto=%u tos=%#x ttl=%u frag=%u "
                  "tp=%u>%u tcp_flags=%#x\n", ntohl(k->ipv6_label),
                  k->nw_proto, k->nw_tos, k->nw_ttl, k->nw_frag,
                  ntohs(k->tp_src), ntohs(k->tp_dst), ntohs(k->tcp_flags));
    ds_put_format(&s, "    sha="ETH_ADDR_FMT" tha="ETH_ADDR_FMT" nd_target=",
                  ETH_ADDR_BYTES_ARGS(k->arp_sha),
                  ETH_ADDR_BYTES_ARGS(k->arp_tha));
    print_in6(&s, k->nd_target);
    fprintf(stderr, "%s\n", ds_cstr(&s));
    ds_destroy(&s);
}

static bool
check_key(const char *name, const struct ovs_bpf_flow_key *bpf,
          const struct ovs_bpf_flow_key *exp)
{
    if (memcmp(bpf, exp, sizeof *bpf)) {
        fail("%s: BPF key differs from expected key", name);
        print_key("BPF", bpf);
        print_key("expected", exp);
        return false;
    }
    return true;
}

static void
pkt_hex(struct ofpbuf *b, const char *hex)
{
    size_t n;

    ofpbuf_clear(b);
    if (ofpbuf_put_hex(b, hex, &n)[0] != '\0') {
        ovs_fatal(0, "bad hex: %s", hex);
    }
}

/* ------------------------------------------------------------------ */
/* Parser.                                                            */
/* ------------------------------------------------------------------ */

#define ETH "0a0000000002 0a0000000001 "
#define IP4A "0a000001 0a000002 "
#define IP6A "20010db8000000000000000000000001 " \
             "20010db8000000000000000000000002 "
#define TCP "04d2 0050 00000001 00000000 5012 2000 0000 0000 "
#define UDP "0035 1234 0008 0000 "
#define IP4_TCP "4500 0028 1234 4000 4006 0000 " IP4A TCP
#define IP4_UDP "4500 001c 1234 0000 4011 0000 " IP4A UDP
#define ND_TARGET "20010db8000000000000000000000002 "
#define SLL "0101 0a0000000001 "
#define TLL "0201 0a0000000002 "

/* Packets whose BPF key must equal OVS's.  Lengths in the headers are
 * right unless the name says otherwise.
 *
 * BPF_PROG_TEST_RUN refuses (EINVAL) a packet whose ethertype is IPv4 or
 * IPv6 but which is too short for that header, though such packets do
 * reach TC ingress from a real device.  The cases for them carry a VLAN
 * tag, which makes skb->protocol 802.1Q for the test run while the parser
 * still meets the short header (the "vlan-" cases below). */
static const struct parse_case {
    const char *name;
    const char *hex;
} parse_cases[] = {
    { "eth-only-other-type", ETH "88cc" },
    /* MPLS: up to 3 labels, nothing after them. */
    { "mpls-1-label-ipv4", ETH "8847 00064140 " IP4_TCP },
    { "mpls-mc-2-labels", ETH "8848 00064040 000c8140 " IP4_UDP },
    { "mpls-3-labels", ETH "8847 00001040 00002040 00003140 " IP4_UDP },
    { "mpls-5-labels", ETH "8847 00001040 00002040 00003040 00004040 "
      "00005140 " IP4_UDP },
    { "mpls-no-bos", ETH "8847 00001040 00002040" },
    { "mpls-short-label", ETH "8847 00001040 0000" },
    { "mpls-empty", ETH "8847" },
    { "vlan-mpls", ETH "8100 0064 8847 00064140 " IP4_TCP },
    /* NSH: the base and service path headers, the MD type 1 context,
     * nothing after them; a header OVS does not accept leaves them zero. */
    { "nsh-md1-eth", ETH "894f 0fc6 01 03 00123403 11223344 00000000 "
      "00000000 55667788 " ETH "0800 " IP4_TCP },
    { "nsh-md1-oam-ipv4", ETH "894f 1206 01 01 00000105 00000001 00000002 "
      "00000003 00000004 " IP4_UDP },
    { "nsh-md2-no-tlv", ETH "894f 0242 02 01 00000105 " IP4_TCP },
    { "nsh-md2-tlv", ETH "894f 0244 02 03 00000105 0000 01 04 aabbccdd "
      ETH "0800 " IP4_TCP },
    { "nsh-md2-too-short", ETH "894f 0241 02 03 00000105 " IP4_TCP },
    { "nsh-md1-bad-len", ETH "894f 0204 01 03 00000105 11223344 55667788" },
    { "nsh-version-1", ETH "894f 4fc6 01 03 00000105 11223344 00000000 "
      "00000000 55667788" },
    { "nsh-len-beyond", ETH "894f 0fc6 01 03 00000105 11223344 55667788 "
      "99aabbcc" },
    { "nsh-short", ETH "894f 0fc6 01 03 0000" },
    { "nsh-empty", ETH "894f" },
    { "nsh-mdtype-0-len-0", ETH "894f 0000 00 03 00000105 " IP4_TCP },
    { "nsh-mdtype-reserved-bits", ETH "894f 0fc6 f1 03 00000105 11223344 "
      "00000000 00000000 55667788" },
    { "nsh-mdtype-3", ETH "894f 0fc3 03 03 00000105 11223344" },
    { "vlan-nsh", ETH "8100 0064 894f 0fc6 01 03 00000105 11223344 00000000 "
      "00000000 55667788 " ETH "0800 " IP4_TCP },
    { "vlan-eth-only-ipv4-type", ETH "8100 0064 0800" },
    { "vlan-ipv4-1-byte", ETH "8100 0064 0800 45" },
    { "ipv4-tcp", ETH "0800 " IP4_TCP },
    { "ipv4-tcp-options", ETH "0800 4600 0030 1234 0000 4006 0000 " IP4A
      "01010101 04d2 0050 00000001 00000000 6002 2000 0000 0000 020405b4" },
    { "ipv4-tcp-all-flag-bits", ETH "0800 4500 0028 1234 4000 4006 0000 "
      IP4A "04d2 0050 00000001 00000000 5fff 2000 0000 0000" },
    { "ipv4-tcp-truncated", ETH "0800 4500 001e 1234 0000 4006 0000 " IP4A
      "04d2 0050 00000001 0000" },
    { "ipv4-tcp-bad-doff", ETH "0800 4500 0028 1234 0000 4006 0000 " IP4A
      "04d2 0050 00000001 00000000 4012 2000 0000 0000" },
    { "ipv4-tcp-doff-beyond", ETH "0800 4500 0028 1234 0000 4006 0000 " IP4A
      "04d2 0050 00000001 00000000 f012 2000 0000 0000" },
    { "ipv4-udp-padded", ETH "0800 " IP4_UDP
      "000000000000000000000000000000000000" },
    { "ipv4-udp-short", ETH "0800 4500 0018 1234 0000 4011 0000 " IP4A
      "0035 1234" },
    { "ipv4-sctp", ETH "0800 4500 0020 1234 0000 4084 0000 " IP4A
      "0b59 0b5a 00000001 00000000" },
    { "ipv4-icmp", ETH "0800 4500 001c 1234 0000 4001 0000 " IP4A
      "0800 f7ff 0000 0000" },
    { "ipv4-icmp-short", ETH "0800 4500 0018 1234 0000 4001 0000 " IP4A
      "0800 f7ff" },
    { "ipv4-igmp", ETH "0800 4600 0020 1234 0000 0102 0000 " IP4A
      "94040000 1600 0000 e0000001" },
    { "ipv4-bad-ihl", ETH "0800 4400 0028 1234 4000 4006 0000 " IP4A TCP },
    { "ipv4-ihl-beyond-packet", ETH "0800 4f00 0014 1234 4000 4006 0000 "
      IP4A },
    { "ipv4-totlen-too-big", ETH "0800 4500 0100 1234 4000 4006 0000 " IP4A
      TCP },
    { "ipv4-totlen-below-ihl", ETH "0800 4500 000a 1234 4000 4006 0000 "
      IP4A TCP },
    { "vlan-ipv4-short-header", ETH "8100 0064 0800 4500 0028 1234 4000" },
    { "ipv4-frag-first", ETH "0800 4500 001c 1234 2000 4011 0000 " IP4A
      UDP },
    { "ipv4-frag-later", ETH "0800 4500 001c 1234 2010 4011 0000 " IP4A
      UDP },
    { "ipv4-frag-last", ETH "0800 4500 001c 1234 0010 4011 0000 " IP4A
      UDP },
    { "ipv4-tos-ttl", ETH "0800 45b8 001c 1234 0000 0111 0000 " IP4A UDP },
    { "arp-request", ETH "0806 0001 0800 06 04 0001 0a0000000001 0a000001 "
      "000000000000 0a000002" },
    { "arp-op-above-255", ETH "0806 0001 0800 06 04 0100 0a0000000001 "
      "0a000001 000000000000 0a000002" },
    { "arp-bad-hrd", ETH "0806 0006 0800 06 04 0001 0a0000000001 0a000001 "
      "000000000000 0a000002" },
    { "arp-truncated", ETH "0806 0001 0800 06 04 0001 0a0000000001 "
      "0a000001 0000" },
    { "rarp", ETH "8035 0001 0800 06 04 0003 0a0000000001 00000000 "
      "0a0000000001 00000000" },
    { "vlan-tcp", ETH "8100 0064 0800 " IP4_TCP },
    { "vlan-pcp-dei", ETH "8100 f064 0800 " IP4_UDP },
    { "qinq-udp", ETH "88a8 00c8 8100 0064 0800 " IP4_UDP },
    { "three-tags", ETH "8100 0001 8100 0002 8100 0003 0800 " IP4_UDP },
    { "vlan-truncated", ETH "8100 0064" },
    { "llc-not-snap", ETH "0026 424203 000000000000000000" },
    { "llc-snap-ipv4", ETH "0024 aaaa03 000000 0800 " IP4_UDP },
    { "llc-short", ETH "0005 aaaa03" },
    { "snap-small-type", ETH "0024 aaaa03 000000 0100 0000" },
    { "ipv6-tcp", ETH "86dd 6abcdef1 0014 06 40 " IP6A TCP },
    { "ipv6-ext-chain-udp", ETH "86dd 60000000 0020 00 40 " IP6A
      "3c00 0000 00000000 2b00 0000 00000000 1100 0000 00000000 " UDP },
    { "ipv6-frag-first", ETH "86dd 60000000 0010 2c 40 " IP6A
      "1100 0001 12345678 " UDP },
    { "ipv6-frag-later", ETH "86dd 60000000 0010 2c 40 " IP6A
      "1100 0008 12345678 " UDP },
    { "ipv6-frag-atomic", ETH "86dd 60000000 0010 2c 40 " IP6A
      "1100 0000 12345678 " UDP },
    { "ipv6-ext-truncated", ETH "86dd 60000000 0008 00 40 " IP6A
      "1101 0000 00000000" },
    { "ipv6-plen-too-big", ETH "86dd 60000000 0100 11 40 " IP6A UDP },
    { "vlan-ipv6-short-header", ETH "8100 0064 86dd 60000000 0008 11 40 "
      "20010db8" },
    { "ipv6-ah-tcp", ETH "86dd 60000000 002c 33 40 " IP6A
      "0604 0000 00000001 00000001 00000000 00000000 00000000 " TCP },
    { "ipv6-jumbo-plen0", ETH "86dd 60000000 0000 11 40 " IP6A UDP },
    { "icmpv6-echo", ETH "86dd 60000000 0008 3a 40 " IP6A
      "8000 0000 0001 0001" },
    { "icmpv6-short", ETH "86dd 60000000 0004 3a 40 " IP6A "8000 0000" },
    { "nd-ns-sll", ETH "86dd 60000000 0020 3a ff " IP6A
      "8700 0000 00000000 " ND_TARGET SLL },
    { "nd-na-tll", ETH "86dd 60000000 0020 3a ff " IP6A
      "8800 0000 60000000 " ND_TARGET TLL },
    { "nd-na-tll-sll", ETH "86dd 60000000 0028 3a ff " IP6A
      "8800 0000 60000000 " ND_TARGET TLL SLL },
    { "nd-duplicate-sll", ETH "86dd 60000000 0028 3a ff " IP6A
      "8700 0000 00000000 " ND_TARGET SLL SLL },
    { "nd-truncated-target", ETH "86dd 60000000 0010 3a ff " IP6A
      "8700 0000 00000000 20010db800000000" },
    { "nd-opt-len-zero", ETH "86dd 60000000 0020 3a ff " IP6A
      "8700 0000 00000000 " ND_TARGET "0100 0a0000000001" },
    { "nd-opt-beyond", ETH "86dd 60000000 0020 3a ff " IP6A
      "8700 0000 00000000 " ND_TARGET "0102 0a0000000001" },
    { "nd-unknown-opt-then-sll", ETH "86dd 60000000 0028 3a ff " IP6A
      "8700 0000 00000000 " ND_TARGET "0e01 000000000000 " SLL },
    { "nd-code-nonzero", ETH "86dd 60000000 0020 3a ff " IP6A
      "8701 0000 00000000 " ND_TARGET SLL },
    { "unknown-ethertype", ETH "88cc 0207 0400000000000000" },
};

/* Runs 'hex' through the ingress program with no flows and returns the
 * key it parsed; checks that the miss was counted. */
static void
parse_hex(const char *name, const char *hex, struct ofpbuf *pkt,
          struct ovs_bpf_flow_key *key)
{
    uint64_t missed = stat_get(OVS_BPF_STAT_MISSED);
    struct run r;

    pkt_hex(pkt, hex);
    run_name = name;
    run_ingress(pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "%s: retval %u, expected TC_ACT_SHOT",
          name, r.retval);
    CHECK(stat_get(OVS_BPF_STAT_MISSED) == missed + 1,
          "%s: miss not counted", name);
    scratch_key(key);
}

static void
test_parse(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_flow_key bkey, okey;
    struct ofpbuf pkt;
    size_t i;

    /* Both parsers decode as many VLAN tags: 2 (OVS's own default, which
     * ovs-vswitchd lowers to other_config:vlan-limit) or, for the
     * "parse-vlan-limit-1" case, 1. */
    flow_limit_vlans(vlan_limit ? vlan_limit : FLOW_MAX_VLAN_HEADERS);

    ofpbuf_init(&pkt, 0);
    set_n_masks(0);
    for (i = 0; i < ARRAY_SIZE(parse_cases); i++) {
        const struct parse_case *c = &parse_cases[i];

        parse_hex(c->name, c->hex, &pkt, &bkey);
        ovs_key(&pkt, IN_PORT, &okey);
        check_key(c->name, &bkey, &okey);

        /* A few fields checked against literal values, so that a mistake
         * in ovs_key()'s conversion cannot hide one in the parser. */
        if (!strcmp(c->name, "ipv4-tcp")) {
            CHECK(bkey.tp_src == htons(1234) && bkey.tp_dst == htons(80)
                  && bkey.tcp_flags == htons(0x012) && bkey.nw_proto == 6
                  && bkey.ipv4_src == htonl(0x0a000001)
                  && bkey.in_port == IN_PORT,
                  "ipv4-tcp: literal fields");
        } else if (!strcmp(c->name, "qinq-udp") && vlan_limit == 1) {
            CHECK(bkey.vlans[0].tpid == htons(0x88a8)
                  && bkey.vlans[0].tci == htons(0x10c8)
                  && !bkey.vlans[1].tpid && !bkey.vlans[1].tci
                  && bkey.eth_type == htons(0x8100) && !bkey.tp_dst,
                  "qinq-udp, vlan limit 1: literal fields");
        } else if (!strcmp(c->name, "qinq-udp")) {
            CHECK(bkey.vlans[0].tpid == htons(0x88a8)
                  && bkey.vlans[0].tci == htons(0x10c8)
                  && bkey.vlans[1].tpid == htons(0x8100)
                  && bkey.vlans[1].tci == htons(0x1064)
                  && bkey.eth_type == htons(0x0800)
                  && bkey.tp_dst == htons(0x1234),
                  "qinq-udp: literal fields");
        } else if (!strcmp(c->name, "ipv6-frag-later")) {
            CHECK(bkey.nw_proto == 44 && bkey.nw_frag == 3
                  && !bkey.tp_src, "ipv6-frag-later: literal fields");
        } else if (!strcmp(c->name, "nd-ns-sll")) {
            CHECK(bkey.arp_sha[5] == 1 && bkey.tcp_flags == htons(1)
                  && bkey.nd_target[15] == 2 && bkey.tp_src == htons(135),
                  "nd-ns-sll: literal fields");
        } else if (!strcmp(c->name, "mpls-3-labels")) {
            CHECK(bkey.mpls_lse[0] == htonl(0x1040)
                  && bkey.mpls_lse[1] == htonl(0x2040)
                  && bkey.mpls_lse[2] == htonl(0x3140)
                  && !bkey.mpls_lse[3] && !bkey.ipv4_src && !bkey.nw_proto
                  && !bkey.tp_dst, "mpls-3-labels: literal fields");
        } else if (!strcmp(c->name, "mpls-short-label")) {
            CHECK(bkey.mpls_lse[0] == htonl(0x1040) && !bkey.mpls_lse[1],
                  "mpls-short-label: literal fields");
        } else if (!strcmp(c->name, "nsh-md1-eth")) {
            CHECK(!bkey.nsh.flags && bkey.nsh.ttl == 63
                  && bkey.nsh.mdtype == 1 && bkey.nsh.np == 3
                  && bkey.nsh.path_hdr == htonl(0x00123403)
                  && bkey.nsh_context[0] == htonl(0x11223344)
                  && !bkey.nsh_context[1] && !bkey.nsh_context[2]
                  && bkey.nsh_context[3] == htonl(0x55667788)
                  && !bkey.ipv4_src && !bkey.nw_proto && !bkey.tp_dst,
                  "nsh-md1-eth: literal fields");
        } else if (!strcmp(c->name, "nsh-md1-oam-ipv4")) {
            CHECK(bkey.nsh.flags == 1 && bkey.nsh.ttl == 8
                  && bkey.nsh.np == 1, "nsh-md1-oam-ipv4: literal fields");
        } else if (!strcmp(c->name, "nsh-md2-tlv")) {
            CHECK(bkey.nsh.mdtype == 2 && bkey.nsh.ttl == 9
                  && bkey.nsh.path_hdr == htonl(0x105)
                  && !bkey.nsh_context[0] && !bkey.nsh_context[1],
                  "nsh-md2-tlv: literal fields");
        } else if (!strcmp(c->name, "nsh-version-1")
                   || !strcmp(c->name, "nsh-md1-bad-len")) {
            CHECK(!bkey.nsh.mdtype && !bkey.nsh.path_hdr
                  && !bkey.nsh_context[0] && bkey.eth_type == htons(0x894f),
                  "%s: literal fields", c->name);
        } else if (!strcmp(c->name, "ipv4-bad-ihl")) {
            CHECK(bkey.eth_type == htons(0x0800) && !bkey.ipv4_src
                  && !bkey.nw_proto, "ipv4-bad-ihl: literal fields");
        }
    }
    ofpbuf_uninit(&pkt);
    printf("%"PRIuSIZE" packets parsed as OVS parses them\n",
           ARRAY_SIZE(parse_cases));
}

/* ------------------------------------------------------------------ */
/* Flows and actions.                                                 */
/* ------------------------------------------------------------------ */

static void
exact_mask(struct ovs_bpf_flow_key *mask)
{
    memset(mask, 0xff, sizeof *mask);
    mask->pad0 = 0;
    mask->pad1 = 0;
}

/* The mask list as written to 'flow_masks'. */
static struct ovs_bpf_mask masks[OVS_BPF_MAX_MASKS];

static void
set_mask(uint32_t mask_id, const struct ovs_bpf_flow_key *mask)
{
    struct ovs_bpf_mask *m = &masks[mask_id];

    if (mask) {
        dpif_bpf_mask_compile(mask, m);
    } else {
        memset(m, 0, sizeof *m);
    }
    update(flow_masks_fd, &mask_id, m);
}

/* The flow table key of 'key' under mask 'mask_id' (set with set_mask()),
 * and the fd of its table. */
static int
flow_table_key(uint32_t mask_id, const struct ovs_bpf_flow_key *key,
               struct ovs_bpf_flow_table_key *tk)
{
    dpif_bpf_table_key(mask_id, &masks[mask_id], key, tk);
    return flow_table_fds[masks[mask_id].table];
}

/* The statistics of the BPF flow entry 'flow', its slots summed as
 * ovs-vswitchd sums them (see struct ovs_bpf_flow). */
static struct ovs_bpf_flow_stats
flow_stats(const struct ovs_bpf_flow *flow)
{
    struct ovs_bpf_flow_stats sum;

    memset(&sum, 0, sizeof sum);
    for (int i = 0; i < OVS_BPF_FLOW_STATS_SLOTS; i++) {
        const struct ovs_bpf_flow_stats *st = &flow->stats[i];

        sum.packets += st->packets;
        sum.bytes += st->bytes;
        sum.used_ns = MAX(sum.used_ns, st->used_ns);
        sum.tcp_flags |= st->tcp_flags;
    }
    return sum;
}

/* Installs a flow for 'key' under mask 'mask_id' (exact if 'mask' is
 * NULL) and makes sure the lookup searches that mask. */
static void
add_flow(uint32_t mask_id, const struct ovs_bpf_flow_key *key,
         const struct ovs_bpf_flow_key *mask,
         const struct ovs_bpf_action *acts, uint32_t n, uint32_t flags)
{
    struct ovs_bpf_flow_key exact;
    struct ovs_bpf_flow_table_key tk;
    struct ovs_bpf_flow *flow = xzalloc(sizeof *flow);
    int fd;

    if (!mask) {
        exact_mask(&exact);
        mask = &exact;
    }
    set_mask(mask_id, mask);
    fd = flow_table_key(mask_id, key, &tk);
    flow->flags = flags;
    flow->n_actions = n;
    if (n <= OVS_BPF_FLOW_INLINE_ACTIONS) {
        memcpy(flow->actions, acts, n * sizeof *acts);
    } else {
        /* A long list goes to 'flow_actions', as ovs-vswitchd writes it. */
        static uint64_t last_id;
        struct ovs_bpf_flow_actions *fa = xzalloc(sizeof *fa);

        memcpy(fa->actions, acts, n * sizeof *acts);
        flow->actions_id = ++last_id;
        update(flow_actions_fd, &flow->actions_id, fa);
        free(fa);
    }
    update(fd, &tk, flow);
    free(flow);
}

static void
del_flows(void)
{
    struct ovs_bpf_flow_table_key key;
    uint32_t i;

    for (i = 0; i < OVS_BPF_N_FLOW_TABLES; i++) {
        while (!bpf_map_get_next_key(flow_table_fds[i], NULL, &key)) {
            bpf_map_delete_elem(flow_table_fds[i], &key);
        }
    }
    for (i = 0; i < OVS_BPF_MAX_MASKS; i++) {
        set_mask(i, NULL);
    }
    set_n_masks(0);
}

/* The key the ingress program computes for 'pkt' (a miss with no
 * masks). */
static void
key_of(const struct ofpbuf *pkt, struct ovs_bpf_flow_key *key)
{
    struct run r;

    set_n_masks(0);
    run_ingress(pkt, &r);
    scratch_key(key);
    poll_upcalls();             /* Drop the miss upcall. */
}

/* Installs 'acts' as an exact-match flow for 'pkt' with recirc_id 0. */
static void
flow_for(const struct ofpbuf *pkt, const struct ovs_bpf_action *acts,
         uint32_t n)
{
    struct ovs_bpf_flow_key key;

    del_flows();
    key_of(pkt, &key);
    add_flow(0, &key, NULL, acts, n, 0);
    set_n_masks(1);
}

/* Installs 'acts', which end with recirc(1), as the exact-match flows of
 * 'pkt' with recirc_id 0 and 1: a recirculation loop. */
static void
recirc_loop_for(const struct ofpbuf *pkt, const struct ovs_bpf_action *acts,
                uint32_t n)
{
    struct ovs_bpf_flow_key key;

    flow_for(pkt, acts, n);
    key_of(pkt, &key);
    key.recirc_id = 1;
    add_flow(0, &key, NULL, acts, n, 0);
    set_n_masks(1);
}

#define ACT(TYPE, ...) \
    ((struct ovs_bpf_action) { .type = OVS_BPF_ACTION_##TYPE, __VA_ARGS__ })
#define OUTPUT(PORT) ACT(OUTPUT, .u.output.port = (PORT))

static struct ovs_bpf_action
userspace_act(const char *userdata)
{
    struct ovs_bpf_action a = ACT(USERSPACE);

    a.u.userspace.userdata_len = strlen(userdata);
    memcpy(a.u.userspace.userdata, userdata, strlen(userdata));
    return a;
}

/* Checks that 'pkt', which goes past a bound of the parser, misses even
 * with a flow installed for the partial key the parser got ('bkey'), and
 * that the miss is counted as parse_incomplete. */
static void
check_incomplete_misses(const char *name, const struct ofpbuf *pkt,
                        const struct ovs_bpf_flow_key *bkey)
{
    struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    uint64_t incomplete, missed, hit;
    struct run r;

    del_flows();
    add_flow(0, bkey, NULL, &out, 1, 0);
    set_n_masks(1);
    incomplete = stat_get(OVS_BPF_STAT_PARSE_INCOMPLETE);
    missed = stat_get(OVS_BPF_STAT_MISSED);
    hit = stat_get(OVS_BPF_STAT_HIT);
    poll_upcalls();             /* Drop the upcalls of earlier runs. */
    run_name = name;
    run_ingress(pkt, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_SHOT && n_upcalls == 1
          && stat_get(OVS_BPF_STAT_HIT) == hit
          && stat_get(OVS_BPF_STAT_MISSED) == missed + 1
          && stat_get(OVS_BPF_STAT_PARSE_INCOMPLETE) == incomplete + 1,
          "%s: matched the flow of its partial key (retval %u, %d upcalls)",
          name, r.retval, n_upcalls);
    del_flows();
}

/* Appends to 'hex' an IPv6 packet from ETH on whose payload is 'n_ext'
 * destination options headers of 8 bytes each, then 'l4' (hex) of protocol
 * 'proto' and 'l4_len' bytes. */
static void
ipv6_ext_chain(struct ds *hex, int n_ext, uint8_t proto, const char *l4,
               int l4_len)
{
    int i;

    ds_put_format(hex, ETH "86dd 60000000 %04x %02x 40 " IP6A,
                  n_ext * 8 + l4_len, n_ext ? 60 : proto);
    for (i = 0; i < n_ext; i++) {
        ds_put_format(hex, "%02x00 0000 00000000 ",
                      i < n_ext - 1 ? 60 : proto);
    }
    ds_put_cstr(hex, l4);
}

/* Appends to 'hex' a neighbor solicitation with 'n_nonces' nonce options
 * (8 bytes each, which OVS steps over) and then a source link-layer address
 * option. */
static void
nd_options(struct ds *hex, int n_nonces)
{
    int i;

    ds_put_format(hex, ETH "86dd 60000000 %04x 3a ff " IP6A
                  "8700 0000 00000000 " ND_TARGET, 24 + 8 * (n_nonces + 1));
    for (i = 0; i < n_nonces; i++) {
        ds_put_cstr(hex, "0e01 000000000000 ");
    }
    ds_put_cstr(hex, SLL);
}

/* The parser's bounds (bpf/parse.h).  Within them, however deep the
 * headers, the key is OVS's.  Past them, the key is the one of a parse
 * that stopped there, and the packet must never be looked up with it. */
static void
test_parse_limits(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_flow_key bkey, okey;
    struct ofpbuf pkt;
    struct ds hex = DS_EMPTY_INITIALIZER;
    uint64_t incomplete;
    int i;

    ofpbuf_init(&pkt, 0);
    set_n_masks(0);

    /* As many extension headers as the parser follows, and as many ND
     * options as it scans: OVS's key, not counted as incomplete. */
    incomplete = stat_get(OVS_BPF_STAT_PARSE_INCOMPLETE);
    ipv6_ext_chain(&hex, OVS_BPF_MAX_IPV6_EXT, 17, UDP, 8);
    parse_hex("ipv6-max-ext", ds_cstr(&hex), &pkt, &bkey);
    ovs_key(&pkt, IN_PORT, &okey);
    CHECK(okey.nw_proto == 17 && okey.tp_dst == htons(0x1234),
          "OVS parses the longest chain");
    check_key("ipv6-max-ext", &bkey, &okey);

    ds_clear(&hex);
    nd_options(&hex, OVS_BPF_MAX_ND_OPTS - 1);
    parse_hex("nd-max-opts", ds_cstr(&hex), &pkt, &bkey);
    ovs_key(&pkt, IN_PORT, &okey);
    CHECK(okey.arp_sha[5] == 1, "OVS finds the last ND option");
    check_key("nd-max-opts", &bkey, &okey);

    /* A transport header beyond what direct packet access reads: behind a
     * 2,048-byte extension header. */
    ds_clear(&hex);
    ds_put_cstr(&hex, ETH "86dd 60000000 0808 3c 40 " IP6A "11ff");
    for (i = 0; i < 2046; i++) {
        ds_put_cstr(&hex, "00");
    }
    ds_put_cstr(&hex, " " UDP);
    parse_hex("ipv6-far-udp", ds_cstr(&hex), &pkt, &bkey);
    ovs_key(&pkt, IN_PORT, &okey);
    CHECK(okey.tp_dst == htons(0x1234), "OVS parses the far UDP header");
    check_key("ipv6-far-udp", &bkey, &okey);
    CHECK(stat_get(OVS_BPF_STAT_PARSE_INCOMPLETE) == incomplete,
          "a packet within the bounds was counted as incomplete");

    /* One extension header more: the BPF key keeps the addresses only, as
     * for a malformed chain, and the packet must not match a flow of that
     * key. */
    ds_clear(&hex);
    ipv6_ext_chain(&hex, OVS_BPF_MAX_IPV6_EXT + 1, 17, UDP, 8);
    parse_hex("ipv6-too-many-ext", ds_cstr(&hex), &pkt, &bkey);
    ovs_key(&pkt, IN_PORT, &okey);
    CHECK(okey.nw_proto == 17 && okey.tp_dst == htons(0x1234),
          "OVS parses the chain one header longer");
    okey.ipv6_label = 0;
    okey.nw_proto = okey.nw_tos = okey.nw_ttl = okey.nw_frag = 0;
    okey.tp_src = okey.tp_dst = 0;
    check_key("ipv6-too-many-ext", &bkey, &okey);
    check_incomplete_misses("ipv6-too-many-ext", &pkt, &bkey);

    /* One ND option more: the source link-layer address is not seen. */
    ds_clear(&hex);
    nd_options(&hex, OVS_BPF_MAX_ND_OPTS);
    parse_hex("nd-too-many-opts", ds_cstr(&hex), &pkt, &bkey);
    ovs_key(&pkt, IN_PORT, &okey);
    CHECK(okey.arp_sha[5] == 1, "OVS finds the option past the bound");
    memset(okey.arp_sha, 0, sizeof okey.arp_sha);
    okey.tcp_flags = 0;
    check_key("nd-too-many-opts", &bkey, &okey);
    check_incomplete_misses("nd-too-many-opts", &pkt, &bkey);

    ds_destroy(&hex);
    ofpbuf_uninit(&pkt);
}

static void
test_lookup(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_flow_key key, mask;
    struct ovs_bpf_flow_table_key tk;
    struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    struct ovs_bpf_flow flow;
    uint64_t hit, mask_hit, missed, slow;
    struct ofpbuf pkt;
    struct run r;
    int fd;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_TCP);
    del_flows();
    key_of(&pkt, &key);

    /* Mask 0 unused, mask 1 matches on eth_type only (with a flow for
     * IPv6, so not this packet), mask 2 exact. */
    memset(&mask, 0, sizeof mask);
    mask.eth_type = OVS_BE16_MAX;
    key.eth_type = htons(ETH_TYPE_IPV6);
    add_flow(1, &key, &mask, &out, 1, 0);
    key.eth_type = htons(ETH_TYPE_IP);
    add_flow(2, &key, NULL, &out, 1, 0);
    set_mask(0, NULL);
    set_n_masks(3);

    hit = stat_get(OVS_BPF_STAT_HIT);
    mask_hit = stat_get(OVS_BPF_STAT_MASK_HIT);
    run_ingress(&pkt, &r);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "hit: retval %u", r.retval);
    CHECK(stat_get(OVS_BPF_STAT_HIT) == hit + 2, "hits not counted");
    /* Masks 1 and 2 probed by the first packet (mask 0 is not in use),
     * mask 2 only by the second, which the mask cache sends there (see
     * test_mask_cache()). */
    CHECK(stat_get(OVS_BPF_STAT_MASK_HIT) == mask_hit + 3,
          "mask_hit %"PRIu64", expected +3",
          stat_get(OVS_BPF_STAT_MASK_HIT) - mask_hit);

    fd = flow_table_key(2, &key, &tk);
    if (bpf_map_lookup_elem(fd, &tk, &flow)) {
        ovs_fatal(errno, "flow lookup");
    }
    {
        struct ovs_bpf_flow_stats st = flow_stats(&flow);
        int slot = MIN(test_cpu, OVS_BPF_FLOW_STATS_SLOTS - 1);

        CHECK(st.packets == 2 && st.bytes == 2 * pkt.size
              && st.tcp_flags == 0x012 && st.used_ns,
              "flow stats: %"PRIu64" packets %"PRIu64" bytes flags %#x",
              (uint64_t) st.packets, (uint64_t) st.bytes, st.tcp_flags);
        /* All in the slot of this CPU (struct ovs_bpf_flow). */
        CHECK(flow.stats[slot].packets == 2,
              "CPU %d: %"PRIu64" packets in slot %d, expected 2", test_cpu,
              (uint64_t) flow.stats[slot].packets, slot);
    }

    /* A flow deleted and installed again counts from zero: its new entry
     * (which the kernel may place in the memory of the old one) has the
     * statistics that ovs-vswitchd wrote, none. */
    assert(!bpf_map_delete_elem(fd, &tk));
    add_flow(2, &key, NULL, &out, 1, 0);
    run_ingress(&pkt, &r);
    if (bpf_map_lookup_elem(fd, &tk, &flow)) {
        ovs_fatal(errno, "flow lookup");
    }
    CHECK(flow_stats(&flow).packets == 1,
          "flow installed again: %"PRIu64" packets, expected 1",
          (uint64_t) flow_stats(&flow).packets);

    /* The masks are searched in the order given, and the hits counted
     * for the mask that matched. */
    {
        static const uint8_t busiest_first[] = { 2, 0, 1 };
        uint64_t mask2 = mask_stats_get(2), mask0 = mask_stats_get(0);

        set_mask_order(busiest_first, 3);
        mask_hit = stat_get(OVS_BPF_STAT_MASK_HIT);
        run_ingress(&pkt, &r);
        CHECK(r.retval == TC_ACT_REDIRECT, "reordered: retval %u",
              r.retval);
        CHECK(stat_get(OVS_BPF_STAT_MASK_HIT) == mask_hit + 1,
              "reordered: mask_hit %"PRIu64", expected +1",
              stat_get(OVS_BPF_STAT_MASK_HIT) - mask_hit);
        CHECK(mask_stats_get(2) == mask2 + 1 && mask_stats_get(0) == mask0,
              "mask_stats: mask 2 +%"PRIu64" mask 0 +%"PRIu64,
              mask_stats_get(2) - mask2, mask_stats_get(0) - mask0);
    }

    /* Only the masks of the order are searched. */
    missed = stat_get(OVS_BPF_STAT_MISSED);
    set_n_masks(2);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "miss: retval %u", r.retval);
    CHECK(stat_get(OVS_BPF_STAT_MISSED) == missed + 1, "miss not counted");

    /* A userspace-only flow sends SLOW_PATH upcalls with its key. */
    set_n_masks(3);
    flow.flags = OVS_BPF_FLOW_F_USERSPACE;
    update(fd, &tk, &flow);
    slow = stat_get(OVS_BPF_STAT_SLOW_PATH);
    poll_upcalls();             /* Drop the miss upcall above. */
    run_ingress(&pkt, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_SHOT, "slow path: retval %u", r.retval);
    CHECK(stat_get(OVS_BPF_STAT_SLOW_PATH) == slow + 1,
          "slow path not counted");
    CHECK(n_upcalls == 1
          && upcall_recs[0].hdr.type == OVS_BPF_UPCALL_SLOW_PATH
          && !memcmp(&upcall_recs[0].hdr.flow, &tk, sizeof tk),
          "slow path upcall (%d upcalls)", n_upcalls);

    /* A flow without actions drops. */
    flow.flags = 0;
    flow.n_actions = 0;
    update(fd, &tk, &flow);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "drop flow: retval %u", r.retval);

    /* A packet from an ifindex that is not a port is left to the stack,
     * below OVS_BPF_IFINDEX_PORTS_SIZE ('ifindex_ports') and above it
     * ('ifindexes')... */
    for (int i = 0; i < 2; i++) {
        struct __sk_buff c = {
            .ingress_ifindex = (i ? OVS_BPF_IFINDEX_PORTS_SIZE + 7
                                  : IN_IFINDEX + 1),
        };
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt.data,
                    .data_size_in = pkt.size, .ctx_in = &c,
                    .ctx_size_in = sizeof c, .repeat = 1);

        if (bpf_prog_test_run_opts(ingress_fd, &opts)) {
            ovs_fatal(errno, "BPF_PROG_TEST_RUN");
        }
        CHECK(opts.retval == TC_ACT_OK, "foreign ifindex %u: retval %u",
              c.ingress_ifindex, opts.retval);
    }

    /* ...and a large ifindex of a port, in 'ifindexes', is that port: the
     * packet gets in_port IN_PORT, so it hits the flow (which drops). */
    {
        uint32_t big = OVS_BPF_IFINDEX_PORTS_SIZE + 7, port = IN_PORT;
        struct __sk_buff c = { .ingress_ifindex = big };
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt.data,
                    .data_size_in = pkt.size, .ctx_in = &c,
                    .ctx_size_in = sizeof c, .repeat = 1);
        uint64_t hits = stat_get(OVS_BPF_STAT_HIT);

        update(ifindexes_fd, &big, &port);
        if (bpf_prog_test_run_opts(ingress_fd, &opts)) {
            ovs_fatal(errno, "BPF_PROG_TEST_RUN");
        }
        CHECK(opts.retval == TC_ACT_SHOT
              && stat_get(OVS_BPF_STAT_HIT) == hits + 1,
              "large ifindex of a port: retval %u, hits +%"PRIu64,
              opts.retval, stat_get(OVS_BPF_STAT_HIT) - hits);
        bpf_map_delete_elem(ifindexes_fd, &big);
    }
    ofpbuf_uninit(&pkt);
}

/* The counters the mask cache tests look at. */
struct cache_stats {
    uint64_t hit, missed, mask_hit, cache_hit, cache_miss;
};

static void
cache_stats_get(struct cache_stats *c)
{
    c->hit = stat_get(OVS_BPF_STAT_HIT);
    c->missed = stat_get(OVS_BPF_STAT_MISSED);
    c->mask_hit = stat_get(OVS_BPF_STAT_MASK_HIT);
    c->cache_hit = stat_get(OVS_BPF_STAT_MASK_CACHE_HIT);
    c->cache_miss = stat_get(OVS_BPF_STAT_MASK_CACHE_MISS);
}

/* Runs 'pkt' once and checks that it moved the counters by the amounts
 * given: hit, missed, masks probed by a hit, mask cache hit and miss. */
static void
cache_run(const char *what, const struct ofpbuf *pkt, uint64_t hit,
          uint64_t missed, uint64_t mask_hit, uint64_t cache_hit,
          uint64_t cache_miss)
{
    struct cache_stats a, b;
    struct run r;

    cache_stats_get(&a);
    run_ingress(pkt, &r);
    poll_upcalls();
    cache_stats_get(&b);
    CHECK(b.hit - a.hit == hit && b.missed - a.missed == missed
          && b.mask_hit - a.mask_hit == mask_hit
          && b.cache_hit - a.cache_hit == cache_hit
          && b.cache_miss - a.cache_miss == cache_miss,
          "%s: hit +%"PRIu64" missed +%"PRIu64" mask_hit +%"PRIu64
          " cache hit +%"PRIu64" miss +%"PRIu64", expected +%"PRIu64
          " +%"PRIu64" +%"PRIu64" +%"PRIu64" +%"PRIu64, what,
          b.hit - a.hit, b.missed - a.missed, b.mask_hit - a.mask_hit,
          b.cache_hit - a.cache_hit, b.cache_miss - a.cache_miss,
          hit, missed, mask_hit, cache_hit, cache_miss);
    CHECK(r.retval == (hit ? TC_ACT_REDIRECT : TC_ACT_SHOT),
          "%s: retval %u", what, r.retval);
}

/* The mask cache entry of 'key' on the test CPU. */
static struct ovs_bpf_mask_cache_entry
mask_cache_get(const struct ovs_bpf_flow_key *key)
{
    struct ovs_bpf_mask_cache_entry e[n_cpus];
    uint32_t hash = ovs_bpf_mask_cache_hash((const __u64 *) key);
    uint32_t idx = hash & (OVS_BPF_MASK_CACHE_SIZE - 1);

    if (bpf_map_lookup_elem(mask_cache_fd, &idx, e)) {
        ovs_fatal(errno, "mask cache lookup");
    }
    CHECK(!e[test_cpu].valid || e[test_cpu].hash == hash,
          "mask cache entry of another hash %#x, expected %#x",
          e[test_cpu].hash, hash);
    return e[test_cpu];
}

/* The packets counted by the flow of 'key' under mask 'mask_id'. */
static uint64_t
flow_packets(uint32_t mask_id, const struct ovs_bpf_flow_key *key)
{
    struct ovs_bpf_flow_table_key tk;
    struct ovs_bpf_flow flow;
    int fd = flow_table_key(mask_id, key, &tk);

    return (bpf_map_lookup_elem(fd, &tk, &flow) ? 0
            : flow_stats(&flow).packets);
}

/* The per-CPU mask cache: with all OVS_BPF_MAX_MASKS masks in use, a
 * microflow's second packet probes only the mask of its flow, the last in
 * the search order; the cache never answers for a flow deleted since, for
 * a mask no longer in the search order, nor for a mask slot given to
 * another mask; with one mask it is left alone. */
static void
test_mask_cache(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    const uint32_t last = OVS_BPF_MAX_MASKS - 1;
    struct ovs_bpf_action out1 = OUTPUT(LO_PORT1);
    struct ovs_bpf_action out2 = OUTPUT(LO_PORT2);
    struct ovs_bpf_mask_cache_entry e;
    struct ovs_bpf_flow_table_key tk;
    struct ovs_bpf_flow_key key, mask;
    uint8_t ids[OVS_BPF_MAX_MASKS];
    struct ofpbuf pkt;
    int fd;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP);
    del_flows();
    key_of(&pkt, &key);

    /* Many masks: all in use, the first 63 exact ones with no flow (the
     * flow table key holds the mask's index, so none matches), the
     * packet's flow under the last one. */
    exact_mask(&mask);
    for (uint32_t i = 0; i < last; i++) {
        set_mask(i, &mask);
    }
    add_flow(last, &key, NULL, &out1, 1, 0);
    set_n_masks(OVS_BPF_MAX_MASKS);
    e = mask_cache_get(&key);
    CHECK(!e.valid, "mask cache entry before any packet");

    /* The first packet searches all masks and fills the cache entry... */
    cache_run("first packet", &pkt, 1, 0, OVS_BPF_MAX_MASKS, 0, 1);
    e = mask_cache_get(&key);
    CHECK(e.valid && e.mask_id == last && e.pos == last,
          "cache entry: valid %u mask %u pos %u, expected mask and pos %u",
          e.valid, e.mask_id, e.pos, last);
    /* ...which the next ones hit: one probe. */
    cache_run("cache hit", &pkt, 1, 0, 1, 1, 0);
    cache_run("cache hit again", &pkt, 1, 0, 1, 1, 0);
    CHECK(flow_packets(last, &key) == 3, "flow packets %"PRIu64,
          flow_packets(last, &key));

    /* A flow deleted after being cached is not matched: a miss. */
    fd = flow_table_key(last, &key, &tk);
    if (bpf_map_delete_elem(fd, &tk)) {
        ovs_fatal(errno, "flow delete");
    }
    cache_run("flow deleted", &pkt, 0, 1, 0, 0, 1);

    /* Back, it is found through the cache entry, which still holds. */
    add_flow(last, &key, NULL, &out1, 1, 0);
    cache_run("flow back", &pkt, 1, 0, 1, 1, 0);

    /* A mask taken out of the search order is not probed through the
     * cache, although its entry and its flow are still there (as while
     * ovs-vswitchd removes it). */
    set_n_masks(last);
    cache_run("mask removed", &pkt, 0, 1, 0, 0, 1);

    /* The mask slot given to another mask (the Ethertype only, with a flow
     * of its own that outputs elsewhere), at the same place of the order:
     * the cache sends the packet to that slot, where the lookup finds the
     * new flow, under the new mask.  The old flow, left in its table here,
     * is not matched: the probe uses the slot's mask as it is now. */
    memset(&mask, 0, sizeof mask);
    mask.eth_type = OVS_BE16_MAX;
    add_flow(last, &key, &mask, &out2, 1, 0);
    set_n_masks(OVS_BPF_MAX_MASKS);
    cache_run("mask slot reused", &pkt, 1, 0, 1, 1, 0);
    CHECK(flow_packets(last, &key) == 1, "new flow packets %"PRIu64,
          flow_packets(last, &key));
    {
        struct ovs_bpf_flow old = { .n_actions = 0 };

        CHECK(!bpf_map_lookup_elem(fd, &tk, &old)
              && flow_stats(&old).packets == 1,
              "old flow: %"PRIu64" packets, expected 1 (not matched)",
              (uint64_t) flow_stats(&old).packets);
    }

    /* The order changed (the mask moved first, as the rebalance does): the
     * entry's place no longer holds that mask, so the search in order finds
     * the flow at its first probe and writes the new place. */
    ids[0] = last;
    for (uint32_t i = 1; i < OVS_BPF_MAX_MASKS; i++) {
        ids[i] = i - 1;
    }
    set_mask_order(ids, OVS_BPF_MAX_MASKS);
    cache_run("reordered", &pkt, 1, 0, 1, 0, 1);
    e = mask_cache_get(&key);
    CHECK(e.valid && e.mask_id == last && e.pos == 0,
          "cache entry after reorder: mask %u pos %u", e.mask_id, e.pos);
    cache_run("reordered, cached", &pkt, 1, 0, 1, 1, 0);

    /* One mask: no cache, neither hit nor miss counted. */
    del_flows();
    add_flow(0, &key, NULL, &out1, 1, 0);
    set_n_masks(1);
    cache_run("one mask", &pkt, 1, 0, 1, 0, 0);

    del_flows();
    ofpbuf_uninit(&pkt);
}

/* Every flow table: a mask with as many words as the table holds (and one
 * fewer, so that the table key ends with a zero word) finds its flow, in
 * that table, and the table key the program builds is the one userspace
 * builds.  The packet, a neighbour solicitation, has few zero key words,
 * and the masks take the nonzero words first, so that a word the program
 * leaves out changes the table key. */
static void
test_lookup_tables(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    uint64_t key_words[OVS_BPF_KEY_WORDS], mask_words[OVS_BPF_KEY_WORDS];
    struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    struct ovs_bpf_flow_key key, mask;
    int order[OVS_BPF_KEY_WORDS];
    struct ofpbuf pkt;
    struct run r;
    int n_order = 0;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "86dd 60000000 0020 3a ff " IP6A
            "8700 0000 00000000 " ND_TARGET SLL);
    del_flows();
    key_of(&pkt, &key);
    memcpy(key_words, &key, sizeof key_words);

    /* Word 0 (in_port, recirc_id), then the nonzero words from the last,
     * then the zero words. */
    order[n_order++] = 0;
    for (int i = OVS_BPF_KEY_WORDS - 1; i > 0; i--) {
        if (key_words[i]) {
            order[n_order++] = i;
        }
    }
    for (int i = 1; i < OVS_BPF_KEY_WORDS; i++) {
        if (!key_words[i]) {
            order[n_order++] = i;
        }
    }

    for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        for (int less = 0; less < 2; less++) {
            int n = dpif_bpf_flow_table_words(t) - less;
            struct ovs_bpf_flow_table_key tk, up;
            struct ovs_bpf_flow flow;
            uint64_t hit;
            int fd;

            memset(mask_words, 0, sizeof mask_words);
            for (int k = 0; k < n; k++) {
                mask_words[order[k]] = UINT64_MAX;
            }
            memcpy(&mask, mask_words, sizeof mask);
            mask.pad0 = mask.pad1 = 0;

            del_flows();
            add_flow(0, &key, &mask, &out, 1, OVS_BPF_FLOW_F_USERSPACE);
            set_n_masks(1);
            CHECK(masks[0].table == t, "%d words: table %d, expected %d",
                  n, masks[0].table, t);
            fd = flow_table_key(0, &key, &tk);

            hit = stat_get(OVS_BPF_STAT_HIT);
            poll_upcalls();
            run_ingress(&pkt, &r);
            poll_upcalls();
            CHECK(stat_get(OVS_BPF_STAT_HIT) == hit + 1,
                  "%d words: no hit in table %d", n, t);
            CHECK(n_upcalls == 1
                  && upcall_recs[0].hdr.type == OVS_BPF_UPCALL_SLOW_PATH,
                  "%d words: no slow path upcall", n);
            if (n_upcalls == 1) {
                up = upcall_recs[0].hdr.flow;
                dpif_bpf_table_key_normalize(t, &up);
                CHECK(!memcmp(&up, &tk, sizeof tk),
                      "%d words: table keys differ", n);
            }
            CHECK(!bpf_map_lookup_elem(fd, &tk, &flow)
                  && flow_stats(&flow).packets == 1,
                  "%d words: flow not found or not counted", n);
        }
    }
    del_flows();
    ofpbuf_uninit(&pkt);
}

static void
test_upcall(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ofpbuf pkt;
    struct run r;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "8100 0064 0800 " IP4_TCP);
    del_flows();
    run_prog(ingress_fd, pkt.data, pkt.size, 77, &r);
    poll_upcalls();
    CHECK(n_upcalls == 1, "%d upcalls, expected 1", n_upcalls);
    if (n_upcalls == 1) {
        const struct ovs_bpf_upcall *u = &upcall_recs[0].hdr;

        CHECK(u->type == OVS_BPF_UPCALL_MISS && u->in_port == IN_PORT
              && u->pkt_len == pkt.size && u->cap_len == pkt.size
              && !u->recirc_id && u->skb_mark == 77 && !u->userdata_len
              && !u->vlan_tci,
              "miss upcall header: type %u in_port %u len %u/%u mark %u",
              u->type, u->in_port, u->pkt_len, u->cap_len, u->skb_mark);
        CHECK(!memcmp(upcall_recs[0].pkt, pkt.data, pkt.size),
              "miss upcall packet differs");
        /* A BPF_PROG_TEST_RUN skb is CHECKSUM_NONE: the skb's checksum
         * state, read from the kernel's struct sk_buff, says so. */
        CHECK(!u->flags && !u->csum_start && !u->csum_offset,
              "miss upcall of a CHECKSUM_NONE skb: flags %#x csum %u+%u",
              u->flags, u->csum_start, u->csum_offset);
    }
    ofpbuf_uninit(&pkt);
}

static void
test_output(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action acts[OVS_BPF_MAX_ACTIONS];
    struct drops drops;
    struct ofpbuf pkt;
    struct run r;
    int i;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP
            "000000000000000000000000000000000000000000000000000000000000"
            "000000000000000000000000000000000000000000000000000000000000");

    /* Two outputs: a clone to the first, the packet to the second. */
    acts[0] = OUTPUT(LO_PORT1);
    acts[1] = OUTPUT(LO_PORT2);
    flow_for(&pkt, acts, 2);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "2 outputs: retval %u", r.retval);
    check_drops("2 outputs", &drops, NO_DROP, 0);

    /* Output to a port that does not exist is skipped. */
    acts[0] = OUTPUT(99);
    flow_for(&pkt, acts, 2);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "missing port: retval %u", r.retval);
    check_drops("missing port", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_NO_PORT), 1);
    acts[0] = OUTPUT(OVS_BPF_MAX_PORTS + 5);
    flow_for(&pkt, acts, 2);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT,
          "port beyond the ports array: retval %u", r.retval);
    check_drops("port beyond the ports array", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_NO_PORT), 1);

    /* userspace() then output: an ACTION upcall with the userdata and
     * the flow's key. */
    acts[0] = userspace_act("cookie");
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    run_ingress(&pkt, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_REDIRECT, "userspace: retval %u", r.retval);
    CHECK(n_upcalls == 1
          && upcall_recs[0].hdr.type == OVS_BPF_UPCALL_ACTION
          && upcall_recs[0].hdr.userdata_len == 6
          && !memcmp(upcall_recs[0].hdr.userdata, "cookie", 6)
          /* Word 0 of an exact-match table key: in_port, recirc_id. */
          && (uint32_t) upcall_recs[0].hdr.flow.words[0] == IN_PORT,
          "userspace upcall (%d upcalls)", n_upcalls);

    /* trunc() before the last output cuts the packet. */
    acts[0] = ACT(TRUNC, .u.trunc.max_len = 60);
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == 60,
          "trunc: retval %u length %u", r.retval, r.out_len);

    /* ...but cannot cut a copy: a truncated output that is not the last
     * is refused and counted, the next output gets the whole packet. */
    acts[2] = OUTPUT(LO_PORT2);
    flow_for(&pkt, acts, 3);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == pkt.size,
          "trunc not last: retval %u length %u", r.retval, r.out_len);
    check_drops("trunc not last", &drops,
                OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_TRUNC), 1);

    /* 32 slots (31 set_mark + output): the lookup program runs them all
     * itself (set_mark is one of the actions it runs), in order. */
    for (i = 0; i < 31; i++) {
        acts[i] = ACT(SET_MARK, .u.meta.value = i + 1, .u.meta.mask = 0xff);
    }
    acts[31] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 32);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.ctx_out.mark == 31,
          "32 actions: retval %u mark %u", r.retval, r.ctx_out.mark);
    check_drops("32 actions", &drops, NO_DROP, 0);

    /* 32 slots of which 31 have a program of their own (set_ipv4 of the
     * TTL + output): every program of the chain runs within the kernel's
     * tail call limit. */
    for (i = 0; i < 31; i++) {
        acts[i] = ACT(SET_IPV4, .u.ipv4.ttl = i + 1, .u.ipv4.ttl_mask = 0xff);
    }
    acts[31] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 32);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len > 22 && r.out[22] == 31,
          "32 chained actions: retval %u ttl %u", r.retval,
          r.out_len > 22 ? r.out[22] : 0);
    check_drops("32 chained actions", &drops, NO_DROP, 0);

    /* A set_mark in the lookup program, then a chain of programs, then
     * set_mark again in a program of the chain: all run, in order. */
    acts[0] = ACT(SET_MARK, .u.meta.value = 0x10, .u.meta.mask = 0xff);
    acts[1] = ACT(SET_IPV4, .u.ipv4.ttl = 7, .u.ipv4.ttl_mask = 0xff);
    acts[2] = ACT(SET_MARK, .u.meta.value = 0x200, .u.meta.mask = 0xf00);
    acts[3] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 4);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.ctx_out.mark == 0x210
          && r.out_len > 22 && r.out[22] == 7,
          "set_mark, set_ipv4, set_mark: retval %u mark %#x", r.retval,
          r.ctx_out.mark);

    /* Masked set_priority. */
    acts[0] = ACT(SET_PRIORITY, .u.meta.value = 0x1234, .u.meta.mask = 0xff00);
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.ctx_out.priority == 0x1200,
          "set_priority: retval %u priority %#x", r.retval,
          r.ctx_out.priority);

    ofpbuf_uninit(&pkt);
}

/* Checks the IPv4 header checksum and the TCP/UDP/ICMPv6 checksum of the
 * Ethernet frame 'data' (IPv4 or IPv6 right after the MACs or one VLAN
 * tag). */
static bool
checksums_ok(const char *name, const uint8_t *data, size_t len)
{
    struct dp_packet *p = dp_packet_clone_data(data, len);
    struct flow flow;
    bool ok = true;

    pkt_metadata_init(&p->md, ODPP_NONE);
    flow_extract(p, &flow);
    if (flow.dl_type == htons(ETH_TYPE_IP)) {
        struct ip_header *ip = dp_packet_l3(p);
        size_t l4_len = ntohs(ip->ip_tot_len) - IP_IHL(ip->ip_ihl_ver) * 4;

        if (csum(ip, IP_IHL(ip->ip_ihl_ver) * 4)) {
            fail("%s: bad IPv4 header checksum", name);
            ok = false;
        }
        if (flow.nw_proto == IPPROTO_TCP
            || (flow.nw_proto == IPPROTO_UDP
                && ((struct udp_header *) dp_packet_l4(p))->udp_csum)) {
            uint32_t partial = packet_csum_pseudoheader(ip);

            if (csum_finish(csum_continue(partial, dp_packet_l4(p),
                                          l4_len))) {
                fail("%s: bad L4 checksum", name);
                ok = false;
            }
        }
    } else if (flow.dl_type == htons(ETH_TYPE_IPV6)) {
        struct ovs_16aligned_ip6_hdr *ip6 = dp_packet_l3(p);
        size_t l4_len = dp_packet_l4_size(p);
        uint32_t partial = packet_csum_pseudoheader6(ip6);

        partial = csum_add32(partial, htonl(flow.nw_proto));
        partial = csum_add32(partial, htonl(l4_len));
        if (csum_finish(csum_continue(partial, dp_packet_l4(p), l4_len))) {
            fail("%s: bad L4 checksum", name);
            ok = false;
        }
    }
    dp_packet_delete(p);
    return ok;
}

/* Fills in the checksums of the Ethernet frame in 'pkt'. */
static void
fix_checksums(struct ofpbuf *pkt)
{
    struct dp_packet *p = dp_packet_clone_data(pkt->data, pkt->size);
    struct flow flow;

    pkt_metadata_init(&p->md, ODPP_NONE);
    flow_extract(p, &flow);
    if (flow.dl_type == htons(ETH_TYPE_IP)) {
        struct ip_header *ip = dp_packet_l3(p);
        size_t l4_len = ntohs(ip->ip_tot_len) - IP_IHL(ip->ip_ihl_ver) * 4;
        ovs_be16 *l4_csum = NULL;

        ip->ip_csum = 0;
        ip->ip_csum = csum(ip, IP_IHL(ip->ip_ihl_ver) * 4);
        if (flow.nw_proto == IPPROTO_TCP) {
            l4_csum = &((struct tcp_header *) dp_packet_l4(p))->tcp_csum;
        } else if (flow.nw_proto == IPPROTO_UDP) {
            l4_csum = &((struct udp_header *) dp_packet_l4(p))->udp_csum;
        }
        if (l4_csum) {
            *l4_csum = 0;
            *l4_csum = csum_finish(csum_continue(
                           packet_csum_pseudoheader(ip), dp_packet_l4(p),
                           l4_len));
        }
    } else if (flow.dl_type == htons(ETH_TYPE_IPV6)) {
        struct ovs_16aligned_ip6_hdr *ip6 = dp_packet_l3(p);
        size_t l4_len = dp_packet_l4_size(p);
        uint32_t partial = packet_csum_pseudoheader6(ip6);
        ovs_be16 *l4_csum;

        partial = csum_add32(partial, htonl(flow.nw_proto));
        partial = csum_add32(partial, htonl(l4_len));
        l4_csum = ALIGNED_CAST(ovs_be16 *,
                               ((uint8_t *) dp_packet_l4(p)
                                + (flow.nw_proto == IPPROTO_TCP ? 16
                                   : flow.nw_proto == IPPROTO_UDP ? 6 : 2)));
        *l4_csum = 0;
        *l4_csum = csum_finish(csum_continue(partial, dp_packet_l4(p),
                                             l4_len));
    }
    ofpbuf_clear(pkt);
    ofpbuf_put(pkt, dp_packet_data(p), dp_packet_size(p));
    dp_packet_delete(p);
}

/* Runs 'pkt' through a flow with the 'n' actions 'acts' (rewrites, then an
 * output), and compares the result with 'expected' (the packet OVS's own
 * packet_set_*() functions produce) and with valid checksums. */
static void
check_set_n(const char *name, const struct ofpbuf *pkt,
            const struct ovs_bpf_action *acts, uint32_t n,
            const struct dp_packet *expected)
{
    struct drops drops;
    struct run r;

    flow_for(pkt, acts, n);
    drops_get(&drops);
    run_ingress(pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "%s: retval %u", name, r.retval);
    check_drops(name, &drops, NO_DROP, 0);
    checksums_ok(name, r.out, r.out_len);
    if (r.out_len != dp_packet_size(expected)
        || memcmp(r.out, dp_packet_data(expected), r.out_len)) {
        struct ds s = DS_EMPTY_INITIALIZER;

        fail("%s: packet differs from OVS's", name);
        ds_put_hex_dump(&s, r.out, r.out_len, 0, false);
        ds_put_cstr(&s, "expected:\n");
        ds_put_hex_dump(&s, dp_packet_data(expected),
                        dp_packet_size(expected), 0, false);
        fputs(ds_cstr(&s), stderr);
        ds_destroy(&s);
    }
}

/* check_set_n() of 'act' and an output. */
static void
check_set(const char *name, const struct ofpbuf *pkt,
          struct ovs_bpf_action act, const struct dp_packet *expected)
{
    struct ovs_bpf_action acts[2] = { act, OUTPUT(LO_PORT1) };

    check_set_n(name, pkt, acts, 2, expected);
}

static struct dp_packet *
extracted(const struct ofpbuf *pkt)
{
    struct dp_packet *p = dp_packet_clone_data(pkt->data, pkt->size);
    struct flow flow;

    pkt_metadata_init(&p->md, ODPP_NONE);
    flow_extract(p, &flow);
    return p;
}

static void
test_set_eth(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action a = ACT(SET_ETH);
    struct eth_header *eth;
    struct dp_packet *exp;
    struct ofpbuf pkt;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_TCP);
    fix_checksums(&pkt);
    memcpy(a.u.eth.dst, "\x02\x00\x00\x00\xab\xcd", 6);
    memset(a.u.eth.dst_mask, 0xff, 6);
    memcpy(a.u.eth.src, "\x00\x00\x00\x00\x00\x77", 6);
    memcpy(a.u.eth.src_mask, "\x00\x00\x00\x00\x00\x0f", 6);
    exp = extracted(&pkt);
    eth = dp_packet_eth(exp);
    eth->eth_dst = (struct eth_addr) ETH_ADDR_C(02,00,00,00,ab,cd);
    eth->eth_src = (struct eth_addr) ETH_ADDR_C(0a,00,00,00,00,07);
    check_set("set_eth", &pkt, a, exp);

    /* The same rewrite in two slots, run by the lookup program's loop of
     * leading actions (a set_eth and an output alone take a path of their
     * own), and after a slot of another type (a set_ipv4 that changes
     * nothing), by the set_eth program of the chain of tail calls. */
    {
        struct ovs_bpf_action acts[3];

        acts[0] = a;
        memset(acts[0].u.eth.src_mask, 0, 6);
        acts[1] = a;
        memset(acts[1].u.eth.dst_mask, 0, 6);
        acts[2] = OUTPUT(LO_PORT1);
        check_set_n("set_eth in two slots", &pkt, acts, 3, exp);

        acts[0] = ACT(SET_IPV4);
        acts[1] = a;
        check_set_n("set_eth after set_ipv4", &pkt, acts, 3, exp);
    }
    dp_packet_delete(exp);
    ofpbuf_uninit(&pkt);
}

static void
test_set_ipv4(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    static const char *const pkts[] = {
        ETH "0800 " IP4_TCP,
        ETH "0800 " IP4_UDP,
        ETH "8100 0064 0800 " IP4_TCP,
        ETH "0800 4500 001c 1234 2000 4011 0000 " IP4A UDP, /* 1st frag. */
        ETH "0800 4500 001c 1234 0000 4001 0000 " IP4A "0800 f7ff 0000 0000",
    };
    struct ovs_bpf_action a = ACT(SET_IPV4);
    struct ofpbuf pkt;
    size_t i;

    a.u.ipv4.src = htonl(0xc0a80101);
    a.u.ipv4.src_mask = OVS_BE32_MAX;
    a.u.ipv4.dst = htonl(0x000000fe);
    a.u.ipv4.dst_mask = htonl(0x000000ff);
    a.u.ipv4.tos = 0xb8;
    a.u.ipv4.tos_mask = 0xfc;
    a.u.ipv4.ttl = 7;
    a.u.ipv4.ttl_mask = 0xff;

    ofpbuf_init(&pkt, 0);
    for (i = 0; i < ARRAY_SIZE(pkts); i++) {
        struct dp_packet *exp;
        char name[32];

        pkt_hex(&pkt, pkts[i]);
        fix_checksums(&pkt);
        exp = extracted(&pkt);
        packet_set_ipv4(exp, htonl(0xc0a80101), htonl(0x0a0000fe), 0xb8, 7);
        snprintf(name, sizeof name, "set_ipv4 #%"PRIuSIZE, i);
        check_set(name, &pkt, a, exp);
        dp_packet_delete(exp);
    }

    /* A UDP checksum of zero (none) stays zero. */
    pkt_hex(&pkt, ETH "0800 " IP4_UDP);
    fix_checksums(&pkt);
    ((uint8_t *) pkt.data)[14 + 20 + 6] = 0;
    ((uint8_t *) pkt.data)[14 + 20 + 7] = 0;
    {
        struct dp_packet *exp = extracted(&pkt);

        packet_set_ipv4(exp, htonl(0xc0a80101), htonl(0x0a0000fe), 0xb8, 7);
        check_set("set_ipv4 udp csum 0", &pkt, a, exp);
        dp_packet_delete(exp);
    }
    ofpbuf_uninit(&pkt);
}

static void
test_set_ipv6(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    static const char *const pkts[] = {
        ETH "86dd 6abcdef1 0014 06 40 " IP6A TCP,
        ETH "86dd 60000000 0008 11 40 " IP6A UDP,
        ETH "86dd 60000000 0008 3a 40 " IP6A "8000 0000 0001 0001",
        ETH "86dd 60000000 0020 00 40 " IP6A
        "3c00 0000 00000000 2b00 0000 00000000 1100 0000 00000000 " UDP,
    };
    struct in6_addr src, dst, new_src, new_dst;
    struct ovs_bpf_action a_src = ACT(SET_IPV6_SRC);
    struct ovs_bpf_action a_dst = ACT(SET_IPV6_DST);
    struct ovs_bpf_action a_misc = ACT(SET_IPV6_MISC);
    struct ofpbuf pkt;
    size_t i;

    ipv6_parse("2001:db8::1", &src);
    ipv6_parse("2001:db8::2", &dst);
    ipv6_parse("fd00::1:2:3:4", &new_src);
    ipv6_parse("2001:db8::77", &new_dst);
    memcpy(a_src.u.ipv6_addr.addr, &new_src, 16);
    memset(a_src.u.ipv6_addr.mask, 0xff, 16);
    /* Only the last byte of the destination. */
    memcpy(a_dst.u.ipv6_addr.addr, &new_dst, 16);
    a_dst.u.ipv6_addr.mask[15] = 0xff;
    a_misc.u.ipv6_misc.label = htonl(0x12345);
    a_misc.u.ipv6_misc.label_mask = htonl(0xfffff);
    a_misc.u.ipv6_misc.tclass = 0x28;
    a_misc.u.ipv6_misc.tclass_mask = 0xff;
    a_misc.u.ipv6_misc.hlimit = 9;
    a_misc.u.ipv6_misc.hlimit_mask = 0xff;

    ofpbuf_init(&pkt, 0);
    for (i = 0; i < ARRAY_SIZE(pkts); i++) {
        struct dp_packet *exp;
        struct ovs_16aligned_ip6_hdr *nh;
        uint8_t tc, hl;
        ovs_be32 fl;
        char name[40];

        pkt_hex(&pkt, pkts[i]);
        fix_checksums(&pkt);

        exp = extracted(&pkt);
        nh = dp_packet_l3(exp);
        tc = ntohl(get_16aligned_be32(&nh->ip6_flow)) >> 20;
        fl = get_16aligned_be32(&nh->ip6_flow) & htonl(IPV6_LABEL_MASK);
        hl = nh->ip6_hlim;
        packet_set_ipv6(exp, &new_src, &dst, tc, fl, hl);
        snprintf(name, sizeof name, "set_ipv6_src #%"PRIuSIZE, i);
        check_set(name, &pkt, a_src, exp);
        dp_packet_delete(exp);

        exp = extracted(&pkt);
        packet_set_ipv6(exp, &src, &new_dst, tc, fl, hl);
        snprintf(name, sizeof name, "set_ipv6_dst #%"PRIuSIZE, i);
        check_set(name, &pkt, a_dst, exp);
        dp_packet_delete(exp);

        exp = extracted(&pkt);
        packet_set_ipv6(exp, &src, &dst, 0x28, htonl(0x12345), 9);
        snprintf(name, sizeof name, "set_ipv6_misc #%"PRIuSIZE, i);
        check_set(name, &pkt, a_misc, exp);
        dp_packet_delete(exp);
    }
    ofpbuf_uninit(&pkt);
}

static void
test_set_l4(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action tcp = ACT(SET_TCP), udp = ACT(SET_UDP);
    struct dp_packet *exp;
    struct ofpbuf pkt;

    tcp.u.l4.src = htons(4321);
    tcp.u.l4.src_mask = OVS_BE16_MAX;
    tcp.u.l4.dst = htons(8080);
    tcp.u.l4.dst_mask = OVS_BE16_MAX;
    udp.u.l4.dst = htons(0x00ff);
    udp.u.l4.dst_mask = htons(0x00ff);

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_TCP);
    fix_checksums(&pkt);
    exp = extracted(&pkt);
    packet_set_tcp_port(exp, htons(4321), htons(8080));
    check_set("set_tcp ipv4", &pkt, tcp, exp);
    dp_packet_delete(exp);

    pkt_hex(&pkt, ETH "86dd 6abcdef1 0014 06 40 " IP6A TCP);
    fix_checksums(&pkt);
    exp = extracted(&pkt);
    packet_set_tcp_port(exp, htons(4321), htons(8080));
    check_set("set_tcp ipv6", &pkt, tcp, exp);
    dp_packet_delete(exp);

    pkt_hex(&pkt, ETH "0800 " IP4_UDP);
    fix_checksums(&pkt);
    exp = extracted(&pkt);
    packet_set_udp_port(exp, htons(0x35), htons(0x12ff));
    check_set("set_udp ipv4", &pkt, udp, exp);
    dp_packet_delete(exp);

    /* UDP checksum 0 stays 0. */
    ((uint8_t *) pkt.data)[14 + 20 + 6] = 0;
    ((uint8_t *) pkt.data)[14 + 20 + 7] = 0;
    exp = extracted(&pkt);
    packet_set_udp_port(exp, htons(0x35), htons(0x12ff));
    check_set("set_udp ipv4 csum 0", &pkt, udp, exp);
    dp_packet_delete(exp);

    /* Not a TCP packet: set_tcp leaves it alone. */
    exp = extracted(&pkt);
    check_set("set_tcp on udp", &pkt, tcp, exp);
    dp_packet_delete(exp);

    ofpbuf_uninit(&pkt);
}

static void
test_vlan(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action acts[4];
    struct ovs_bpf_flow_key key, bkey;
    struct ofpbuf pkt, untagged, tagged;
    uint64_t hit;
    struct run r;

    ofpbuf_init(&pkt, 0);
    ofpbuf_init(&untagged, 0);
    ofpbuf_init(&tagged, 0);

    /* pop_vlan of a tag in the packet bytes. */
    pkt_hex(&pkt, ETH "8100 0064 0800 " IP4_TCP);
    pkt_hex(&untagged, ETH "0800 " IP4_TCP);
    acts[0] = ACT(POP_VLAN);
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == untagged.size
          && !memcmp(r.out, untagged.data, untagged.size),
          "pop_vlan: retval %u length %u", r.retval, r.out_len);

    /* push_vlan puts the tag in skb metadata (an accelerated tag): after
     * a recirculation the parser must find it there, as the outer tag. */
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x88a8),
                  .u.push_vlan.tci = htons(0x0123));
    acts[1] = ACT(RECIRC, .u.recirc.id = 7);
    flow_for(&untagged, acts, 2);
    key_of(&untagged, &key);
    key.recirc_id = 7;
    key.vlans[0].tpid = htons(0x88a8);
    key.vlans[0].tci = htons(0x1123);
    acts[0] = OUTPUT(LO_PORT1);
    add_flow(0, &key, NULL, acts, 1, 0);
    set_n_masks(1);
    hit = stat_get(OVS_BPF_STAT_HIT);
    run_ingress(&untagged, &r);
    scratch_key(&bkey);
    CHECK(r.retval == TC_ACT_REDIRECT
          && stat_get(OVS_BPF_STAT_HIT) == hit + 2,
          "push_vlan + recirc: retval %u, %"PRIu64" hits", r.retval,
          stat_get(OVS_BPF_STAT_HIT) - hit);
    check_key("push_vlan + recirc", &bkey, &key);

    /* A second push moves the first tag into the bytes; a set_ipv4 after
     * it must find the IP header 4 bytes further. */
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(0x0064));
    acts[1] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x88a8),
                  .u.push_vlan.tci = htons(0x00c8));
    acts[2] = ACT(SET_IPV4, .u.ipv4.ttl = 5, .u.ipv4.ttl_mask = 0xff);
    acts[3] = OUTPUT(LO_PORT1);
    fix_checksums(&untagged);
    flow_for(&untagged, acts, 4);
    run_ingress(&untagged, &r);
    pkt_hex(&tagged, ETH "8100 0064 0800 4500 0028 1234 4000 0506 0000 "
            IP4A TCP);
    fix_checksums(&tagged);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == tagged.size
          && !memcmp(r.out, tagged.data, tagged.size),
          "push_vlan x2 + set_ipv4: retval %u length %u", r.retval,
          r.out_len);
    checksums_ok("push_vlan x2 + set_ipv4", r.out, r.out_len);

    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&untagged);
    ofpbuf_uninit(&tagged);
}

/* A label stack entry: label, traffic class, bottom of stack, TTL. */
#define LSE(LABEL, TC, BOS, TTL) \
    htonl((uint32_t) (LABEL) << 12 | (TC) << 9 | (BOS) << 8 | (TTL))

/* Runs 'pkt' through a flow of 'acts' that ends with an output and checks
 * that the output is 'exp' (hex), byte for byte. */
static void
check_mpls_out(const char *name, const char *pkt_hex_,
               const struct ovs_bpf_action *acts, uint32_t n,
               const char *exp_hex)
{
    struct ofpbuf pkt, exp;
    struct drops drops;
    struct run r;

    ofpbuf_init(&pkt, 0);
    ofpbuf_init(&exp, 0);
    pkt_hex(&pkt, pkt_hex_);
    pkt_hex(&exp, exp_hex);
    flow_for(&pkt, acts, n);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == exp.size
          && !memcmp(r.out, exp.data, exp.size),
          "%s: retval %u, length %u (expected %"PRIu32")", name,
          r.retval, r.out_len, exp.size);
    check_drops(name, &drops, NO_DROP, 0);
    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&exp);
}

/* Runs 'pkt_hex_' as a GSO packet through a flow of 'acts', an Ethernet
 * encap or decap pair of NSH or MPLS among them (bpf/encap-eth.h), and
 * checks what becomes of it: if 'failed' is NO_DROP, it goes up unchanged
 * as a slow path packet of the flow, with its gso_size, for ovs-vswitchd to
 * cut and run the actions on; otherwise the action whose failure counter is
 * 'failed' drops it. */
static void
check_encap_gso(const char *name, const char *pkt_hex_,
                const struct ovs_bpf_action *acts, uint32_t n,
                uint32_t failed)
{
    const uint32_t gso_size = 1448;
    struct drops drops;
    struct ofpbuf pkt;
    uint64_t slow;
    struct run r;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, pkt_hex_);
    flow_for(&pkt, acts, n);
    drops_get(&drops);
    slow = stat_get(OVS_BPF_STAT_SLOW_PATH);
    poll_upcalls();             /* Drop the upcalls of earlier runs. */
    run_name = name;
    run_prog_gso(ingress_fd, pkt.data, pkt.size, 0, gso_size, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_SHOT, "%s: retval %u", name, r.retval);
    if (failed == NO_DROP) {
        CHECK(stat_get(OVS_BPF_STAT_SLOW_PATH) == slow + 1
              && n_upcalls == 1
              && upcall_recs[0].hdr.type == OVS_BPF_UPCALL_SLOW_PATH
              && upcall_recs[0].hdr.gso_size == gso_size
              && upcall_recs[0].hdr.cap_len == pkt.size
              && !memcmp(upcall_recs[0].pkt, pkt.data, pkt.size),
              "%s: no slow path upcall of the packet as it came "
              "(%d upcalls)", name, n_upcalls);
        check_drops(name, &drops, NO_DROP, 0);
    } else {
        CHECK(stat_get(OVS_BPF_STAT_SLOW_PATH) == slow && !n_upcalls,
              "%s: %d upcalls", name, n_upcalls);
        check_drops(name, &drops, failed, 1);
    }
    ofpbuf_uninit(&pkt);
}

/* Runs 'pkt' through a flow of 'acts' that ends with recirc(9), and checks
 * that the parser, after the recirculation, finds the key of 'exp_hex'
 * received with the accelerated tag 'vlan' (TPID and TCI as in the key,
 * 0 for none): it hits the flow installed for that key. */
static void
check_mpls_recirc(const char *name, const char *pkt_hex_,
                  const struct ovs_bpf_action *acts, uint32_t n,
                  const char *exp_hex, ovs_be16 tpid, ovs_be16 tci)
{
    struct ovs_bpf_flow_key key, bkey;
    struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    struct ofpbuf pkt, exp;
    uint64_t hit;
    struct run r;

    ofpbuf_init(&pkt, 0);
    ofpbuf_init(&exp, 0);
    pkt_hex(&pkt, pkt_hex_);
    pkt_hex(&exp, exp_hex);
    key_of(&exp, &key);
    if (tpid) {
        /* The outer tag in skb metadata: the parser puts it first. */
        key.vlans[1] = key.vlans[0];
        key.vlans[0].tpid = tpid;
        key.vlans[0].tci = tci;
    }
    key.recirc_id = 9;
    flow_for(&pkt, acts, n);
    add_flow(0, &key, NULL, &out, 1, 0);
    set_n_masks(1);
    hit = stat_get(OVS_BPF_STAT_HIT);
    run_ingress(&pkt, &r);
    scratch_key(&bkey);
    CHECK(r.retval == TC_ACT_REDIRECT
          && stat_get(OVS_BPF_STAT_HIT) == hit + 2,
          "%s: retval %u, %"PRIu64" hits", name, r.retval,
          stat_get(OVS_BPF_STAT_HIT) - hit);
    check_key(name, &bkey, &key);
    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&exp);
}

/* The outer Ethernet header of encap(mpls),encap(ethernet), and an IPv6
 * TCP packet and an ARP request to carry. */
#define MPLS_ETH "f2ff00000002 f2ff00000001 "
#define MPLS_IP6_TCP "60000000 0014 0640 " \
    "20010db8000000000000000000000001 " \
    "20010db8000000000000000000000002 " TCP
#define MPLS_ARP "0001 0800 0604 0001 0a0000000001 0a000001 000000000000 " \
    "0a000002"

/* An ADD_MPLS_ETH slot of label stack entry 'lse' and MPLS type
 * 'eth_type', under MPLS_ETH's addresses. */
static struct ovs_bpf_action
add_mpls_eth_act(ovs_be32 lse, ovs_be16 eth_type)
{
    struct ovs_bpf_action a = ACT(ADD_MPLS_ETH,
                                  .u.add_mpls_eth.lse = lse,
                                  .u.add_mpls_eth.eth_type = eth_type);
    struct eth_addr ea;

    eth_addr_from_uint64(0xf2ff00000002ULL, &ea);
    memcpy(a.u.add_mpls_eth.eth_dst, &ea, sizeof ea);
    eth_addr_from_uint64(0xf2ff00000001ULL, &ea);
    memcpy(a.u.add_mpls_eth.eth_src, &ea, sizeof ea);
    return a;
}

/* add_mpls+push_eth and pop_eth+pop_mpls: whole Ethernet frames behind a
 * label (bpf/actions-mpls-eth.h). */
static void
test_mpls_eth(void)
{
    const ovs_be32 lse1 = LSE(100, 3, 1, 64);     /* 00064740 */
    struct ovs_bpf_action acts[4];
    struct ovs_bpf_flow_key bkey;
    struct ofpbuf pkt;
    struct drops drops;
    struct run r;

    /* The whole frame behind the label and a new Ethernet header. */
    acts[0] = add_mpls_eth_act(lse1, htons(0x8847));
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("add_mpls_eth", ETH "0800 " IP4_TCP, acts, 2,
                   MPLS_ETH "8847 00064740 " ETH "0800 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.eth_type == htons(0x8847) && bkey.mpls_lse[0] == lse1
          && !bkey.mpls_lse[1] && bkey.eth_src[0] == 0xf2
          && !bkey.nw_proto && !bkey.ipv4_src,
          "add_mpls_eth: key eth_type %#x lse %#"PRIx32,
          ntohs(bkey.eth_type), ntohl(bkey.mpls_lse[0]));
    /* Multicast MPLS, of ARP and of a tagged frame; set(mpls) after it
     * changes the new label. */
    acts[0] = add_mpls_eth_act(lse1, htons(0x8848));
    check_mpls_out("add_mpls_eth mc", ETH "0806 " MPLS_ARP, acts, 2,
                   MPLS_ETH "8848 00064740 " ETH "0806 " MPLS_ARP);
    acts[1] = ACT(SET_MPLS, .u.mpls.lse = htonl(63),
                  .u.mpls.lse_mask = htonl(0xff));
    acts[2] = OUTPUT(LO_PORT1);
    check_mpls_out("add_mpls_eth tagged, set_mpls",
                   ETH "8100 0064 0800 " IP4_TCP, acts, 3,
                   MPLS_ETH "8848 0006473f " ETH "8100 0064 0800 " IP4_TCP);
    /* An accelerated tag goes into the inner frame's bytes. */
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(0x0064));
    acts[1] = add_mpls_eth_act(lse1, htons(0x8847));
    acts[2] = OUTPUT(LO_PORT1);
    check_mpls_out("push_vlan, add_mpls_eth", ETH "0800 " IP4_TCP, acts, 3,
                   MPLS_ETH "8847 00064740 " ETH "8100 0064 0800 " IP4_TCP);

    /* pop_eth,pop_mpls: the inner frame, byte for byte, then a
     * recirculation finds its key (as decap(),decap() does). */
    acts[0] = ACT(POP_ETH_MPLS);
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("pop_eth_mpls", MPLS_ETH "8847 00064740 " ETH "0800 "
                   IP4_TCP, acts, 2, ETH "0800 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.eth_type == htons(0x0800) && !bkey.mpls_lse[0]
          && bkey.eth_src[0] == 0x0a,
          "pop_eth_mpls: key eth_type %#x", ntohs(bkey.eth_type));
    check_mpls_out("pop_eth_mpls mc ipv6",
                   MPLS_ETH "8848 00064740 " ETH "86dd " MPLS_IP6_TCP,
                   acts, 2, ETH "86dd " MPLS_IP6_TCP);
    check_mpls_out("pop_eth_mpls arp",
                   MPLS_ETH "8847 00064740 " ETH "0806 " MPLS_ARP,
                   acts, 2, ETH "0806 " MPLS_ARP);
    acts[1] = ACT(RECIRC, .u.recirc.id = 9);
    check_mpls_recirc("pop_eth_mpls, recirc",
                      MPLS_ETH "8847 00064740 " ETH "0800 " IP4_TCP,
                      acts, 2, ETH "0800 " IP4_TCP, 0, 0);
    check_mpls_recirc("pop_eth_mpls tagged, recirc",
                      MPLS_ETH "8847 00064740 " ETH "8100 0064 0800 "
                      IP4_TCP, acts, 2, ETH "0800 " IP4_TCP,
                      htons(0x8100), htons(0x1064));

    /* Encap after decap, as the two flows of "datapath - encap decap mpls
     * actions" would in one. */
    acts[0] = ACT(POP_ETH_MPLS);
    acts[1] = add_mpls_eth_act(LSE(2, 0, 1, 63), htons(0x8847));
    acts[2] = OUTPUT(LO_PORT1);
    check_mpls_out("pop_eth_mpls, add_mpls_eth",
                   MPLS_ETH "8847 00064740 " ETH "0800 " IP4_TCP, acts, 3,
                   MPLS_ETH "8847 0000213f " ETH "0800 " IP4_TCP);

    /* GSO packets: up as they came when the pair is the flow's first
     * action; after another action, a failure of the action. */
    acts[0] = add_mpls_eth_act(lse1, htons(0x8847));
    acts[1] = OUTPUT(LO_PORT1);
    check_encap_gso("add_mpls_eth gso", ETH "0800 " IP4_TCP, acts, 2,
                    NO_DROP);
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(0x0064));
    acts[1] = add_mpls_eth_act(lse1, htons(0x8847));
    acts[2] = OUTPUT(LO_PORT1);
    check_encap_gso("push_vlan, add_mpls_eth gso", ETH "0800 " IP4_TCP,
                    acts, 3,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_ADD_MPLS_ETH));
    acts[0] = ACT(POP_ETH_MPLS);
    acts[1] = OUTPUT(LO_PORT1);
    check_encap_gso("pop_eth_mpls gso",
                    MPLS_ETH "8847 00064740 " ETH "0800 " IP4_TCP, acts, 2,
                    NO_DROP);

    /* Refused, and counted as a failure of the action: the pop of a label
     * that is not the bottom of the stack. */
    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, MPLS_ETH "8847 000c803f 00064740 " ETH "0800 " IP4_TCP);
    acts[0] = ACT(POP_ETH_MPLS);
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "pop_eth_mpls not bos: retval %u",
          r.retval);
    check_drops("pop_eth_mpls not bos", &drops,
                OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_POP_ETH_MPLS), 1);
    ofpbuf_uninit(&pkt);
}

static void
test_mpls(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    const ovs_be32 lse1 = LSE(100, 3, 1, 64);     /* 00064740 */
    const ovs_be32 lse2 = LSE(200, 0, 0, 63);     /* 000c803f */
    struct ovs_bpf_action acts[5];
    struct ovs_bpf_flow_key bkey;
    struct ofpbuf pkt;
    struct drops drops;
    struct run r;

    /* push_mpls onto IPv4: the label after the Ethernet header, with the
     * bottom of stack bit, TTL and traffic class as given. */
    acts[0] = ACT(PUSH_MPLS, .u.mpls.lse = lse1,
                  .u.mpls.eth_type = htons(0x8847));
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("push_mpls", ETH "0800 " IP4_TCP, acts, 2,
                   ETH "8847 00064740 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.eth_type == htons(0x8847) && bkey.mpls_lse[0] == lse1
          && !bkey.mpls_lse[1] && !bkey.nw_proto && !bkey.ipv4_src,
          "push_mpls: key eth_type %#x lse %#"PRIx32" nw_proto %u",
          ntohs(bkey.eth_type), ntohl(bkey.mpls_lse[0]), bkey.nw_proto);

    /* Two pushes (multicast MPLS), then set(mpls) of the outer label and
     * TTL only: the inner entry and the outer one's BOS bit and TC stay. */
    acts[0] = ACT(PUSH_MPLS, .u.mpls.lse = lse1,
                  .u.mpls.eth_type = htons(0x8848));
    acts[1] = ACT(PUSH_MPLS, .u.mpls.lse = lse2,
                  .u.mpls.eth_type = htons(0x8848));
    acts[2] = ACT(SET_MPLS, .u.mpls.lse = LSE(0x12345, 0, 0, 7),
                  .u.mpls.lse_mask = htonl(0xfffff0ff));
    acts[3] = OUTPUT(LO_PORT1);
    check_mpls_out("push_mpls x2 + set_mpls", ETH "0800 " IP4_TCP, acts, 4,
                   ETH "8848 12345007 00064740 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.eth_type == htons(0x8848)
          && bkey.mpls_lse[0] == htonl(0x12345007)
          && bkey.mpls_lse[1] == lse1 && !bkey.mpls_lse[2],
          "push_mpls x2: key lse %#"PRIx32" %#"PRIx32" %#"PRIx32,
          ntohl(bkey.mpls_lse[0]), ntohl(bkey.mpls_lse[1]),
          ntohl(bkey.mpls_lse[2]));

    /* pop_mpls of the only label: IPv4 again, byte for byte. */
    acts[0] = ACT(POP_MPLS, .u.mpls.eth_type = htons(0x0800));
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("pop_mpls", ETH "8847 00064740 " IP4_TCP, acts, 2,
                   ETH "0800 " IP4_TCP);

    /* pop_mpls of the outer of two: still MPLS, the inner label first. */
    acts[0] = ACT(POP_MPLS, .u.mpls.eth_type = htons(0x8847));
    check_mpls_out("pop_mpls of 2", ETH "8847 000c803f 00064740 " IP4_TCP,
                   acts, 2, ETH "8847 00064740 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.eth_type == htons(0x8847) && bkey.mpls_lse[0] == lse1
          && !bkey.mpls_lse[1],
          "pop_mpls of 2: key lse %#"PRIx32" %#"PRIx32,
          ntohl(bkey.mpls_lse[0]), ntohl(bkey.mpls_lse[1]));

    /* A stack deeper than the parser reads (3 entries): the pop takes the
     * outer one off, and the key gets the next 3 from the packet. */
    acts[0] = ACT(POP_MPLS, .u.mpls.eth_type = htons(0x8847));
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("pop_mpls of 4",
                   ETH "8847 00001040 00002040 00003040 00004140 " IP4_TCP,
                   acts, 2, ETH "8847 00002040 00003040 00004140 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.mpls_lse[0] == htonl(0x2040)
          && bkey.mpls_lse[1] == htonl(0x3040)
          && bkey.mpls_lse[2] == htonl(0x4140),
          "pop_mpls of 4: key lse %#"PRIx32" %#"PRIx32" %#"PRIx32,
          ntohl(bkey.mpls_lse[0]), ntohl(bkey.mpls_lse[1]),
          ntohl(bkey.mpls_lse[2]));

    /* set(mpls) TTL decrement: only the TTL byte changes. */
    acts[0] = ACT(SET_MPLS, .u.mpls.lse = htonl(63),
                  .u.mpls.lse_mask = htonl(0xff));
    check_mpls_out("set_mpls ttl", ETH "8847 00064740 " IP4_TCP, acts, 2,
                   ETH "8847 0006473f " IP4_TCP);

    /* Not MPLS: pop_mpls and set(mpls) leave the packet alone. */
    acts[0] = ACT(POP_MPLS, .u.mpls.eth_type = htons(0x86dd));
    acts[1] = ACT(SET_MPLS, .u.mpls.lse = htonl(1),
                  .u.mpls.lse_mask = htonl(0xffffffff));
    acts[2] = OUTPUT(LO_PORT1);
    check_mpls_out("pop_mpls, set_mpls of ipv4", ETH "0800 " IP4_TCP,
                   acts, 3, ETH "0800 " IP4_TCP);

    /* VLAN tags in the bytes: the label goes after them.  The helpers
     * leave the outer tag in skb metadata, where the parser finds it after
     * a recirculation. */
    acts[0] = ACT(PUSH_MPLS, .u.mpls.lse = lse1,
                  .u.mpls.eth_type = htons(0x8847));
    acts[1] = ACT(RECIRC, .u.recirc.id = 9);
    check_mpls_recirc("push_mpls after a tag",
                      ETH "8100 0064 0800 " IP4_TCP, acts, 2,
                      ETH "8847 00064740 " IP4_TCP,
                      htons(0x8100), htons(0x1064));
    check_mpls_recirc("push_mpls after two tags",
                      ETH "88a8 00c8 8100 0064 0800 " IP4_TCP, acts, 2,
                      ETH "8100 0064 8847 00064740 " IP4_TCP,
                      htons(0x88a8), htons(0x10c8));
    acts[0] = ACT(POP_MPLS, .u.mpls.eth_type = htons(0x0800));
    check_mpls_recirc("pop_mpls after a tag",
                      ETH "8100 0064 8847 00064740 " IP4_TCP, acts, 2,
                      ETH "0800 " IP4_TCP, htons(0x8100), htons(0x1064));
    check_mpls_recirc("pop_mpls after two tags",
                      ETH "88a8 00c8 8100 0064 8847 00064740 " IP4_TCP,
                      acts, 2, ETH "8100 0064 0800 " IP4_TCP,
                      htons(0x88a8), htons(0x10c8));

    /* An accelerated tag (pushed first) stays the outermost one. */
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(0x0064));
    acts[1] = ACT(PUSH_MPLS, .u.mpls.lse = lse1,
                  .u.mpls.eth_type = htons(0x8847));
    acts[2] = ACT(RECIRC, .u.recirc.id = 9);
    check_mpls_recirc("push_vlan, push_mpls", ETH "0800 " IP4_TCP, acts, 3,
                      ETH "8847 00064740 " IP4_TCP,
                      htons(0x8100), htons(0x1064));
    acts[1] = ACT(POP_MPLS, .u.mpls.eth_type = htons(0x0800));
    check_mpls_recirc("push_vlan, pop_mpls", ETH "8847 00064740 " IP4_TCP,
                      acts, 3, ETH "0800 " IP4_TCP,
                      htons(0x8100), htons(0x1064));
    /* An 802.1ad one stays 802.1ad. */
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x88a8),
                  .u.push_vlan.tci = htons(0x20c8));
    check_mpls_recirc("push_vlan 802.1ad, pop_mpls",
                      ETH "8847 00064740 " IP4_TCP, acts, 3,
                      ETH "0800 " IP4_TCP, htons(0x88a8), htons(0x30c8));
    acts[1] = ACT(PUSH_MPLS, .u.mpls.lse = lse1,
                  .u.mpls.eth_type = htons(0x8847));
    check_mpls_recirc("push_vlan 802.1ad, push_mpls", ETH "0800 " IP4_TCP,
                      acts, 3, ETH "8847 00064740 " IP4_TCP,
                      htons(0x88a8), htons(0x30c8));

    /* Refused, and counted as a failure of the action: a pop to a VLAN
     * ethertype, a push after three tags in the bytes. */
    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "8847 00064740 " IP4_TCP);
    acts[0] = ACT(POP_MPLS, .u.mpls.eth_type = htons(0x8100));
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "pop_mpls to 0x8100: retval %u",
          r.retval);
    check_drops("pop_mpls to 0x8100", &drops,
                OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_POP_MPLS), 1);
    ofpbuf_uninit(&pkt);

    test_mpls_eth();
}

/* NSH. */

#define NSH_ETH "f2ff00000002 f2ff00000001 894f "
/* MD type 1, TTL 63, SPI 0x1234, SI 255, c1 0x11223344. */
#define NSH_MD1 "0fc6 0103 001234ff 11223344 00000000 00000000 00000000 "
/* MD type 2 without TLVs, and with one 4-byte TLV. */
#define NSH_MD2 "0fc2 0203 001234ff "
#define NSH_MD2_TLV "0fc4 0203 001234ff 0102 0301 aabbccdd "
#define NSH_IP6_TCP "60000000 0014 0640 " \
    "20010db8000000000000000000000001 " \
    "20010db8000000000000000000000002 " TCP
#define ARP "0001 0800 0604 0001 0a0000000001 0a000001 000000000000 " \
    "0a000002"

/* A PUSH_NSH_ETH slot that puts the header 'hdr' (hex) in front of the
 * frame, under NSH_ETH's addresses. */
static struct ovs_bpf_action
push_nsh_act(const char *hdr)
{
    struct ovs_bpf_action a = ACT(PUSH_NSH_ETH);
    struct eth_addr ea;
    struct ofpbuf b;

    ofpbuf_init(&b, 0);
    pkt_hex(&b, hdr);
    ovs_assert(b.size <= sizeof a.u.push_nsh.hdr);
    memcpy(a.u.push_nsh.hdr, b.data, b.size);
    a.u.push_nsh.hdr_len = b.size;
    eth_addr_from_uint64(0xf2ff00000002ULL, &ea);
    memcpy(a.u.push_nsh.eth_dst, &ea, sizeof ea);
    eth_addr_from_uint64(0xf2ff00000001ULL, &ea);
    memcpy(a.u.push_nsh.eth_src, &ea, sizeof ea);
    ofpbuf_uninit(&b);
    return a;
}

static void
test_nsh(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action acts[4];
    struct ovs_bpf_flow_key bkey;
    struct ofpbuf pkt;
    struct drops drops;
    uint64_t slow;
    struct run r;

    /* push_nsh,push_eth, MD type 1: the whole frame behind the header. */
    acts[0] = push_nsh_act(NSH_MD1);
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("push_nsh md1", ETH "0800 " IP4_TCP, acts, 2,
                   NSH_ETH NSH_MD1 ETH "0800 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.eth_type == htons(0x894f) && bkey.nsh.mdtype == 1
          && bkey.nsh.np == 3 && bkey.nsh.ttl == 63
          && bkey.nsh.path_hdr == htonl(0x001234ff)
          && bkey.nsh_context[0] == htonl(0x11223344)
          && bkey.eth_src[0] == 0xf2 && !bkey.nw_proto && !bkey.ipv4_src,
          "push_nsh md1: key eth_type %#x mdtype %u path %#"PRIx32,
          ntohs(bkey.eth_type), bkey.nsh.mdtype, ntohl(bkey.nsh.path_hdr));

    /* MD type 2, without and with a TLV; of ARP and of a tagged frame. */
    acts[0] = push_nsh_act(NSH_MD2);
    check_mpls_out("push_nsh md2", ETH "0806 " ARP, acts, 2,
                   NSH_ETH NSH_MD2 ETH "0806 " ARP);
    scratch_key(&bkey);
    CHECK(bkey.nsh.mdtype == 2 && !bkey.nsh_context[0],
          "push_nsh md2: key mdtype %u", bkey.nsh.mdtype);
    acts[0] = push_nsh_act(NSH_MD2_TLV);
    check_mpls_out("push_nsh md2 tlv", ETH "8100 0064 0800 " IP4_TCP, acts,
                   2, NSH_ETH NSH_MD2_TLV ETH "8100 0064 0800 " IP4_TCP);
    /* An accelerated tag goes into the inner frame's bytes. */
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(0x0064));
    acts[1] = push_nsh_act(NSH_MD1);
    acts[2] = OUTPUT(LO_PORT1);
    check_mpls_out("push_vlan, push_nsh", ETH "0800 " IP4_TCP, acts, 3,
                   NSH_ETH NSH_MD1 ETH "8100 0064 0800 " IP4_TCP);

    /* pop_eth,pop_nsh: the inner frame, byte for byte. */
    acts[0] = ACT(POP_ETH_NSH);
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("pop_nsh md1", NSH_ETH NSH_MD1 ETH "0800 " IP4_TCP,
                   acts, 2, ETH "0800 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.eth_type == htons(0x0800) && !bkey.nsh.mdtype
          && bkey.eth_src[0] == 0x0a,
          "pop_nsh md1: key eth_type %#x", ntohs(bkey.eth_type));
    check_mpls_out("pop_nsh md2 tlv", NSH_ETH NSH_MD2_TLV ETH "0806 " ARP,
                   acts, 2, ETH "0806 " ARP);
    check_mpls_out("pop_nsh md2", NSH_ETH NSH_MD2 ETH "86dd " NSH_IP6_TCP,
                   acts, 2, ETH "86dd " NSH_IP6_TCP);

    /* Next protocol IPv4 (1): the pop would leave a layer 3 packet, which
     * goes up unchanged as a slow path packet of the flow. */
    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, NSH_ETH "0fc6 0101 001234ff 00000000 00000000 00000000 "
            "00000000 " IP4_TCP);
    flow_for(&pkt, acts, 2);
    drops_get(&drops);
    slow = stat_get(OVS_BPF_STAT_SLOW_PATH);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT
          && stat_get(OVS_BPF_STAT_SLOW_PATH) == slow + 1,
          "pop_nsh of ipv4: retval %u", r.retval);
    check_drops("pop_nsh of ipv4", &drops, NO_DROP, 0);
    /* Not first (after a set(nsh)): a failure of the action. */
    acts[0] = ACT(SET_NSH, .u.set_nsh.ttl = 1, .u.set_nsh.ttl_mask = 0xff);
    acts[1] = ACT(POP_ETH_NSH);
    acts[2] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 3);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "set, pop_nsh of ipv4: retval %u",
          r.retval);
    check_drops("set, pop_nsh of ipv4", &drops,
                OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_POP_ETH_NSH), 1);
    ofpbuf_uninit(&pkt);

    /* set(nsh): TTL, SPI and SI and the context of MD type 1. */
    acts[0] = ACT(SET_NSH, .u.set_nsh.ttl = 7, .u.set_nsh.ttl_mask = 0xff,
                  .u.set_nsh.flags_mask = 0xff,
                  .u.set_nsh.path_hdr = htonl(0x00010104),
                  .u.set_nsh.path_hdr_mask = OVS_BE32_MAX,
                  .u.set_nsh.context = { htonl(0x100f0e0d),
                                         htonl(0x0c0b0a09),
                                         htonl(0x08070605),
                                         htonl(0x04030201) },
                  .u.set_nsh.context_mask = { OVS_BE32_MAX, OVS_BE32_MAX,
                                              OVS_BE32_MAX, OVS_BE32_MAX });
    acts[1] = OUTPUT(LO_PORT1);
    check_mpls_out("set_nsh", NSH_ETH NSH_MD1 ETH "0800 " IP4_TCP, acts, 2,
                   NSH_ETH "01c6 0103 00010104 100f0e0d 0c0b0a09 08070605 "
                   "04030201 " ETH "0800 " IP4_TCP);
    scratch_key(&bkey);
    CHECK(bkey.nsh.ttl == 7 && bkey.nsh.path_hdr == htonl(0x00010104)
          && bkey.nsh_context[3] == htonl(0x04030201),
          "set_nsh: key ttl %u path %#"PRIx32, bkey.nsh.ttl,
          ntohl(bkey.nsh.path_hdr));

    /* Masked: SI decremented, c2's low byte; the rest stays. */
    acts[0] = ACT(SET_NSH, .u.set_nsh.path_hdr = htonl(0xfe),
                  .u.set_nsh.path_hdr_mask = htonl(0xff),
                  .u.set_nsh.context = { 0, htonl(0x77) },
                  .u.set_nsh.context_mask = { 0, htonl(0xff) });
    check_mpls_out("set_nsh masked", NSH_ETH NSH_MD1 ETH "0800 " IP4_TCP,
                   acts, 2,
                   NSH_ETH "0fc6 0103 001234fe 11223344 00000077 00000000 "
                   "00000000 " ETH "0800 " IP4_TCP);
    /* Masked SPI and flags and TTL of MD type 2: the TLVs stay. */
    acts[0] = ACT(SET_NSH, .u.set_nsh.path_hdr = htonl(0xabcd0000),
                  .u.set_nsh.path_hdr_mask = htonl(0xffffff00),
                  .u.set_nsh.flags = 2, .u.set_nsh.flags_mask = 0x3,
                  .u.set_nsh.ttl = 5, .u.set_nsh.ttl_mask = 0x3f,
                  .u.set_nsh.context = { htonl(1) },
                  .u.set_nsh.context_mask = { OVS_BE32_MAX });
    check_mpls_out("set_nsh md2", NSH_ETH NSH_MD2_TLV ETH "0800 " IP4_TCP,
                   acts, 2,
                   NSH_ETH "2144 0203 abcd00ff 0102 0301 aabbccdd "
                   ETH "0800 " IP4_TCP);
    /* Not NSH: left alone. */
    check_mpls_out("set_nsh of ipv4", ETH "0800 " IP4_TCP, acts, 2,
                   ETH "0800 " IP4_TCP);

    /* Encap after decap, as "nsh - replace header" (through a
     * recirculation there). */
    acts[0] = ACT(POP_ETH_NSH);
    acts[1] = push_nsh_act(NSH_MD2);
    acts[2] = OUTPUT(LO_PORT1);
    check_mpls_out("pop_nsh, push_nsh", NSH_ETH NSH_MD1 ETH "0800 " IP4_TCP,
                   acts, 3, NSH_ETH NSH_MD2 ETH "0800 " IP4_TCP);

    /* GSO packets (TCP over the NSH path): up as they came when the push or
     * pop is the flow's first action, for ovs-vswitchd to cut and
     * encapsulate or decapsulate; after another action, a failure of the
     * action. */
    acts[0] = push_nsh_act(NSH_MD1);
    acts[1] = OUTPUT(LO_PORT1);
    check_encap_gso("push_nsh gso", ETH "0800 " IP4_TCP, acts, 2, NO_DROP);
    acts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(0x0064));
    acts[1] = push_nsh_act(NSH_MD1);
    acts[2] = OUTPUT(LO_PORT1);
    check_encap_gso("push_vlan, push_nsh gso", ETH "0800 " IP4_TCP, acts, 3,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_PUSH_NSH_ETH));
    acts[0] = ACT(POP_ETH_NSH);
    acts[1] = OUTPUT(LO_PORT1);
    check_encap_gso("pop_nsh gso", NSH_ETH NSH_MD1 ETH "0800 " IP4_TCP,
                    acts, 2, NO_DROP);
    check_encap_gso("pop_nsh md2 ipv6 gso",
                    NSH_ETH NSH_MD2 ETH "86dd " NSH_IP6_TCP, acts, 2,
                    NO_DROP);
    acts[0] = ACT(SET_NSH, .u.set_nsh.ttl = 1, .u.set_nsh.ttl_mask = 0xff);
    acts[1] = ACT(POP_ETH_NSH);
    acts[2] = OUTPUT(LO_PORT1);
    check_encap_gso("set_nsh, pop_nsh gso",
                    NSH_ETH NSH_MD1 ETH "0800 " IP4_TCP, acts, 3,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_POP_ETH_NSH));
}

/* Returns the dp_hash that hash(sym_l4, 5) gives the packet of 'hex', as
 * the recirculation after it sees it. */
static uint32_t
sym_hash(const char *name, const char *hex)
{
    struct ovs_bpf_action acts[2];
    struct ovs_bpf_flow_key key;
    struct ofpbuf pkt;
    struct run r;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, hex);
    acts[0] = ACT(HASH, .u.hash.alg = 1, .u.hash.basis = 5);
    acts[1] = ACT(RECIRC, .u.recirc.id = 2);
    del_flows();
    key_of(&pkt, &key);
    add_flow(0, &key, NULL, acts, 2, 0);
    set_n_masks(1);
    run_ingress(&pkt, &r);
    scratch_key(&key);
    CHECK(key.recirc_id == 2 && key.dp_hash,
          "symmetric hash, %s: recirc_id %u, dp_hash %#x", name,
          key.recirc_id, key.dp_hash);
    ofpbuf_uninit(&pkt);
    return key.dp_hash;
}

/* Checks that hash(sym_l4) gives packets 'a' and 'b' the same dp_hash if
 * 'same', different ones otherwise. */
static void
sym_hash_check(const char *name, const char *a, const char *b, bool same)
{
    uint32_t ha = sym_hash(name, a);
    uint32_t hb = sym_hash(name, b);

    CHECK((ha == hb) == same, "symmetric hash, %s: %#x vs %#x", name,
          ha, hb);
}

static void
test_recirc(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_flow_key key, mask, k1, k2;
    struct ovs_bpf_action acts[2];
    struct ofpbuf pkt;
    struct drops drops;
    struct run r;
    int alg;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_TCP);

    /* recirc(1) in a flow of recirc_id 1: a loop, cut at
     * OVS_BPF_MAX_RECIRC. */
    acts[0] = ACT(RECIRC, .u.recirc.id = 1);
    recirc_loop_for(&pkt, acts, 1);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "recirc loop: retval %u", r.retval);
    check_drops("recirc loop", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_RECIRC_LIMIT), 1);

    /* hash + recirc: the second pass sees dp_hash, and a flow with
     * dp_hash wildcarded matches it. */
    for (alg = 0; alg < 2; alg++) {
        acts[0] = ACT(HASH, .u.hash.alg = alg, .u.hash.basis = 5);
        acts[1] = ACT(RECIRC, .u.recirc.id = 2);
        flow_for(&pkt, acts, 2);
        key_of(&pkt, &key);
        key.recirc_id = 2;
        exact_mask(&mask);
        mask.dp_hash = 0;
        acts[0] = OUTPUT(LO_PORT1);
        add_flow(1, &key, &mask, acts, 1, 0);
        set_n_masks(2);
        run_ingress(&pkt, &r);
        scratch_key(&k1);
        CHECK(r.retval == TC_ACT_REDIRECT && k1.dp_hash && k1.recirc_id == 2,
              "hash alg %d: retval %u dp_hash %#x", alg, r.retval,
              k1.dp_hash);
        run_ingress(&pkt, &r);
        scratch_key(&k2);
        CHECK(k1.dp_hash == k2.dp_hash, "hash alg %d not stable", alg);
    }

    /* The symmetric hash is the same in both directions: TCP over IPv4
     * and IPv6, ICMP (whose type and code, kept in the key as ports,
     * differ between an echo request and its reply), ARP (Ethernet
     * addresses).  The ports of TCP count, those of UDP do not (as in
     * ovs-vswitchd's flow_hash_symmetric_l3l4()). */
    sym_hash_check("tcp", ETH "0800 " IP4_TCP,
                   ETH "0800 4500 0028 1234 4000 4006 0000 "
                   "0a000002 0a000001 0050 04d2 " "00000001 00000000 "
                   "5012 2000 0000 0000", true);
    sym_hash_check("tcp6", ETH "86dd 6000 0000 0014 0640 " IP6A TCP,
                   ETH "86dd 6000 0000 0014 0640 "
                   "20010db8000000000000000000000002 "
                   "20010db8000000000000000000000001 "
                   "0050 04d2 00000001 00000000 5012 2000 0000 0000", true);
    sym_hash_check("icmp echo", ETH "0800 4500 001c 1234 4000 4001 0000 "
                   IP4A "0800 0000 0001 0001",
                   ETH "0800 4500 001c 1234 4000 4001 0000 "
                   "0a000002 0a000001 0000 0000 0001 0001", true);
    sym_hash_check("arp", ETH "0806 0001 0800 0604 0001 0a0000000001 "
                   "0a000001 000000000000 0a000002",
                   "0a0000000001 0a0000000002 0806 0001 0800 0604 0002 "
                   "0a0000000002 0a000002 0a0000000001 0a000001", true);
    sym_hash_check("tcp ports", ETH "0800 " IP4_TCP,
                   ETH "0800 4500 0028 1234 4000 4006 0000 " IP4A
                   "04d3 0050 00000001 00000000 5012 2000 0000 0000",
                   false);
    sym_hash_check("udp ports", ETH "0800 " IP4_UDP,
                   ETH "0800 4500 001c 1234 0000 4011 0000 " IP4A
                   "0036 1234 0008 0000", true);

    ofpbuf_uninit(&pkt);
}

/* Runs 'pkt' through a flow of recirc_id 0 with actions 'acts' (the last
 * of which is recirc(3)) and a flow of recirc_id 3 that matches any
 * conntrack state and outputs, and stores the key of the second pass in
 * '*k'. */
static void
ct_run(const struct ofpbuf *pkt, const struct ovs_bpf_action *acts,
       uint32_t n, struct ovs_bpf_flow_key *k)
{
    struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    struct ovs_bpf_flow_key key, mask;
    struct run r;

    del_flows();
    key_of(pkt, &key);
    add_flow(0, &key, NULL, acts, n, 0);
    key.recirc_id = 3;
    exact_mask(&mask);
    memset(&mask.ct_state, 0, offsetof(struct ovs_bpf_flow_key, tun_id)
                              - offsetof(struct ovs_bpf_flow_key, ct_state));
    add_flow(1, &key, &mask, &out, 1, 0);
    set_n_masks(2);
    run_ingress(pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "%s: retval %u", run_name, r.retval);
    scratch_key(k);
}

#define CS_NEW 0x01
#define CS_EST 0x02
#define CS_RPL 0x08
#define CS_INV 0x10
#define CS_TRK 0x20

/* One ct() action and a check of the conntrack fields it sets. */
static void
ct_check(const char *name, const struct ofpbuf *pkt,
         struct ovs_bpf_act_ct ct, uint8_t state, uint32_t mark,
         const char *orig_src)
{
    struct ovs_bpf_action acts[2];
    struct ovs_bpf_flow_key k;

    run_name = name;
    acts[0] = ACT(CT, .u.ct = ct);
    acts[1] = ACT(RECIRC, .u.recirc.id = 3);
    ct_run(pkt, acts, 2, &k);
    CHECK(k.ct_state == state && k.ct_zone == ct.zone && k.ct_mark == mark,
          "%s: ct_state %#x (expected %#x), zone %u, mark %#x (expected "
          "%#x)", name, k.ct_state, state, k.ct_zone, k.ct_mark, mark);
    if (orig_src) {
        ovs_be32 src = inet_addr(orig_src);

        CHECK(k.ct_nw_proto == k.nw_proto && k.ct_nw_src == src,
              "%s: orig tuple proto %u src "IP_FMT, name, k.ct_nw_proto,
              IP_ARGS(k.ct_nw_src));
    } else {
        CHECK(!k.ct_nw_proto && !k.ct_nw_src,
              "%s: orig tuple proto %u", name, k.ct_nw_proto);
    }
}

/* ct() 'ct' of 'pkt', run as 'name', that sends the packet up as an
 * OVS_BPF_UPCALL_CT upcall with the action list and the slot of the ct()
 * (the BPF programs are done with it), counted under 'stat' and no other
 * of the two ct() counters, and that asks for the TCP state move of
 * 'tcp_old' to 'tcp_new' (0 and 0: the ct() itself is for ovs-vswitchd). */
static void
ct_up_check(const char *name, const struct ofpbuf *pkt,
            struct ovs_bpf_act_ct ct, enum ovs_bpf_dp_stat stat,
            uint8_t tcp_old, uint8_t tcp_new)
{
    enum ovs_bpf_dp_stat other = (stat == OVS_BPF_STAT_CT_SLOW_PATH
                                  ? OVS_BPF_STAT_CT_TCP_STATE
                                  : OVS_BPF_STAT_CT_SLOW_PATH);
    struct ovs_bpf_action acts[2];
    const struct ovs_bpf_action *slots;
    const struct ovs_bpf_upcall *up;
    struct ovs_bpf_flow_key key;
    uint64_t n, n_other;
    struct run r;

    run_name = name;
    acts[0] = ACT(CT, .u.ct = ct);
    acts[1] = ACT(RECIRC, .u.recirc.id = 3);
    del_flows();
    key_of(pkt, &key);
    add_flow(0, &key, NULL, acts, 2, 0);
    set_n_masks(1);
    poll_upcalls();
    n = stat_get(stat);
    n_other = stat_get(other);
    run_ingress(pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "%s: retval %u", run_name, r.retval);
    CHECK(stat_get(stat) == n + 1 && stat_get(other) == n_other,
          "%s: ct_slow_path or ct_tcp_state miscounted", run_name);
    poll_upcalls();
    CHECK(n_upcalls == 1, "%s: %d upcalls", run_name, n_upcalls);
    if (n_upcalls != 1) {
        return;
    }
    /* upcall_recs[0].pkt holds what follows the header: the slots. */
    up = &upcall_recs[0].hdr;
    slots = ALIGNED_CAST(const struct ovs_bpf_action *, upcall_recs[0].pkt);
    CHECK(up->type == OVS_BPF_UPCALL_CT && up->ct_slot == 0
          && up->ct_end == 2 && up->cap_len == pkt->size,
          "%s: type %u, slot %u, end %u, %u bytes", run_name, up->type,
          up->ct_slot, up->ct_end, up->cap_len);
    CHECK(up->ct_tcp_old == tcp_old && up->ct_tcp_new == tcp_new,
          "%s: TCP state %u -> %u (expected %u -> %u)", run_name,
          up->ct_tcp_old, up->ct_tcp_new, tcp_old, tcp_new);
    CHECK(slots[0].type == OVS_BPF_ACTION_CT && slots[0].u.ct.zone == ct.zone
          && slots[1].type == OVS_BPF_ACTION_RECIRC
          && slots[1].u.recirc.id == 3,
          "%s: slots %u %u", run_name, slots[0].type, slots[1].type);
}

/* The moves of TCP states that BPF and ovs-vswitchd both make
 * (ovs_bpf_tcp_next()): a handshake, a close, an RST, a reopening, and the
 * packets that the kernel's TCP tracker ignores or calls invalid. */
static void
tcp_next_check(void)
{
    static const struct {
        uint8_t old;
        int reply;
        uint16_t flags;
        uint8_t new;
    } moves[] = {
#define T(S) OVS_BPF_TCPS_##S
        { T(NONE), 0, 0x002, T(SYN_SENT) },
        { T(SYN_SENT), 1, 0x012, T(SYN_RECV) },
        { T(SYN_RECV), 0, 0x010, T(ESTABLISHED) },
        { T(ESTABLISHED), 0, 0x018, T(KEEP) },
        { T(ESTABLISHED), 1, 0x011, T(FIN_WAIT) },
        { T(FIN_WAIT), 0, 0x010, T(CLOSE_WAIT) },
        { T(FIN_WAIT), 0, 0x011, T(LAST_ACK) },
        { T(CLOSE_WAIT), 0, 0x011, T(LAST_ACK) },
        { T(LAST_ACK), 1, 0x010, T(TIME_WAIT) },
        { T(TIME_WAIT), 0, 0x010, T(KEEP) },
        { T(TIME_WAIT), 0, 0x002, T(REOPEN) },
        { T(CLOSE), 0, 0x002, T(REOPEN) },
        { T(CLOSE), 1, 0x002, T(INVALID) },
        { T(ESTABLISHED), 1, 0x014, T(CLOSE) },
        { T(NONE), 0, 0x004, T(KEEP) },
        { T(NONE), 0, 0x010, T(ESTABLISHED) },
        { T(NONE), 1, 0x012, T(KEEP) },
        { T(SYN_SENT), 1, 0x002, T(SYN_SENT2) },
        { T(SYN_SENT2), 0, 0x012, T(SYN_RECV) },
        { T(SYN_SENT), 0, 0x010, T(INVALID) },
        { T(ESTABLISHED), 0, 0x002, T(KEEP) },
        /* The client's FIN or ACK before the SYN-ACK; the server's ACK then
         * (a half-open connection) is ignored. */
        { T(SYN_SENT), 0, 0x011, T(INVALID) },
        { T(SYN_SENT), 1, 0x011, T(INVALID) },
        { T(SYN_SENT2), 0, 0x010, T(INVALID) },
        { T(SYN_SENT), 1, 0x010, T(KEEP) },
        { T(SYN_SENT), 0, 0x022, T(SYN_SENT) },
        /* SYN-ACKs: the client's is invalid, but a retransmission after a
         * simultaneous open; a server's retransmission is ignored. */
        { T(ESTABLISHED), 0, 0x012, T(INVALID) },
        { T(SYN_SENT), 0, 0x012, T(INVALID) },
        { T(SYN_RECV), 0, 0x012, T(SYN_RECV) },
        { T(ESTABLISHED), 1, 0x012, T(KEEP) },
        /* A server's SYN after the handshake. */
        { T(ESTABLISHED), 1, 0x002, T(INVALID) },
        { T(SYN_RECV), 1, 0x002, T(INVALID) },
        /* Flags that no state takes; PSH, ECE, CWR, NS and URG (but with
         * RST) do not count. */
        { T(ESTABLISHED), 0, 0x000, T(INVALID) },
        { T(ESTABLISHED), 0, 0x001, T(INVALID) },
        { T(ESTABLISHED), 0, 0x003, T(INVALID) },
        { T(ESTABLISHED), 1, 0x006, T(INVALID) },
        { T(ESTABLISHED), 1, 0x024, T(INVALID) },
        { T(ESTABLISHED), 0, 0x008, T(INVALID) },
        { T(ESTABLISHED), 0, 0x1d8, T(KEEP) },
        { T(ESTABLISHED), 0, 0x031, T(FIN_WAIT) },
        /* A connection without a state yet has no invalid packet. */
        { T(NONE), 0, 0x003, T(KEEP) },
        { T(NONE), 0, 0x011, T(KEEP) },
#undef T
    };

    run_name = "TCP state moves";
    for (size_t i = 0; i < ARRAY_SIZE(moves); i++) {
        uint8_t new = ovs_bpf_tcp_next(moves[i].old, moves[i].reply,
                                       moves[i].flags);

        CHECK(new == moves[i].new, "%s: state %u, %s, flags %#x: %u "
              "(expected %u)", run_name, moves[i].old,
              moves[i].reply ? "reply" : "original", moves[i].flags, new,
              moves[i].new);
    }
}

/* ct() on the kernel's conntrack (of the test's own network namespace):
 * the states of a UDP connection in both directions, zones, marks,
 * force_commit, what the kfuncs cannot track (which goes up), ct_clear,
 * the TCP state moves that go up. */
static void
test_ct(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_act_ct commit = { .zone = 7,
                                     .flags = OVS_BPF_CT_F_COMMIT,
                                     .mark = 0x2a, .mark_mask = 0xff };
    struct ovs_bpf_act_ct force = { .zone = 7,
                                    .flags = OVS_BPF_CT_F_COMMIT
                                             | OVS_BPF_CT_F_FORCE };
    struct ovs_bpf_act_ct z7 = { .zone = 7 };
    struct ovs_bpf_act_ct z8 = { .zone = 8 };
    struct ovs_bpf_act_ct z9 = { .zone = 9 };
    struct ovs_bpf_act_ct c9 = { .zone = 9, .flags = OVS_BPF_CT_F_COMMIT };
    struct ovs_bpf_action acts[3];
    struct ovs_bpf_flow_key k;
    struct ofpbuf pkt, rev, icmp, synack, syn, in_win, out_win, synfin;
    struct ofpbuf noflags, synfin2, ack2rev;
    uint64_t n_win, n_flags, n_pending, n_up;

    ofpbuf_init(&pkt, 0);
    ofpbuf_init(&rev, 0);
    ofpbuf_init(&icmp, 0);
    ofpbuf_init(&synack, 0);
    ofpbuf_init(&syn, 0);
    ofpbuf_init(&in_win, 0);
    ofpbuf_init(&out_win, 0);
    ofpbuf_init(&synfin, 0);
    ofpbuf_init(&noflags, 0);
    ofpbuf_init(&synfin2, 0);
    ofpbuf_init(&ack2rev, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP);
    pkt_hex(&rev, ETH "0800 4500 001c 1234 0000 4011 0000 0a000002 0a000001 "
            "1234 0035 0008 0000");
    pkt_hex(&icmp, ETH "0800 4500 001c 1234 0000 4001 0000 " IP4A
            "0800 f7ff 0000 0000");
    pkt_hex(&synack, ETH "0800 " IP4_TCP);
    /* A TCP segment from 10.0.0.1:1234 to 10.0.0.2, port PORT, sequence
     * number SEQ, TCP flags FLAGS (all in hex). */
#define CT_TCP(SEQ, PORT, FLAGS)                                        \
    ETH "0800 4500 0028 1234 4000 4006 0000 " IP4A "04d2 " PORT " "     \
    SEQ " 00000000 50" FLAGS " 2000 0000 0000"
    pkt_hex(&syn, CT_TCP("00000001", "0051", "02"));
    /* ACKs of the SYN's connection: at the SYN's end, and 256 MB beyond
     * the window. */
    pkt_hex(&in_win, CT_TCP("00000002", "0051", "10"));
    pkt_hex(&out_win, CT_TCP("10000002", "0051", "10"));
    /* The SYN's tuple, with SYN and FIN, and with no flag at all. */
    pkt_hex(&synfin, CT_TCP("00000001", "0051", "03"));
    pkt_hex(&noflags, CT_TCP("00000002", "0051", "00"));
    /* A SYN-FIN of another tuple, and an ACK of its reverse. */
    pkt_hex(&synfin2, CT_TCP("00000001", "0053", "03"));
#undef CT_TCP
    pkt_hex(&ack2rev, ETH "0800 4500 0028 1234 4000 4006 0000 "
            "0a000002 0a000001 0053 04d2 00000001 00000002 5010 2000 "
            "0000 0000");

    ct_check("no connection", &pkt, z7, CS_TRK | CS_NEW, 0, "10.0.0.1");
    ct_check("commit", &pkt, commit, CS_TRK | CS_NEW, 0x2a, "10.0.0.1");
    ct_check("committed, no reply yet", &pkt, z7, CS_TRK | CS_NEW, 0x2a,
             "10.0.0.1");
    ct_check("reply", &rev, z7, CS_TRK | CS_EST | CS_RPL, 0x2a, "10.0.0.1");
    ct_check("replied", &pkt, z7, CS_TRK | CS_EST, 0x2a, "10.0.0.1");
    ct_check("other zone", &pkt, z8, CS_TRK | CS_NEW, 0, "10.0.0.1");
    ct_check("force_commit of the reply direction", &rev, force,
             CS_TRK | CS_NEW, 0, "10.0.0.2");
    ct_check("after force_commit", &pkt, z7, CS_TRK | CS_EST | CS_RPL, 0,
             "10.0.0.2");
    /* ICMP, which the kfuncs cannot track, goes up for its ct(). */
    ct_up_check("ct() slow path", &icmp, z7, OVS_BPF_STAT_CT_SLOW_PATH, 0, 0);
    n_flags = stat_get(OVS_BPF_STAT_CT_TCP_FLAGS);
    ct_check("SYN-ACK without a connection", &synack, z8, CS_TRK | CS_INV, 0,
             NULL);
    CHECK(stat_get(OVS_BPF_STAT_CT_TCP_FLAGS) == n_flags + 1,
          "SYN-ACK without a connection: ct_tcp_flags not counted");

    /* TCP: the SYN's commit makes the connection in BPF, and the packet
     * goes up for its first state.  Its retransmission finds the connection
     * still without one (only ovs-vswitchd writes it) and asks the same
     * move, on its way up already: it stays in BPF, counted as
     * ct_tcp_state_pending (ovs_bpf_tcpw_move_up()). */
    tcp_next_check();
    ct_up_check("SYN", &syn, c9, OVS_BPF_STAT_CT_TCP_STATE,
                OVS_BPF_TCPS_NONE, OVS_BPF_TCPS_SYN_SENT);
    n_pending = stat_get(OVS_BPF_STAT_CT_TCP_STATE_PENDING);
    n_up = stat_get(OVS_BPF_STAT_CT_TCP_STATE);
    ct_check("SYN again", &syn, c9, CS_TRK | CS_NEW, 0, "10.0.0.1");
    CHECK(stat_get(OVS_BPF_STAT_CT_TCP_STATE_PENDING) == n_pending + 1
          && stat_get(OVS_BPF_STAT_CT_TCP_STATE) == n_up,
          "SYN again: ct_tcp_state_pending %"PRIu64" (expected %"PRIu64
          "), ct_tcp_state %"PRIu64" (expected %"PRIu64")",
          stat_get(OVS_BPF_STAT_CT_TCP_STATE_PENDING), n_pending + 1,
          stat_get(OVS_BPF_STAT_CT_TCP_STATE), n_up);

    /* TCP windows (bpf/ct-tcp-win.h): the SYN's commit gave the connection
     * its window data; a segment far beyond it is +inv, counted, and moves
     * no state; with the check off it passes; one in the window moves the
     * state as before. */
    n_win = stat_get(OVS_BPF_STAT_CT_TCP_WINDOW);
    ct_check("out of the window", &out_win, c9, CS_TRK | CS_INV, 0, NULL);
    CHECK(stat_get(OVS_BPF_STAT_CT_TCP_WINDOW) == n_win + 1,
          "out of the window: ct_tcp_window not counted");
    tcp_liberal = true;
    set_n_masks(1);
    ct_check("out of the window, check off", &out_win, c9, CS_TRK | CS_NEW,
             0, "10.0.0.1");
    tcp_liberal = false;
    set_n_masks(1);
    CHECK(stat_get(OVS_BPF_STAT_CT_TCP_WINDOW) == n_win + 1,
          "out of the window, check off: ct_tcp_window counted");
    ct_up_check("in the window", &in_win, c9, OVS_BPF_STAT_CT_TCP_STATE,
                OVS_BPF_TCPS_NONE, OVS_BPF_TCPS_ESTABLISHED);

    /* TCP flags that no state takes: +inv with the SYN's connection there
     * as without one, not committed, counted as ct_tcp_flags. */
    n_flags = stat_get(OVS_BPF_STAT_CT_TCP_FLAGS);
    ct_check("SYN-FIN", &synfin, c9, CS_TRK | CS_INV, 0, NULL);
    ct_check("no flags", &noflags, c9, CS_TRK | CS_INV, 0, NULL);
    ct_check("SYN-FIN, other zone", &synfin, z8, CS_TRK | CS_INV, 0, NULL);
    CHECK(stat_get(OVS_BPF_STAT_CT_TCP_FLAGS) == n_flags + 3,
          "invalid flags: ct_tcp_flags %"PRIu64" (expected %"PRIu64")",
          stat_get(OVS_BPF_STAT_CT_TCP_FLAGS), n_flags + 3);
    /* The commit of a SYN-FIN of a new tuple made no connection: an ACK of
     * the reverse tuple is +new (not +est+rpl), its own tuple the
     * original. */
    ct_check("SYN-FIN of a new tuple", &synfin2, c9, CS_TRK | CS_INV, 0,
             NULL);
    ct_check("after the SYN-FIN of a new tuple", &ack2rev, z9,
             CS_TRK | CS_NEW, 0, "10.0.0.2");

    /* ct_clear after ct(): nothing left of it. */
    run_name = "ct_clear";
    acts[0] = ACT(CT, .u.ct = z7);
    acts[1] = ACT(CT_CLEAR);
    acts[2] = ACT(RECIRC, .u.recirc.id = 3);
    ct_run(&pkt, acts, 3, &k);
    CHECK(is_all_zeros(&k.ct_state, offsetof(struct ovs_bpf_flow_key, tun_id)
                                    - offsetof(struct ovs_bpf_flow_key,
                                               ct_state)),
          "ct_clear: ct_state %#x zone %u", k.ct_state, k.ct_zone);

    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&rev);
    ofpbuf_uninit(&icmp);
    ofpbuf_uninit(&synack);
    ofpbuf_uninit(&syn);
    ofpbuf_uninit(&in_win);
    ofpbuf_uninit(&out_win);
    ofpbuf_uninit(&synfin);
    ofpbuf_uninit(&noflags);
    ofpbuf_uninit(&synfin2);
    ofpbuf_uninit(&ack2rev);
}

static void
test_clone(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action acts[6];
    struct dp_packet *modified;
    struct ofpbuf pkt, untagged;
    struct run r;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "8100 0064 0800 " IP4_TCP);
    fix_checksums(&pkt);
    ofpbuf_init(&untagged, 0);
    pkt_hex(&untagged, ETH "0800 " IP4_TCP);
    fix_checksums(&untagged);

    /* clone(set_ipv4(dst), set_mark, userspace), userspace, output: the
     * first upcall sees the changed packet, the second and the output the
     * original. */
    acts[0] = ACT(CLONE, .u.nested.n_actions = 3);
    acts[1] = ACT(SET_IPV4, .u.ipv4.dst = htonl(0x0a090909),
                  .u.ipv4.dst_mask = OVS_BE32_MAX);
    acts[2] = ACT(SET_MARK, .u.meta.value = 9, .u.meta.mask = 0xff);
    acts[3] = userspace_act("in-clone");
    acts[4] = userspace_act("after");
    acts[5] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 6);
    run_ingress(&pkt, &r);
    poll_upcalls();
    modified = extracted(&pkt);
    packet_set_ipv4(modified, htonl(0x0a000001), htonl(0x0a090909), 0, 0x40);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == pkt.size
          && !memcmp(r.out, pkt.data, pkt.size) && r.ctx_out.mark == 0,
          "clone: output differs from the original (retval %u mark %u)",
          r.retval, r.ctx_out.mark);
    CHECK(n_upcalls == 2, "clone: %d upcalls", n_upcalls);
    if (n_upcalls == 2) {
        CHECK(!memcmp(upcall_recs[0].pkt, dp_packet_data(modified),
                      pkt.size) && upcall_recs[0].hdr.skb_mark == 9,
              "clone: nested actions did not see the changed packet");
        CHECK(!memcmp(upcall_recs[1].pkt, pkt.data, pkt.size)
              && upcall_recs[1].hdr.skb_mark == 0,
              "clone: later actions did not see the original packet");
    }
    dp_packet_delete(modified);

    /* sample() with probability 0 skips its actions, with UINT32_MAX
     * always runs them. */
    acts[0] = ACT(SAMPLE, .u.nested.n_actions = 1, .u.nested.probability = 0);
    acts[1] = userspace_act("sampled");
    acts[2] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 3);
    run_ingress(&pkt, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_REDIRECT && n_upcalls == 0,
          "sample p=0: retval %u, %d upcalls", r.retval, n_upcalls);
    acts[0].u.nested.probability = UINT32_MAX;
    flow_for(&pkt, acts, 3);
    run_ingress(&pkt, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_REDIRECT && n_upcalls == 1,
          "sample p=1: retval %u, %d upcalls", r.retval, n_upcalls);

    /* A tag in skb metadata that the nested actions replace goes back
     * whole, TPID included (802.1ad stays 802.1ad): the upcall of the
     * userspace action after the clone reports the packet that the output
     * after it sends. */
    for (int i = 0; i < 2; i++) {
        ovs_be16 outer = htons(i ? ETH_TYPE_VLAN_8021Q : ETH_TYPE_VLAN_8021AD);
        ovs_be16 inner = htons(i ? ETH_TYPE_VLAN_8021AD : ETH_TYPE_VLAN_8021Q);
        struct ovs_bpf_action vacts[7];

        vacts[0] = ACT(PUSH_VLAN, .u.push_vlan.tpid = outer,
                       .u.push_vlan.tci = htons(0x1123));
        vacts[1] = ACT(CLONE, .u.nested.n_actions = 3);
        vacts[2] = ACT(POP_VLAN);
        vacts[3] = ACT(PUSH_VLAN, .u.push_vlan.tpid = inner,
                       .u.push_vlan.tci = htons(0x1456));
        vacts[4] = userspace_act("in-clone");
        vacts[5] = userspace_act("after");
        vacts[6] = OUTPUT(LO_PORT1);
        flow_for(&untagged, vacts, 7);
        run_ingress(&untagged, &r);
        poll_upcalls();
        CHECK(r.retval == TC_ACT_REDIRECT && n_upcalls == 2,
              "clone(pop_vlan, push_vlan) on %#x: retval %u, %d upcalls",
              ntohs(outer), r.retval, n_upcalls);
        if (n_upcalls == 2) {
            const struct ovs_bpf_upcall *in = &upcall_recs[0].hdr;
            const struct ovs_bpf_upcall *after = &upcall_recs[1].hdr;

            CHECK(in->vlan_proto == inner && in->vlan_tci == htons(0x0456),
                  "clone(pop_vlan, push_vlan) on %#x: nested tag %#x %#x",
                  ntohs(outer), ntohs(in->vlan_proto), ntohs(in->vlan_tci));
            CHECK(after->vlan_proto == outer
                  && after->vlan_tci == htons(0x0123),
                  "clone(pop_vlan, push_vlan) on %#x: tag after the clone "
                  "%#x %#x", ntohs(outer), ntohs(after->vlan_proto),
                  ntohs(after->vlan_tci));
        }
    }

    /* A clone that ends the actions needs no restore. */
    acts[0] = OUTPUT(LO_PORT1);
    acts[1] = ACT(CLONE, .u.nested.n_actions = 2);
    acts[2] = ACT(POP_VLAN);
    acts[3] = OUTPUT(LO_PORT2);
    flow_for(&pkt, acts, 4);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == pkt.size - 4,
          "clone last: retval %u length %u", r.retval, r.out_len);

    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&untagged);
}

static void
test_check_pkt_len(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action acts[6];
    struct ofpbuf pkt;
    struct run r;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_TCP);
    fix_checksums(&pkt);

    /* check_pkt_len(size=N, gt(mark 1, output), le(mark 2, output)): the
     * length is the whole frame, Ethernet header included; equal is le. */
    acts[0] = ACT(CHECK_PKT_LEN, .u.check_pkt_len.n_gt = 2);
    acts[1] = ACT(SET_MARK, .u.meta.value = 1, .u.meta.mask = 0xff);
    acts[2] = OUTPUT(LO_PORT1);
    acts[3] = ACT(END);
    acts[4] = ACT(SET_MARK, .u.meta.value = 2, .u.meta.mask = 0xff);
    acts[5] = OUTPUT(LO_PORT1);
    for (int delta = -1; delta <= 1; delta++) {
        uint32_t expected = delta < 0 ? 1 : 2;

        acts[0].u.check_pkt_len.pkt_len = pkt.size + delta;
        flow_for(&pkt, acts, 6);
        run_ingress(&pkt, &r);
        CHECK(r.retval == TC_ACT_REDIRECT && r.ctx_out.mark == expected,
              "check_pkt_len size=len%+d: retval %u mark %u, expected %u",
              delta, r.retval, r.ctx_out.mark, expected);
    }

    /* An empty greater list drops the packet; an empty less-or-equal list
     * too. */
    acts[0].u.check_pkt_len.n_gt = 0;
    acts[0].u.check_pkt_len.pkt_len = pkt.size - 1;
    acts[1] = ACT(END);
    acts[2] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 3);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "check_pkt_len empty gt: retval %u",
          r.retval);
    acts[0].u.check_pkt_len.pkt_len = pkt.size;
    flow_for(&pkt, acts, 3);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "check_pkt_len le: retval %u",
          r.retval);
    acts[0].u.check_pkt_len.n_gt = 1;
    acts[1] = OUTPUT(LO_PORT1);
    acts[2] = ACT(END);
    flow_for(&pkt, acts, 3);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "check_pkt_len empty le: retval %u",
          r.retval);

    ofpbuf_uninit(&pkt);
}

/* Builds the downcall frame that ovs-vswitchd writes for 'pkt' with the
 * 'n' actions 'acts' and the trailer 'dc'. */
static void
downcall_frame(struct ofpbuf *frame, const struct ofpbuf *pkt,
               const struct ovs_bpf_action *acts, uint32_t n,
               const struct ovs_bpf_downcall *dc)
{
    struct iovec iov[DPIF_BPF_DOWNCALL_IOVS];
    static const uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN];
    struct ovs_bpf_downcall trailer = *dc;
    size_t i, n_iov;

    n_iov = dpif_bpf_downcall_iov(iov, pkt->data, pkt->size, acts, n,
                                  key_meta, &trailer);
    ofpbuf_clear(frame);
    for (i = 0; i < n_iov; i++) {
        ofpbuf_put(frame, iov[i].iov_base, iov[i].iov_len);
    }
}

static void
test_downcall(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action acts[2] = {
        userspace_act("down"), OUTPUT(LO_PORT1),
    };
    struct ovs_bpf_downcall dc, bad;
    struct drops drops;
    uint64_t ok;
    struct ofpbuf pkt, frame;
    struct run r;

    ofpbuf_init(&pkt, 0);
    ofpbuf_init(&frame, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP);
    del_flows();

    memset(&dc, 0, sizeof dc);
    dc.magic = OVS_BPF_DOWNCALL_MAGIC;
    dc.abi_version = OVS_BPF_ABI_VERSION;
    memcpy(dc.secret, secret, sizeof dc.secret);
    dc.in_port = 5;
    dc.n_actions = 2;
    dc.skb_mark = 0x42;

    /* Authentic: the trailer goes, the actions run. */
    ok = stat_get(OVS_BPF_STAT_DOWNCALL);
    downcall_frame(&frame, &pkt, acts, 2, &dc);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == pkt.size
          && !memcmp(r.out, pkt.data, pkt.size) && r.ctx_out.mark == 0x42,
          "downcall: retval %u length %u mark %#x", r.retval, r.out_len,
          r.ctx_out.mark);
    CHECK(stat_get(OVS_BPF_STAT_DOWNCALL) == ok + 1, "downcall not counted");
    CHECK(n_upcalls == 1 && upcall_recs[0].hdr.in_port == 5
          && upcall_recs[0].hdr.pkt_len == pkt.size
          && !memcmp(upcall_recs[0].pkt, pkt.data, pkt.size),
          "downcall userspace action: %d upcalls", n_upcalls);

    /* Forged: wrong secret or magic. */
    drops_get(&drops);
    bad = dc;
    bad.secret[3] ^= 1;
    downcall_frame(&frame, &pkt, acts, 2, &bad);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "forged secret: retval %u", r.retval);
    bad = dc;
    bad.magic = 0;
    downcall_frame(&frame, &pkt, acts, 2, &bad);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "bad magic: retval %u", r.retval);
    /* A plain packet on the TAP, long enough to hold a trailer. */
    downcall_frame(&frame, &pkt, acts, 2, &dc);
    memset((uint8_t *) frame.data + pkt.size, 0x5a, frame.size - pkt.size);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "no trailer: retval %u", r.retval);
    /* A plain packet, without the downcall ethertype. */
    run_prog(downcall_fd, pkt.data, pkt.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "plain packet: retval %u", r.retval);
    poll_upcalls();
    CHECK(n_upcalls == 0, "forged downcalls: %d upcalls", n_upcalls);
    check_drops("forged downcalls", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_DOWNCALL_FORGED), 4);

    /* Malformed: shorter than a trailer, bad version, too many actions,
     * actions beyond the frame. */
    drops_get(&drops);
    downcall_frame(&frame, &pkt, acts, 2, &dc);
    run_prog(downcall_fd, frame.data, pkt.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "short frame: retval %u", r.retval);
    bad = dc;
    bad.abi_version = OVS_BPF_ABI_VERSION + 1;
    downcall_frame(&frame, &pkt, acts, 2, &bad);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "bad version: retval %u", r.retval);
    bad = dc;
    bad.n_actions = OVS_BPF_MAX_ACTIONS + 1;
    downcall_frame(&frame, &pkt, acts, 2, &bad);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "33 actions: retval %u", r.retval);
    bad = dc;
    bad.n_actions = 30;
    downcall_frame(&frame, &pkt, acts, 2, &bad);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT, "actions beyond frame: retval %u",
          r.retval);
    check_drops("malformed downcalls", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_DOWNCALL_MALFORMED), 4);

    /* No actions: a drop, still authentic, counted as the flow's. */
    bad = dc;
    bad.n_actions = 0;
    downcall_frame(&frame, &pkt, acts, 0, &bad);
    drops_get(&drops);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    CHECK(r.retval == TC_ACT_SHOT
          && stat_get(OVS_BPF_STAT_DOWNCALL) == ok + 2,
          "downcall without actions: retval %u", r.retval);
    check_drops("downcall without actions", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_FLOW_DROP), 1);

    /* Truncated packets go out as they are: the frame's stand-in ethertype
     * lets even those that BPF_PROG_TEST_RUN refuses to run as packets
     * through here. */
    static const char *const cut[] = {
        ETH "0800",
        ETH "0800 4f00 0030 1234 0000 4011 0000 " IP4A,   /* IHL 60. */
        ETH "86dd 6000 0000 0010 1140",                   /* Cut IPv6. */
        ETH "8100 0064",                                  /* Cut tag. */
        ETH "8100 1064 0800 4500 0040 1234",              /* Tag, cut IP. */
    };
    dc.n_actions = 1;
    for (size_t i = 0; i < ARRAY_SIZE(cut); i++) {
        pkt_hex(&pkt, cut[i]);
        downcall_frame(&frame, &pkt, &acts[1], 1, &dc);
        run_prog(downcall_fd, frame.data, frame.size, 0, &r);
        CHECK(r.retval == TC_ACT_REDIRECT
              && r.out_len + (i == 4 ? 4 : 0) == pkt.size,
              "truncated downcall %"PRIuSIZE": retval %u length %u",
              i, r.retval, r.out_len);
    }
    dc.n_actions = 2;

    /* A VLAN tag with DEI set: the downcall program moves it into skb
     * metadata, as the kernel does with a frame received on a port (the
     * userspace action reports it there, with its TCI unchanged), and
     * ovs-vswitchd puts it back with the same bytes. */
    pkt_hex(&pkt, ETH "8100 1064 0800 " IP4_UDP);
    downcall_frame(&frame, &pkt, acts, 2, &dc);
    run_prog(downcall_fd, frame.data, frame.size, 0, &r);
    poll_upcalls();
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == pkt.size - 4
          && n_upcalls == 1,
          "tagged downcall: retval %u length %u, %d upcalls", r.retval,
          r.out_len, n_upcalls);
    if (n_upcalls == 1) {
        const struct ovs_bpf_upcall *u = &upcall_recs[0].hdr;
        struct dp_packet p;
        struct flow flow;

        CHECK(u->vlan_proto == htons(ETH_TYPE_VLAN)
              && u->vlan_tci == htons(0x1064),
              "tagged downcall: upcall tag %#x %#x", ntohs(u->vlan_proto),
              ntohs(u->vlan_tci));
        dpif_bpf_upcall_packet(u, upcall_recs[0].pkt, &p, &flow);
        CHECK(dp_packet_size(&p) == pkt.size
              && !memcmp(dp_packet_data(&p), pkt.data, pkt.size)
              && flow.vlans[0].tci == htons(0x1064),
              "tagged downcall: the upcall's packet differs");
        dp_packet_uninit(&p);
    }

    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&frame);
}

/* Runs 'pkt' through a flow with the 'n' actions 'acts' and checks that the
 * program returns 'retval' and that the drop counter 'stat' (NO_DROP for
 * none) went up by one and no other. */
static void
check_flow_drop(const char *name, const struct ofpbuf *pkt,
                const struct ovs_bpf_action *acts, uint32_t n,
                uint32_t retval, uint32_t stat)
{
    struct drops drops;
    struct run r;

    flow_for(pkt, acts, n);
    drops_get(&drops);
    run_name = name;
    run_ingress(pkt, &r);
    run_name = "";
    poll_upcalls();
    CHECK(r.retval == retval, "%s: retval %u, expected %u", name, r.retval,
          retval);
    check_drops(name, &drops, stat, stat == NO_DROP ? 0 : 1);
}

/* Writes meter 'id' with the 'n' bands of 'rates' (tokens per ns), each
 * holding 'bucket' tokens and never refilled ('max_delta_ns' 0), so that
 * what passes does not depend on time. */
static void
meter_set(uint32_t id, uint32_t flags, const uint64_t *rates, int n,
          uint64_t bucket)
{
    struct ovs_bpf_meter m;

    memset(&m, 0, sizeof m);
    m.flags = flags;
    m.n_bands = n;
    for (int i = 0; i < n; i++) {
        m.bands[i].rate = rates[i];
        m.bands[i].max_bucket = UINT64_MAX / 4;
        m.bands[i].bucket = bucket;
    }
    if (bpf_map_update_elem(meters_fd, &id, &m, BPF_F_LOCK)) {
        ovs_fatal(errno, "meter %"PRIu32" update", id);
    }
}

static void
meter_get(uint32_t id, struct ovs_bpf_meter *m)
{
    if (bpf_map_lookup_elem_flags(meters_fd, &id, m, BPF_F_LOCK)) {
        ovs_fatal(errno, "meter %"PRIu32" lookup", id);
    }
}

static void
test_meter(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    static const uint64_t one_rate[] = { 1 };
    static const uint64_t two_rates[] = { 10, 20 };
    struct ovs_bpf_action acts[4];
    struct ovs_bpf_meter m;
    struct drops drops;
    struct ofpbuf pkt;
    struct run r;
    int i;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP "0000000000000000");

    /* Packets per second: a bucket of 3 packets passes 3 of 5. */
    meter_set(5, OVS_BPF_METER_F_PKTPS, one_rate, 1,
              3 * OVS_BPF_METER_PKT_COST);
    acts[0] = ACT(METER, .u.meter.id = 5);
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    drops_get(&drops);
    for (i = 0; i < 5; i++) {
        run_ingress(&pkt, &r);
        CHECK(r.retval == (i < 3 ? TC_ACT_REDIRECT : TC_ACT_SHOT),
              "pktps meter, packet %d: retval %u", i, r.retval);
    }
    check_drops("pktps meter", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_METER), 2);
    meter_get(5, &m);
    CHECK(m.packets == 5 && m.bytes == 5 * pkt.size
          && m.bands[0].packets == 2 && m.bands[0].bytes == 2 * pkt.size
          && m.bands[0].bucket == 0,
          "pktps meter stats: %"PRIu64" packets %"PRIu64" bytes, band "
          "%"PRIu64" packets, bucket %"PRIu64, (uint64_t) m.packets,
          (uint64_t) m.bytes, (uint64_t) m.bands[0].packets,
          (uint64_t) m.bands[0].bucket);

    /* Kilobits per second: a packet costs its bits; a bucket a bit short
     * of three packets passes two. */
    meter_set(5, 0, one_rate, 1,
              3 * pkt.size * 8 * OVS_BPF_METER_BIT_COST - 1);
    drops_get(&drops);
    for (i = 0; i < 3; i++) {
        run_ingress(&pkt, &r);
        CHECK(r.retval == (i < 2 ? TC_ACT_REDIRECT : TC_ACT_SHOT),
              "kbps meter, packet %d: retval %u", i, r.retval);
    }
    check_drops("kbps meter", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_METER), 1);

    /* A packet that exceeds several bands counts on the highest rate. */
    meter_set(6, OVS_BPF_METER_F_PKTPS, two_rates, 2, 0);
    acts[0].u.meter.id = 6;
    flow_for(&pkt, acts, 2);
    run_ingress(&pkt, &r);
    meter_get(6, &m);
    CHECK(r.retval == TC_ACT_SHOT && m.bands[0].packets == 0
          && m.bands[1].packets == 1,
          "two bands: retval %u, band packets %"PRIu64" %"PRIu64,
          r.retval, (uint64_t) m.bands[0].packets,
          (uint64_t) m.bands[1].packets);

    /* Inside clone(), a meter drop ends the nested actions only. */
    acts[0] = ACT(CLONE, .u.nested.n_actions = 2);
    acts[1] = ACT(METER, .u.meter.id = 6);
    acts[2] = OUTPUT(LO_PORT2);
    acts[3] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 4);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "meter in clone: retval %u",
          r.retval);
    check_drops("meter in clone", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_METER), 1);

    /* A meter with no bands (deleted, or never set) lets all through. */
    acts[0] = ACT(METER, .u.meter.id = 7);
    acts[1] = OUTPUT(LO_PORT1);
    flow_for(&pkt, acts, 2);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_REDIRECT, "no meter: retval %u", r.retval);

    /* The program ovs-vswitchd runs for packets it forwards itself: the
     * same buckets, the verdict in its return value. */
    meter_set(8, OVS_BPF_METER_F_PKTPS, one_rate, 1,
              OVS_BPF_METER_PKT_COST);
    drops_get(&drops);
    for (i = 0; i < 2; i++) {
        struct __sk_buff skb = { .cb = { 8 } };
        LIBBPF_OPTS(bpf_test_run_opts, opts,
                    .data_in = pkt.data,
                    .data_size_in = pkt.size,
                    .ctx_in = &skb,
                    .ctx_size_in = sizeof skb,
                    .repeat = 1);

        CHECK(!bpf_prog_test_run_opts(meter_packet_fd, &opts)
              && opts.retval == (i < 1 ? TC_ACT_OK : TC_ACT_SHOT),
              "meter for ovs-vswitchd, packet %d: retval %u", i,
              opts.retval);
    }
    check_drops("meter for ovs-vswitchd", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_METER), 1);

    del_flows();
    ofpbuf_uninit(&pkt);
}

/* Every drop site that a test run can reach, each with its own counter. */
static void
test_drops(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct ovs_bpf_action acts[OVS_BPF_MAX_ACTIONS];
    struct ofpbuf pkt, tagged, ext6;
    struct drops drops;
    struct ds hex = DS_EMPTY_INITIALIZER;
    struct run r;
    int i;

    ofpbuf_init(&pkt, 0);
    ofpbuf_init(&tagged, 0);
    ofpbuf_init(&ext6, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_TCP);
    fix_checksums(&pkt);
    pkt_hex(&tagged, ETH "8100 0064 0800 " IP4_TCP);
    fix_checksums(&tagged);
    /* IPv6 + TCP with its TCP header beyond what a clone() saves. */
    ipv6_ext_chain(&hex, 25, 6, TCP, 20);
    pkt_hex(&ext6, ds_cstr(&hex));
    ds_destroy(&hex);

    /* The flow's own drops: no actions, or actions that send the packet
     * nowhere.  An output or a userspace action is not a drop. */
    check_flow_drop("no actions", &pkt, acts, 0, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_FLOW_DROP));
    acts[0] = ACT(SET_MARK, .u.meta.value = 1, .u.meta.mask = 1);
    check_flow_drop("set_mark only", &pkt, acts, 1, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_FLOW_DROP));
    acts[1] = ACT(END);
    acts[2] = OUTPUT(LO_PORT1);
    check_flow_drop("END slot", &pkt, acts, 3, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_FLOW_DROP));
    acts[1] = userspace_act("up");
    check_flow_drop("userspace only", &pkt, acts, 2, TC_ACT_SHOT, NO_DROP);
    acts[1] = OUTPUT(LO_PORT1);
    acts[2] = ACT(SET_MARK, .u.meta.value = 2, .u.meta.mask = 2);
    check_flow_drop("output then set_mark", &pkt, acts, 3, TC_ACT_SHOT,
                    NO_DROP);

    /* Output to a missing port, as the only and as the last action. */
    acts[0] = OUTPUT(99);
    check_flow_drop("single output, no port", &pkt, acts, 1, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_NO_PORT));
    acts[0] = ACT(SET_MARK, .u.meta.value = 1, .u.meta.mask = 1);
    acts[1] = OUTPUT(99);
    check_flow_drop("last output, no port", &pkt, acts, 2, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_NO_PORT));

    /* A copy that bpf_clone_redirect() cannot send (no such device). */
    add_port(LO_PORT1 + 10, 9999, 0);
    acts[0] = OUTPUT(LO_PORT1 + 10);
    acts[1] = OUTPUT(LO_PORT1);
    check_flow_drop("copy to a missing device", &pkt, acts, 2,
                    TC_ACT_REDIRECT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_OUTPUT));

    /* An action type without a program. */
    acts[0] = ACT(SET_MARK, .u.meta.value = 1, .u.meta.mask = 1);
    acts[1] = (struct ovs_bpf_action) { .type = __OVS_BPF_ACTION_MAX + 3 };
    acts[2] = OUTPUT(LO_PORT1);
    check_flow_drop("action without program", &pkt, acts, 3, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_TAIL_CALL));

    /* The labels' argument slot of a ct() run as an action, and a ct() with
     * labels whose argument slot is missing: malformed chains. */
    acts[0] = ACT(CT_LABEL, .u.ct_label.mask[0] = 1);
    acts[1] = OUTPUT(LO_PORT1);
    check_flow_drop("ct_label slot run", &pkt, acts, 2, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_INTERNAL));
    acts[0] = ACT(CT, .u.ct.flags = OVS_BPF_CT_F_COMMIT | OVS_BPF_CT_F_LABEL);
    acts[1] = OUTPUT(LO_PORT1);
    check_flow_drop("ct with labels, no slot", &pkt, acts, 2, TC_ACT_SHOT,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_INTERNAL));

    /* Out of tail calls: 4 set_ipv4 (that change nothing, so that every
     * pass matches the flow; not one of the actions that the lookup
     * program runs itself) and a recirc per pass, 6 tail calls, fail in
     * the 6th pass, before the recirculation limit. */
    for (i = 0; i < 4; i++) {
        acts[i] = ACT(SET_IPV4);
    }
    acts[4] = ACT(RECIRC, .u.recirc.id = 1);
    recirc_loop_for(&pkt, acts, 5);
    drops_get(&drops);
    run_ingress(&pkt, &r);
    CHECK(r.retval == TC_ACT_SHOT, "tail call limit: retval %u", r.retval);
    check_drops("tail call limit", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_TAIL_CALL), 1);

    /* Actions refused inside a clone() that more actions follow. */
    acts[0] = ACT(CLONE, .u.nested.n_actions = 2);
    acts[1] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(5));
    acts[2] = ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
                  .u.push_vlan.tci = htons(6));
    acts[3] = OUTPUT(LO_PORT1);
    check_flow_drop("push_vlan x2 in clone", &pkt, acts, 4, TC_ACT_SHOT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_PUSH_VLAN));
    acts[0] = ACT(CLONE, .u.nested.n_actions = 1);
    acts[1] = ACT(POP_VLAN);
    acts[2] = OUTPUT(LO_PORT1);
    check_flow_drop("pop_vlan of the bytes in clone", &pkt, acts, 3,
                    TC_ACT_SHOT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_POP_VLAN));
    acts[0] = ACT(CLONE, .u.nested.n_actions = 3);
    acts[1] = ACT(CLONE, .u.nested.n_actions = 1);
    acts[2] = ACT(SET_MARK, .u.meta.value = 1, .u.meta.mask = 1);
    acts[3] = ACT(SET_MARK, .u.meta.value = 2, .u.meta.mask = 2);
    acts[4] = OUTPUT(LO_PORT1);
    check_flow_drop("clone ending inside a clone", &pkt, acts, 5,
                    TC_ACT_SHOT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_CLONE));
    acts[1] = ACT(SAMPLE, .u.nested.n_actions = 1,
                  .u.nested.probability = UINT32_MAX);
    check_flow_drop("sample ending inside a clone", &pkt, acts, 5,
                    TC_ACT_SHOT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_SAMPLE));
    acts[0] = ACT(CLONE, .u.nested.n_actions = 1);
    acts[1] = ACT(SET_IPV6_SRC, .u.ipv6_addr.addr = { 0x30, 1 },
                  .u.ipv6_addr.mask = { 0xff, 0xff });
    acts[2] = OUTPUT(LO_PORT1);
    check_flow_drop("set_ipv6_src beyond the clone snapshot", &ext6, acts, 3,
                    TC_ACT_SHOT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_SET_IPV6_SRC));
    acts[1] = ACT(SET_IPV6_DST, .u.ipv6_addr.addr = { 0x30, 1 },
                  .u.ipv6_addr.mask = { 0xff, 0xff });
    check_flow_drop("set_ipv6_dst beyond the clone snapshot", &ext6, acts, 3,
                    TC_ACT_SHOT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_SET_IPV6_DST));
    acts[1] = ACT(SET_TCP, .u.l4.src = htons(7),
                  .u.l4.src_mask = OVS_BE16_MAX);
    check_flow_drop("set_tcp beyond the clone snapshot", &ext6, acts, 3,
                    TC_ACT_SHOT,
                    OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_SET_TCP));
    /* The same outside a clone() is fine. */
    check_flow_drop("set_tcp outside a clone", &ext6, acts + 1, 2,
                    TC_ACT_REDIRECT, NO_DROP);

    /* A tagged packet is not a drop. */
    acts[0] = ACT(POP_VLAN);
    acts[1] = OUTPUT(LO_PORT1);
    check_flow_drop("pop_vlan", &tagged, acts, 2, TC_ACT_REDIRECT, NO_DROP);

    /* An action program run with an action slot out of range. */
    {
        struct __sk_buff sk = { .ingress_ifindex = IN_IFINDEX };
        LIBBPF_OPTS(bpf_test_run_opts, opts,
                    .data_in = pkt.data,
                    .data_size_in = pkt.size,
                    .ctx_in = &sk,
                    .ctx_size_in = sizeof sk,
                    .repeat = 1);
        int fd = prog_fd("ovs_bpf_act_set_mark");

        sk.cb[0] = OVS_BPF_MAX_ACTIONS + 8;
        drops_get(&drops);
        CHECK(fd >= 0 && !bpf_prog_test_run_opts(fd, &opts)
              && opts.retval == TC_ACT_SHOT,
              "slot out of range: %s, retval %u", ovs_strerror(errno),
              opts.retval);
        check_drops("slot out of range", &drops,
                    OVS_BPF_STAT_DROP(OVS_BPF_DROP_INTERNAL), 1);
    }

    /* Misses that do not fit in the ring (64 kB): the packets are lost,
     * each counted once. */
    ofpbuf_clear(&pkt);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP);
    ofpbuf_put_zeros(&pkt, 3000);
    del_flows();
    poll_upcalls();
    n_received = 0;
    drops_get(&drops);
    for (i = 0; i < 40; i++) {
        run_ingress(&pkt, &r);
    }
    poll_upcalls();
    CHECK(n_received > 0 && n_received < 40,
          "upcalls of 3 kB packets: %d of 40 went up", n_received);
    check_drops("upcalls lost", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_UPCALL_LOST), 40 - n_received);

    /* The upcall budget: one miss per second and port on each CPU, from an
     * empty ring on.  Of 10 misses in a row, one per CPU that the runs
     * land on goes up (the test's runs take far less than a second), the
     * others are dropped and counted as over budget. */
    ofpbuf_clear(&pkt);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP);
    set_upcall_config(1000000000, 0, 0);
    poll_upcalls();
    n_received = 0;
    drops_get(&drops);
    for (i = 0; i < 10; i++) {
        run_ingress(&pkt, &r);
    }
    poll_upcalls();
    CHECK(n_received >= 1 && n_received <= n_cpus && n_received < 10,
          "budget of 1: %d of 10 misses went up", n_received);
    check_drops("over the upcall budget", &drops,
                OVS_BPF_STAT_DROP(OVS_BPF_DROP_UPCALL_BUDGET),
                10 - n_received);

    /* The same budget, spent, applies only from a fill the ring never
     * reaches: every miss goes up. */
    set_upcall_config(1000000000, 0, TEST_RING_SIZE);
    n_received = 0;
    drops_get(&drops);
    for (i = 0; i < 10; i++) {
        run_ingress(&pkt, &r);
    }
    poll_upcalls();
    CHECK(n_received == 10, "budget spent, ring empty: %d of 10 went up",
          n_received);
    check_drops("budget with an empty ring", &drops, NO_DROP, 0);
    set_upcall_config(0, 0, 0);

    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&tagged);
    ofpbuf_uninit(&ext6);
}

static void
test_load(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    struct bpf_map *rodata = bpf_object__find_map_by_name(obj, ".rodata");
    const uint32_t *version;
    size_t size;
    int n = 0, i;

    CHECK(rodata, "no .rodata");
    if (rodata) {
        version = bpf_map__initial_value(rodata, &size);
        CHECK(version && size >= sizeof *version
              && *version == OVS_BPF_ABI_VERSION,
              "ovs_bpf_abi_version differs from OVS_BPF_ABI_VERSION");
    }
    /* libbpf filled the 'tailcalls' program array (bpf/maps.h): every
     * slot but OVS_BPF_ACTION_END's holds a program. */
    for (i = 0; i < __OVS_BPF_TAILCALL_MAX; i++) {
        uint32_t slot = i, prog_id;

        if (!bpf_map_lookup_elem(tailcalls_fd, &slot, &prog_id)) {
            n++;
        } else {
            CHECK(i == OVS_BPF_ACTION_END, "tail call slot %d is empty", i);
        }
    }
    printf("%d tail call programs and 2 entry programs loaded\n", n);
}

/* A set_tunnel slot for an IPv4 VXLAN underlay. */
static struct ovs_bpf_action
set_tunnel_act(void)
{
    struct ovs_bpf_action a = ACT(SET_TUNNEL);

    a.u.tunnel.tun_id = htonll(0x123);
    a.u.tunnel.ipv4_src = htonl(0xac1f0164);
    a.u.tunnel.ipv4_dst = htonl(0xac1f0101);
    a.u.tunnel.ttl = 64;
    a.u.tunnel.tp_dst = htons(4789);
    a.u.tunnel.flags = BPF_F_ZERO_CSUM_TX | BPF_F_DONT_FRAGMENT;
    return a;
}

/* Runs 'pkt' through a flow with the 'n' actions 'acts' and checks that the
 * ingress program returned 'retval' and that only the drop counter 'stat'
 * (NO_DROP for none) moved, by one. */
static void
tunnel_case(const char *name, const struct ofpbuf *pkt,
            const struct ovs_bpf_action *acts, uint32_t n, uint32_t retval,
            uint32_t stat)
{
    struct drops drops;
    struct run r;

    flow_for(pkt, acts, n);
    drops_get(&drops);
    run_ingress(pkt, &r);
    CHECK(r.retval == retval, "%s: retval %u", name, r.retval);
    check_drops(name, &drops, stat, stat == NO_DROP ? 0 : 1);
}

/* ------------------------------------------------------------------ */
/* Native tunneling: tnl_push, tnl_pop.                               */
/* ------------------------------------------------------------------ */

/* The outer headers that ofproto builds for VXLAN over IPv4 (as
 * netdev_vxlan_build_header() does: DF, TTL 64, lengths, IP checksum and
 * UDP source port left for the push, UDP checksum 0), VNI 0x123456, from
 * 172.31.1.100 to 172.31.1.1, then the inner frame's hex. */
#define TNL_OUTER_ETH "aabbccddeeff 112233445566 0800 "
#define TNL_OUTER_ETH6 "aabbccddeeff 112233445566 86dd "
#define TNL_IP(TOT, CSUM) "4500 " TOT " 0000 4000 4011 " CSUM \
                          " ac1f0164 ac1f0101 "
#define TNL_UDP(CSUM) "0000 12b5 0000 " CSUM " "
#define TNL_VXLAN "08000000 12345600 "

/* The one's complement sum of 'n' bytes at 'p', unfolded. */
static uint32_t
tnl_sum(const uint8_t *p, size_t n, uint32_t sum)
{
    for (size_t i = 0; i < n; i += 2) {
        sum += p[i] << 8 | (i + 1 < n ? p[i + 1] : 0);
    }
    return sum;
}

/* True if the UDP checksum of the outer headers of 'o' ('len' bytes, IPv4
 * or IPv6 from byte 14 on, UDP at 'l4') is right. */
static bool
tnl_udp_csum_ok(const uint8_t *o, size_t len, size_t l4, bool ipv6)
{
    uint32_t sum = 0;

    if (ipv6) {
        sum = tnl_sum(o + 22, 32, sum);
    } else {
        sum = tnl_sum(o + 26, 8, sum);
    }
    sum += 17 + (len - l4);
    sum = tnl_sum(o + l4, len - l4, sum);
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum == 0xffff;
}

/* tnl_push + output of 'inner': the output is the header of 'acts' with
 * the lengths, the IPv4 checksum, the UDP checksum if the header asks for
 * one ('csum') and a source port in 32768-60999 filled in, then 'inner'
 * unchanged.  Returns the output in 'out'. */
static void
tnl_push_case(const char *name, const struct ofpbuf *inner,
              const struct ovs_bpf_action *acts, uint32_t n, bool ipv6,
              bool csum_, struct ofpbuf *out)
{
    const size_t l4 = ipv6 ? 54 : 34;
    const size_t hlen = l4 + 16;
    struct drops drops;
    struct run r;

    flow_for(inner, acts, n);
    drops_get(&drops);
    run_ingress(inner, &r);
    check_drops(name, &drops, NO_DROP, 0);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == inner->size + hlen,
          "%s: retval %u, length %u", name, r.retval, r.out_len);
    if (r.out_len != inner->size + hlen) {
        return;
    }
    ofpbuf_clear(out);
    ofpbuf_put(out, r.out, r.out_len);

    const uint8_t *o = r.out;
    uint16_t sport = o[l4] << 8 | o[l4 + 1];
    uint16_t ulen = o[l4 + 4] << 8 | o[l4 + 5];
    uint16_t ucsum = o[l4 + 6] << 8 | o[l4 + 7];

    CHECK(!memcmp(o, "\xaa\xbb\xcc\xdd\xee\xff\x11\x22\x33\x44\x55\x66", 12)
          && o[12] == (ipv6 ? 0x86 : 0x08) && o[13] == (ipv6 ? 0xdd : 0),
          "%s: outer Ethernet header", name);
    if (ipv6) {
        uint16_t plen = o[18] << 8 | o[19];

        CHECK(plen == r.out_len - l4 && o[20] == 17 && o[21] == 64,
              "%s: IPv6 payload length %u (expected %"PRIuSIZE"), "
              "next header, hop limit", name, plen, r.out_len - l4);
    } else {
        uint16_t tot = o[16] << 8 | o[17];

        CHECK(tot == r.out_len - 14 && !csum(o + 14, 20),
              "%s: IPv4 total length %u (expected %u), checksum %#x", name,
              tot, r.out_len - 14, ntohs(csum(o + 14, 20)));
        CHECK(o[20] == 0x40 && o[22] == 64 && o[23] == 17,
              "%s: DF, TTL, protocol", name);
    }
    CHECK(sport >= 32768 && sport < 61000 && ulen == r.out_len - l4
          && o[l4 + 2] == 0x12 && o[l4 + 3] == 0xb5,
          "%s: UDP source port %u, length %u, dst port", name, sport, ulen);
    CHECK(csum_ ? ucsum && tnl_udp_csum_ok(o, r.out_len, l4, ipv6) : !ucsum,
          "%s: UDP checksum %#x", name, ucsum);
    CHECK(!memcmp(o + l4 + 8, "\x08\x00\x00\x00\x12\x34\x56\x00", 8),
          "%s: VXLAN header", name);
    CHECK(!memcmp(o + hlen, inner->data, inner->size),
          "%s: inner frame unchanged", name);
}

/* tnl_pop(TNL_PORT) of 'pkt', which must be dropped as 'stat' (a drop
 * reason's counter) or, with NO_DROP, miss after the pop. */
static void
tnl_pop_case(const char *name, const struct ofpbuf *pkt, uint32_t stat,
             uint32_t retval)
{
    struct ovs_bpf_action pop = ACT(TNL_POP, .u.tnl_pop.port = TNL_PORT);
    struct drops drops;
    struct run r;

    flow_for(pkt, &pop, 1);
    drops_get(&drops);
    run_ingress(pkt, &r);
    poll_upcalls();
    CHECK(r.retval == retval, "%s: retval %u", name, r.retval);
    check_drops(name, &drops, stat, stat == NO_DROP ? 0 : 1);
}

/* Runs 'outer' through a flow of tnl_pop(TNL_PORT) that has no flow for
 * the popped frame, and stores in 'key' the key of the popped frame (the
 * miss after the pop). */
static void
tnl_pop_key(const struct ofpbuf *outer, struct ovs_bpf_flow_key *key)
{
    struct ovs_bpf_action pop = ACT(TNL_POP, .u.tnl_pop.port = TNL_PORT);
    struct run r;

    flow_for(outer, &pop, 1);
    run_ingress(outer, &r);
    poll_upcalls();
    scratch_key(key);
}

/* Installs a flow for 'key' (the popped frame's) that outputs, runs
 * 'outer' again and checks that the output is 'inner' unchanged, after a
 * hit before and after the pop. */
static void
tnl_pop_match(const char *name, const struct ofpbuf *outer,
              const struct ovs_bpf_flow_key *key, const struct ofpbuf *inner)
{
    struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    uint64_t hit;
    struct run r;

    add_flow(0, key, NULL, &out, 1, 0);
    hit = stat_get(OVS_BPF_STAT_HIT);
    run_ingress(outer, &r);
    CHECK(r.retval == TC_ACT_REDIRECT && r.out_len == inner->size
          && !memcmp(r.out, inner->data, inner->size)
          && stat_get(OVS_BPF_STAT_HIT) == hit + 2,
          "%s: retval %u, length %u (expected %"PRIu32"), %"PRIu64" hits",
          name, r.retval, r.out_len, inner->size,
          stat_get(OVS_BPF_STAT_HIT) - hit);
}

/* Pops 'outer', a tunnel packet over IPv6 from fc00::1 to fc00::2 with
 * tun_id 0x123456, a checksum and 'inner' inside, and checks its key and
 * that a flow for that key outputs 'inner' unchanged. */
static void
tnl_pop_ipv6_case(const char *name, const struct ofpbuf *outer,
                  const struct ofpbuf *inner)
{
    struct ovs_bpf_flow_key key;

    tnl_pop_key(outer, &key);
    CHECK(key.in_port == TNL_PORT && key.tun_id == htonll(0x123456)
          && key.tun_ipv6_src[0] == 0xfc && key.tun_ipv6_src[15] == 1
          && key.tun_ipv6_dst[15] == 2 && !key.tun_ipv4_src
          && key.tun_ttl == 64
          && key.tun_flags == htons(FLOW_TNL_F_KEY | FLOW_TNL_F_CSUM),
          "%s: key in_port %"PRIu32" flags %#x", name,
          key.in_port, ntohs(key.tun_flags));
    tnl_pop_match(name, outer, &key, inner);
}

static void
test_tnl(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    const uint32_t pop_failed
        = OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_TNL_POP);
    struct ovs_bpf_action acts[5];
    struct ovs_bpf_action pop = ACT(TNL_POP, .u.tnl_pop.port = LO_PORT1);
    struct ovs_bpf_flow_key key;
    struct ofpbuf hdr, inner, arp, outer, bad;
    struct drops drops;
    struct run r;

    ofpbuf_init(&hdr, 0);
    ofpbuf_init(&inner, 0);
    ofpbuf_init(&arp, 0);
    ofpbuf_init(&outer, 0);
    ofpbuf_init(&bad, 0);

    /* The header as ofproto gives it, in a TNL_PUSH slot and the TNL_HDR
     * slots after it. */
    pkt_hex(&hdr, TNL_OUTER_ETH TNL_IP("0000", "0000")
            TNL_UDP("0000") TNL_VXLAN);
    ovs_assert(hdr.size == 50);
    acts[0] = ACT(TNL_PUSH, .u.tnl_push.tnl_port = TNL_PORT,
                  .u.tnl_push.out_port = LO_PORT1,
                  .u.tnl_push.header_len = hdr.size,
                  .u.tnl_push.tnl_type = OVS_BPF_TNL_VXLAN);
    acts[1] = ACT(TNL_HDR);
    memcpy(acts[1].u.raw, hdr.data, hdr.size);
    acts[2] = OUTPUT(LO_PORT1);

    /* An IPv4 frame (bpf_skb_adjust_room()) and an ARP one
     * (bpf_skb_change_head()). */
    pkt_hex(&inner, ETH "0800 " IP4_UDP "00000000000000000000");
    fix_checksums(&inner);
    tnl_push_case("tnl_push of IPv4", &inner, acts, 3, false, false,
                  &outer);
    pkt_hex(&arp, "ffffffffffff 0a0000000001 0806 0001 0800 06 04 0001 "
            "0a0000000001 0a000001 000000000000 0a000002");
    tnl_push_case("tnl_push of ARP", &arp, acts, 3, false, false, &bad);

    /* tnl_pop of what tnl_push made: the inner frame is looked up again
     * with in_port = the tunnel port and the tunnel metadata of the outer
     * headers, and a flow for that key outputs it unchanged. */
    tnl_pop_key(&outer, &key);
    CHECK(key.in_port == TNL_PORT
          && key.tun_id == htonll(0x123456)
          && key.tun_ipv4_src == htonl(0xac1f0164)
          && key.tun_ipv4_dst == htonl(0xac1f0101)
          && key.tun_ttl == 64 && !key.tun_tos
          && key.tun_tp_dst == htons(4789)
          && !memcmp(&key.tun_tp_src, (uint8_t *) outer.data + 34, 2)
          && key.tun_flags == htons(FLOW_TNL_F_KEY)
          && key.eth_type == htons(0x0800) && key.nw_proto == 17,
          "tnl_pop: key in_port %"PRIu32" tun_id %#"PRIx64" flags %#x",
          key.in_port, ntohll(key.tun_id), ntohs(key.tun_flags));
    tnl_pop_match("tnl_pop", &outer, &key, &inner);

    /* Bad input, each dropped and counted. */
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, 14 + 20 + 8 + 4);
    tnl_pop_case("tnl_pop of a short packet", &bad,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_SHORT), TC_ACT_SHOT);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size - 1);
    tnl_pop_case("tnl_pop of a truncated packet", &bad,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_SHORT), TC_ACT_SHOT);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size);
    ((uint8_t *) bad.data)[42] = 0x0c;      /* VXLAN-GPE flags. */
    tnl_pop_case("tnl_pop with bad VXLAN flags", &bad,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD), TC_ACT_SHOT);
    ((uint8_t *) bad.data)[42] = 0x08;
    ((uint8_t *) bad.data)[49] = 0x01;      /* Reserved byte. */
    tnl_pop_case("tnl_pop with a reserved bit", &bad,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD), TC_ACT_SHOT);
    ((uint8_t *) bad.data)[49] = 0;
    ((uint8_t *) bad.data)[19] ^= 1;        /* IP ID: bad checksum. */
    tnl_pop_case("tnl_pop with a bad IP checksum", &bad,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD), TC_ACT_SHOT);
    ((uint8_t *) bad.data)[19] ^= 1;
    tnl_pop_case("tnl_pop, good again", &bad, NO_DROP, TC_ACT_SHOT);

    /* tnl_pop to a port that is not a tunnel port. */
    flow_for(&outer, &pop, 1);
    drops_get(&drops);
    run_ingress(&outer, &r);
    check_drops("tnl_pop to a plain port", &drops, pop_failed, 1);

    /* With a UDP checksum (options:csum=true): computed at the push,
     * checked at the pop, which drops a packet whose checksum is wrong. */
    pkt_hex(&hdr, TNL_OUTER_ETH TNL_IP("0000", "0000")
            TNL_UDP("ffff") TNL_VXLAN);
    memcpy(acts[1].u.raw, hdr.data, hdr.size);
    tnl_push_case("tnl_push with csum", &inner, acts, 3, false, true,
                  &outer);
    tnl_pop_case("tnl_pop with csum", &outer, NO_DROP, TC_ACT_SHOT);
    scratch_key(&key);
    CHECK(key.tun_flags == htons(FLOW_TNL_F_KEY | FLOW_TNL_F_CSUM),
          "tnl_pop with csum: flags %#x", ntohs(key.tun_flags));
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size);
    ((uint8_t *) bad.data)[bad.size - 1] ^= 0x10;
    tnl_pop_case("tnl_pop with a bad UDP checksum", &bad,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD), TC_ACT_SHOT);

    /* Over IPv6 (two TNL_HDR slots), with its UDP checksum, and back. */
    pkt_hex(&hdr, TNL_OUTER_ETH6
            "6000 0000 0000 1140 fc000000000000000000000000000001 "
            "fc000000000000000000000000000002 "
            TNL_UDP("ffff") TNL_VXLAN);
    ovs_assert(hdr.size == 70);
    acts[0].u.tnl_push.header_len = hdr.size;
    acts[0].u.tnl_push.flags = OVS_BPF_TNL_F_IPV6;
    memcpy(acts[1].u.raw, hdr.data, OVS_BPF_TNL_HDR_SLOT);
    acts[2] = ACT(TNL_HDR);
    memcpy(acts[2].u.raw, (uint8_t *) hdr.data + OVS_BPF_TNL_HDR_SLOT,
           hdr.size - OVS_BPF_TNL_HDR_SLOT);
    acts[3] = OUTPUT(LO_PORT1);
    tnl_push_case("tnl_push over IPv6", &inner, acts, 4, true, true,
                  &outer);
    tnl_push_case("tnl_push of ARP over IPv6", &arp, acts, 4, true, true,
                  &bad);
    /* Its pop leaves less than an IPv6 header behind the MAC header,
     * which bpf_skb_adjust_room() refuses to do but with padding. */
    tnl_pop_key(&bad, &key);
    tnl_pop_match("tnl_pop of ARP over IPv6", &bad, &key, &arp);
    tnl_pop_ipv6_case("tnl_pop over IPv6", &outer, &inner);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size);
    ((uint8_t *) bad.data)[62] = 0x0c;      /* VXLAN-GPE flags. */
    tnl_pop_case("tnl_pop over IPv6 with bad VXLAN flags", &bad,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD), TC_ACT_SHOT);

    /* VXLAN-GPE carrying IPv4, after pop_eth: the header takes the place
     * of the Ethernet header (OVS_BPF_TNL_F_L3). */
    pkt_hex(&hdr, TNL_OUTER_ETH TNL_IP("0000", "0000")
            TNL_UDP("0000") "0c000001 12345600 ");
    acts[0] = ACT(POP_ETH);
    acts[1] = ACT(TNL_PUSH, .u.tnl_push.tnl_port = TNL_PORT,
                  .u.tnl_push.out_port = LO_PORT1,
                  .u.tnl_push.header_len = hdr.size,
                  .u.tnl_push.tnl_type = OVS_BPF_TNL_VXLAN,
                  .u.tnl_push.flags = OVS_BPF_TNL_F_L3);
    acts[2] = ACT(TNL_HDR);
    memcpy(acts[2].u.raw, hdr.data, hdr.size);
    acts[3] = OUTPUT(LO_PORT1);
    flow_for(&inner, acts, 4);
    drops_get(&drops);
    run_ingress(&inner, &r);
    check_drops("tnl_push of GPE", &drops, NO_DROP, 0);
    CHECK(r.retval == TC_ACT_REDIRECT
          && r.out_len == inner.size - ETH_HEADER_LEN + hdr.size
          && (r.out[16] << 8 | r.out[17]) == r.out_len - ETH_HEADER_LEN
          && !csum(r.out + 14, 20)
          && !memcmp(r.out + 42, "\x0c\x00\x00\x01\x12\x34\x56\x00", 8)
          && !memcmp(r.out + hdr.size,
                     (uint8_t *) inner.data + ETH_HEADER_LEN,
                     inner.size - ETH_HEADER_LEN),
          "tnl_push of GPE: retval %u, length %u", r.retval, r.out_len);
    ofpbuf_clear(&outer);
    ofpbuf_put(&outer, r.out, r.out_len);

    /* Its pop sends the IPv4 packet up as a layer 3 packet of the tunnel
     * port, with the tunnel metadata; GPE carrying Ethernet is popped as
     * VXLAN; an OAM packet and next protocol NSH are dropped. */
    tnl_pop_case("tnl_pop of GPE carrying IPv4", &outer, NO_DROP,
                 TC_ACT_SHOT);
    CHECK(n_upcalls == 1 && upcall_recs[0].hdr.type == OVS_BPF_UPCALL_L3
          && upcall_recs[0].hdr.in_port == TNL_PORT
          && upcall_recs[0].hdr.l3_type == htons(ETH_TYPE_IP)
          && upcall_recs[0].hdr.pkt_len == inner.size - ETH_HEADER_LEN
          && !memcmp(upcall_recs[0].pkt,
                     (uint8_t *) inner.data + ETH_HEADER_LEN,
                     inner.size - ETH_HEADER_LEN),
          "tnl_pop of GPE carrying IPv4: %d upcalls, type %"PRIu32", "
          "in_port %"PRIu32", l3_type %#x, length %"PRIu32, n_upcalls,
          upcall_recs[0].hdr.type, upcall_recs[0].hdr.in_port,
          ntohs(upcall_recs[0].hdr.l3_type), upcall_recs[0].hdr.pkt_len);
    pkt_hex(&hdr, TNL_OUTER_ETH TNL_IP("0000", "0000")
            TNL_UDP("0000") "0c000003 12345600 ");
    acts[0] = ACT(TNL_PUSH, .u.tnl_push.tnl_port = TNL_PORT,
                  .u.tnl_push.out_port = LO_PORT1,
                  .u.tnl_push.header_len = hdr.size,
                  .u.tnl_push.tnl_type = OVS_BPF_TNL_VXLAN);
    acts[1] = ACT(TNL_HDR);
    memcpy(acts[1].u.raw, hdr.data, hdr.size);
    acts[2] = OUTPUT(LO_PORT1);
    flow_for(&inner, acts, 3);
    run_ingress(&inner, &r);
    CHECK(r.retval == TC_ACT_REDIRECT
          && r.out_len == inner.size + hdr.size,
          "tnl_push of GPE carrying Ethernet: retval %u", r.retval);
    ofpbuf_clear(&outer);
    ofpbuf_put(&outer, r.out, r.out_len);
    tnl_pop_key(&outer, &key);
    tnl_pop_match("tnl_pop of GPE carrying Ethernet", &outer, &key, &inner);
    ((uint8_t *) outer.data)[42] = 0x0d;    /* O: OAM. */
    tnl_pop_case("tnl_pop of a GPE OAM packet", &outer,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD), TC_ACT_SHOT);
    ((uint8_t *) outer.data)[42] = 0x0c;
    ((uint8_t *) outer.data)[45] = 4;       /* NSH. */
    tnl_pop_case("tnl_pop of GPE carrying NSH", &outer,
                 OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD), TC_ACT_SHOT);

    ofpbuf_uninit(&hdr);
    ofpbuf_uninit(&inner);
    ofpbuf_uninit(&arp);
    ofpbuf_uninit(&outer);
    ofpbuf_uninit(&bad);
}

/* GRE: the outer headers that ofproto builds for GRE over IPv4 (as
 * netdev_gre_build_header() does: DF, TTL 64, protocol 47, lengths and
 * IP checksum left for the push), from 172.31.1.100 to 172.31.1.1, and
 * over IPv6, then a GRE header. */
#define GRE_IP "4500 0000 0000 4000 402f 0000 ac1f0164 ac1f0101 "
#define GRE_IP6 "6000 0000 0000 2f40 fc000000000000000000000000000001 " \
                "fc000000000000000000000000000002 "

/* Fills 'acts' with TNL_PUSH of GRE header 'hdr' (TNL_HDR slots) and an
 * output to LO_PORT1, after a pop_eth if 'l3'.  Returns the number of
 * slots. */
static uint32_t
gre_push_acts(struct ovs_bpf_action *acts, const struct ofpbuf *hdr,
              bool ipv6, bool l3)
{
    uint32_t n = 0;

    if (l3) {
        acts[n++] = ACT(POP_ETH);
    }
    acts[n++] = ACT(TNL_PUSH, .u.tnl_push.tnl_port = TNL_PORT,
                    .u.tnl_push.out_port = LO_PORT1,
                    .u.tnl_push.header_len = hdr->size,
                    .u.tnl_push.tnl_type = OVS_BPF_TNL_GRE,
                    .u.tnl_push.flags = ((ipv6 ? OVS_BPF_TNL_F_IPV6 : 0)
                                         | (l3 ? OVS_BPF_TNL_F_L3 : 0)));
    for (size_t ofs = 0; ofs < hdr->size; ofs += OVS_BPF_TNL_HDR_SLOT) {
        acts[n] = ACT(TNL_HDR);
        memcpy(acts[n++].u.raw, (const uint8_t *) hdr->data + ofs,
               MIN(OVS_BPF_TNL_HDR_SLOT, hdr->size - ofs));
    }
    acts[n++] = OUTPUT(LO_PORT1);
    return n;
}

/* tnl_push of GRE header 'hdr' + output of 'inner' (Ethernet, or with
 * 'l3' what follows its Ethernet header after a pop_eth): the output is
 * 'hdr' with the IP lengths, the IPv4 checksum and, if the GRE header has
 * the C flag, the GRE checksum filled in, then the inner frame unchanged.
 * Returns the output in 'out'. */
static void
gre_push_case(const char *name, const struct ofpbuf *inner,
              const struct ofpbuf *hdr, bool ipv6, bool l3,
              struct ofpbuf *out)
{
    const size_t l4 = ipv6 ? 54 : 34;
    const size_t skip = l3 ? ETH_HEADER_LEN : 0;
    struct ovs_bpf_action acts[6];
    const uint8_t *h = hdr->data;
    struct drops drops;
    struct run r;

    flow_for(inner, acts, gre_push_acts(acts, hdr, ipv6, l3));
    drops_get(&drops);
    run_ingress(inner, &r);
    check_drops(name, &drops, NO_DROP, 0);
    CHECK(r.retval == TC_ACT_REDIRECT
          && r.out_len == inner->size - skip + hdr->size,
          "%s: retval %u, length %u", name, r.retval, r.out_len);
    if (r.out_len != inner->size - skip + hdr->size) {
        return;
    }
    ofpbuf_clear(out);
    ofpbuf_put(out, r.out, r.out_len);

    const uint8_t *o = r.out;
    bool c = h[l4] & 0x80;

    CHECK(!memcmp(o, h, 14), "%s: outer Ethernet header", name);
    if (ipv6) {
        uint16_t plen = o[18] << 8 | o[19];

        CHECK(plen == r.out_len - l4 && !memcmp(o + 20, h + 20, 34),
              "%s: IPv6 payload length %u (expected %"PRIuSIZE"), rest of "
              "the IPv6 header", name, plen, r.out_len - l4);
    } else {
        uint16_t tot = o[16] << 8 | o[17];

        CHECK(tot == r.out_len - 14 && !csum(o + 14, 20)
              && !memcmp(o + 18, h + 18, 6) && !memcmp(o + 26, h + 26, 8),
              "%s: IPv4 total length %u (expected %u), checksum %#x, rest "
              "of the IPv4 header", name, tot, r.out_len - 14,
              ntohs(csum(o + 14, 20)));
    }
    /* The GRE header as given, but for the checksum (C), which must make
     * the GRE header and what follows sum to 0. */
    CHECK(!memcmp(o + l4, h + l4, c ? 4 : hdr->size - l4)
          && (!c || !memcmp(o + l4 + 6, h + l4 + 6, hdr->size - l4 - 6)),
          "%s: GRE header", name);
    CHECK(!c || !csum(o + l4, r.out_len - l4),
          "%s: GRE checksum %#x", name, o[l4 + 4] << 8 | o[l4 + 5]);
    CHECK(!memcmp(o + hdr->size, (const uint8_t *) inner->data + skip,
                  inner->size - skip),
          "%s: inner frame unchanged", name);
}

static void
test_tnl_gre(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    const uint32_t push_failed
        = OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_TNL_PUSH);
    const uint32_t bad_stat = OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_BAD);
    const uint32_t short_stat
        = OVS_BPF_STAT_DROP(OVS_BPF_DROP_TNL_POP_SHORT);
    struct ovs_bpf_action acts[6];
    struct ovs_bpf_flow_key key;
    struct ofpbuf hdr, inner, arp, outer, bad;
    struct drops drops;
    struct run r;
    uint8_t *b;

    ofpbuf_init(&hdr, 0);
    ofpbuf_init(&inner, 0);
    ofpbuf_init(&arp, 0);
    ofpbuf_init(&outer, 0);
    ofpbuf_init(&bad, 0);

    /* The tunnel port is a GRE port, as dpif-bpf makes it: no device. */
    add_port(TNL_PORT, 0, OVS_BPF_PORT_F_TUNNEL | OVS_BPF_PORT_F_GRE);

    /* GRE with a key (options:key=0x123456), Ethernet inside (TEB): an
     * IPv4 frame (bpf_skb_adjust_room()) and an ARP one
     * (bpf_skb_change_head()). */
    pkt_hex(&hdr, TNL_OUTER_ETH GRE_IP "2000 6558 00123456");
    ovs_assert(hdr.size == 42);
    pkt_hex(&inner, ETH "0800 " IP4_UDP "00000000000000000000");
    fix_checksums(&inner);
    gre_push_case("GRE push of IPv4", &inner, &hdr, false, false, &outer);
    pkt_hex(&arp, "ffffffffffff 0a0000000001 0806 0001 0800 06 04 0001 "
            "0a0000000001 0a000001 000000000000 0a000002");
    gre_push_case("GRE push of ARP", &arp, &hdr, false, false, &bad);
    tnl_pop_key(&bad, &key);
    tnl_pop_match("GRE pop of ARP", &bad, &key, &arp);

    /* Its pop: the key as netdev-native-tnl fills it (no UDP ports). */
    tnl_pop_key(&outer, &key);
    CHECK(key.in_port == TNL_PORT
          && key.tun_id == htonll(0x123456)
          && key.tun_ipv4_src == htonl(0xac1f0164)
          && key.tun_ipv4_dst == htonl(0xac1f0101)
          && key.tun_ttl == 64 && !key.tun_tos
          && !key.tun_tp_src && !key.tun_tp_dst
          && key.tun_flags == htons(FLOW_TNL_F_KEY)
          && key.eth_type == htons(0x0800) && key.nw_proto == 17,
          "GRE pop: key in_port %"PRIu32" tun_id %#"PRIx64" flags %#x",
          key.in_port, ntohll(key.tun_id), ntohs(key.tun_flags));
    tnl_pop_match("GRE pop", &outer, &key, &inner);

    /* Bad input, each dropped and counted. */
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, 34 + 10);
    tnl_pop_case("GRE pop of a short packet", &bad, short_stat,
                 TC_ACT_SHOT);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size - 1);
    tnl_pop_case("GRE pop of a truncated packet", &bad, short_stat,
                 TC_ACT_SHOT);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size);
    b = bad.data;
    b[34] |= 0x40;                          /* R: routing. */
    tnl_pop_case("GRE pop with the R flag", &bad, bad_stat, TC_ACT_SHOT);
    b[34] &= ~0x40;
    b[35] = 1;                              /* Version 1 (PPTP). */
    tnl_pop_case("GRE pop of version 1", &bad, bad_stat, TC_ACT_SHOT);
    b[35] = 0;
    b[36] = 0x88;                           /* Protocol LLDP. */
    b[37] = 0xcc;
    tnl_pop_case("GRE pop of another protocol", &bad, bad_stat,
                 TC_ACT_SHOT);
    b[36] = 0x65;
    b[37] = 0x58;
    b[19] ^= 1;                             /* IP ID: bad checksum. */
    tnl_pop_case("GRE pop with a bad IP checksum", &bad, bad_stat,
                 TC_ACT_SHOT);
    b[19] ^= 1;
    b[23] = 17;                             /* UDP, checksum fixed. */
    b[24] = b[25] = 0;
    memcpy(b + 24, &(ovs_be16) { csum(b + 14, 20) }, 2);
    tnl_pop_case("GRE pop of UDP", &bad, bad_stat, TC_ACT_SHOT);
    tnl_pop_case("GRE pop, good", &outer, NO_DROP, TC_ACT_SHOT);

    /* A VXLAN packet for the GRE port is not GRE. */
    pkt_hex(&bad, TNL_OUTER_ETH TNL_IP("0000", "0000")
            TNL_UDP("0000") TNL_VXLAN);
    ofpbuf_put(&bad, inner.data, inner.size);
    b = bad.data;
    b[16] = 0;
    b[17] = bad.size - 14;
    memcpy(b + 24, &(ovs_be16) { csum(b + 14, 20) }, 2);
    b[38] = 0;
    b[39] = bad.size - 34;
    tnl_pop_case("GRE pop of VXLAN", &bad, bad_stat, TC_ACT_SHOT);

    /* No options at all: no key, tun_id 0. */
    pkt_hex(&hdr, TNL_OUTER_ETH GRE_IP "0000 6558");
    gre_push_case("GRE push without options", &inner, &hdr, false, false,
                  &outer);
    tnl_pop_key(&outer, &key);
    CHECK(key.in_port == TNL_PORT && !key.tun_id && !key.tun_flags,
          "GRE pop without options: tun_id %#"PRIx64" flags %#x",
          ntohll(key.tun_id), ntohs(key.tun_flags));
    tnl_pop_match("GRE pop without options", &outer, &key, &inner);

    /* With a checksum (options:csum=true) and a key: computed at the
     * push, checked at the pop, which drops a packet whose checksum is
     * wrong. */
    pkt_hex(&hdr, TNL_OUTER_ETH GRE_IP "a000 6558 00000000 00123456");
    gre_push_case("GRE push with csum", &inner, &hdr, false, false,
                  &outer);
    tnl_pop_key(&outer, &key);
    CHECK(key.tun_id == htonll(0x123456)
          && key.tun_flags == htons(FLOW_TNL_F_KEY | FLOW_TNL_F_CSUM),
          "GRE pop with csum: tun_id %#"PRIx64" flags %#x",
          ntohll(key.tun_id), ntohs(key.tun_flags));
    tnl_pop_match("GRE pop with csum", &outer, &key, &inner);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size);
    ((uint8_t *) bad.data)[bad.size - 1] ^= 0x10;
    tnl_pop_case("GRE pop with a bad GRE checksum", &bad, bad_stat,
                 TC_ACT_SHOT);

    /* A sequence number (options:seq=true) counts per port in
     * ovs-vswitchd: the translation never gives it to BPF, which
     * refuses it; a received one is taken (and ignored). */
    pkt_hex(&hdr, TNL_OUTER_ETH GRE_IP "3000 6558 00123456 00000000");
    flow_for(&inner, acts, gre_push_acts(acts, &hdr, false, false));
    drops_get(&drops);
    run_ingress(&inner, &r);
    check_drops("GRE push with seq", &drops, push_failed, 1);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, hdr.data, hdr.size);
    ofpbuf_put(&bad, inner.data, inner.size);
    b = bad.data;
    b[17] = bad.size - 14;
    memcpy(b + 24, &(ovs_be16) { csum(b + 14, 20) }, 2);
    tnl_pop_key(&bad, &key);
    CHECK(key.tun_id == htonll(0x123456)
          && key.tun_flags == htons(FLOW_TNL_F_KEY),
          "GRE pop with seq: tun_id %#"PRIx64" flags %#x",
          ntohll(key.tun_id), ntohs(key.tun_flags));
    tnl_pop_match("GRE pop with seq", &bad, &key, &inner);

    /* Over IPv6 (two TNL_HDR slots), with a checksum and a key, and
     * back. */
    pkt_hex(&hdr, TNL_OUTER_ETH6 GRE_IP6 "a000 6558 00000000 00123456");
    ovs_assert(hdr.size == 66);
    gre_push_case("GRE push over IPv6", &inner, &hdr, true, false,
                  &outer);
    gre_push_case("GRE push of ARP over IPv6", &arp, &hdr, true, false,
                  &bad);
    tnl_pop_key(&bad, &key);
    tnl_pop_match("GRE pop of ARP over IPv6", &bad, &key, &arp);
    tnl_pop_ipv6_case("GRE pop over IPv6", &outer, &inner);
    ofpbuf_clear(&bad);
    ofpbuf_put(&bad, outer.data, outer.size);
    ((uint8_t *) bad.data)[54] |= 0x40;    /* R: routing. */
    tnl_pop_case("GRE pop over IPv6 with the R flag", &bad, bad_stat,
                 TC_ACT_SHOT);

    /* GRE carrying IPv4 (a layer 3 GRE port, options:packet_type=
     * legacy_l3), after pop_eth: the header takes the place of the
     * Ethernet header; its pop sends the IPv4 packet up as a layer 3
     * packet of the tunnel port. */
    pkt_hex(&hdr, TNL_OUTER_ETH GRE_IP "2000 0800 00123456");
    gre_push_case("GRE push of IPv4 without Ethernet", &inner, &hdr, false,
                  true, &outer);
    tnl_pop_case("GRE pop of IPv4", &outer, NO_DROP, TC_ACT_SHOT);
    CHECK(n_upcalls == 1 && upcall_recs[0].hdr.type == OVS_BPF_UPCALL_L3
          && upcall_recs[0].hdr.in_port == TNL_PORT
          && upcall_recs[0].hdr.l3_type == htons(ETH_TYPE_IP)
          && upcall_recs[0].hdr.pkt_len == inner.size - ETH_HEADER_LEN
          && !memcmp(upcall_recs[0].pkt,
                     (uint8_t *) inner.data + ETH_HEADER_LEN,
                     inner.size - ETH_HEADER_LEN),
          "GRE pop of IPv4: %d upcalls, type %"PRIu32", in_port %"PRIu32
          ", l3_type %#x, length %"PRIu32, n_upcalls,
          upcall_recs[0].hdr.type, upcall_recs[0].hdr.in_port,
          ntohs(upcall_recs[0].hdr.l3_type), upcall_recs[0].hdr.pkt_len);

    /* A VXLAN port takes no GRE. */
    add_port(TNL_PORT, 1, OVS_BPF_PORT_F_TUNNEL);
    tnl_pop_case("VXLAN pop of GRE", &outer, bad_stat, TC_ACT_SHOT);

    ofpbuf_uninit(&hdr);
    ofpbuf_uninit(&inner);
    ofpbuf_uninit(&arp);
    ofpbuf_uninit(&outer);
    ofpbuf_uninit(&bad);
}

static void
test_tunnel(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    const uint32_t failed = OVS_BPF_STAT_ACTION_FAILED(OVS_BPF_ACTION_OUTPUT);
    struct ovs_bpf_action acts[4];
    struct ovs_bpf_flow_key key;
    struct ofpbuf pkt;
    struct run r;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP
            "000000000000000000000000000000000000");

    /* set_tunnel, then output to a tunnel port: the kernel takes the key
     * (bpf_skb_set_tunnel_key()) and the packet is redirected. */
    acts[0] = set_tunnel_act();
    acts[1] = OUTPUT(TNL_PORT);
    tunnel_case("set_tunnel + output", &pkt, acts, 2, TC_ACT_REDIRECT,
                NO_DROP);

    /* IPv6 underlay, and two tunnel outputs (the first one a copy). */
    acts[0] = set_tunnel_act();
    acts[0].u.tunnel.ipv4_src = acts[0].u.tunnel.ipv4_dst = 0;
    acts[0].u.tunnel.ipv6_dst[0] = 0xfc;
    acts[0].u.tunnel.ipv6_dst[15] = 1;
    acts[0].u.tunnel.flags = BPF_F_TUNINFO_IPV6;
    acts[1] = OUTPUT(TNL_PORT);
    acts[2] = set_tunnel_act();
    acts[3] = OUTPUT(TNL_PORT);
    tunnel_case("IPv6 set_tunnel + 2 outputs", &pkt, acts, 4,
                TC_ACT_REDIRECT, NO_DROP);

    /* A set(tunnel(...)) inside a clone() does not last beyond it. */
    acts[0] = ACT(CLONE, .u.nested.n_actions = 2);
    acts[1] = set_tunnel_act();
    acts[2] = OUTPUT(TNL_PORT);
    acts[3] = OUTPUT(TNL_PORT);
    tunnel_case("set_tunnel in clone()", &pkt, acts, 4, TC_ACT_SHOT, failed);

    /* A tunnel key is ignored by an output to another port... */
    acts[0] = set_tunnel_act();
    acts[1] = OUTPUT(LO_PORT1);
    tunnel_case("set_tunnel + plain output", &pkt, acts, 2, TC_ACT_REDIRECT,
                NO_DROP);

    /* ...and an output to a tunnel port without one fails: the device
     * would have nowhere to send the packet. */
    acts[0] = OUTPUT(TNL_PORT);
    tunnel_case("output without set_tunnel", &pkt, acts, 1, TC_ACT_SHOT,
                failed);
    acts[1] = OUTPUT(LO_PORT1);
    tunnel_case("copy without set_tunnel", &pkt, acts, 2, TC_ACT_REDIRECT,
                failed);

    /* A packet of a tunnel port without tunnel metadata (a collect_md
     * device hands over none such) keeps a zero tunnel key. */
    del_flows();
    add_port(IN_PORT, 1, OVS_BPF_PORT_F_TUNNEL);
    run_ingress(&pkt, &r);
    scratch_key(&key);
    CHECK(is_all_zeros((uint8_t *) &key + OVS_BPF_KEY_CT_TUN_OFS,
                       OVS_BPF_KEY_CT_TUN_LEN),
          "tunnel port, no metadata: the key has tunnel fields");
    add_port(IN_PORT, 1, 0);

    ofpbuf_uninit(&pkt);
}

/* The time per run, in ns, of program 'fd' on 'pkt', measured by
 * BPF_PROG_TEST_RUN over 'repeat' runs (so that every program measured
 * includes the same per-run skb setup), which must redirect the packet. */
static uint32_t
bench_run(int fd, const struct ofpbuf *pkt, uint32_t repeat)
{
    struct __sk_buff c = { .ingress_ifindex = IN_IFINDEX };
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt->data,
                .data_size_in = pkt->size, .ctx_in = &c,
                .ctx_size_in = sizeof c, .repeat = repeat);

    if (bpf_prog_test_run_opts(fd, &opts)) {
        ovs_fatal(errno, "BPF_PROG_TEST_RUN");
    }
    if (opts.retval != TC_ACT_REDIRECT) {
        ovs_fatal(0, "benchmark run did not redirect (%u)", opts.retval);
    }
    return opts.duration;
}

/* The megaflow that OVS installs for "in_port=1,actions=output:2" with MAC
 * learning off, for 'pkt': in_port, recirc_id, the Ethernet header and
 * ipv4(frag=no), 5 key words. */
static void
bench_eth_megaflow(const struct ofpbuf *pkt, struct ovs_bpf_flow_key *key,
                   struct ovs_bpf_flow_key *mask)
{
    key_of(pkt, key);
    memset(mask, 0, sizeof *mask);
    mask->in_port = mask->recirc_id = UINT32_MAX;
    memset(mask->eth_dst, 0xff, sizeof mask->eth_dst);
    memset(mask->eth_src, 0xff, sizeof mask->eth_src);
    mask->eth_type = OVS_BE16_MAX;
    mask->nw_frag = 0xff;
}

/* bench_run() of the ingress program on 'pkt' with the megaflow 'key' and
 * 'mask', whose actions are the 'n' slots of 'actions', as the only flow
 * and mask. */
static uint32_t
bench_flow(const struct ovs_bpf_flow_key *key,
           const struct ovs_bpf_flow_key *mask,
           const struct ovs_bpf_action *actions, uint32_t n,
           const struct ofpbuf *pkt, uint32_t repeat)
{
    del_flows();
    add_flow(0, key, mask, actions, n, 0);
    set_n_masks(1);
    return bench_run(ingress_fd, pkt, repeat);
}

/* Not a test: the cost per packet of the ingress program on a flow with a
 * single output, next to a program that only calls bpf_redirect(), and
 * that of a set of the Ethernet destination, of an encapsulation and of a
 * decapsulation. */
static void
test_benchmark(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    /* r1 = 1 (ifindex), r2 = 0 (flags), call bpf_redirect, exit. */
    const struct bpf_insn bare[] = {
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = 1 },
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 2, .imm = 0 },
        { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect },
        { .code = BPF_JMP | BPF_EXIT },
    };
    struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    struct ovs_bpf_action set_out[2] = { ACT(SET_ETH), OUTPUT(LO_PORT1) };
    struct ovs_bpf_action tnl_out[2] = { set_tunnel_act(),
                                         OUTPUT(TNL_PORT) };
    struct ovs_bpf_action acts32[OVS_BPF_MAX_ACTIONS];
    /* The ceiling of an encapsulation: r6 = ctx; a struct bpf_tunnel_key
     * (VNI 0x123, remote 172.31.1.1, TTL 64) on the stack; call
     * bpf_skb_set_tunnel_key(ctx, key, 44, BPF_F_ZERO_CSUM_TX |
     * BPF_F_DONT_FRAGMENT); then bpf_redirect(1, 0). */
    const struct bpf_insn bare_tnl[] = {
        { .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1 },
#define ZERO_STACK(OFS) \
        { .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = 10, .off = (OFS), \
          .imm = 0 }
        ZERO_STACK(-48), ZERO_STACK(-40), ZERO_STACK(-32), ZERO_STACK(-24),
        ZERO_STACK(-16), ZERO_STACK(-8),
#undef ZERO_STACK
        { .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -48,
          .imm = 0x123 },
        { .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -44,
          .imm = 0xac1f0101 },
        { .code = BPF_ST | BPF_MEM | BPF_B, .dst_reg = 10, .off = -27,
          .imm = 64 },
        { .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 6 },
        { .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
        { .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -48 },
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3,
          .imm = sizeof(struct bpf_tunnel_key) },
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4,
          .imm = BPF_F_ZERO_CSUM_TX | BPF_F_DONT_FRAGMENT },
        { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_skb_set_tunnel_key },
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = 1 },
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 2, .imm = 0 },
        { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect },
        { .code = BPF_JMP | BPF_EXIT },
    };
    uint32_t t_bare_tnl, t_tnl, t_decap;
    int bare_tnl_fd;
    const uint32_t repeat = 1000000;
    struct ovs_bpf_flow_key key, mask;
    uint32_t t_bare, t_exact, t_mega, t_set, t_32;
    struct ofpbuf pkt;
    int bare_fd;
    int i;

    bare_fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "bare_redirect", "GPL",
                            bare, ARRAY_SIZE(bare), NULL);
    if (bare_fd < 0) {
        ovs_fatal(errno, "loading the bare redirect program");
    }
    bare_tnl_fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "bare_tunnel",
                                "GPL", bare_tnl, ARRAY_SIZE(bare_tnl), NULL);
    if (bare_tnl_fd < 0) {
        ovs_fatal(errno, "loading the bare tunnel program");
    }
    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP
            "000000000000000000000000000000000000");

    bench_eth_megaflow(&pkt, &key, &mask);

    for (i = 0; i < 3; i++) {
        t_bare = bench_run(bare_fd, &pkt, repeat);
        flow_for(&pkt, &out, 1);
        t_exact = bench_run(ingress_fd, &pkt, repeat);
        t_mega = bench_flow(&key, &mask, &out, 1, &pkt, repeat);
        /* The same megaflow, rewriting the destination MAC first (to the
         * value it has, so that every run sees the same packet). */
        memcpy(set_out[0].u.eth.dst, key.eth_dst, sizeof key.eth_dst);
        memset(set_out[0].u.eth.dst_mask, 0xff, sizeof key.eth_dst);
        t_set = bench_flow(&key, &mask, set_out, 2, &pkt, repeat);
        /* As the benchmark's 32-action row: 31 rewrites of the Ethernet
         * addresses (to the values they have) and the output. */
        for (size_t j = 0; j < ARRAY_SIZE(acts32) - 1; j++) {
            acts32[j] = set_out[0];
        }
        acts32[ARRAY_SIZE(acts32) - 1] = out;
        t_32 = bench_flow(&key, &mask, acts32, ARRAY_SIZE(acts32), &pkt,
                          repeat);
        /* The same megaflow, encapsulating: set(tunnel(...)) and output to
         * a VXLAN port, against a bare program that does just that. */
        t_tnl = bench_flow(&key, &mask, tnl_out, 2, &pkt, repeat);
        t_bare_tnl = bench_run(bare_tnl_fd, &pkt, repeat);
        /* Output only, received on a tunnel port: the port lookup and
         * bpf_skb_get_tunnel_key() of the decapsulation side.  (The run
         * gives the skb no tunnel metadata, so the helper fails early, on
         * the first try and on the IPv6 one: a lower bound.) */
        add_port(IN_PORT, 1, OVS_BPF_PORT_F_TUNNEL);
        t_decap = bench_flow(&key, &mask, &out, 1, &pkt, repeat);
        add_port(IN_PORT, 1, 0);
        del_flows();
        printf("bare bpf_redirect: %u ns/packet; ovs_bpf_ingress, output, "
               "1 mask: exact match (%d words) %u ns/packet, ratio %.2f; "
               "Ethernet megaflow (5 words) %u ns/packet, ratio %.2f; "
               "the same with set dst MAC first %u ns/packet, ratio %.2f\n",
               t_bare, OVS_BPF_KEY_WORDS, t_exact, (double) t_exact / t_bare,
               t_mega, (double) t_mega / t_bare,
               t_set, (double) t_set / t_bare);
        printf("ovs_bpf_ingress, Ethernet megaflow, 31 set dst MAC + "
               "output: %u ns/packet, ratio %.2f\n", t_32,
               (double) t_32 / t_bare);
        printf("bare bpf_skb_set_tunnel_key + bpf_redirect: %u ns/packet; "
               "ovs_bpf_ingress, Ethernet megaflow, set(tunnel) + output "
               "to a VXLAN port: %u ns/packet, %+d ns against output only, "
               "ratio to the bare program %.2f\n",
               t_bare_tnl, t_tnl, (int) t_tnl - (int) t_mega,
               (double) t_tnl / t_bare_tnl);
        printf("ovs_bpf_ingress, Ethernet megaflow, output, received on a "
               "tunnel port (no metadata): %u ns/packet, %+d ns against a "
               "plain port\n", t_decap, (int) t_decap - (int) t_mega);
    }
    close(bare_tnl_fd);
    close(bare_fd);
    ofpbuf_uninit(&pkt);
}

/* The cost of the MPLS actions: push_mpls and pop_mpls together (each run
 * gets the packet the last one left, which must be the same), against
 * push_vlan and pop_vlan (an accelerated tag: no bytes move) and against
 * output only, in the same rounds, on the Ethernet megaflow of
 * test_benchmark(). */
static void
test_benchmark_mpls(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    const struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    const struct ovs_bpf_action vlan[3] = {
        ACT(PUSH_VLAN, .u.push_vlan.tpid = htons(0x8100),
            .u.push_vlan.tci = htons(10)),
        ACT(POP_VLAN),
        OUTPUT(LO_PORT1),
    };
    const struct ovs_bpf_action mpls[3] = {
        ACT(PUSH_MPLS, .u.mpls.lse = LSE(100, 0, 1, 64),
            .u.mpls.eth_type = htons(0x8847)),
        ACT(POP_MPLS, .u.mpls.eth_type = htons(0x0800)),
        OUTPUT(LO_PORT1),
    };
    const uint32_t repeat = 1000000;
    struct ovs_bpf_flow_key key, mask;
    struct ofpbuf pkt;

    ofpbuf_init(&pkt, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP
            "000000000000000000000000000000000000");
    bench_eth_megaflow(&pkt, &key, &mask);

    for (int i = 0; i < 3; i++) {
        uint32_t t_out, t_vlan, t_mpls;

        t_out = bench_flow(&key, &mask, &out, 1, &pkt, repeat);
        t_vlan = bench_flow(&key, &mask, vlan, 3, &pkt, repeat);
        t_mpls = bench_flow(&key, &mask, mpls, 3, &pkt, repeat);
        printf("ovs_bpf_ingress, Ethernet megaflow: output %u ns/packet; "
               "push_vlan, pop_vlan, output %u ns/packet (%+d); "
               "push_mpls, pop_mpls, output %u ns/packet (%+d)\n",
               t_out, t_vlan, (int) t_vlan - (int) t_out,
               t_mpls, (int) t_mpls - (int) t_out);
    }
    del_flows();
    ofpbuf_uninit(&pkt);
}

/* Runs 'pkt' once through the ingress program, whatever the program does
 * with it (a setup step of benchmark-ct: a commit that goes up for its TCP
 * state...), with the actions 'acts' ('n' slots) in a flow of its own. */
static void
bench_ct_setup(const struct ofpbuf *pkt, const struct ovs_bpf_action *acts,
               uint32_t n)
{
    struct ovs_bpf_flow_key key;
    struct run r;

    del_flows();
    key_of(pkt, &key);
    add_flow(0, &key, NULL, acts, n, 0);
    set_n_masks(1);
    run_ingress(pkt, &r);
    poll_upcalls();
    del_flows();
}

/* Gives the TCP connection of 10.0.0.1:1234 to 10.0.0.2:80 in zone 'zone'
 * the TCP state 'state' (enum ovs_bpf_tcp_state) and a timeout of 'timeout'
 * seconds through ctnetlink, as ovs-vswitchd writes the moves that BPF
 * sends up (benchmark-ct has no ovs-vswitchd). */
static void
bench_ct_tcp_state(uint16_t zone, uint8_t state, uint32_t timeout)
{
    struct ct_dpif_tuple orig = {
        .l3_type = AF_INET, .ip_proto = IPPROTO_TCP,
        .src.ip = inet_addr("10.0.0.1"), .dst.ip = inet_addr("10.0.0.2"),
        .src_port = htons(1234), .dst_port = htons(80),
    };
    int error = ct_slow_nl_update(&orig, zone, timeout, 0, 0, 0, NULL,
                                  state);

    if (error) {
        ovs_fatal(error, "benchmark-ct: writing TCP state %u", state);
    }
}

/* One round of the four rows of test_benchmark_ct() on 'pkt', whose
 * megaflow is 'key' and 'mask', into 't': output, ct()+output, recirc +
 * output, ct()+recirc + output.  Checks that the ct() of 'pkt' gives
 * 'state'. */
static void
bench_ct_round(const struct ofpbuf *pkt, const struct ovs_bpf_flow_key *key,
               const struct ovs_bpf_flow_key *mask,
               const struct ovs_bpf_act_ct *ct, uint8_t state,
               uint32_t t[4], uint32_t repeat)
{
    const struct ovs_bpf_action out = OUTPUT(LO_PORT1);
    const struct ovs_bpf_action ct_out[2] = { ACT(CT, .u.ct = *ct),
                                              OUTPUT(LO_PORT1) };
    const struct ovs_bpf_action ct_recirc[2] = {
        ACT(CT, .u.ct = *ct), ACT(RECIRC, .u.recirc.id = 1)
    };
    const struct ovs_bpf_action recirc = ACT(RECIRC, .u.recirc.id = 1);
    struct ovs_bpf_flow_key key2, mask2, k;

    /* The second pass: recirc_id 1, and ct_state and ct_zone matched as
     * "ct_state(+trk-inv),ct_zone(61)" (after the ct()) or
     * "ct_state(-trk),ct_zone(0)" (after a recirculation alone). */
    mask2 = *mask;
    mask2.ct_state = CS_TRK | CS_INV;
    mask2.ct_zone = UINT16_MAX;

    t[0] = bench_flow(key, mask, &out, 1, pkt, repeat);
    t[1] = bench_flow(key, mask, ct_out, 2, pkt, repeat);
    scratch_key(&k);
    if (k.ct_state != state) {
        ovs_fatal(0, "benchmark-ct: ct_state %#x, expected %#x",
                  k.ct_state, state);
    }

    del_flows();
    add_flow(0, key, mask, &recirc, 1, 0);
    key2 = *key;
    key2.recirc_id = 1;
    add_flow(1, &key2, &mask2, &out, 1, 0);
    set_n_masks(2);
    t[2] = bench_run(ingress_fd, pkt, repeat);

    del_flows();
    add_flow(0, key, mask, ct_recirc, 2, 0);
    key2.ct_state = CS_TRK;
    key2.ct_zone = ct->zone;
    add_flow(1, &key2, &mask2, &out, 1, 0);
    set_n_masks(2);
    t[3] = bench_run(ingress_fd, pkt, repeat);
    del_flows();
}

/* Prints the figures 't' of bench_ct_round() for a packet of 'proto'. */
static void
bench_ct_print(const char *proto, const uint32_t t[4])
{
    printf("ovs_bpf_ingress, Ethernet megaflow, %s, ns/packet: "
           "output %u; ct(commit,zone=61),output %u (%+d); "
           "recirc(1) + output %u (%+d); "
           "ct(commit,zone=61),recirc(1) + output %u (%+d, %+d "
           "against recirc)\n", proto,
           t[0], t[1], (int) t[1] - (int) t[0],
           t[2], (int) t[2] - (int) t[0],
           t[3], (int) t[3] - (int) t[0], (int) t[3] - (int) t[2]);
}

/* The parts of the cost of ct(): on the Ethernet megaflow of
 * test_benchmark(), a packet of an established connection in the rounds
 * of the benchmark's rows (utilities/ovs-datapath-bench): output only
 * ("bpf-output"); ct(commit,zone=61) then output, one flow
 * ("bpf-ct-output"); recirc(1) then a second flow that matches the
 * conntrack fields and outputs ("bpf-recirc"); ct(commit,zone=61),
 * recirc(1) and that second flow ("bpf-ct").  First for a UDP packet of a
 * connection that has seen a reply (+trk+est), then for a TCP ACK of a
 * connection in ESTABLISHED with its window data (the SYN and SYN-ACK went
 * through ct() in BPF, the states are written with the conntrack tool as
 * ovs-vswitchd would write them).  The connections are in the conntrack
 * table of the test's network namespace. */
static void
test_benchmark_ct(struct ovs_cmdl_context *ctx OVS_UNUSED)
{
    const struct ovs_bpf_act_ct ct = { .zone = 61,
                                       .flags = OVS_BPF_CT_F_COMMIT };
    const struct ovs_bpf_action commit = ACT(CT, .u.ct = ct);
    const uint32_t repeat = 1000000;
    struct ovs_bpf_flow_key key, mask, tkey, tmask;
    struct ofpbuf pkt, rev, syn, synack, ack;
    uint32_t u[4], t[4];

    ofpbuf_init(&pkt, 0);
    ofpbuf_init(&rev, 0);
    ofpbuf_init(&syn, 0);
    ofpbuf_init(&synack, 0);
    ofpbuf_init(&ack, 0);
    pkt_hex(&pkt, ETH "0800 " IP4_UDP
            "000000000000000000000000000000000000");
    pkt_hex(&rev, ETH "0800 4500 001c 1234 0000 4011 0000 0a000002 "
            "0a000001 1234 0035 0008 0000 "
            "000000000000000000000000000000000000");
    /* 10.0.0.1:1234 to 10.0.0.2:80, SEQ, ACK, FLAGS; the reverse. */
#define BENCH_TCP(SEQ, ACK, FLAGS)                                      \
    ETH "0800 4500 0028 1234 4000 4006 0000 " IP4A "04d2 0050 "         \
    SEQ " " ACK " 50" FLAGS " 2000 0000 0000 000000000000"
    pkt_hex(&syn, BENCH_TCP("00000001", "00000000", "02"));
    pkt_hex(&ack, BENCH_TCP("00000002", "00000101", "10"));
#undef BENCH_TCP
    pkt_hex(&synack, ETH "0800 4500 0028 1234 4000 4006 0000 " "0a000002 "
            "0a000001 0050 04d2 00000100 00000002 5012 2000 0000 0000 "
            "000000000000");

    /* UDP: committed, then a reply. */
    bench_ct_setup(&pkt, &commit, 1);
    bench_ct_setup(&rev, &commit, 1);
    /* TCP: the SYN commits (and goes up for SYN_SENT), the SYN-ACK (up for
     * SYN_RECV) gives both directions their window data, the ACKs are of
     * an established connection. */
    bench_ct_setup(&syn, &commit, 1);
    bench_ct_tcp_state(ct.zone, OVS_BPF_TCPS_SYN_SENT, 120);
    bench_ct_setup(&synack, &commit, 1);
    bench_ct_tcp_state(ct.zone, OVS_BPF_TCPS_ESTABLISHED, 432000);

    bench_eth_megaflow(&pkt, &key, &mask);
    bench_eth_megaflow(&ack, &tkey, &tmask);
    for (int i = 0; i < 3; i++) {
        bench_ct_round(&pkt, &key, &mask, &ct, CS_TRK | CS_EST, u, repeat);
        bench_ct_round(&ack, &tkey, &tmask, &ct, CS_TRK | CS_EST, t, repeat);
        bench_ct_print("UDP", u);
        bench_ct_print("TCP", t);
    }
    ofpbuf_uninit(&pkt);
    ofpbuf_uninit(&rev);
    ofpbuf_uninit(&syn);
    ofpbuf_uninit(&synack);
    ofpbuf_uninit(&ack);
}

static const struct ovs_cmdl_command commands[] = {
    {"load", "[object]", 0, 1, test_load, OVS_RO},
    {"parse", "[object]", 0, 1, test_parse, OVS_RO},
    {"parse-vlan-limit-1", "[object]", 0, 1, test_parse, OVS_RO},
    {"parse-limits", "[object]", 0, 1, test_parse_limits, OVS_RO},
    {"upcall", "[object]", 0, 1, test_upcall, OVS_RO},
    {"lookup", "[object]", 0, 1, test_lookup, OVS_RO},
    {"lookup-tables", "[object]", 0, 1, test_lookup_tables, OVS_RO},
    {"mask-cache", "[object]", 0, 1, test_mask_cache, OVS_RO},
    {"output", "[object]", 0, 1, test_output, OVS_RO},
    {"set-eth", "[object]", 0, 1, test_set_eth, OVS_RO},
    {"set-ipv4", "[object]", 0, 1, test_set_ipv4, OVS_RO},
    {"set-ipv6", "[object]", 0, 1, test_set_ipv6, OVS_RO},
    {"set-l4", "[object]", 0, 1, test_set_l4, OVS_RO},
    {"vlan", "[object]", 0, 1, test_vlan, OVS_RO},
    {"mpls", "[object]", 0, 1, test_mpls, OVS_RO},
    {"nsh", "[object]", 0, 1, test_nsh, OVS_RO},
    {"recirc", "[object]", 0, 1, test_recirc, OVS_RO},
    {"clone", "[object]", 0, 1, test_clone, OVS_RO},
    {"ct", "[object]", 0, 1, test_ct, OVS_RO},
    {"check-pkt-len", "[object]", 0, 1, test_check_pkt_len, OVS_RO},
    {"tunnel", "[object]", 0, 1, test_tunnel, OVS_RO},
    {"tnl", "[object]", 0, 1, test_tnl, OVS_RO},
    {"tnl-gre", "[object]", 0, 1, test_tnl_gre, OVS_RO},
    {"downcall", "[object]", 0, 1, test_downcall, OVS_RO},
    {"meter", "[object]", 0, 1, test_meter, OVS_RO},
    {"drops", "[object]", 0, 1, test_drops, OVS_RO},
    {"benchmark", "[object]", 0, 1, test_benchmark, OVS_RO},
    {"benchmark-mpls", "[object]", 0, 1, test_benchmark_mpls, OVS_RO},
    {"benchmark-ct", "[object]", 0, 1, test_benchmark_ct, OVS_RO},
    {NULL, NULL, 0, 0, NULL, OVS_RO},
};

static void
test_bpf_datapath_main(int argc, char *argv[])
{
    struct ovs_cmdl_context ctx = {
        .argc = argc - 1,
        .argv = argv + 1,
    };

    set_program_name(argv[0]);
    if (argc < 2) {
        ovs_fatal(0, "usage: %s CASE [OBJECT]", argv[0]);
    }
    if (!strcmp(argv[1], "parse-vlan-limit-1")) {
        vlan_limit = 1;
    }
    dp_open(argc > 2 ? argv[2] : NULL);
    ovs_cmdl_run_command(&ctx, commands);
    dp_close();
    if (n_failures) {
        fprintf(stderr, "%d checks failed\n", n_failures);
        exit(EXIT_FAILURE);
    }
}

OVSTEST_REGISTER("test-bpf-datapath", test_bpf_datapath_main);
