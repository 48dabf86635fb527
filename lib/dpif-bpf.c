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
 *   - Upcalls come up through a ring per handler (dpif-bpf-upcall.c), read
 *     by the receive side of the class (dpif-bpf-recv.c).  Packets that
 *     ovs-vswitchd sends ("execute") go down through the TAP device, as a
 *     frame that carries its actions in a trailer that the downcall program
 *     checks and strips; the actions that BPF cannot run, ovs-vswitchd
 *     runs itself (dpif-bpf-execute.c).
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
#include <unistd.h>

#include "bpf/datapath-abi.h"
#include "dpif-bpf-ct.h"
#include "dpif-bpf-ct-labels.h"
#include "dpif-bpf-ct-limit.h"
#include "dpif-bpf-ct-tp.h"
#include "dpif-bpf-execute.h"
#include "dpif-bpf-flow-table.h"
#include "dpif-bpf-ipf.h"
#include "dpif-bpf-linux.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-meter.h"
#include "dpif-bpf-odp.h"
#include "dpif-bpf-port.h"
#include "dpif-bpf-private.h"
#include "dpif-bpf-recv.h"
#include "dpif-bpf-upcall.h"
#include "dpif-provider.h"
#include "flow.h"
#include "hash.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/shash.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "openvswitch/poll-loop.h"
#include "seq.h"
#include "smap.h"
#include "sset.h"
#include "timeval.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf);

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

static struct ovs_mutex dp_bpf_mutex = OVS_MUTEX_INITIALIZER;
static struct shash dp_bpfs OVS_GUARDED_BY(dp_bpf_mutex)
    = SHASH_INITIALIZER(&dp_bpfs);

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
