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

/* The conntrack operations of the BPF datapath's dpif class: what
 * "ovs-appctl dpctl/dump-conntrack", "flush-conntrack", "ct-stats-show",
 * "ct-get-nconns" and "ct-set-maxconns"/"ct-get-maxconns" run.  The timeout
 * policies are in dpif-bpf-ct-tp.c, the zone limits in dpif-bpf-ct-limit.c.
 *
 * The BPF programs keep no connection table of their own: they use the
 * kernel's nf_conntrack through the conntrack kfuncs, in the network
 * namespace of the devices they are attached to, which is the one
 * ovs-vswitchd runs in.  So these operations act on that namespace's
 * nf_conntrack, as dpif-netlink's do for openvswitch.ko: dumps and flushes
 * go through ctnetlink (lib/netlink-conntrack.c), on a netlink socket that
 * ovs-vswitchd opens in its own namespace; the connection count and the
 * table's limit are the namespace's nf_conntrack sysctls, which /proc/sys
 * shows for the namespace of the thread that reads them.
 *
 * The table is the namespace's, not the datapath's: a dump shows, and a
 * flush without a zone or tuple removes, every connection of the namespace,
 * including those of iptables/nftables rules, as on the kernel datapath.
 *
 * TCP sequence checking ("ct-enable-tcp-seq-chk", "ct-disable-tcp-seq-chk",
 * "ct-get-tcp-seq-chk") turns on and off the window checks that the BPF
 * ct() makes of TCP segments (bpf/ct-tcp-win.h), as dpif-netdev's do for
 * its own conntrack: on by default.
 *
 * The conntrack features say what the ct() action does: all-zero SNAT
 * (OVS_BPF_CT_F_NAT_ZERO). */

#include <config.h>

#include "dpif-bpf-ct.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "ct-dpif.h"
#include "dpif-bpf-private.h"
#include "netlink-conntrack.h"
#include "openvswitch/vlog.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_ct);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);

/* The nf_conntrack sysctls of the caller's network namespace. */
#define CT_SYSCTL_DIR "/proc/sys/net/netfilter/"
#define CT_SYSCTL_COUNT CT_SYSCTL_DIR "nf_conntrack_count"
#define CT_SYSCTL_MAX CT_SYSCTL_DIR "nf_conntrack_max"

struct dpif_bpf_ct_dump_state {
    struct ct_dpif_dump_state up;
    struct nl_ct_dump_state *nl_ct_dump;
};

int
dpif_bpf_ct_dump_start(struct dpif *dpif OVS_UNUSED,
                       struct ct_dpif_dump_state **dump_,
                       const uint16_t *zone, int *ptot_bkts)
{
    struct dpif_bpf_ct_dump_state *dump = xzalloc(sizeof *dump);
    int error;

    /* 'zone' filters the dump; *ptot_bkts becomes -1: nf_conntrack's hash
     * buckets are not reported. */
    error = nl_ct_dump_start(&dump->nl_ct_dump, zone, ptot_bkts);
    if (error) {
        free(dump);
        return error;
    }
    *dump_ = &dump->up;
    return 0;
}

int
dpif_bpf_ct_dump_next(struct dpif *dpif OVS_UNUSED,
                      struct ct_dpif_dump_state *dump_,
                      struct ct_dpif_entry *entry)
{
    struct dpif_bpf_ct_dump_state *dump;

    INIT_CONTAINER(dump, dump_, up);
    return nl_ct_dump_next(dump->nl_ct_dump, entry);
}

int
dpif_bpf_ct_dump_done(struct dpif *dpif OVS_UNUSED,
                      struct ct_dpif_dump_state *dump_)
{
    struct dpif_bpf_ct_dump_state *dump;
    int error;

    INIT_CONTAINER(dump, dump_, up);
    error = nl_ct_dump_done(dump->nl_ct_dump);
    free(dump);
    return error;
}

/* With 'tuple', deletes the connection whose original direction is 'tuple'
 * in '*zone' (zone 0 if 'zone' is NULL); ENOENT if there is none.  Without
 * it, deletes every connection of '*zone', or of the namespace if 'zone' is
 * NULL.  (ct_dpif_flush() turns a partial tuple into a dump and a flush of
 * each connection that matches.) */
int
dpif_bpf_ct_flush(struct dpif *dpif OVS_UNUSED, const uint16_t *zone,
                  const struct ct_dpif_tuple *tuple)
{
    if (tuple) {
        return nl_ct_flush_tuple(tuple, zone ? *zone : 0);
    } else if (zone) {
        return nl_ct_flush_zone(*zone);
    } else {
        return nl_ct_flush();
    }
}

/* Reads the unsigned number in the sysctl file 'path' into '*valuep'. */
static int
ct_sysctl_read(const char *path, uint32_t *valuep)
{
    unsigned long long int value;
    int error = 0;
    FILE *stream;

    stream = fopen(path, "r");
    if (!stream) {
        error = errno;
        VLOG_INFO_RL(&rl, "%s: cannot open (%s)%s", path,
                     ovs_strerror(error),
                     error == ENOENT ? ": is nf_conntrack loaded?" : "");
        return error;
    }
    if (fscanf(stream, "%llu", &value) != 1 || value > UINT32_MAX) {
        VLOG_INFO_RL(&rl, "%s: not a 32-bit unsigned number", path);
        error = EPROTO;
    } else {
        *valuep = value;
    }
    fclose(stream);
    return error;
}

/* Writes 'value' into the sysctl file 'path'. */
static int
ct_sysctl_write(const char *path, uint32_t value)
{
    char buf[16];
    ssize_t retval;
    int error;
    int fd;
    int n;

    fd = open(path, O_WRONLY);
    if (fd < 0) {
        return errno;
    }
    n = snprintf(buf, sizeof buf, "%"PRIu32"\n", value);
    retval = write(fd, buf, n);
    error = retval < 0 ? errno : retval != n ? EIO : 0;
    close(fd);
    return error;
}

/* Sets nf_conntrack_max, the most connections nf_conntrack keeps in any
 * one namespace.  The kernel lets only the initial network
 * namespace change it (the file is read-only elsewhere), where it is the
 * limit of the whole host: from another namespace this fails with EACCES,
 * and the log says why. */
int
dpif_bpf_ct_set_maxconns(struct dpif *dpif OVS_UNUSED, uint32_t maxconns)
{
    int error;

    /* The kernel takes 0 to INT_MAX. */
    if (maxconns > INT_MAX) {
        return EINVAL;
    }

    error = ct_sysctl_write(CT_SYSCTL_MAX, maxconns);
    if (error == EACCES || error == EPERM || error == EROFS) {
        VLOG_INFO_RL(&rl, "cannot set %s (%s): the kernel lets only the "
                     "initial network namespace change it, and "
                     "ovs-vswitchd runs in another one", CT_SYSCTL_MAX,
                     ovs_strerror(error));
    } else if (error) {
        VLOG_INFO_RL(&rl, "cannot set %s to %"PRIu32" (%s)", CT_SYSCTL_MAX,
                     maxconns, ovs_strerror(error));
    }
    return error;
}

int
dpif_bpf_ct_get_maxconns(struct dpif *dpif OVS_UNUSED, uint32_t *maxconns)
{
    return ct_sysctl_read(CT_SYSCTL_MAX, maxconns);
}

/* What the BPF ct() does besides the basics: all-zero SNAT, which keeps
 * the packet's address (bpf/ct-nat.h, and the ct slow path). */
int
dpif_bpf_ct_get_features(struct dpif *dpif OVS_UNUSED,
                         enum ct_features *features)
{
    *features = CONNTRACK_F_ZERO_SNAT;
    return 0;
}

/* Turns the TCP window checks of the BPF ct() on or off ('enabled'): off,
 * a segment out of its connection's window is let through as the kernel's
 * nf_conntrack_tcp_be_liberal lets it, instead of being +inv. */
int
dpif_bpf_ct_set_tcp_seq_chk(struct dpif *dpif, bool enabled)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);
    int error;

    ovs_mutex_lock(&dp->mutex);
    dp->ct_tcp_liberal = !enabled;
    error = dp_bpf_write_config(dp);
    ovs_mutex_unlock(&dp->mutex);
    return error;
}

int
dpif_bpf_ct_get_tcp_seq_chk(struct dpif *dpif, bool *enabled)
{
    struct dp_bpf *dp = get_dp_bpf(dpif);

    ovs_mutex_lock(&dp->mutex);
    *enabled = !dp->ct_tcp_liberal;
    ovs_mutex_unlock(&dp->mutex);
    return 0;
}

/* The number of connections in the namespace's nf_conntrack. */
int
dpif_bpf_ct_get_nconns(struct dpif *dpif OVS_UNUSED, uint32_t *nconns)
{
    return ct_sysctl_read(CT_SYSCTL_COUNT, nconns);
}
