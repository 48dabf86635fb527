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

/* The "bpf" dpif provider.
 *
 * The fast path is the BPF object bpf/datapath.bpf.o, attached at the TC
 * ingress hook of every port: it parses each packet into a struct
 * ovs_bpf_flow_key, looks it up in the megaflow table and runs the flow's
 * actions as a chain of tail calls.  This file and the ones it calls are the
 * slow path's side:
 *
 *   - It owns the datapath: loads the object (dpif-bpf-loader.c), creates
 *     the downcall TAP device (dpif-bpf-linux.c) and attaches the downcall
 *     program to it.
 *
 *   - dpif-bpf-flow-table.c keeps the authoritative copy of the flow table,
 *     keyed by ufid, with the ODP key, mask and actions as ofproto gave
 *     them, and mirrors it into the BPF flow tables and 'flow_masks'
 *     (translated by dpif-bpf-odp.c).  The statistics live in the BPF flow
 *     table.
 *
 *   - Upcalls come up through a ring per handler (dpif-bpf-upcall.c); packets
 *     ovs-vswitchd sends ("execute") go down through the TAP device, as a
 *     frame that carries its actions in a trailer that the downcall program
 *     checks and strips.
 *
 *   - dpif-bpf-port.c numbers the ports, fills the maps that translate
 *     between odp port numbers and ifindexes for the BPF programs, and
 *     attaches the ingress program to each port.
 *
 *   - dpif-bpf-ct.c answers the conntrack commands (dpctl/dump-conntrack
 *     and friends) from the kernel's nf_conntrack, which the BPF programs
 *     use through the conntrack kfuncs.
 *
 * All the bridges of type "bpf" share one datapath, "ovs-bpf", as all the
 * bridges of type "system" share "ovs-system".  As the kernel's datapath,
 * it outlives ovs-vswitchd: its programs, maps (pinned), TC filters, TAP
 * device and internal ports stay when ovs-vswitchd exits or dies, and keep
 * forwarding the flows installed; the next ovs-vswitchd takes it over
 * (dpif_bpf_obj_adopt(), dp_bpf_ports_adopt(), dp_bpf_flows_adopt()).
 * Only its destruction ("ovs-appctl exit --cleanup", deleting the last
 * bridge, "dpctl/del-dp") removes what it made in the kernel. */

#include <config.h>

#include "dpif-bpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpf/datapath-abi.h"
#include "coverage.h"
#include "dp-packet.h"
#include "dpif-bpf-ct.h"
#include "dpif-bpf-ct-labels.h"
#include "dpif-bpf-ct-limit.h"
#include "dpif-bpf-ct-slow.h"
#include "dpif-bpf-ct-tp.h"
#include "dpif-bpf-flow-table.h"
#include "dpif-bpf-ipf.h"
#include "dpif-bpf-linux.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-meter.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-port.h"
#include "dpif-bpf-private.h"
#include "dpif-bpf-upcall.h"
#include "dpif-provider.h"
#include "flow.h"
#include "hash.h"
#include "netdev-native-tnl.h"
#include "netlink.h"
#include "odp-execute.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/ofpbuf.h"
#include "openvswitch/shash.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "openvswitch/poll-loop.h"
#include "packets.h"
#include "seq.h"
#include "smap.h"
#include "sset.h"
#include "timeval.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf);

COVERAGE_DEFINE(dpif_bpf_downcall);
COVERAGE_DEFINE(dpif_bpf_downcall_error);
COVERAGE_DEFINE(dpif_bpf_downcall_gso);
COVERAGE_DEFINE(dpif_bpf_ct_resume);
COVERAGE_DEFINE(dpif_bpf_slow_path);
COVERAGE_DEFINE(dpif_bpf_ct_upcall_malformed);
COVERAGE_DEFINE(dpif_bpf_execute_not_eth);
COVERAGE_DEFINE(dpif_bpf_execute_userspace);
COVERAGE_DEFINE(dpif_bpf_miss_forwarded);
COVERAGE_DEFINE(dpif_bpf_l3_recirc);
COVERAGE_DEFINE(dpif_bpf_l3_miss);
COVERAGE_DEFINE(dpif_bpf_l3_drop);

/* Capacity of the BPF flow table (its max_entries, fixed at load time) and
 * default of the flow limit, which other_config:bpf-flow-limit lowers. */
#define DP_BPF_FLOW_TABLE_SIZE 65536

/* The default upcall budget of a port on a CPU (other_config:
 * bpf-upcall-rate, -burst, -budget-fill; see struct
 * dpif_bpf_upcall_budget): above the misses per second of a busy port's
 * flow setup, and enforced only while a ring is 5% full, so that a port
 * alone still has every handler. */
#define DP_BPF_UPCALL_RATE 2000
#define DP_BPF_UPCALL_BURST 2000
#define DP_BPF_UPCALL_FILL_PCT 5

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

static struct ovs_mutex dp_bpf_mutex = OVS_MUTEX_INITIALIZER;
static struct shash dp_bpfs OVS_GUARDED_BY(dp_bpf_mutex)
    = SHASH_INITIALIZER(&dp_bpfs);

static int dp_bpf_downcall(struct dp_bpf *, const struct dp_packet *,
                           const struct ovs_bpf_action *, uint32_t n_actions,
                           unsigned int mru);

/* ------------------------------------------------------------------ */
/* Datapath creation and destruction.                                 */
/* ------------------------------------------------------------------ */

/* The same layout as for clang -target bpf (see datapath-abi.h). */
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_dp_config) == 32);

int
dp_bpf_write_config(struct dp_bpf *dp)
    OVS_REQUIRES(dp->mutex)
{
    struct ovs_bpf_dp_config cfg;
    uint32_t zero = 0;

    memset(&cfg, 0, sizeof cfg);
    cfg.mask_order = dp->mask_order_sel;
    cfg.tap_ifindex = dp->tap_ifindex;
    cfg.n_ct_tps = dp->n_ct_tps;
    cfg.ct_tcp_liberal = dp->ct_tcp_liberal;
    memcpy(cfg.secret, dp->secret, sizeof cfg.secret);
    return (bpf_map_update_elem(dp->obj->dp_config_fd, &zero, &cfg, BPF_ANY)
            ? errno : 0);
}

/* Stores in '*sum' the sum over the CPUs of the __u64 values of the entry
 * 'idx' of the per-CPU array map 'fd'.  Returns 0 or a positive errno
 * value. */
int
dp_bpf_percpu_sum(int fd, uint32_t idx, uint64_t *sum)
{
    int n_cpus = libbpf_num_possible_cpus();
    uint64_t *vals;
    int error;

    *sum = 0;
    if (n_cpus <= 0) {
        return n_cpus ? -n_cpus : ENODEV;
    }
    vals = xcalloc(n_cpus, sizeof *vals);
    error = bpf_map_lookup_elem(fd, &idx, vals) ? errno : 0;
    if (!error) {
        for (int i = 0; i < n_cpus; i++) {
            *sum += vals[i];
        }
    }
    free(vals);
    return error;
}

static void dp_bpf_free(struct dp_bpf *);

/* The names of the drop reasons, by enum ovs_bpf_drop_reason. */
static const char *const dp_bpf_drop_reason_names[__OVS_BPF_DROP_MAX] = {
#define OVS_BPF_DROP_REASON_NAME(ENUM, NAME, DESCRIPTION) \
    [OVS_BPF_DROP_##ENUM] = NAME,
    OVS_BPF_DROP_REASONS(OVS_BPF_DROP_REASON_NAME)
#undef OVS_BPF_DROP_REASON_NAME
};

/* Logs, at INFO, the drop counters of a datapath that 'dp_name' replaced,
 * whose 'dp_stats' map is 'fd', of 'n_stats' counters, loaded by a
 * program of ABI version 'abi_version' (0 if unknown): they go away with
 * it, and "dpif-bpf/show" and "dpctl/show -s" count from zero again.  A
 * datapath of our ABI version has our drop reasons, by name; for another
 * one, the names are those of the ovs-vswitchd that made it, so its
 * non-zero counters are logged by their index in 'dp_stats' (that
 * ovs-vswitchd's "dpif-bpf/show" lists them in this order, drops after
 * the other counters). */
static void
dp_bpf_log_replaced_drops(const char *dp_name, int fd, uint32_t abi_version,
                          uint32_t n_stats)
{
    struct ds ds = DS_EMPTY_INITIALIZER;
    uint64_t total = 0;
    uint64_t n;

    if (abi_version == dpif_bpf_abi_version()
        && n_stats == OVS_BPF_N_DP_STATS) {
        for (int i = 0; i < __OVS_BPF_DROP_MAX; i++) {
            if (!dp_bpf_percpu_sum(fd, OVS_BPF_STAT_DROP(i), &n) && n) {
                ds_put_format(&ds, "%s%s=%"PRIu64, total ? ", " : ": ",
                              dp_bpf_drop_reason_names[i], n);
                total += n;
            }
        }
        for (int i = 0; i < __OVS_BPF_ACTION_MAX; i++) {
            if (!dp_bpf_percpu_sum(fd, OVS_BPF_STAT_ACTION_FAILED(i), &n)
                && n) {
                ds_put_format(&ds, "%saction_failed(%s)=%"PRIu64,
                              total ? ", " : ": ", dpif_bpf_action_name(i),
                              n);
                total += n;
            }
        }
        VLOG_INFO("%s: the replaced datapath had dropped %"PRIu64" "
                  "packets%s", dp_name, total, ds_cstr(&ds));
    } else {
        for (uint32_t i = 0; i < n_stats; i++) {
            if (!dp_bpf_percpu_sum(fd, i, &n) && n) {
                ds_put_format(&ds, " %"PRIu32"=%"PRIu64, i, n);
            }
        }
        if (abi_version) {
            VLOG_INFO("%s: the replaced datapath, of ABI version %"PRIu32
                      ", had these non-zero counters, drops among them, by "
                      "index:%s", dp_name, abi_version,
                      ds.length ? ds_cstr(&ds) : " none");
        } else {
            VLOG_INFO("%s: the replaced datapath, of unknown ABI version, "
                      "had these non-zero counters, drops among them, by "
                      "index:%s", dp_name, ds.length ? ds_cstr(&ds) : " none");
        }
    }
    ds_destroy(&ds);
}

/* Opens the map 'name' of ovs-vswitchd's state pinned for the datapath
 * 'dp_name' whose pin directory is 'pin_name'.  Returns its fd or -1 (after
 * a log line if it is there but not of our layout). */
static int
get_saved_map(const char *dp_name, const char *pin_name, const char *name)
{
    char *errmsg;
    int fd = dpif_bpf_saved_map_open(pin_name, name, &errmsg);

    if (errmsg) {
        VLOG_WARN("%s: not carrying the ports and flows of the pinned "
                  "datapath over: %s", dp_name, errmsg);
        free(errmsg);
    }
    return fd;
}

/* Makes 'dp', freshly loaded with its maps pinned in a staging directory,
 * replace the datapath pinned as 'pin_name' (one of another ABI version,
 * whose ovs-vswitchd saved its ports and flows in 'ports_fd' and
 * 'flows_fd') without a gap: the flows first go into the new maps, then
 * the new ingress program replaces the old one on each port's device, in
 * one step per device, and the new pins replace the old ones. */
static int
dp_bpf_replace(struct dp_bpf *dp, const char *pin_name, int ports_fd,
               int flows_fd)
{
    size_t n_flows = dp_bpf_flows_carry_over(dp, flows_fd);
    int error;

    ovs_mutex_lock(&dp->mutex);
    dp_bpf_ports_carry_over(dp, ports_fd);
    ovs_mutex_unlock(&dp->mutex);
    dpif_bpf_test_crash_point("replace", NULL);

    error = dpif_bpf_obj_move_pins(dp->obj, pin_name);
    if (error) {
        VLOG_ERR("%s: cannot move the pins of the new datapath to %s/%s "
                 "(%s)", dp->name, DPIF_BPF_PIN_ROOT, pin_name,
                 ovs_strerror(error));
        return error;
    }
    VLOG_INFO("%s: replaced the datapath pinned in %s/%s, carrying over "
              "%"PRIuSIZE" flows", dp->name, DPIF_BPF_PIN_ROOT, pin_name,
              n_flows);
    return 0;
}

/* Creates the datapath 'name', taking over the one an earlier ovs-vswitchd
 * left if there is one.  With 'existing', only takes over: fails with
 * ENODEV if there is nothing to take over. */
static int
dp_bpf_create(const struct dpif_class *class, const char *name,
              bool existing, struct dp_bpf **dpp)
    OVS_REQUIRES(dp_bpf_mutex)
{
    struct dpif_bpf_obj_config cfg = {
        .flow_table_size = DP_BPF_FLOW_TABLE_SIZE,
        /* Set from other_config:vlan-limit by the bridge before it creates
         * the first bridge. */
        .vlan_limit = flow_vlan_limit,
    };
    const char *instance = getenv("OVS_BPF_INSTANCE");
    int old_ports_fd = -1, old_flows_fd = -1, old_stats_fd = -1;
    uint32_t old_abi_version = 0, old_n_stats = 0;
    char *staging = NULL;
    struct dp_bpf *dp;
    char *pin_name;
    char *errmsg;
    int error;

    dp = xzalloc(sizeof *dp);
    dp->name = xstrdup(name);
    dp->class = class;
    dp->ref_cnt = 1;
    dp->tap_fd = -1;
    ovs_mutex_init(&dp->mutex);
    ovs_rwlock_init(&dp->upcall_rwlock);
    dp->upcall_budget.rate = DP_BPF_UPCALL_RATE;
    dp->upcall_budget.burst = DP_BPF_UPCALL_BURST;
    dp->upcall_budget.fill_pct = DP_BPF_UPCALL_FILL_PCT;
    hmap_init(&dp->ports);
    hmap_init(&dp->flows);
    hmap_init(&dp->flows_by_tkey);
    ovs_list_init(&dp->l3_flows);
    dp->port_seq = seq_create();
    dp_bpf_ipf_init(dp);
    dp->flow_limit = DP_BPF_FLOW_TABLE_SIZE;
    dp->max_masks = OVS_BPF_MAX_MASKS;
    /* Several ovs-vswitchd on one host (test sandboxes) need distinct
     * names; the instance is short so that the TAP name fits IFNAMSIZ. */
    dp->instance = xasprintf("%.4s", instance ? instance : "");
    snprintf(dp->tap_name, sizeof dp->tap_name, "%.7s-dc%s", name,
             dp->instance);
    pin_name = xasprintf("%s%s%s", name, dp->instance[0] ? "-" : "",
                         dp->instance);
    cfg.pin_name = pin_name;
    cfg.instance = dp->instance;
    cfg.check_object = !existing;

    if (existing && !dpif_bpf_obj_exists(&cfg)) {
        error = ENODEV;
        goto error;
    }

    if (getrandom(dp->secret, sizeof dp->secret, 0) != sizeof dp->secret) {
        error = errno ? errno : EIO;
        VLOG_ERR("%s: cannot get random bytes (%s)", name,
                 ovs_strerror(error));
        goto error;
    }

    /* The TAP first: its name is per datapath and the kernel lets only one
     * process hold it, so a datapath of the same name that another
     * ovs-vswitchd runs makes this fail before it could touch that
     * datapath's pinned maps. */
    error = dpif_bpf_tap_open(dp->name, dp->tap_name, &dp->tap_fd,
                              &dp->tap_ifindex);
    if (error == EBUSY && existing) {
        /* Normal: "ovs-dpctl" run while ovs-vswitchd has the datapath. */
        VLOG_INFO("%s: the datapath is in use by another process (its "
                  "downcall device %s is held, normally by ovs-vswitchd): "
                  "use \"ovs-appctl dpctl/...\" while ovs-vswitchd runs",
                  name, dp->tap_name);
        goto error;
    } else if (error == EBUSY) {
        VLOG_ERR("%s: cannot create datapath: another process holds its "
                 "downcall device %s: is another ovs-vswitchd running this "
                 "datapath?", name, dp->tap_name);
        goto error;
    } else if (error) {
        goto error;
    }

    /* The datapath that an earlier ovs-vswitchd left, or a new one. */
    error = dpif_bpf_obj_adopt(name, &cfg, &dp->obj);
    if (error && existing) {
        error = ENODEV;
    } else if (error) {
        if (error != ENOENT) {
            /* A datapath that cannot be taken over (e.g. of another ABI
             * version): with the ports and flows that its ovs-vswitchd
             * saved, the new one replaces it without a gap, see
             * dp_bpf_replace(); without, its ports are detached from its
             * programs.  Its counters go with it: they are logged once
             * it no longer forwards. */
            old_stats_fd = dpif_bpf_pinned_stats_open(pin_name,
                                                      &old_abi_version,
                                                      &old_n_stats);
            old_ports_fd = get_saved_map(name, pin_name,
                                         DPIF_BPF_SAVED_PORTS);
            old_flows_fd = (old_ports_fd >= 0
                            ? get_saved_map(name, pin_name,
                                            DPIF_BPF_SAVED_FLOWS)
                            : -1);
            if (old_ports_fd >= 0 && old_flows_fd >= 0) {
                staging = xasprintf("%s"DPIF_BPF_STAGING_SUFFIX, pin_name);
                cfg.pin_name = staging;
            } else {
                dp_bpf_ports_remove_stale(name, &cfg);
            }
        }
        error = dpif_bpf_obj_load(name, &cfg, &dp->obj, &errmsg);
    }
    if (error) {
        free(errmsg);
        goto error;
    }
    /* Replaces the filter of a datapath taken over, atomically. */
    error = dpif_bpf_tc_attach(dp->tap_ifindex, dp->tap_name,
                               dp->obj->downcall_prog_fd,
                               &dp->tap_created_qdisc);
    if (error) {
        goto error;
    }

    ovs_mutex_lock(&dp->mutex);
    if (dp->obj->adopted) {
        dp_bpf_ports_adopt(dp);
        dp_bpf_flows_adopt(dp);
    }
    /* The timeout policies outlive ovs-vswitchd in their pinned map. */
    dp->n_ct_tps = dpif_bpf_ct_tp_count(dp->obj);
    error = dp_bpf_write_config(dp);
    ovs_mutex_unlock(&dp->mutex);
    if (error) {
        VLOG_ERR("%s: cannot write the datapath configuration (%s)", name,
                 ovs_strerror(error));
        goto error;
    }
    if (staging) {
        error = dp_bpf_replace(dp, pin_name, old_ports_fd, old_flows_fd);
        if (error) {
            goto error;
        }
    }
    free(staging);
    free(pin_name);
    if (old_ports_fd >= 0) {
        close(old_ports_fd);
    }
    if (old_flows_fd >= 0) {
        close(old_flows_fd);
    }
    if (old_stats_fd >= 0) {
        dp_bpf_log_replaced_drops(name, old_stats_fd, old_abi_version,
                                  old_n_stats);
        close(old_stats_fd);
    }

    shash_add(&dp_bpfs, name, dp);
    *dpp = dp;
    VLOG_INFO("%s: created dpif-bpf datapath: BPF object %s (ABI version "
              "%"PRIu32"), downcall device %s", name, dp->obj->path,
              dp->obj->abi_version, dp->tap_name);
    /* ofproto-dpif's message when it rejects an action that the datapath
     * lacks blames the kernel module (OVS's own text): say here what it
     * means on this datapath. */
    VLOG_INFO("%s: OpenFlow actions that this BPF object lacks (see "
              "\"ovs-appctl dpif/show-dp-features\") are rejected; for "
              "them, ofproto-dpif's \"your kernel module may be out of "
              "date\" means dpif-bpf ABI version %"PRIu32, name,
              dp->obj->abi_version);
    return 0;

error:
    free(pin_name);
    free(staging);
    if (old_ports_fd >= 0) {
        close(old_ports_fd);
    }
    if (old_flows_fd >= 0) {
        close(old_flows_fd);
    }
    if (old_stats_fd >= 0) {
        close(old_stats_fd);
    }
    /* What was taken over stays for the next try. */
    dp->destroyed = !dp->obj || !dp->obj->adopted;
    dp_bpf_free(dp);
    return error;
}

/* Frees 'dp'.  A destroyed datapath goes away with all it made in the
 * kernel; otherwise ovs-vswitchd only lets go of it, and it keeps
 * forwarding for the next ovs-vswitchd to take over (see the top of this
 * file). */
static void
dp_bpf_free(struct dp_bpf *dp)
{
    bool remove = dp->destroyed;

    ovs_rwlock_wrlock(&dp->upcall_rwlock);
    /* A datapath left for the next ovs-vswitchd keeps its upcall rings:
     * the upcalls wait in them for it. */
    dpif_bpf_upcalls_destroy(dp->upcalls, !remove);
    dp->upcalls = NULL;
    ovs_rwlock_unlock(&dp->upcall_rwlock);

    ovs_mutex_lock(&dp->mutex);
    if (remove) {
        dp_bpf_ports_remove_all(dp);
        dp_bpf_flows_remove_all(dp);
    } else {
        dp_bpf_ports_forget_all(dp);
        dp_bpf_flows_forget_all(dp);
    }
    ovs_mutex_unlock(&dp->mutex);

    if (dp->tap_fd >= 0) {
        if (remove && dp->tap_created_qdisc) {
            dpif_bpf_tc_detach(dp->tap_ifindex, true);
        }
        dpif_bpf_tap_close(dp->tap_fd, remove);
    }
    dpif_bpf_obj_unload(dp->obj, remove);

    dp_bpf_ipf_destroy(dp);
    seq_destroy(dp->port_seq);
    hmap_destroy(&dp->ports);
    hmap_destroy(&dp->flows);
    hmap_destroy(&dp->flows_by_tkey);
    ovs_rwlock_destroy(&dp->upcall_rwlock);
    ovs_mutex_destroy(&dp->mutex);
    free(dp->instance);
    free(dp->name);
    free(dp);
}

static void
dp_bpf_unref(struct dp_bpf *dp)
    OVS_REQUIRES(dp_bpf_mutex)
{
    ovs_assert(dp->ref_cnt > 0);
    if (!--dp->ref_cnt) {
        if (!dp->destroyed) {
            shash_find_and_delete(&dp_bpfs, dp->name);
            VLOG_INFO("%s: leaving BPF datapath to the next ovs-vswitchd "
                      "(it keeps forwarding)", dp->name);
        } else {
            VLOG_INFO("%s: removing BPF datapath", dp->name);
        }
        dp_bpf_free(dp);
    }
}

/* ------------------------------------------------------------------ */
/* dpif class: datapaths.                                             */
/* ------------------------------------------------------------------ */

static void dpif_bpf_unixctl_init(void);

static int
dpif_bpf_init(void)
{
    dpif_bpf_unixctl_init();
    return 0;
}

static int
dpif_bpf_enumerate(struct sset *all_dps, const struct dpif_class *class)
{
    struct shash_node *node;

    const char *instance = getenv("OVS_BPF_INSTANCE");
    char *inst = xasprintf("%.4s", instance ? instance : "");

    ovs_mutex_lock(&dp_bpf_mutex);
    SHASH_FOR_EACH (node, &dp_bpfs) {
        struct dp_bpf *dp = node->data;

        if (dp->class == class) {
            sset_add(all_dps, node->name);
        }
    }
    ovs_mutex_unlock(&dp_bpf_mutex);
    /* And those that outlived their ovs-vswitchd. */
    dpif_bpf_enumerate_pinned(inst, all_dps);
    free(inst);
    return 0;
}

static const char *
dpif_bpf_port_open_type(const struct dpif_class *class OVS_UNUSED,
                        const char *type)
{
    /* Internal ports are opened as netdev-linux "internal" devices, which
     * may be opened before they exist: port_add() creates them. */
    return type;
}

static struct dpif *
create_dpif_bpf(struct dp_bpf *dp)
{
    uint16_t netflow_id = hash_string(dp->name, 0);
    struct dpif_bpf *dpif = xzalloc(sizeof *dpif);

    dpif_init(&dpif->dpif, dp->class, dp->name, netflow_id >> 8, netflow_id);
    dpif->dp = dp;
    dpif->last_port_seq = seq_read(dp->port_seq);
    return &dpif->dpif;
}

static int
dpif_bpf_open(const struct dpif_class *class, const char *name, bool create,
              struct dpif **dpifp)
{
    struct dp_bpf *dp;
    int error = 0;

    ovs_mutex_lock(&dp_bpf_mutex);
    dp = shash_find_data(&dp_bpfs, name);
    if (!dp) {
        /* Without 'create', only a datapath that outlived its ovs-vswitchd
         * (so that "ovs-dpctl" works on it while no ovs-vswitchd runs). */
        error = dp_bpf_create(class, name, !create, &dp);
    } else if (dp->class != class) {
        error = EINVAL;
    } else {
        dp->ref_cnt++;
    }
    if (!error) {
        *dpifp = create_dpif_bpf(dp);
    }
    ovs_mutex_unlock(&dp_bpf_mutex);
    if (!error && create) {
        /* Conntrack labels, before ofproto probes for them: the slow path
         * writes them, if the kernel gives connections room for them.
         * Only in the process that runs the datapath (ovs-vswitchd opens
         * it with 'create'), not in "ovs-dpctl". */
        dpif_bpf_odp_set_ct_labels(!dpif_bpf_ct_labels_enable());
    }
    return error;
}

static void
dpif_bpf_close(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_mutex_lock(&dp_bpf_mutex);
    dp_bpf_unref(dp);
    ovs_mutex_unlock(&dp_bpf_mutex);
    free(dpif);
}

static int
dpif_bpf_destroy(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    /* The datapath goes away with its last close (see the top of this
     * file), which without this leaves it in the kernel; a destroyed
     * datapath just cannot be opened again meanwhile. */
    ovs_mutex_lock(&dp_bpf_mutex);
    if (!dp->destroyed) {
        dp->destroyed = true;
        shash_find_and_delete(&dp_bpfs, dp->name);
    }
    ovs_mutex_unlock(&dp_bpf_mutex);
    return 0;
}

/* How often the mask search order follows the traffic, in msec. */
#define DP_BPF_REBALANCE_INTERVAL 1000

static bool
dpif_bpf_run(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    long long int now = time_msec();

    ovs_mutex_lock(&dp->mutex);
    if (now >= dp->next_rebalance) {
        dp->next_rebalance = now + DP_BPF_REBALANCE_INTERVAL;
        dp_bpf_masks_rebalance(dp);
    }
    ovs_mutex_unlock(&dp->mutex);
    return false;
}

static void
dpif_bpf_wait(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_mutex_lock(&dp->mutex);
    poll_timer_wait_until(dp->next_rebalance);
    ovs_mutex_unlock(&dp->mutex);
}

static uint64_t
read_dp_stat(const struct dp_bpf *dp, uint32_t idx)
{
    uint64_t sum;

    return dp_bpf_percpu_sum(dp->obj->dp_stats_fd, idx, &sum) ? 0 : sum;
}

static int
dpif_bpf_get_stats(const struct dpif *dpif, struct dpif_dp_stats *stats)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    memset(stats, 0, sizeof *stats);
    stats->n_hit = read_dp_stat(dp, OVS_BPF_STAT_HIT);
    stats->n_missed = read_dp_stat(dp, OVS_BPF_STAT_MISSED);
    /* Upcalls that did not fit in their ring or were over their port's
     * budget: the BPF programs count them as drop reasons. */
    stats->n_lost = (read_dp_stat(dp,
                                  OVS_BPF_STAT_DROP(OVS_BPF_DROP_UPCALL_LOST))
                     + read_dp_stat(dp, OVS_BPF_STAT_DROP(
                                        OVS_BPF_DROP_UPCALL_BUDGET)));
    stats->n_mask_hit = read_dp_stat(dp, OVS_BPF_STAT_MASK_HIT);
    stats->n_cache_hit = read_dp_stat(dp, OVS_BPF_STAT_MASK_CACHE_HIT);

    ovs_mutex_lock(&dp->mutex);
    stats->n_flows = hmap_count(&dp->flows);
    stats->n_masks = dp->n_masks;
    ovs_mutex_unlock(&dp->mutex);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Execute: downcalls through the TAP device.                         */
/* ------------------------------------------------------------------ */

/* Sends 'packet' down to the datapath with the actions 'actions', as a
 * frame on the TAP device: the packet (under a stand-in ethertype), the
 * actions and a struct ovs_bpf_downcall trailer (see bpf/datapath-abi.h).
 * The downcall program runs synchronously in the write(). */
static int
dp_bpf_downcall__(struct dp_bpf *dp, const struct dp_packet *packet,
                  const struct ovs_bpf_action *actions, uint32_t n_actions)
{
    const struct pkt_metadata *md = &packet->md;
    uint8_t key_meta[OVS_BPF_KEY_CT_TUN_LEN];
    struct iovec iov[DPIF_BPF_DOWNCALL_IOVS];
    struct ovs_bpf_downcall dc;
    size_t len, n_iov;
    ssize_t n;

    len = dp_packet_get_send_len(packet);
    if (len < ETH_HEADER_LEN) {
        return EINVAL;
    }

    memset(&dc, 0, sizeof dc);
    dc.magic = OVS_BPF_DOWNCALL_MAGIC;
    dc.abi_version = dpif_bpf_abi_version();
    memcpy(dc.secret, dp->secret, sizeof dc.secret);
    dc.in_port = odp_to_u32(md->in_port.odp_port);
    dc.n_actions = n_actions;
    dc.recirc_id = md->recirc_id;
    dc.dp_hash = md->dp_hash;
    dc.skb_priority = md->skb_priority;
    dc.skb_mark = md->pkt_mark;

    dpif_bpf_md_to_key_meta(md, key_meta);
    n_iov = dpif_bpf_downcall_iov(iov, dp_packet_data(packet), len,
                                  actions, n_actions, key_meta, &dc);

    COVERAGE_INC(dpif_bpf_downcall);
    n = writev(dp->tap_fd, iov, n_iov);
    if (n < 0) {
        int error = errno;

        COVERAGE_INC(dpif_bpf_downcall_error);
        VLOG_WARN_RL(&rl, "%s: downcall on %s failed (%s)", dp->name,
                     dp->tap_name, ovs_strerror(error));
        return error;
    }
    return 0;
}

struct dp_bpf_downcall_seg_aux {
    struct dp_bpf *dp;
    const struct ovs_bpf_action *actions;
    uint32_t n_actions;
    int error;
};

static void
dp_bpf_downcall_seg(const struct dp_packet *seg, void *aux_)
{
    struct dp_bpf_downcall_seg_aux *aux = aux_;
    int error = dp_bpf_downcall__(aux->dp, seg, aux->actions,
                                  aux->n_actions);

    if (!aux->error) {
        aux->error = error;
    }
}

/* Sends 'packet' down with 'actions', as dp_bpf_downcall__(), but cut into
 * its segments if it is a GSO TCP packet longer than its 'mru' (nonzero
 * only for the packet of an upcall that was GSO, see
 * dpif_bpf_upcall_mru()): a frame on the TAP device is not GSO, and a
 * device would drop it whole (a veth whose MTU it exceeds), as would the
 * downcall program if it is longer than bpf_skb_change_tail() allows. */
static int
dp_bpf_downcall(struct dp_bpf *dp, const struct dp_packet *packet,
                const struct ovs_bpf_action *actions, uint32_t n_actions,
                unsigned int mru)
{
    struct dp_bpf_downcall_seg_aux aux = {
        .dp = dp, .actions = actions, .n_actions = n_actions, .error = 0,
    };

    /* A packet cut by trunc() goes as it is: its copy is short. */
    if (mru && !dp_packet_get_cutlen(packet)
        && dpif_bpf_gso_segment(packet, mru, dp_bpf_downcall_seg, &aux)) {
        COVERAGE_INC(dpif_bpf_downcall_gso);
        return aux.error;
    }
    return dp_bpf_downcall__(dp, packet, actions, n_actions);
}

/* Resuming after a ct() that ran in ovs-vswitchd.
 *
 * The ct() of a packet runs in ovs-vswitchd instead of BPF in two cases:
 * the ct slow path (lib/dpif-bpf-ct-slow.c) for the protocols that the
 * conntrack kfuncs do not track and for commits that write labels, which
 * BPF sends up as OVS_BPF_UPCALL_CT with the action slots being run; and
 * ipf (lib/dpif-bpf-ipf.c) for IP fragments, whose userspace megaflows
 * ovs-vswitchd runs as ODP actions (dp_bpf_execute_ipf_ct()).  Either
 * leaves the result in the packet's metadata, and the packet resumes in
 * one way for both: dp_bpf_ct_resume() sends it down once with the action
 * slots that follow the ct() to the end of its list, and the downcall
 * carries the conntrack fields in its key metadata, so that these actions,
 * a recirc() and the flows it leads to included, run in BPF as if the
 * ct() had run there. */

/* Finds in 'slots' (of 'n_slots') the ct() action at index 'idx' and, if
 * it writes labels, the argument slot after it: stores them in '*act' and
 * '*lbl' (NULL without labels) and returns the index of the first slot
 * after them, or 0 if there is no such ct() there. */
static uint32_t
dp_bpf_ct_decode(const struct ovs_bpf_action *slots, uint32_t idx,
                 uint32_t n_slots, const struct ovs_bpf_act_ct **act,
                 const struct ovs_bpf_act_ct_label **lbl)
{
    *act = NULL;
    *lbl = NULL;
    if (idx >= n_slots || slots[idx].type != OVS_BPF_ACTION_CT) {
        return 0;
    }
    *act = &slots[idx++].u.ct;
    if ((*act)->flags & OVS_BPF_CT_F_LABEL) {
        if (idx >= n_slots || slots[idx].type != OVS_BPF_ACTION_CT_LABEL) {
            return 0;
        }
        *lbl = &slots[idx++].u.ct_label;
    }
    return idx;
}

/* What running actions on packets in ovs-vswitchd needs to know besides
 * the packets: dp_bpf_execute_userspace() (whose callers set 'dp', 'steal'
 * and 'mru'), its dp_bpf_execute_cb() (all), dp_bpf_ct_resume() ('dp' and
 * 'mru'). */
struct dp_bpf_execute_aux {
    struct dp_bpf *dp;
    const struct nlattr *actions;   /* The whole list being executed. */
    size_t actions_len;
    bool steal;                     /* odp_execute_actions() may free the
                                     * packets. */
    unsigned int mru;               /* Of the packets: see
                                     * dp_bpf_downcall(). */
};

/* Resumes the packets of 'batch', whose ct() ran in ovs-vswitchd, with the
 * 'n_slots' action slots in 'slots' that follow the ct(): one downcall
 * each, through 'x->dp', with MRU 'x->mru'.  Leaves the packets to the
 * caller. */
static void
dp_bpf_ct_resume(const struct dp_bpf_execute_aux *x,
                 const struct dp_packet_batch *batch,
                 const struct ovs_bpf_action *slots, uint32_t n_slots)
{
    struct dp_packet *packet;

    if (!n_slots) {
        /* The ct() ended the list: nothing to resume. */
        return;
    }
    COVERAGE_ADD(dpif_bpf_ct_resume, dp_packet_batch_size(batch));
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        dp_bpf_downcall(x->dp, packet, slots, n_slots, x->mru);
    }
}

/* If 'action' is one of the top-level actions of 'aux', returns the length
 * of the list from 'action' to the end, otherwise 0. */
static size_t
dp_bpf_rest_of_actions(const struct dp_bpf_execute_aux *aux,
                       const struct nlattr *action)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH (a, left, aux->actions, aux->actions_len) {
        if (a == action) {
            return left;
        }
    }
    return 0;
}

static int dp_bpf_execute_userspace(const struct dp_bpf_execute_aux *,
                                    struct dp_packet *, const struct flow *,
                                    bool probe, const struct nlattr *actions,
                                    size_t actions_len);

/* Layer 3 packets.
 *
 * A packet that lost its Ethernet header in ovs-vswitchd (pop_eth, the
 * decap() of an MPLS packet that carries IP...) and is recirculated never
 * reaches the BPF programs, which see Ethernet frames only: ovs-vswitchd
 * recirculates it itself, as dpif-netdev does.  The flows of such packets
 * (a packet_type other than Ethernet) stay in ovs-vswitchd, in the flow
 * table without a BPF entry (see struct dp_bpf_flow's 'l3_match'); a miss
 * goes to ofproto through the upcall callback it registered, on the spot,
 * and installs the flow that it returns.  Once the actions push an
 * Ethernet header again, the packet goes back down to BPF with the first
 * output or recirculation. */

/* Recirculations of layer 3 packets nested in one another, at most, as
 * dpif-netdev's MAX_RECIRC_DEPTH. */
#define DP_BPF_MAX_L3_RECIRC 6
DEFINE_STATIC_PER_THREAD_DATA(int, l3_recirc_depth, 0)

/* The ODP key fields of the layer 3 flows that ovs-vswitchd installs: all
 * that a struct flow has, so that the flow matches what ofproto's mask
 * says, no more. */
static const struct odp_support dp_bpf_l3_support = {
    .max_vlan_headers = SIZE_MAX,
    .max_mpls_depth = SIZE_MAX,
    .recirc = true,
    .ct_state = true,
    .ct_zone = true,
    .ct_mark = true,
    .ct_label = true,
    .ct_state_nat = true,
    .ct_orig_tuple = true,
    .ct_orig_tuple6 = true,
};

static void
dpif_bpf_register_upcall_cb(struct dpif *dpif, upcall_callback *cb,
                            void *aux)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_mutex_lock(&dp->mutex);
    dp->upcall_cb = cb;
    dp->upcall_aux = aux;
    ovs_mutex_unlock(&dp->mutex);
}

/* Asks ofproto (its upcall callback) for the actions of layer 3 'packet',
 * whose flow 'flow' missed, and installs the flow it returns.  Returns the
 * actions for 'packet' in 'actions' and true, or false if the packet is to
 * be dropped. */
static bool
dp_bpf_l3_miss(struct dp_bpf *dp, const struct dp_packet *packet,
               const struct flow *flow, struct ofpbuf *actions)
{
    struct odp_flow_key_parms odp_parms = {
        .flow = flow,
        .support = dp_bpf_l3_support,
    };
    struct ofpbuf key, mask, put_actions;
    struct flow_wildcards wc;
    upcall_callback *cb;
    ovs_u128 ufid;
    void *aux;
    int error;

    ovs_mutex_lock(&dp->mutex);
    cb = dp->upcall_cb;
    aux = dp->upcall_aux;
    ovs_mutex_unlock(&dp->mutex);
    if (!cb) {
        return false;
    }

    COVERAGE_INC(dpif_bpf_l3_miss);
    ofpbuf_init(&key, 0);
    ofpbuf_init(&mask, 0);
    ofpbuf_init(&put_actions, 0);
    odp_flow_key_from_flow(&odp_parms, &key);
    odp_flow_key_hash(key.data, key.size, &ufid);

    flow_wildcards_init_catchall(&wc);
    error = cb(packet, flow, &ufid, PMD_ID_NULL, DPIF_UC_MISS, NULL, actions,
               &wc, &put_actions, aux);
    if (!error) {
        struct dpif_flow_put put;

        odp_parms.mask = &wc.masks;
        odp_parms.key_buf = &key;
        odp_flow_key_from_mask(&odp_parms, &mask);
        memset(&put, 0, sizeof put);
        put.flags = DPIF_FP_CREATE;
        put.key = key.data;
        put.key_len = key.size;
        put.mask = mask.data;
        put.mask_len = mask.size;
        put.actions = put_actions.size ? put_actions.data : actions->data;
        put.actions_len = (put_actions.size ? put_actions.size
                           : actions->size);
        put.ufid = &ufid;
        put.pmd_id = PMD_ID_NULL;
        error = dp_bpf_flow_put__(dp, &put);
        if (error && error != EEXIST) {
            static struct vlog_rate_limit rl2 = VLOG_RATE_LIMIT_INIT(5, 20);

            VLOG_WARN_RL(&rl2, "%s: cannot install the flow of a layer 3 "
                         "packet (%s)", dp->name, ovs_strerror(error));
        }
        error = 0;
    } else if (error == ENOSPC) {
        /* No flow (the flow limit), but the actions apply. */
        error = 0;
    }

    ofpbuf_uninit(&put_actions);
    ofpbuf_uninit(&mask);
    ofpbuf_uninit(&key);
    return !error;
}

/* Recirculates 'packet', which has no Ethernet header, with 'recirc_id':
 * looks up its flow among the layer 3 flows (asking ofproto on a miss) and
 * runs the flow's actions on it.  Takes 'packet'. */
static void
dp_bpf_recirc_l3(struct dp_bpf *dp, struct dp_packet *packet,
                 uint32_t recirc_id)
{
    struct dp_bpf_execute_aux x = { .dp = dp, .steal = true };
    int *depth = l3_recirc_depth_get();
    struct nlattr *actions = NULL;
    size_t actions_len = 0;
    struct dp_bpf_flow *f;
    struct flow flow;

    COVERAGE_INC(dpif_bpf_l3_recirc);
    if (*depth >= DP_BPF_MAX_L3_RECIRC) {
        COVERAGE_INC(dpif_bpf_l3_drop);
        VLOG_WARN_RL(&rl, "%s: dropped a layer 3 packet recirculated more "
                     "than %d times", dp->name, DP_BPF_MAX_L3_RECIRC);
        dp_packet_delete(packet);
        return;
    }

    packet->md.recirc_id = recirc_id;
    flow_extract(packet, &flow);

    ovs_mutex_lock(&dp->mutex);
    f = dp_bpf_lookup_l3_flow(dp, &flow);
    if (f) {
        actions = xmemdup(f->actions, f->actions_len);
        actions_len = f->actions_len;
        dp_bpf_flow_credit(dp, f, &flow, dp_packet_size(packet));
    }
    ovs_mutex_unlock(&dp->mutex);

    if (!f) {
        struct ofpbuf buf;

        ofpbuf_init(&buf, 0);
        if (dp_bpf_l3_miss(dp, packet, &flow, &buf)) {
            actions_len = buf.size;
            actions = ofpbuf_steal_data(&buf);
        } else {
            COVERAGE_INC(dpif_bpf_l3_drop);
            ofpbuf_uninit(&buf);
            dp_packet_delete(packet);
            return;
        }
    }

    (*depth)++;
    dp_bpf_execute_userspace(&x, packet, &flow, false, actions, actions_len);
    (*depth)--;
    free(actions);
}

/* Forwards 'pkt', described by 'up', an OVS_BPF_UPCALL_L3 upcall: a packet
 * without Ethernet header that a layer 3 port (VXLAN-GPE) received.  It
 * goes through the layer 3 flows, as a layer 3 packet recirculated here
 * does, with recirculation id 0: on a miss ofproto's upcall callback gives
 * the actions (push_eth, then outputs) and the flow; once push_eth has run
 * the packet goes down to BPF. */
static void
dp_bpf_l3_upcall(struct dp_bpf *dp, const struct ovs_bpf_upcall *up,
                 const void *pkt)
{
    struct dp_packet *packet;
    struct pkt_metadata *md;

    if (up->cap_len < up->pkt_len
        || (up->l3_type != htons(ETH_TYPE_IP)
            && up->l3_type != htons(ETH_TYPE_IPV6))) {
        /* Cut to what an upcall carries (OVS_BPF_UPCALL_MAX_CAP), it
         * cannot be forwarded whole; BPF sends up no other type. */
        COVERAGE_INC(dpif_bpf_l3_drop);
        return;
    }
    packet = dp_packet_new_with_headroom(up->cap_len,
                                         ETH_HEADER_LEN + VLAN_HEADER_LEN);
    dp_packet_put(packet, pkt, up->cap_len);
    packet->packet_type = PACKET_TYPE_BE(OFPHTN_ETHERTYPE,
                                         ntohs(up->l3_type));
    md = &packet->md;
    pkt_metadata_init(md, u32_to_odp(up->in_port));
    md->skb_priority = up->skb_priority;
    md->pkt_mark = up->skb_mark;
    dpif_bpf_key_meta_to_md(up->key_meta, md);
    dp_bpf_recirc_l3(dp, packet, 0);
}

/* Sends layer 3 'packet' down to BPF for the output action that ends
 * 'slots' (after, maybe, a set_tunnel slot): a downcall carries an Ethernet
 * frame, so the packet goes down with an Ethernet header of zero
 * addresses and a POP_ETH slot before the output, that BPF runs as after
 * a pop_eth of its own (the output goes to a layer 3 port only).  Returns
 * false, sending nothing, if 'packet' is neither IPv4 nor IPv6 or the
 * action is not an output. */
static bool
dp_bpf_downcall_l3(struct dp_bpf *dp, const struct dp_packet *packet,
                   const struct ovs_bpf_action *slots, uint32_t n_slots)
{
    struct ovs_bpf_action l3_slots[OVS_BPF_MAX_ACTIONS];
    ovs_be16 type = pt_ns_type_be(packet->packet_type);
    struct dp_packet *copy;

    if (pt_ns(packet->packet_type) != OFPHTN_ETHERTYPE
        || (type != htons(ETH_TYPE_IP) && type != htons(ETH_TYPE_IPV6))
        || !n_slots || n_slots >= OVS_BPF_MAX_ACTIONS
        || slots[n_slots - 1].type != OVS_BPF_ACTION_OUTPUT) {
        return false;
    }
    memcpy(l3_slots, slots, n_slots * sizeof *slots);
    l3_slots[n_slots] = slots[n_slots - 1];
    memset(&l3_slots[n_slots - 1], 0, sizeof l3_slots[n_slots - 1]);
    l3_slots[n_slots - 1].type = OVS_BPF_ACTION_POP_ETH;

    copy = dp_packet_clone(packet);
    push_eth(copy, &eth_addr_zero, &eth_addr_zero);
    dp_bpf_downcall(dp, copy, l3_slots, n_slots + 1, 0);
    dp_packet_delete(copy);
    return true;
}

/* Runs ct() 'action', one of the actions of 'aux', on 'batch' if its
 * packets are IP fragments (ipf reassembles them, see dpif-bpf-ipf.c), and
 * returns true; returns false, leaving 'batch' alone, if they are not.  The
 * fragments that go on resume with the actions after the ct() in one
 * downcall (dp_bpf_ct_resume()), and 'batch' is left empty, which ends
 * odp_execute_actions().  If BPF cannot run these actions on them, they
 * stay in 'batch' and odp_execute_actions() runs them, each action that
 * needs the datapath going down alone with the conntrack state: another
 * ct() (a fragment must come back here for it), actions that BPF lacks, a
 * trunc() or a set(tunnel(...)) that ran before the ct() (they are in the
 * packet's metadata, not in the slots), a ct() inside a clone(). */
static bool
dp_bpf_execute_ipf_ct(const struct dp_bpf_execute_aux *aux,
                      struct dp_packet_batch *batch,
                      const struct nlattr *action, bool should_steal)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    size_t rest_len = dp_bpf_rest_of_actions(aux, action);
    const struct ovs_bpf_act_ct_label *lbl;
    const struct ovs_bpf_act_ct *act;
    struct dp_packet *packet;
    uint32_t n_slots, next;
    bool resume;

    resume = (rest_len
              && !dpif_bpf_odp_to_actions(action, rest_len, slots,
                                          &n_slots));
    if (!resume
        && dpif_bpf_odp_to_actions(action, NLA_ALIGN(action->nla_len),
                                   slots, &n_slots)) {
        return false;
    }
    next = dp_bpf_ct_decode(slots, 0, n_slots, &act, &lbl);
    if (!next || !dp_bpf_ipf_ct(aux->dp, batch, act, lbl)) {
        return false;
    }

    for (uint32_t i = next; resume && i < n_slots; i++) {
        resume = slots[i].type != OVS_BPF_ACTION_CT;
    }
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        resume = (resume && packet->packet_type == htonl(PT_ETH)
                  && !dp_packet_get_cutlen(packet)
                  && !flow_tnl_dst_is_set(&packet->md.tunnel));
    }
    if (resume) {
        dp_bpf_ct_resume(aux, batch, slots + next, n_slots - next);
        dp_packet_delete_batch(batch, true);
        dp_packet_batch_init(batch);
    } else if (should_steal) {
        dp_packet_delete_batch(batch, true);
    }
    return true;
}

/* Runs tnl_push 'action' on the packets of 'batch' here, as dpif-netdev
 * does, for a tnl_push that cannot go down to BPF together with the
 * actions that follow it (one inside a clone(), as when flooding to a
 * tunnel and other ports, or before an action that BPF cannot run).  Sent
 * down alone, the BPF programs would push the header onto their own copy
 * of the packet, which ends there with the action list, and the output
 * after the tnl_push would send the packet here, without the header.
 * Returns false, doing nothing, for a header that is not of a UDP tunnel
 * (VXLAN, Geneve), which netdev_tnl_push_udp_header() cannot push. */
static bool
dp_bpf_tnl_push(struct dp_packet_batch *batch, const struct nlattr *action,
                bool should_steal)
{
    const size_t hdr_ofs = offsetof(struct ovs_action_push_tnl, header);
    const struct ovs_action_push_tnl *data = nl_attr_get(action);
    struct dp_packet *packet;

    if (nl_attr_get_size(action) < hdr_ofs
        || data->header_len > nl_attr_get_size(action) - hdr_ofs
        || data->header_len < ETH_HEADER_LEN + IP_HEADER_LEN
        || (data->tnl_type != OVS_VPORT_TYPE_VXLAN
            && data->tnl_type != OVS_VPORT_TYPE_GENEVE)) {
        return false;
    }
    if (should_steal) {
        /* The last action: nothing would send the packets. */
        dp_packet_delete_batch(batch, true);
        return true;
    }
    dp_packet_batch_apply_cutlen(batch);
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        if (!dp_packet_rss_valid(packet)) {
            /* The UDP source port comes from it, as in BPF. */
            struct flow flow;

            flow_extract(packet, &flow);
            dp_packet_set_rss_hash(packet, flow_hash_5tuple(&flow, 0));
        }
        netdev_tnl_push_udp_header(NULL, packet, data);
    }
    return true;
}

/* odp_execute_actions() callback for the actions it needs the datapath for
 * (output, userspace, recirc, ct...).  If the BPF programs can run all the
 * actions from this one to the end of the list, they go down together in
 * one downcall, and odp_execute_actions() stops here: the state that an
 * action leaves in the BPF key, and that ovs-vswitchd does not see (the
 * ct_state a ct() sets for the recirc() after it), reaches the actions
 * that follow.  Otherwise the action goes down alone. */
static void
dp_bpf_execute_cb(void *aux_, struct dp_packet_batch *batch,
                  const struct nlattr *action, bool should_steal)
{
    /* One more than the slots of an action list: a set_tunnel slot. */
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS + 1];
    struct dp_bpf_execute_aux *aux = aux_;
    struct dp_bpf *dp = aux->dp;
    struct dp_packet *packet;
    uint32_t n_slots, n_tnl = 0;
    bool rest = false;
    bool cut = false;
    size_t rest_len;
    int error;

    if (nl_attr_type(action) == OVS_ACTION_ATTR_CT && aux->steal
        && dp_bpf_execute_ipf_ct(aux, batch, action, should_steal)) {
        return;
    }
    if (nl_attr_type(action) == OVS_ACTION_ATTR_RECIRC) {
        bool l3 = false;

        DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
            l3 = l3 || packet->packet_type != htonl(PT_ETH);
        }
        if (l3) {
            /* Layer 3 packets recirculate here, the others in BPF. */
            struct ovs_bpf_action recirc[OVS_BPF_MAX_ACTIONS];
            uint32_t n;

            dpif_bpf_odp_to_actions(action, NLA_ALIGN(action->nla_len),
                                    recirc, &n);
            DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
                if (packet->packet_type != htonl(PT_ETH)) {
                    dp_bpf_recirc_l3(dp, (should_steal ? packet
                                          : dp_packet_clone(packet)),
                                     nl_attr_get_u32(action));
                } else {
                    dp_bpf_downcall(dp, packet, recirc, 1, aux->mru);
                    if (should_steal) {
                        dp_packet_delete(packet);
                    }
                }
            }
            if (should_steal) {
                dp_packet_batch_init(batch);
            }
            return;
        }
    }
    if (nl_attr_type(action) == OVS_ACTION_ATTR_METER) {
        /* The actions after the meter run on the packets it lets through:
         * a downcall could not tell which. */
        dp_bpf_meter_batch(dp, batch, nl_attr_get_u32(action));
        if (should_steal) {
            dp_packet_delete_batch(batch, true);
        }
        return;
    }

    /* odp_execute_actions() ran set(tunnel(...)) on the packet's metadata:
     * an output to a tunnel port needs it as an action.  Harmless for any
     * other output. */
    packet = batch->count ? batch->packets[0] : NULL;
    if (packet && flow_tnl_dst_is_set(&packet->md.tunnel)
        && nl_attr_type(action) == OVS_ACTION_ATTR_OUTPUT
        && !dpif_bpf_tunnel_action(&packet->md.tunnel, &slots[0])) {
        n_tnl = 1;
    }

    /* A trunc() that odp_execute_actions() ran cuts the packets of the
     * next output only: such a batch goes down one action at a time, and so
     * does a batch with layer 3 packets (see dp_bpf_downcall_l3()). */
    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        cut = (cut || dp_packet_get_cutlen(packet)
               || packet->packet_type != htonl(PT_ETH));
    }
    rest_len = cut ? 0 : dp_bpf_rest_of_actions(aux, action);
    if (rest_len > NLA_ALIGN(action->nla_len)
        && !dpif_bpf_odp_to_actions(action, rest_len, slots + n_tnl,
                                    &n_slots)
        && n_tnl + n_slots <= OVS_BPF_MAX_ACTIONS) {
        rest = true;
        error = 0;
    } else {
        error = dpif_bpf_odp_to_actions(action, NLA_ALIGN(action->nla_len),
                                        slots + n_tnl, &n_slots);
    }
    n_slots += n_tnl;
    if (!rest && nl_attr_type(action) == OVS_ACTION_ATTR_TUNNEL_PUSH
        && dp_bpf_tnl_push(batch, action, should_steal)) {
        return;
    }
    if (error) {
        VLOG_WARN_RL(&rl, "%s: action type %"PRIu16" cannot be executed "
                     "(%s)", dp->name, nl_attr_type(action),
                     ovs_strerror(error));
    } else {
        DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
            /* The BPF programs see Ethernet frames only: a packet that
             * lost its Ethernet header (pop_nsh of an NSH packet that
             * carried IP) cannot be sent, sent up or recirculated, as the
             * kernel datapath cannot send it to an Ethernet device.  An
             * IPv4 or IPv6 packet may go to a layer 3 port. */
            if (packet->packet_type != htonl(PT_ETH)
                && !dp_bpf_downcall_l3(dp, packet, slots, n_slots)) {
                COVERAGE_INC(dpif_bpf_execute_not_eth);
                VLOG_DBG_RL(&rl, "%s: dropped a packet of type (%"PRIu16
                            ",%#"PRIx16") that action type %"PRIu16" "
                            "would send to the BPF programs", dp->name,
                            pt_ns(packet->packet_type),
                            pt_ns_type(packet->packet_type),
                            nl_attr_type(action));
                continue;
            } else if (packet->packet_type == htonl(PT_ETH)) {
                dp_bpf_downcall(dp, packet, slots, n_slots, aux->mru);
            }
        }
    }
    if (rest) {
        /* Done with the whole list: an empty batch stops
         * odp_execute_actions(), which then leaves the packets to us. */
        if (aux->steal || should_steal) {
            dp_packet_delete_batch(batch, true);
        }
        dp_packet_batch_init(batch);
        return;
    }
    if (!should_steal) {
        /* A trunc() cuts only the packets of the next output: the actions
         * after this one see the whole packet again. */
        dp_packet_batch_reset_cutlen(batch);
    }
    dp_packet_delete_batch(batch, should_steal);
}

/* Returns true if the set actions among 'actions' (of 'len' bytes) only set
 * headers that the packet whose flow is 'flow' has.  The kernel datapath
 * refuses the other ones (EINVAL), as we do, and odp_execute_actions()
 * assumes that the headers are there. */
static bool
set_actions_fit_packet(const struct flow *flow, const struct nlattr *actions,
                       size_t len)
{
    const struct nlattr *a;
    size_t left;

    NL_ATTR_FOR_EACH (a, left, actions, len) {
        int type = nl_attr_type(a);
        bool ok = true;

        if (type == OVS_ACTION_ATTR_CLONE) {
            ok = set_actions_fit_packet(flow, nl_attr_get(a),
                                        nl_attr_get_size(a));
        } else if (type == OVS_ACTION_ATTR_SET
                   || type == OVS_ACTION_ATTR_SET_MASKED) {
            const struct nlattr *key = nl_attr_get(a);
            bool ip = is_ip_any(flow) && !(flow->nw_frag & FLOW_NW_FRAG_LATER);

            switch (nl_attr_type(key)) {
            case OVS_KEY_ATTR_IPV4:
                ok = flow->dl_type == htons(ETH_TYPE_IP);
                break;
            case OVS_KEY_ATTR_IPV6:
                ok = flow->dl_type == htons(ETH_TYPE_IPV6);
                break;
            case OVS_KEY_ATTR_TCP:
                ok = ip && flow->nw_proto == IPPROTO_TCP;
                break;
            case OVS_KEY_ATTR_UDP:
                ok = ip && flow->nw_proto == IPPROTO_UDP;
                break;
            case OVS_KEY_ATTR_SCTP:
                ok = ip && flow->nw_proto == IPPROTO_SCTP;
                break;
            case OVS_KEY_ATTR_ICMP:
                ok = ip && flow->nw_proto == IPPROTO_ICMP
                     && flow->dl_type == htons(ETH_TYPE_IP);
                break;
            case OVS_KEY_ATTR_ICMPV6:
                ok = ip && flow->nw_proto == IPPROTO_ICMPV6
                     && flow->dl_type == htons(ETH_TYPE_IPV6);
                break;
            case OVS_KEY_ATTR_ARP:
                ok = (flow->dl_type == htons(ETH_TYPE_ARP)
                      || flow->dl_type == htons(ETH_TYPE_RARP));
                break;
            case OVS_KEY_ATTR_ND:
            case OVS_KEY_ATTR_ND_EXTENSIONS:
                ok = is_nd(flow, NULL);
                break;
            case OVS_KEY_ATTR_NSH:
                /* odp_execute_actions() rewrites the packet's L3 header as
                 * an NSH header. */
                ok = flow->dl_type == htons(ETH_TYPE_NSH);
                break;
            default:
                break;
            }
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* Runs 'actions' on 'packet' in ovs-vswitchd, for actions the BPF programs
 * cannot run, in datapath 'x->dp', taking the packet if 'x->steal', with
 * MRU 'x->mru'.  'flow' is what flow_extract() gave for 'packet' (or for
 * the packet it is a clone of), which also set the header offsets that
 * odp_execute_actions() needs, or NULL if it did not run yet.  Returns
 * EINVAL (and does nothing) if the actions set headers that the packet
 * does not have. */
static int
dp_bpf_execute_userspace(const struct dp_bpf_execute_aux *x,
                         struct dp_packet *packet, const struct flow *flow,
                         bool probe, const struct nlattr *actions,
                         size_t actions_len)
{
    struct dp_bpf_execute_aux aux = *x;
    struct dp_packet_batch batch;
    struct flow flow_buf;

    if (!flow) {
        flow_extract(packet, &flow_buf);
        flow = &flow_buf;
    }
    if (!set_actions_fit_packet(flow, actions, actions_len)) {
        if (aux.steal) {
            dp_packet_delete(packet);
        }
        return EINVAL;
    }
    if (probe) {
        /* A feature probe: the actions are valid, but running them could
         * send spurious packets into the network (as dpif-netdev, drop). */
        return 0;
    }

    COVERAGE_INC(dpif_bpf_execute_userspace);
    dp_packet_batch_init_packet(&batch, packet);
    aux.actions = actions;
    aux.actions_len = actions_len;
    odp_execute_actions(&aux, &batch, aux.steal, actions, actions_len,
                        dp_bpf_execute_cb);
    return 0;
}

static int
dp_bpf_execute(struct dpif *dpif, struct dpif_execute *execute)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_execute_aux x = { .dp = dp, .mru = execute->mtu };
    uint32_t n_slots;
    int error;

    if (dp_packet_size(execute->packet) < ETH_HEADER_LEN) {
        return EINVAL;
    }
    if (!execute->probe
        && dp_bpf_ipf_actions_have_ct(execute->actions,
                                      execute->actions_len)) {
        /* The flow that ofproto extracted from the packet, or else ours,
         * once: it also sets the header offsets that the execution of an
         * IP fragment below needs. */
        const struct flow *flow = execute->flow;
        struct flow flow_buf;

        if (!flow) {
            flow_extract(execute->packet, &flow_buf);
            flow = &flow_buf;
        }
        if (dp_bpf_ipf_flow_is_frag(flow)) {
            /* An IP fragment to ct(): ipf keeps it, so it must be ours. */
            x.steal = true;
            return dp_bpf_execute_userspace(
                &x, dp_packet_clone(execute->packet),
                flow == &flow_buf ? flow : NULL, false,
                execute->actions, execute->actions_len);
        }
    }
    error = dpif_bpf_odp_to_actions(execute->actions, execute->actions_len,
                                    slots, &n_slots);
    if (error == E2BIG) {
        return dp_bpf_execute_userspace(&x, execute->packet, NULL,
                                        execute->probe, execute->actions,
                                        execute->actions_len);
    } else if (error) {
        return error;
    } else if (!n_slots || execute->probe) {
        return 0;
    } else if (dpif_bpf_odp_execute_in_userspace(slots, n_slots,
                                                 execute->packet)) {
        return dp_bpf_execute_userspace(&x, execute->packet, NULL, false,
                                        execute->actions,
                                        execute->actions_len);
    }
    return dp_bpf_downcall(dp, execute->packet, slots, n_slots,
                           execute->mtu);
}

/* Carries out 'ops' in order, except that the flow puts of a run of puts
 * and executes go first, in one batch (dp_bpf_flow_put_batch()), and the
 * executes after them: ofproto-dpif-upcall hands each upcall's put and
 * execute together.  An executed packet that meets the flow table (after a
 * recirc()) may then find a flow that a later put of its run installed,
 * as it would have, sent a moment later.  A flow delete or get ends a run,
 * as it reads the flow table.  A run of flow deletes goes in one batch too
 * (dp_bpf_flow_del_batch()).  The executes stay one downcall each (see
 * "Downcalls" in Documentation/topics/dpif-bpf.rst). */
static void
dpif_bpf_operate(struct dpif *dpif, struct dpif_op **ops, size_t n_ops,
                 enum dpif_offload_type offload_type OVS_UNUSED)
{
    struct dpif_flow_put **puts = xmalloc(n_ops * sizeof *puts);
    int *errors = xmalloc(n_ops * sizeof *errors);
    struct dpif_op **put_ops = xmalloc(n_ops * sizeof *put_ops);
    struct dpif_flow_del **dels = xmalloc(n_ops * sizeof *dels);

    for (size_t i = 0; i < n_ops; ) {
        size_t n_puts = 0;
        size_t end;

        for (end = i; end < n_ops; end++) {
            struct dpif_op *op = ops[end];

            if (op->type == DPIF_OP_FLOW_PUT) {
                put_ops[n_puts] = op;
                puts[n_puts++] = &op->flow_put;
            } else if (op->type != DPIF_OP_EXECUTE) {
                break;
            }
        }
        if (n_puts) {
            dp_bpf_flow_put_batch(dpif, puts, errors, n_puts);
            for (size_t j = 0; j < n_puts; j++) {
                put_ops[j]->error = errors[j];
            }
        }
        for (size_t j = i; j < end; j++) {
            if (ops[j]->type == DPIF_OP_EXECUTE) {
                ops[j]->error = dp_bpf_execute(dpif, &ops[j]->execute);
            }
        }
        if (end < n_ops && ops[end]->type == DPIF_OP_FLOW_DEL) {
            size_t n_dels = 0;

            for (; end < n_ops && ops[end]->type == DPIF_OP_FLOW_DEL; end++) {
                put_ops[n_dels] = ops[end];   /* Reused for the deletes. */
                dels[n_dels++] = &ops[end]->flow_del;
            }
            dp_bpf_flow_del_batch(dpif, dels, errors, n_dels);
            for (size_t j = 0; j < n_dels; j++) {
                put_ops[j]->error = errors[j];
            }
        } else if (end < n_ops) {
            struct dpif_op *op = ops[end++];

            ovs_assert(op->type == DPIF_OP_FLOW_GET);
            op->error = dp_bpf_flow_get(dpif, &op->flow_get);
        }
        i = end;
    }

    free(dels);
    free(put_ops);
    free(errors);
    free(puts);
}

/* ------------------------------------------------------------------ */
/* Upcalls.                                                           */
/* ------------------------------------------------------------------ */

static int
dpif_bpf_recv_set(struct dpif *dpif, bool enable)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error = 0;

    ovs_rwlock_wrlock(&dp->upcall_rwlock);
    if (enable && !dp->upcalls) {
        dp->upcalls = dpif_bpf_upcalls_create(dp->obj->upcall_rings_fd,
                                              dp->obj->upcall_config_fd,
                                              &dp->upcall_budget);
        if (dp->upcalls && dp->n_handlers) {
            dpif_bpf_upcalls_set_handlers(dp->upcalls, dp->n_handlers);
        }
    } else if (!enable && dp->upcalls) {
        dpif_bpf_upcalls_destroy(dp->upcalls, false);
        dp->upcalls = NULL;
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
    return error;
}

static int
dpif_bpf_handlers_set(struct dpif *dpif, uint32_t n_handlers)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error = 0;

    ovs_rwlock_wrlock(&dp->upcall_rwlock);
    dp->n_handlers = n_handlers;
    if (dp->upcalls) {
        error = dpif_bpf_upcalls_set_handlers(dp->upcalls, n_handlers);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
    return error;
}

/* A packet of a flow whose actions only ovs-vswitchd can run. */
static void
dp_bpf_slow_path(struct dp_bpf *dp, const struct ovs_bpf_upcall *up,
                 const void *data)
{
    struct dp_bpf_flow *flow;
    struct nlattr *actions = NULL;
    size_t actions_len = 0;

    COVERAGE_INC(dpif_bpf_slow_path);
    ovs_mutex_lock(&dp->mutex);
    flow = NULL;
    if (up->flow.mask_id < OVS_BPF_MAX_MASKS
        && dp->masks[up->flow.mask_id].refcnt) {
        struct ovs_bpf_flow_table_key tkey = up->flow;

        dpif_bpf_table_key_normalize(dp->masks[tkey.mask_id].entry.table,
                                     &tkey);
        flow = dp_bpf_find_flow_by_tkey(dp, &tkey);
    }
    if (flow) {
        actions = xmemdup(flow->actions, flow->actions_len);
        actions_len = flow->actions_len;
    }
    ovs_mutex_unlock(&dp->mutex);

    if (flow) {
        struct dp_packet *packet = xmalloc(sizeof *packet);
        struct dp_bpf_execute_aux x = { .dp = dp, .steal = true };
        struct flow pkt_flow;

        dpif_bpf_upcall_packet(up, data, packet, &pkt_flow);
        x.mru = dpif_bpf_upcall_mru(up, packet);
        dp_bpf_execute_userspace(&x, packet, &pkt_flow, false, actions,
                                 actions_len);
        free(actions);
    }
}

/* A packet that a ct() sent up because the conntrack kfuncs cannot track
 * it (bpf/ct-slow.h): the ct() runs here, on the kernel's conntrack
 * through ctnetlink, and the packet resumes with the actions that follow
 * the ct() in the record (see dp_bpf_ct_resume()). */
static void
dp_bpf_ct_upcall(struct dp_bpf *dp, const struct ovs_bpf_upcall *up,
                 const void *data)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    const struct ovs_bpf_act_ct_label *lbl;
    const struct ovs_bpf_act_ct *act;
    struct dp_packet packet;
    struct flow flow;
    uint32_t next;
    bool resume;

    /* The record is only 4-byte aligned. */
    memcpy(slots, data, sizeof slots);
    next = (up->ct_end <= OVS_BPF_MAX_ACTIONS
            ? dp_bpf_ct_decode(slots, up->ct_slot, up->ct_end, &act, &lbl)
            : 0);
    if (!next) {
        COVERAGE_INC(dpif_bpf_ct_upcall_malformed);
        return;
    }
    dpif_bpf_upcall_packet(up, (const uint8_t *) data + sizeof slots,
                           &packet, &flow);
    if (up->ct_tcp_new) {
        /* The ct() ran in BPF: only the new TCP state of the packet's
         * connection to write (see "TCP connection states" in
         * bpf/datapath-abi.h). */
        dpif_bpf_ct_tcp_state(dp->obj, up->ct_tcp_old, up->ct_tcp_new,
                              &packet, &flow);
        resume = true;
    } else {
        resume = dpif_bpf_ct_slow_execute(dp->obj, act, lbl, &packet, &flow);
    }
    if (resume) {
        struct dp_bpf_execute_aux x = {
            .dp = dp, .mru = dpif_bpf_upcall_mru(up, &packet),
        };
        struct dp_packet_batch batch;

        dp_packet_batch_init_packet(&batch, &packet);
        dp_bpf_ct_resume(&x, &batch, slots + next, up->ct_end - next);
    }
    dp_packet_uninit(&packet);
}

struct dp_bpf_recv_aux {
    struct dp_bpf *dp;
    struct dpif_upcall *upcall;
    struct ofpbuf *buf;
};

/* An upcall waits in its ring while ovs-vswitchd handles the ones before
 * it, and the packets of a flow keep missing until ovs-vswitchd installs
 * it: a new flow's first packets are often all in the rings, each to be
 * translated again, before the first of them gets the flow installed.  If
 * the miss upcall of 'packet' (of flow 'flow') finds a flow that matches it
 * now, forwards it with that flow's actions, as the BPF lookup would have,
 * counts it in the flow's statistics and returns true.  Returns false if
 * the upcall is to go to ofproto: no flow, or one whose actions only
 * ovs-vswitchd can run. */
static bool
dp_bpf_forward_miss(struct dp_bpf *dp, const struct flow *flow,
                    const struct dp_packet *packet, unsigned int mru)
{
    struct ovs_bpf_action slots[OVS_BPF_MAX_ACTIONS];
    struct dp_bpf_flow *f;
    uint32_t n_slots = 0;
    bool found = false;

    ovs_mutex_lock(&dp->mutex);
    f = dp_bpf_lookup_flow(dp, flow);
    if (f && !(f->flags & OVS_BPF_FLOW_F_USERSPACE)
        && !dpif_bpf_odp_to_actions(f->actions, f->actions_len, slots,
                                    &n_slots)) {
        dp_bpf_flow_credit(dp, f, flow, dp_packet_size(packet));
        found = true;
    }
    ovs_mutex_unlock(&dp->mutex);

    if (found) {
        COVERAGE_INC(dpif_bpf_miss_forwarded);
        if (n_slots) {
            dp_bpf_downcall(dp, packet, slots, n_slots, mru);
        }
    }
    return found;
}

/* dpif_bpf_upcalls_recv() callback: takes a miss or action upcall, runs the
 * packets of slow-path flows on the spot. */
static bool
dp_bpf_recv_cb(const struct ovs_bpf_upcall *up, const void *pkt, void *aux_)
{
    struct dp_bpf_recv_aux *aux = aux_;
    size_t buf_size = aux->buf->size;
    struct flow flow;

    if (up->type == OVS_BPF_UPCALL_SLOW_PATH) {
        dp_bpf_slow_path(aux->dp, up, pkt);
        return false;
    }
    if (up->type == OVS_BPF_UPCALL_CT) {
        dp_bpf_ct_upcall(aux->dp, up, pkt);
        return false;
    }
    if (up->type == OVS_BPF_UPCALL_L3) {
        dp_bpf_l3_upcall(aux->dp, up, pkt);
        return false;
    }
    if (dpif_bpf_upcall_to_dpif(up, pkt, aux->upcall, aux->buf, &flow)) {
        return false;
    }
    if (up->type == OVS_BPF_UPCALL_MISS
        && dp_bpf_forward_miss(aux->dp, &flow, &aux->upcall->packet,
                               (aux->upcall->mru
                                ? nl_attr_get_u16(aux->upcall->mru) : 0))) {
        dp_packet_uninit(&aux->upcall->packet);
        aux->buf->size = buf_size;
        return false;
    }
    return true;
}

static int
dpif_bpf_recv(struct dpif *dpif, uint32_t handler_id,
              struct dpif_upcall *upcall, struct ofpbuf *buf)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dp_bpf_recv_aux aux = { .dp = dp, .upcall = upcall, .buf = buf };
    int error = EAGAIN;

    ovs_rwlock_rdlock(&dp->upcall_rwlock);
    if (dp->upcalls) {
        error = dpif_bpf_upcalls_recv(dp->upcalls, handler_id,
                                      dp_bpf_recv_cb, &aux);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
    return error;
}

static void
dpif_bpf_recv_wait(struct dpif *dpif, uint32_t handler_id)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_rwlock_rdlock(&dp->upcall_rwlock);
    if (dp->upcalls) {
        dpif_bpf_upcalls_wait(dp->upcalls, handler_id);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
}

static void
dpif_bpf_recv_purge(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_rwlock_rdlock(&dp->upcall_rwlock);
    if (dp->upcalls) {
        dpif_bpf_upcalls_purge(dp->upcalls);
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);
}

/* ------------------------------------------------------------------ */
/* Configuration and the rest of the class.                           */
/* ------------------------------------------------------------------ */

static int
dpif_bpf_set_config(struct dpif *dpif, const struct smap *other_config)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    struct dpif_bpf_upcall_budget budget;
    unsigned int limit, max_masks;

    limit = smap_get_uint(other_config, "bpf-flow-limit",
                          DP_BPF_FLOW_TABLE_SIZE);
    limit = MAX(1, MIN(limit, DP_BPF_FLOW_TABLE_SIZE));
    max_masks = smap_get_uint(other_config, "bpf-max-masks",
                              OVS_BPF_MAX_MASKS);
    max_masks = MAX(1, MIN(max_masks, OVS_BPF_MAX_MASKS));

    if (dp->obj->vlan_limit != flow_vlan_limit) {
        static struct vlog_rate_limit vlan_rl = VLOG_RATE_LIMIT_INIT(1, 1);

        VLOG_INFO_RL(&vlan_rl, "%s: the BPF parser decodes %"PRIu32" VLAN "
                     "tags, other_config:vlan-limit now asks for %d: "
                     "recreate the datapath (restart ovs-vswitchd) to apply",
                     dp->name, dp->obj->vlan_limit, flow_vlan_limit);
    }

    budget.rate = smap_get_uint(other_config, "bpf-upcall-rate",
                                DP_BPF_UPCALL_RATE);
    budget.burst = smap_get_uint(other_config, "bpf-upcall-burst",
                                 DP_BPF_UPCALL_BURST);
    budget.fill_pct = smap_get_uint(other_config, "bpf-upcall-budget-fill",
                                    DP_BPF_UPCALL_FILL_PCT);
    ovs_rwlock_wrlock(&dp->upcall_rwlock);
    if (memcmp(&budget, &dp->upcall_budget, sizeof budget)) {
        dp->upcall_budget = budget;
        if (dp->upcalls) {
            dpif_bpf_upcalls_set_budget(dp->upcalls, &budget);
        }
    }
    ovs_rwlock_unlock(&dp->upcall_rwlock);

    ovs_mutex_lock(&dp->mutex);
    if (limit != dp->flow_limit || max_masks != dp->max_masks) {
        VLOG_INFO("%s: flow limit %u, at most %u masks (existing flows are "
                  "kept)", dp->name, limit, max_masks);
        dp->flow_limit = limit;
        dp->max_masks = max_masks;
    }
    ovs_mutex_unlock(&dp->mutex);
    return 0;
}

static char *
dpif_bpf_get_datapath_version(void)
{
    return xasprintf("bpf (ABI version %"PRIu32")",
                     dpif_bpf_abi_version());
}

/* Appends to 'ds' the drop counters of 'dp': the total, each drop reason,
 * the failed actions, and under them each action type that failed. */
static void
dpif_bpf_show_drops(struct ds *ds, const struct dp_bpf *dp)
{
    const char *const *reasons = dp_bpf_drop_reason_names;
    uint64_t by_reason[__OVS_BPF_DROP_MAX];
    uint64_t by_action[__OVS_BPF_ACTION_MAX];
    uint64_t total = 0, failed = 0;

    for (int i = 0; i < __OVS_BPF_DROP_MAX; i++) {
        by_reason[i] = read_dp_stat(dp, OVS_BPF_STAT_DROP(i));
        total += by_reason[i];
    }
    for (int i = 0; i < __OVS_BPF_ACTION_MAX; i++) {
        by_action[i] = read_dp_stat(dp, OVS_BPF_STAT_ACTION_FAILED(i));
        failed += by_action[i];
    }
    total += failed;

    ds_put_format(ds, "  dropped: %"PRIu64"\n", total);
    for (int i = 0; i < __OVS_BPF_DROP_MAX; i++) {
        ds_put_format(ds, "    %s: %"PRIu64"\n", reasons[i], by_reason[i]);
    }
    ds_put_format(ds, "    action_failed: %"PRIu64"\n", failed);
    for (int i = 0; i < __OVS_BPF_ACTION_MAX; i++) {
        if (by_action[i]) {
            ds_put_format(ds, "      %s: %"PRIu64"\n",
                          dpif_bpf_action_name(i), by_action[i]);
        }
    }
}

/* "ovs-appctl dpif-bpf/show [dp]": the BPF datapath's own counters. */
static void
dpif_bpf_unixctl_show(struct unixctl_conn *conn, int argc,
                      const char *argv[], void *aux OVS_UNUSED)
{
    static const char *const names[__OVS_BPF_STAT_MAX] = {
#define OVS_BPF_DP_STAT_NAME(ENUM, NAME, DESCRIPTION) \
        [OVS_BPF_STAT_##ENUM] = NAME,
        OVS_BPF_DP_STATS(OVS_BPF_DP_STAT_NAME)
#undef OVS_BPF_DP_STAT_NAME
    };
    struct ds ds = DS_EMPTY_INITIALIZER;
    struct shash_node *node;

    ovs_mutex_lock(&dp_bpf_mutex);
    SHASH_FOR_EACH (node, &dp_bpfs) {
        struct dp_bpf *dp = node->data;

        if (argc > 1 && strcmp(argv[1], dp->name)) {
            continue;
        }
        ds_put_format(&ds, "%s:\n", dp->name);
        ds_put_format(&ds, "  object: %s (ABI version %"PRIu32")\n",
                      dp->obj->path, dp->obj->abi_version);
        ds_put_format(&ds, "  VLAN tags decoded: %"PRIu32"\n",
                      dp->obj->vlan_limit);
        ds_put_format(&ds, "  maps pinned in: %s\n", dp->obj->pin_dir);
        ds_put_format(&ds, "  downcall device: %s\n", dp->tap_name);
        ovs_mutex_lock(&dp->mutex);
        ds_put_format(&ds, "  flows: %"PRIuSIZE" (limit %"PRIu32")\n",
                      hmap_count(&dp->flows), dp->flow_limit);
        ds_put_format(&ds, "  masks: %"PRIu32" (limit %"PRIu32"), search "
                      "order:", dp->n_masks, dp->max_masks);
        for (uint32_t i = 0; i < dp->n_masks; i++) {
            ds_put_format(&ds, " %"PRIu8, dp->mask_order[i]);
        }
        ds_put_char(&ds, '\n');
        ovs_mutex_unlock(&dp->mutex);
        for (int i = 0; i < __OVS_BPF_STAT_MAX; i++) {
            ds_put_format(&ds, "  %s: %"PRIu64"\n", names[i],
                          read_dp_stat(dp, i));
        }
        ovs_rwlock_rdlock(&dp->upcall_rwlock);
        if (dp->upcalls) {
            dpif_bpf_upcalls_format(dp->upcalls, &ds);
        }
        ovs_rwlock_unlock(&dp->upcall_rwlock);
        dpif_bpf_show_drops(&ds, dp);
    }
    ovs_mutex_unlock(&dp_bpf_mutex);

    if (argc > 1 && !ds.length) {
        unixctl_command_reply_error(conn, "no such BPF datapath");
    } else {
        unixctl_command_reply(conn, ds_cstr(&ds));
    }
    ds_destroy(&ds);
}

static void
dpif_bpf_unixctl_init(void)
{
    unixctl_command_register("dpif-bpf/show", "[dp]", 0, 1,
                             dpif_bpf_unixctl_show, NULL);
}

const struct dpif_class dpif_bpf_class = {
    "bpf",
    false,                      /* cleanup_required: the datapath and its
                                 * ports outlive ovs-vswitchd, as the
                                 * kernel datapath's. */
    dpif_bpf_init,
    dpif_bpf_enumerate,
    dpif_bpf_port_open_type,
    dpif_bpf_open,
    dpif_bpf_close,
    dpif_bpf_destroy,
    dpif_bpf_run,
    dpif_bpf_wait,
    dpif_bpf_get_stats,
    NULL,                       /* set_features */
    dpif_bpf_port_add,
    dpif_bpf_port_del,
    NULL,                       /* port_set_config */
    dpif_bpf_port_query_by_number,
    dpif_bpf_port_query_by_name,
    NULL,                       /* port_get_pid */
    dpif_bpf_port_dump_start,
    dpif_bpf_port_dump_next,
    dpif_bpf_port_dump_done,
    dpif_bpf_port_poll,
    dpif_bpf_port_poll_wait,
    dpif_bpf_flow_flush,
    dpif_bpf_flow_dump_create,
    dpif_bpf_flow_dump_destroy,
    dpif_bpf_flow_dump_thread_create,
    dpif_bpf_flow_dump_thread_destroy,
    dpif_bpf_flow_dump_next,
    dpif_bpf_operate,
    NULL,                       /* offload_stats_get */
    dpif_bpf_recv_set,
    dpif_bpf_handlers_set,
    NULL,                       /* number_handlers_required */
    dpif_bpf_set_config,
    NULL,                       /* queue_to_priority */
    dpif_bpf_recv,
    dpif_bpf_recv_wait,
    dpif_bpf_recv_purge,
    NULL,                       /* register_dp_purge_cb */
    dpif_bpf_register_upcall_cb,
    NULL,                       /* enable_upcall */
    NULL,                       /* disable_upcall */
    dpif_bpf_get_datapath_version,
    dpif_bpf_ct_dump_start,
    dpif_bpf_ct_dump_next,
    dpif_bpf_ct_dump_done,
    dpif_bpf_ct_flush,
    dpif_bpf_ct_set_maxconns,
    dpif_bpf_ct_get_maxconns,
    dpif_bpf_ct_get_nconns,
    dpif_bpf_ct_set_tcp_seq_chk,
    dpif_bpf_ct_get_tcp_seq_chk,
    dpif_bpf_ct_set_limits,
    dpif_bpf_ct_get_limits,
    dpif_bpf_ct_del_limits,
    dpif_bpf_ct_set_timeout_policy,
    dpif_bpf_ct_get_timeout_policy,
    dpif_bpf_ct_del_timeout_policy,
    dpif_bpf_ct_timeout_policy_dump_start,
    dpif_bpf_ct_timeout_policy_dump_next,
    dpif_bpf_ct_timeout_policy_dump_done,
    dpif_bpf_ct_get_timeout_policy_name,
    dpif_bpf_ct_get_features,
    dpif_bpf_ipf_set_enabled,
    dpif_bpf_ipf_set_min_frag,
    dpif_bpf_ipf_set_max_nfrags,
    dpif_bpf_ipf_get_status,
    dpif_bpf_ipf_dump_start,
    dpif_bpf_ipf_dump_next,
    dpif_bpf_ipf_dump_done,
    dpif_bpf_meter_get_features,
    dpif_bpf_meter_set,
    dpif_bpf_meter_get,
    dpif_bpf_meter_del,
    NULL,                       /* bond_add */
    NULL,                       /* bond_del */
    NULL,                       /* bond_stats_get */
    NULL,                       /* cache_get_supported_levels */
    NULL,                       /* cache_get_name */
    NULL,                       /* cache_get_size */
    NULL,                       /* cache_set_size */
};
