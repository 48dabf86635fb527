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

/* Conntrack timeout policies of the BPF datapath (ovs-vsctl add-zone-tp):
 * the dpif class's timeout policy operations, and what the ct slow path
 * (dpif-bpf-ct-slow.c) needs of them.
 *
 * The kernel's timeout policies (nfnetlink_cttimeout) are of no use here:
 * the conntrack kfuncs cannot attach one to a connection, and the kernel's
 * trackers never see the packets of the BPF datapath anyway, so the BPF
 * programs set each connection's timeout on each packet (bpf/actions-ct.h).
 * They do it from the connection's policy, kept in two BPF maps:
 *
 *   - 'ct_tps': each policy by its id, with the timeout of each state that
 *     the BPF programs can tell apart (OVS_BPF_CT_TP_STATES of
 *     bpf/datapath-abi.h), the kernel's defaults filled in for what the
 *     policy leaves out, and the policy as it was given, for "get" and
 *     "dump" (the map outlives ovs-vswitchd with the other pinned maps).
 *
 *   - 'ct_tp_conns': the policy id of each connection whose commit had one,
 *     by zone and original tuple.  The ct() action carries the id
 *     (ct(commit,timeout=ID), which ofproto-dpif adds to the commits of a
 *     zone with a policy, the name being the id in decimal as in
 *     dpif-netdev); the BPF commit writes it, and every later ct() of the
 *     connection, with or without commit, reads it, as the kernel keeps a
 *     connection's policy from its commit on.
 *
 * A policy that is deleted while connections have it leaves them with the
 * kernel's defaults from their next packet on. */

#include <config.h>

#include "dpif-bpf-ct-tp.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf/datapath-abi.h"
#include "ct-dpif.h"
#include "dpif-bpf-loader.h"
#include "dpif-bpf-private.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_ct_tp);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);

BUILD_ASSERT_DECL(CT_DPIF_TP_ATTR_MAX <= OVS_BPF_CT_TP_MAX_ATTRS);
/* The same layout as for clang -target bpf (see datapath-abi.h). */
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_ct_tp)
                  == 4 * (OVS_BPF_N_CT_TP_STATES + 1
                          + OVS_BPF_CT_TP_MAX_ATTRS));
BUILD_ASSERT_DECL(sizeof(struct ovs_bpf_ct_tp_conn) == 40);

/* bpf_ct_set_timeout() takes a __u32 of ms: longer timeouts are cut to
 * this (49 days). */
#define CT_TP_MAX_SECONDS (UINT32_MAX / 1000)

static int
ct_tps_fd(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    return dp->obj ? dp->obj->ct_tps_fd : -1;
}

uint32_t
dpif_bpf_ct_tp_count(const struct dpif_bpf_obj *obj)
{
    uint32_t key, n = 0;

    if (!obj) {
        return 0;
    }
    for (int error = bpf_map_get_next_key(obj->ct_tps_fd, NULL, &key);
         !error;
         error = bpf_map_get_next_key(obj->ct_tps_fd, &key, &key)) {
        n++;
    }
    return n;
}

/* Tells the BPF programs how many policies there are now (see
 * ovs_bpf_ct_tps_in_use() of bpf/actions-ct.h), after a change of
 * 'ct_tps': a packet in between sees the policy it had or the one it
 * gets, as with a policy changed under a live connection. */
static void
ct_tps_changed(struct dpif *dpif)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error;

    ovs_mutex_lock(&dp->mutex);
    dp->n_ct_tps = dpif_bpf_ct_tp_count(dp->obj);
    error = dp_bpf_write_config(dp);
    ovs_mutex_unlock(&dp->mutex);
    if (error) {
        VLOG_WARN_RL(&rl, "cannot write the number of timeout policies "
                     "(%s)", ovs_strerror(error));
    }
}

int
dpif_bpf_ct_set_timeout_policy(struct dpif *dpif,
                               const struct ct_dpif_timeout_policy *tp)
{
    struct ovs_bpf_ct_tp v;
    int fd = ct_tps_fd(dpif);

    if (fd < 0) {
        return EOPNOTSUPP;
    }
    if (!tp->id) {
        /* 0 is "no policy" in the ct() action. */
        return EINVAL;
    }
    memset(&v, 0, sizeof v);
    v.present = tp->present;
    for (int i = 0; i < CT_DPIF_TP_ATTR_MAX; i++) {
        v.attrs[i] = tp->attrs[i];
    }
#define OVS_BPF_CT_TP(STATE, ATTR, DEFAULT)                                 \
    {                                                                       \
        uint32_t s = (tp->present & (1u << CT_DPIF_TP_ATTR_##ATTR)          \
                      ? tp->attrs[CT_DPIF_TP_ATTR_##ATTR] : DEFAULT);       \
        v.timeout_ms[OVS_BPF_CT_TP_##STATE]                                 \
            = MIN(s, CT_TP_MAX_SECONDS) * 1000;                             \
    }
    OVS_BPF_CT_TP_STATES
#undef OVS_BPF_CT_TP

    if (bpf_map_update_elem(fd, &tp->id, &v, BPF_ANY)) {
        int error = errno;

        VLOG_WARN_RL(&rl, "writing timeout policy %"PRIu32" failed (%s)",
                     tp->id, ovs_strerror(error));
        return error;
    }
    ct_tps_changed(dpif);
    return 0;
}

static void
tp_from_map(uint32_t id, const struct ovs_bpf_ct_tp *v,
            struct ct_dpif_timeout_policy *tp)
{
    memset(tp, 0, sizeof *tp);
    tp->id = id;
    tp->present = v->present & ((1u << CT_DPIF_TP_ATTR_MAX) - 1);
    for (int i = 0; i < CT_DPIF_TP_ATTR_MAX; i++) {
        tp->attrs[i] = v->attrs[i];
    }
}

int
dpif_bpf_ct_get_timeout_policy(struct dpif *dpif, uint32_t tp_id,
                               struct ct_dpif_timeout_policy *tp)
{
    struct ovs_bpf_ct_tp v;
    int fd = ct_tps_fd(dpif);

    if (fd < 0) {
        return EOPNOTSUPP;
    }
    if (bpf_map_lookup_elem(fd, &tp_id, &v)) {
        return errno;
    }
    tp_from_map(tp_id, &v, tp);
    return 0;
}

int
dpif_bpf_ct_del_timeout_policy(struct dpif *dpif, uint32_t tp_id)
{
    int fd = ct_tps_fd(dpif);

    if (fd < 0) {
        return EOPNOTSUPP;
    }
    if (bpf_map_delete_elem(fd, &tp_id)) {
        return errno;
    }
    ct_tps_changed(dpif);
    return 0;
}

struct ct_tp_dump {
    int fd;
    uint32_t key;
    bool started;
};

int
dpif_bpf_ct_timeout_policy_dump_start(struct dpif *dpif, void **statep)
{
    struct ct_tp_dump *dump;
    int fd = ct_tps_fd(dpif);

    if (fd < 0) {
        return EOPNOTSUPP;
    }
    dump = xzalloc(sizeof *dump);
    dump->fd = fd;
    *statep = dump;
    return 0;
}

int
dpif_bpf_ct_timeout_policy_dump_next(struct dpif *dpif OVS_UNUSED,
                                     void *state,
                                     struct ct_dpif_timeout_policy *tp)
{
    struct ct_tp_dump *dump = state;

    for (;;) {
        struct ovs_bpf_ct_tp v;
        uint32_t next;

        if (bpf_map_get_next_key(dump->fd, dump->started ? &dump->key : NULL,
                                 &next)) {
            return errno == ENOENT ? EOF : errno;
        }
        dump->started = true;
        dump->key = next;
        if (!bpf_map_lookup_elem(dump->fd, &next, &v)) {
            tp_from_map(next, &v, tp);
            return 0;
        }
        /* Deleted since: the next one. */
    }
}

int
dpif_bpf_ct_timeout_policy_dump_done(struct dpif *dpif OVS_UNUSED,
                                     void *state)
{
    free(state);
    return 0;
}

/* The name of a policy in ct(timeout=NAME) is its id, for every protocol
 * (so 'is_generic': ofproto-dpif need not match the protocol). */
int
dpif_bpf_ct_get_timeout_policy_name(struct dpif *dpif OVS_UNUSED,
                                    uint32_t tp_id,
                                    uint16_t dl_type OVS_UNUSED,
                                    uint8_t nw_proto OVS_UNUSED,
                                    char **tp_name, bool *is_generic)
{
    *tp_name = xasprintf("%"PRIu32, tp_id);
    *is_generic = true;
    return 0;
}

/* The key in 'ct_tp_conns' of connection 'orig' of 'zone' (the slow path's
 * ICMP: the identifier, type and code are where the ports would be). */
static void
conn_key(const struct ct_dpif_tuple *orig, uint16_t zone,
         struct ovs_bpf_ct_tp_conn *key)
{
    memset(key, 0, sizeof *key);
    key->zone = zone;
    key->proto = orig->ip_proto;
    if (orig->l3_type == AF_INET6) {
        memcpy(key->src, &orig->src.in6, 16);
        memcpy(key->dst, &orig->dst.in6, 16);
    } else {
        key->src[0] = orig->src.ip;
        key->dst[0] = orig->dst.ip;
    }
    key->src_port = orig->src_port;
    key->dst_port = orig->dst_port;
}

void
dpif_bpf_ct_tp_conn_set(const struct dpif_bpf_obj *obj,
                        const struct ct_dpif_tuple *orig, uint16_t zone,
                        uint32_t tp_id)
{
    struct ovs_bpf_ct_tp_conn key;

    if (!obj) {
        return;
    }
    conn_key(orig, zone, &key);
    if (key.proto == IPPROTO_TCP) {
        /* The slow path does not track TCP windows: the connection that it
         * just committed has none (what an earlier one of the same tuple
         * left would be wrong), and is not checked (bpf/ct-tcp-win.h). */
        bpf_map_delete_elem(obj->ct_tcp_win_fd, &key);
    }
    if (tp_id) {
        if (bpf_map_update_elem(obj->ct_tp_conns_fd, &key, &tp_id, BPF_ANY)) {
            VLOG_WARN_RL(&rl, "cannot record the timeout policy of a "
                         "connection (%s)", ovs_strerror(errno));
        }
    } else {
        bpf_map_delete_elem(obj->ct_tp_conns_fd, &key);
    }
}

uint32_t
dpif_bpf_ct_tp_timeout(const struct dpif_bpf_obj *obj,
                       const struct ct_dpif_tuple *orig, uint16_t zone,
                       uint32_t tp_id, enum ovs_bpf_ct_tp_state state)
{
    struct ovs_bpf_ct_tp v;

    if (obj && !tp_id && orig) {
        struct ovs_bpf_ct_tp_conn key;

        conn_key(orig, zone, &key);
        if (bpf_map_lookup_elem(obj->ct_tp_conns_fd, &key, &tp_id)) {
            tp_id = 0;
        }
    }
    if (obj && tp_id && !bpf_map_lookup_elem(obj->ct_tps_fd, &tp_id, &v)) {
        return DIV_ROUND_UP(v.timeout_ms[state], 1000);
    }
    switch (state) {
#define OVS_BPF_CT_TP(STATE, ATTR, DEFAULT) \
    case OVS_BPF_CT_TP_##STATE: return DEFAULT;
    OVS_BPF_CT_TP_STATES
#undef OVS_BPF_CT_TP
    case OVS_BPF_N_CT_TP_STATES:
    default:
        OVS_NOT_REACHED();
    }
}
