/*
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

/* What the AF_XDP netdev counts and shows: the netdev's statistics and
 * custom statistics (its per-queue counters and the kernel's) and
 * "ovs-appctl netdev-afxdp/show", which accounts for every frame of each
 * queue and lists the ways a packet or a frame can be lost. */

#include <config.h>

#include "netdev-afxdp.h"
#include "netdev-afxdp-private.h"

#include <linux/if_xdp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <xdp/xsk.h>

#include "hmapx.h"
#include "netdev-provider.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp_stats);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* The name of each per-queue counter, and whether it counts packets or
 * frames lost (see AFXDP_QUEUE_COUNTERS). */
static const struct {
    const char *name;
    bool lost;
} afxdp_counters[AFXDP_N_COUNTERS] = {
#define AFXDP_COUNTER_INFO(ENUM, NAME, LOST) { NAME, LOST },
    AFXDP_QUEUE_COUNTERS(AFXDP_COUNTER_INFO)
#undef AFXDP_COUNTER_INFO
};

/* Statistics. */

static uint64_t
afxdp_read_counter(atomic_uint64_t *counter)
{
    uint64_t value;

    atomic_read_relaxed(counter, &value);
    return value;
}

int
netdev_afxdp_get_stats(const struct netdev *netdev, struct netdev_stats *stats)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_stats dev_stats;
    int error;

    ovs_mutex_lock(&dev->mutex);
    error = get_stats_via_netlink(netdev, &dev_stats);
    if (error) {
        VLOG_WARN_RL(&rl, "%s: error getting AF_XDP device statistics: %s",
                     netdev_get_name(netdev), ovs_strerror(error));
    } else {
        /* The kernel counts what it passes to the sockets; what we drop in
         * userspace, and what the sockets drop, it does not see. */
        *stats = dev_stats;
        for (int i = 0; dev->xsks && i < netdev->n_rxq; i++) {
            struct xsk_socket_info *xsk = dev->xsks[i];
            struct xdp_statistics xs;
            socklen_t len = sizeof xs;

            stats->tx_dropped
                += (afxdp_read_counter(&xsk->counters[AFXDP_TX_RING_FULL])
                    + afxdp_read_counter(&xsk->counters[AFXDP_TX_NO_FRAME])
                    + afxdp_read_counter(&xsk->counters[AFXDP_TX_BAD_SIZE])
                    + afxdp_read_counter(&xsk->counters[AFXDP_TX_DEV_DROP]));
            if (!getsockopt(xsk_socket__fd(xsk->xsk), SOL_XDP,
                            XDP_STATISTICS, &xs, &len)) {
                stats->rx_dropped += xs.rx_dropped;
                stats->rx_errors += xs.rx_invalid_descs;
                stats->tx_errors += xs.tx_invalid_descs;
            }
        }
    }
    ovs_mutex_unlock(&dev->mutex);
    return error;
}

/* Reads the counters of 'xsk' into 'values'. */
static void
afxdp_read_counters(struct xsk_socket_info *xsk,
                    uint64_t values[AFXDP_N_COUNTERS])
{
    struct xdp_statistics xs;
    socklen_t len = sizeof xs;

    for (int c = 0; c < AFXDP_N_COUNTERS; c++) {
        values[c] = afxdp_read_counter(&xsk->counters[c]);
    }
    if (!getsockopt(xsk_socket__fd(xsk->xsk), SOL_XDP, XDP_STATISTICS,
                    &xs, &len)) {
        values[AFXDP_XS_RX_DROPPED] = xs.rx_dropped;
        values[AFXDP_XS_RX_INVALID] = xs.rx_invalid_descs;
        values[AFXDP_XS_TX_INVALID] = xs.tx_invalid_descs;
        /* Older kernels return only the first three. */
        if (len >= sizeof xs) {
            values[AFXDP_XS_RX_RING_FULL] = xs.rx_ring_full;
            values[AFXDP_XS_FILL_EMPTY] = xs.rx_fill_ring_empty_descs;
            values[AFXDP_XS_TX_RING_EMPTY] = xs.tx_ring_empty_descs;
        }
    }
}

int
netdev_afxdp_get_custom_stats(const struct netdev *netdev,
                              struct netdev_custom_stats *custom_stats)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    int n_rxq = dev->xsks ? netdev->n_rxq : 0;

    custom_stats->size = 0;
    custom_stats->counters = xcalloc(n_rxq * AFXDP_N_COUNTERS,
                                     sizeof *custom_stats->counters);
    for (int q = 0; q < n_rxq; q++) {
        uint64_t values[AFXDP_N_COUNTERS];

        afxdp_read_counters(dev->xsks[q], values);
        for (int c = 0; c < AFXDP_N_COUNTERS; c++) {
            struct netdev_custom_counter *counter
                = &custom_stats->counters[custom_stats->size++];

            snprintf(counter->name, sizeof counter->name, "xsk_queue_%d_%s",
                     q, afxdp_counters[c].name);
            counter->value = values[c];
        }
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* Frame accounting ("ovs-appctl netdev-afxdp/show").
 *
 * Every frame of a queue's slice of a UMEM is in exactly one of the places
 * below, or in the kernel between two of them (a frame being copied into, a
 * socket buffer being transmitted), so that when the port is idle the
 * places add up to the slice's size.  A frame that is nowhere is leaked, one
 * counted twice is a bug too: the difference is shown as "unaccounted".
 * With a shared UMEM, a frame of one queue's slice may sit in another
 * queue's TX or completion ring; ring entries are counted for the slice
 * their address falls in, so that the accounting still balances per queue.
 *
 * The numbers are read while the datapath runs, without stopping it, so
 * under traffic they are a blurred snapshot; they are exact at rest. */
#define AFXDP_FRAME_PLACES(P)                                               \
    P(RX_POOL,  "rx pool")          /* Free, for the fill ring. */          \
    P(RETURNED, "returned")         /* Free, given back by another queue. */\
    P(TX_POOL,  "tx pool")          /* Free, for copies to transmit. */     \
    P(FILL,     "fill ring")        /* Given to the kernel to receive in. */\
    P(RX,       "rx ring")          /* Received, not polled yet. */         \
    P(TX,       "tx ring")          /* To transmit (any queue's ring). */   \
    P(COMP,     "completion ring")  /* Transmitted, not reaped yet. */      \
    P(PACKETS,  "packets")          /* Held by packets in the datapath. */

enum afxdp_frame_place {
#define AFXDP_PLACE_ENUM(ENUM, NAME) AFXDP_IN_##ENUM,
    AFXDP_FRAME_PLACES(AFXDP_PLACE_ENUM)
#undef AFXDP_PLACE_ENUM
    AFXDP_N_PLACES
};

static const char *const afxdp_place_names[AFXDP_N_PLACES] = {
#define AFXDP_PLACE_NAME(ENUM, NAME) NAME,
    AFXDP_FRAME_PLACES(AFXDP_PLACE_NAME)
#undef AFXDP_PLACE_NAME
};

/* Counts the frames in one ring of a socket on 'umem' into 'census', the
 * per-slice counts, under 'place'.  'descs' is true for RX and TX rings,
 * whose entries are descriptors, false for fill and completion rings, whose
 * entries are addresses. */
static void
afxdp_census_ring(const struct afxdp_umem *umem,
                  unsigned int (*census)[AFXDP_N_PLACES],
                  enum afxdp_frame_place place, const void *ring,
                  uint32_t mask, const uint32_t *producer,
                  const uint32_t *consumer, bool descs)
{
    size_t slice_size = (size_t) umem->slice_frames * AFXDP_FRAME_SIZE;
    uint32_t prod = __atomic_load_n(producer, __ATOMIC_ACQUIRE);
    uint32_t cons = __atomic_load_n(consumer, __ATOMIC_ACQUIRE);

    for (uint32_t i = cons; i != prod && i - cons <= mask; i++) {
        uint64_t addr = (descs
                         ? ((const struct xdp_desc *) ring)[i & mask].addr
                         : ((const uint64_t *) ring)[i & mask]);
        size_t slot = addr / slice_size;

        if (slot < umem->n_slots) {
            census[slot][place]++;
        }
    }
}

/* Counts where the frames of every slice of 'umem' are. */
static void
afxdp_census_umem(const struct afxdp_umem *umem,
                  unsigned int (*census)[AFXDP_N_PLACES])
    OVS_REQUIRES(afxdp_mutex)
{
    memset(census, 0, umem->n_slots * sizeof *census);
    for (unsigned int s = 0; s < umem->n_slots; s++) {
        struct xsk_socket_info *xsk = umem->slots[s];

        if (!xsk) {
            continue;
        }

        /* The pools: owned by the datapath threads, read in passing. */
        unsigned int returned;

        atomic_read_relaxed(&xsk->rx_pool.n_returned, &returned);
        census[s][AFXDP_IN_RX_POOL] = AFXDP_READ_ONCE(xsk->rx_pool.n);
        census[s][AFXDP_IN_RETURNED] = returned;
        census[s][AFXDP_IN_TX_POOL] = AFXDP_READ_ONCE(xsk->tx_pool.n);

        /* The rings, as the kernel and we published them. */
        afxdp_census_ring(umem, census, AFXDP_IN_FILL, xsk->fill.ring,
                          xsk->fill.mask, xsk->fill.producer,
                          xsk->fill.consumer, false);
        afxdp_census_ring(umem, census, AFXDP_IN_RX, xsk->rx.ring,
                          xsk->rx.mask, xsk->rx.producer, xsk->rx.consumer,
                          true);
        afxdp_census_ring(umem, census, AFXDP_IN_TX, xsk->tx.ring,
                          xsk->tx.mask, xsk->tx.producer, xsk->tx.consumer,
                          true);
        afxdp_census_ring(umem, census, AFXDP_IN_COMP, xsk->comp.ring,
                          xsk->comp.mask, xsk->comp.producer,
                          xsk->comp.consumer, false);

        /* The packets: a packet owns its frame while 'mpool' is set, in
         * one of the frames' own descriptors or in one of the hot ones of
         * the queue whose RX pool the frame came from (this one). */
        const struct afxdp_xpacket *xp = &umem->xpackets[(size_t) s
                                                          * umem->slice_frames];
        for (unsigned int f = 0; f < umem->slice_frames; f++) {
            if (AFXDP_READ_ONCE(xp[f].xp.mpool)) {
                census[s][AFXDP_IN_PACKETS]++;
            }
        }
        for (unsigned int h = 0; h < AFXDP_HOT_XPACKETS; h++) {
            if (AFXDP_READ_ONCE(xsk->hot[h].xp.mpool)) {
                census[s][AFXDP_IN_PACKETS]++;
            }
        }
    }
}

static void
afxdp_show_umem(struct ds *ds, const struct afxdp_umem *umem)
    OVS_REQUIRES(afxdp_mutex)
{
    unsigned int (*census)[AFXDP_N_PLACES] = xcalloc(umem->n_slots,
                                                     sizeof *census);

    afxdp_census_umem(umem, census);
    if (umem->n_slots > 1) {
        ds_put_format(ds, "umem-group %s: %u queues of %u slots, "
                      "%u frames each%s\n",
                      umem->group ? umem->group : "(none)", umem->n_users,
                      umem->n_slots, umem->slice_frames,
                      umem->group ? "" : ", retired: members are moving to "
                      "a new UMEM, frames in the rings of a member that "
                      "left are lost");
    }
    for (unsigned int s = 0; s < umem->n_slots; s++) {
        struct xsk_socket_info *xsk = umem->slots[s];

        if (!xsk) {
            continue;
        }

        long long int accounted = 0;

        ds_put_format(ds, "%s queue %d: %u frames%s\n",
                      netdev_get_name(xsk->netdev), xsk->qid,
                      umem->slice_frames,
                      umem->n_slots > 1 ? "" : ", private UMEM");
        ds_put_cstr(ds, "  frames:");
        for (int p = 0; p < AFXDP_N_PLACES; p++) {
            ds_put_format(ds, "%s %s %u", p ? "," : "",
                          afxdp_place_names[p], census[s][p]);
            accounted += census[s][p];
        }
        ds_put_format(ds, "\n  unaccounted: %lld\n",
                      (long long int) umem->slice_frames - accounted);

        uint64_t values[AFXDP_N_COUNTERS];

        afxdp_read_counters(xsk, values);
        for (int pass = 0; pass < 2; pass++) {
            bool lost = !pass;

            ds_put_cstr(ds, lost ? "  lost:" : "  other:");
            for (int c = 0, n = 0; c < AFXDP_N_COUNTERS; c++) {
                if (afxdp_counters[c].lost == lost) {
                    ds_put_format(ds, "%s %s %"PRIu64, n++ ? "," : "",
                                  afxdp_counters[c].name, values[c]);
                }
            }
            ds_put_char(ds, '\n');
        }
    }
    free(census);
}

void
afxdp_unixctl_show(struct unixctl_conn *conn, int argc, const char *argv[],
                   void *aux OVS_UNUSED)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    struct hmapx shown = HMAPX_INITIALIZER(&shown);
    struct ds ds = DS_EMPTY_INITIALIZER;
    struct afxdp_dev *ad;
    bool found = false;

    ovs_mutex_lock(&afxdp_mutex);
    HMAP_FOR_EACH (ad, node, &afxdp_devs) {
        struct netdev_linux *dev = netdev_linux_cast(ad->netdev);

        if (name && strcmp(name, netdev_get_name(ad->netdev))) {
            continue;
        }
        found = true;
        if (!dev->xsks) {
            ds_put_format(&ds, "%s: no AF_XDP sockets\n",
                          netdev_get_name(ad->netdev));
            continue;
        }
        for (int i = 0; i < ad->n_bound; i++) {
            struct afxdp_umem *umem = dev->xsks[i]->umem;

            if (hmapx_add(&shown, umem)) {
                afxdp_show_umem(&ds, umem);
            }
        }
    }
    ovs_mutex_unlock(&afxdp_mutex);
    hmapx_destroy(&shown);

    if (name && !found) {
        unixctl_command_reply_error(conn, "no such afxdp port");
    } else {
        unixctl_command_reply(conn, ds_cstr(&ds));
    }
    ds_destroy(&ds);
}
