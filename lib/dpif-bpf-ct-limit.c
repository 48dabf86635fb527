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

/* Conntrack zone limits of the BPF datapath ("dpctl/ct-set-limits",
 * "ct-get-limits", "ct-del-limits").
 *
 * The kernel's per-zone limits are openvswitch.ko's (nf_conncount), which
 * the conntrack kfuncs do not apply.  So the datapath keeps its own count:
 * the 'ct_zones' array map (bpf/datapath-abi.h), which ovs-vswitchd maps
 * into its memory.  A commit that creates a connection in a zone with a
 * limit, in BPF (bpf/actions-ct.h) or in the ct slow path, adds one to the
 * zone's count first and takes it back if that reaches the limit; the packet
 * is then dropped, as the kernel datapath drops it.
 *
 * The kernel says nothing when such a connection ends: the BPF programs'
 * connections carry no event extension, so there are no ctnetlink destroy
 * events for them.  A thread of ovs-vswitchd recounts instead, once a
 * second while a limit is set: it dumps the conntrack table through
 * ctnetlink and corrects each limited zone's count by the difference between
 * the connections it saw and the count before the dump.  Commits during the
 * dump may be counted twice until the next recount, never not at all, so a
 * zone never holds more connections than its limit; but a connection that
 * ended keeps its place until the next recount.  "ct-get-limits" recounts
 * first, so the counts it shows are the table's. */

#include <config.h>

#include "dpif-bpf-ct-limit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/datapath-abi.h"
#include "ct-dpif.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-private.h"
#include "netlink-conntrack.h"
#include "openvswitch/list.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_ct_limit);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);

/* The same layout as for clang -target bpf (see datapath-abi.h). */
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_ct_zone) == 16);

#define N_ZONES OVS_BPF_CT_ZONE_DEFAULT     /* Real zones: 0 to 65535. */
#define RECOUNT_INTERVAL_MS 1000

/* The zones of the datapath whose limits were last set or read, for the
 * recount thread.  One datapath of type "bpf" per ovs-vswitchd. */
static struct ovs_mutex mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_bpf_ct_zone *cur_zones OVS_GUARDED_BY(mutex);

static struct ovs_bpf_ct_zone *
zones_of(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    return dp->obj ? dp->obj->ct_zones : NULL;
}

static uint32_t
zone_limit(const struct ovs_bpf_ct_zone *zones, uint16_t zone)
{
    return (zones[zone].flags & OVS_BPF_CT_ZONE_F_LIMIT
            ? zones[zone].limit : zones[OVS_BPF_CT_ZONE_DEFAULT].limit);
}

/* Recounts the connections of the zones that have a limit (see above).
 * Stores in 'n' (N_ZONES entries, if not NULL) the connections of every
 * zone.  Returns 0 or a positive errno value (the counts are then left
 * as they were). */
static int
recount(struct ovs_bpf_ct_zone *zones, uint32_t *n)
    OVS_REQUIRES(mutex)
{
    int64_t *before = xmalloc(N_ZONES * sizeof *before);
    uint32_t *seen = n ? n : xmalloc(N_ZONES * sizeof *seen);
    struct nl_ct_dump_state *dump;
    struct ct_dpif_entry e;
    int tot_bkts, error;

    for (int z = 0; z < N_ZONES; z++) {
        before[z] = __atomic_load_n(&zones[z].count, __ATOMIC_RELAXED);
    }
    memset(seen, 0, N_ZONES * sizeof *seen);
    error = nl_ct_dump_start(&dump, NULL, &tot_bkts);
    if (!error) {
        while (!nl_ct_dump_next(dump, &e)) {
            seen[e.zone]++;
            ct_dpif_entry_uninit(&e);
        }
        error = nl_ct_dump_done(dump);
    }
    if (!error) {
        for (int z = 0; z < N_ZONES; z++) {
            if (zone_limit(zones, z) && seen[z] != before[z]) {
                __atomic_fetch_add(&zones[z].count, seen[z] - before[z],
                                   __ATOMIC_RELAXED);
            }
        }
    } else {
        VLOG_WARN_RL(&rl, "cannot recount the connections of the zones "
                     "(%s)", ovs_strerror(error));
    }
    if (seen != n) {
        free(seen);
    }
    free(before);
    return error;
}

static bool
any_limit(const struct ovs_bpf_ct_zone *zones)
{
    for (int z = 0; z < OVS_BPF_N_CT_ZONES; z++) {
        if (zones[z].limit) {
            return true;
        }
    }
    return false;
}

static void *
recount_main(void *arg OVS_UNUSED)
{
    for (;;) {
        xnanosleep(RECOUNT_INTERVAL_MS * 1000 * 1000LL);
        ovs_mutex_lock(&mutex);
        if (cur_zones && any_limit(cur_zones)) {
            recount(cur_zones, NULL);
        }
        ovs_mutex_unlock(&mutex);
    }
    return NULL;
}

/* Makes 'zones' the ones the recount thread looks after, and starts it. */
static void
use_zones(struct ovs_bpf_ct_zone *zones) OVS_REQUIRES(mutex)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    cur_zones = zones;
    if (ovsthread_once_start(&once)) {
        ovs_thread_create("bpf_ct_limit", recount_main, NULL);
        ovsthread_once_done(&once);
    }
}

void
dpif_bpf_ct_limit_forget(const struct ovs_bpf_ct_zone *zones)
{
    ovs_mutex_lock(&mutex);
    if (cur_zones == zones) {
        cur_zones = NULL;
    }
    ovs_mutex_unlock(&mutex);
}

/* Sets the limits of 'zone_limits' (or, with 'del', takes them away, so
 * that the zones fall under the default) and, if 'default_limit' is not
 * NULL, the default limit. */
static int
change_limits(struct dpif *dpif, const uint32_t *default_limit,
              const struct ovs_list *zone_limits, bool del)
{
    struct ovs_bpf_ct_zone *zones = zones_of(dpif);
    const struct ct_dpif_zone_limit *zl;

    if (!zones) {
        return EOPNOTSUPP;
    }
    ovs_mutex_lock(&mutex);
    use_zones(zones);
    if (default_limit) {
        zones[OVS_BPF_CT_ZONE_DEFAULT].limit = *default_limit;
    }
    LIST_FOR_EACH (zl, node, zone_limits) {
        if (del) {
            zones[zl->zone].flags &= ~OVS_BPF_CT_ZONE_F_LIMIT;
            zones[zl->zone].limit = 0;
        } else {
            zones[zl->zone].limit = zl->limit;
            zones[zl->zone].flags |= OVS_BPF_CT_ZONE_F_LIMIT;
        }
    }
    /* The zones that had no limit were not counted. */
    recount(zones, NULL);
    ovs_mutex_unlock(&mutex);
    return 0;
}

int
dpif_bpf_ct_set_limits(struct dpif *dpif, const uint32_t *default_limit,
                       const struct ovs_list *zone_limits)
{
    return change_limits(dpif, default_limit, zone_limits, false);
}

int
dpif_bpf_ct_get_limits(struct dpif *dpif, uint32_t *default_limit,
                       const struct ovs_list *zone_limits_in,
                       struct ovs_list *zone_limits_out)
{
    struct ovs_bpf_ct_zone *zones = zones_of(dpif);
    const struct ct_dpif_zone_limit *zl;
    uint32_t *n;
    int error;

    if (!zones) {
        return EOPNOTSUPP;
    }
    n = xmalloc(N_ZONES * sizeof *n);
    ovs_mutex_lock(&mutex);
    use_zones(zones);
    error = recount(zones, n);
    if (!error) {
        *default_limit = zones[OVS_BPF_CT_ZONE_DEFAULT].limit;
        if (ovs_list_is_empty(zone_limits_in)) {
            /* All the zones that have a limit of their own. */
            for (int z = 0; z < N_ZONES; z++) {
                if (zones[z].flags & OVS_BPF_CT_ZONE_F_LIMIT) {
                    ct_dpif_push_zone_limit(zone_limits_out, z,
                                            zones[z].limit, n[z]);
                }
            }
        } else {
            LIST_FOR_EACH (zl, node, zone_limits_in) {
                ct_dpif_push_zone_limit(zone_limits_out, zl->zone,
                                        zone_limit(zones, zl->zone),
                                        n[zl->zone]);
            }
        }
    }
    ovs_mutex_unlock(&mutex);
    free(n);
    return error;
}

int
dpif_bpf_ct_del_limits(struct dpif *dpif, const struct ovs_list *zone_limits)
{
    return change_limits(dpif, NULL, zone_limits, true);
}

int
dpif_bpf_ct_limit_reserve(const struct dpif_bpf_obj *obj, uint16_t zone)
{
    struct ovs_bpf_ct_zone *zones = obj ? obj->ct_zones : NULL;
    uint32_t limit;

    if (!zones) {
        return 0;
    }
    limit = zone_limit(zones, zone);
    if (!limit) {
        return 0;
    }
    if (__atomic_fetch_add(&zones[zone].count, 1, __ATOMIC_RELAXED)
        >= limit) {
        __atomic_fetch_sub(&zones[zone].count, 1, __ATOMIC_RELAXED);
        return -1;
    }
    return 1;
}

void
dpif_bpf_ct_limit_unreserve(const struct dpif_bpf_obj *obj, uint16_t zone)
{
    __atomic_fetch_sub(&obj->ct_zones[zone].count, 1, __ATOMIC_RELAXED);
}
