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

#ifndef NETDEV_AFXDP_PRIVATE_H
#define NETDEV_AFXDP_PRIVATE_H 1

/* What the files of the AF_XDP netdev share: its design, its constants, its
 * structures and the functions that one of its files calls in another.
 *
 * Files
 * =====
 *
 *   netdev-afxdp.c        The netdev: life cycle, options, reconfiguration,
 *                         the XDP features of a device, the MTU.
 *   netdev-afxdp-xsk.c    UMEMs, AF_XDP sockets and their rings, the XDP
 *                         program and its attachment through libxdp.
 *   netdev-afxdp-rxtx.c   The data path: receive, fill ring refill,
 *                         transmit and completion, per queue.
 *   netdev-afxdp-stats.c  Statistics, per-queue counters and
 *                         "ovs-appctl netdev-afxdp/show".
 *   netdev-afxdp-pool.c   The frame pools of a queue.
 *
 * The netdev classes themselves are in netdev-linux.c (see netdev-afxdp.h).
 *
 * Layout
 * ======
 *
 * Each port gets one XDP program, a few BPF instructions assembled in
 * netdev-afxdp-xsk.c that redirect every frame to the AF_XDP socket (XSK)
 * registered in an XSKMAP under the frame's receive queue, and passes the
 * frame up the kernel stack when there is none.  libxdp attaches it,
 * through its dispatcher when the system allows that and directly
 * otherwise.
 *
 * Each receive queue gets one XSK, which the port also transmits on: the
 * netdev has as many TX queues as RX queues.  An XSK needs a UMEM, the memory
 * area its frames live in.  By default each queue has a UMEM of its own.
 * Ports configured with the same options:umem-group share one UMEM, which
 * lets a packet received on one of them be transmitted on another by posting
 * the very same frame to the other socket's TX ring (see "Zero-copy
 * forwarding" below).
 *
 * A UMEM is cut in slices of options:umem-frames frames, one slice per queue.
 * The first part of a slice feeds the queue's fill ring (the RX pool), the
 * last AFXDP_TX_FRAMES frames are where the queue copies packets that come
 * from elsewhere (the TX pool).  Frames are AFXDP_FRAME_SIZE bytes; the
 * struct dp_packet of each frame sits in an array next to the UMEM, never in
 * the frame, so that the whole frame is packet data and headroom.
 *
 * A received packet does not take its frame's struct dp_packet, though,
 * unless it has to: each queue keeps a small LIFO stack of packet
 * descriptors of its own ("hot" descriptors, see struct xsk_socket_info),
 * any of which can describe any frame of the queue's RX pool.  A frame comes
 * back to the fill ring long after its last use, so the descriptor of the
 * frame itself is nearly always out of the cache, and the datapath writes
 * three of its cache lines per packet (this code the first, dpif-netdev the
 * metadata); the few dozen hot descriptors a queue cycles through stay in
 * the cache.  When they are all in use (packets held across iterations), the
 * frame's own descriptor serves.
 *
 * Threads
 * =======
 *
 * Only the thread polling a queue touches its RX ring, its fill ring and its
 * RX pool.  dpif-netdev frees every packet on the thread that received it,
 * so free_afxdp_buf() pushes to that pool without locking.  The TX ring, the
 * completion ring and the TX pool of a queue belong to whoever holds the
 * queue's TX lock (netdev_linux's 'tx_locks').  The send path always takes
 * it, and the thread polling the RX queue of the same number takes it too,
 * if it is free, to kick the kernel and reap completions when the send path
 * has gone quiet with work left (see afxdp_tx_poll()).
 *
 * Zero-copy forwarding
 * ====================
 *
 * When the output socket shares the UMEM of the packet's frame, the frame's
 * address goes straight into the TX ring.  The packet then no longer owns
 * the frame (its 'mpool' is cleared, so freeing the packet does nothing);
 * the frame comes back through the output queue's completion ring and is
 * handed to the owner of its RX pool with umem_pool_give_back().
 *
 * Multi-buffer (jumbo frames)
 * ===========================
 *
 * When the kernel supports AF_XDP multi-buffer (XDP_USE_SG, Linux 6.6), the
 * program is loaded as frags-aware and sockets are bound with XDP_USE_SG.  A
 * packet larger than a frame arrives as a chain of descriptors with
 * XDP_PKT_CONTD set on all but the last one; it is copied into a malloc'ed
 * packet.  Outgoing packets larger than a frame are split the same way.
 * Without multi-buffer, an MTU that does not fit one frame is refused. */

#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/if_xdp.h>

#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "dp-packet.h"
#include "netdev-afxdp.h"
#include "netdev-afxdp-pool.h"

/* netdev-linux-private.h defines static functions, netdev_linux_cast() and
 * netdev_rxq_linux_cast(), that not every file of the netdev uses. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "netdev-linux-private.h"
#pragma GCC diagnostic pop

#include "openvswitch/hmap.h"
#include "openvswitch/thread.h"
#include "ovs-atomic.h"
#include "ovs-thread.h"
#include "util.h"

struct netdev;
struct unixctl_conn;
struct vlog_module;

/* Frames are 4 kB, aligned, so that a descriptor address masked with
 * ~AFXDP_FRAME_MASK gives its frame. */
#define AFXDP_FRAME_SHIFT XSK_UMEM__DEFAULT_FRAME_SHIFT
#define AFXDP_FRAME_SIZE (1u << AFXDP_FRAME_SHIFT)
#define AFXDP_FRAME_MASK ((uint64_t) AFXDP_FRAME_SIZE - 1)

/* All four rings of a socket have this many entries. */
#define AFXDP_RING_SIZE 2048

/* Frames per queue that hold copies of outgoing packets: enough to fill the
 * TX ring. */
#define AFXDP_TX_FRAMES AFXDP_RING_SIZE

/* Reads X once, as it is now: for what another thread writes without a
 * lock and this one only looks at. */
#define AFXDP_READ_ONCE(X) (*(const volatile __typeof__(X) *) &(X))

/* Hot packet descriptors per queue: four receive batches, a few times what
 * a queue has in flight when the datapath sends every batch it receives in
 * the same iteration. */
#define AFXDP_HOT_XPACKETS (4 * NETDEV_MAX_BURST)

/* Not in the uapi headers of older distributions. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
#ifndef BPF_F_XDP_HAS_FRAGS
#define BPF_F_XDP_HAS_FRAGS (1U << 5)
#endif

struct netdev_afxdp_tx_lock {
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        struct ovs_spin lock;
    );
};

/* The packet descriptor of a frame, in cache lines of its own.  The fields
 * that receiving a packet writes, 'mpool' and the start of the dp_packet up
 * to the metadata, then share one cache line (a bare struct dp_packet_afxdp
 * is 568 bytes, which would split them over two for most frames). */
struct afxdp_xpacket {
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        struct dp_packet_afxdp xp;
    );
};

/* A UMEM: a memory area registered with the kernel, cut in slices. */
struct afxdp_umem {
    struct xsk_umem *xumem;
    char *area;
    size_t size;

    unsigned int slice_frames;  /* Frames per slice (options:umem-frames). */
    unsigned int n_slots;       /* Number of slices. */
    unsigned int next_slot;     /* Slices are never reused, see below. */
    unsigned int n_users;       /* Sockets on this UMEM. */
    struct xsk_socket_info **slots; /* Socket owning each slice, or NULL. */

    /* One packet descriptor per frame, indexed by frame number, in an
     * anonymous mapping of 'xpackets_size' bytes (see afxdp_umem_create()
     * for why not malloc()). */
    struct afxdp_xpacket *xpackets;
    size_t xpackets_size;

    /* libxdp creates the first socket's fill and completion rings with the
     * UMEM and copies them into that socket's own ring structures. */
    struct xsk_ring_prod fill0;
    struct xsk_ring_cons comp0;

    /* Group name for a shared UMEM that new members may still join; NULL
     * for a queue's private UMEM and for a retired group UMEM. */
    char *group;
    struct xsk_socket_info *anchor;   /* Owner of the UMEM's socket fd. */

    /* Sockets after the first on a UMEM inherit its bind flags. */
    bool zero_copy;
    bool need_wakeup;
    bool multi_buffer;
};

/* Per-queue counters: the kernel's (XDP_STATISTICS) and ours.  Each says
 * whether it counts packets or frames lost, so that netdev-afxdp/show can
 * list every way one can be lost apart from the counters of what only
 * delays a packet or merely happens.  Ours are kept in 'counters' of struct
 * xsk_socket_info, each written by one thread at a time: the RX ones by the
 * thread polling the queue, the TX ones by the holder of the TX lock. */
#define AFXDP_QUEUE_COUNTERS(C)                                             \
    /*  ENUM             custom stats name            lost? */              \
    C(XS_RX_DROPPED,     "rx_dropped",                true)                 \
    C(XS_RX_INVALID,     "rx_invalid_descs",          true)                 \
    C(XS_TX_INVALID,     "tx_invalid_descs",          true)                 \
    C(XS_RX_RING_FULL,   "rx_ring_full",              true)                 \
    C(XS_FILL_EMPTY,     "rx_fill_ring_empty_descs",  false)                \
    C(XS_TX_RING_EMPTY,  "tx_ring_empty_descs",       false)                \
    /* A multi-buffer packet received, copied into one dp_packet. */        \
    C(RX_MULTIBUF,       "rx_multi_buffer_packets",   false)                \
    /* An RX descriptor outside the UMEM: the packet is dropped. */         \
    C(RX_BAD,            "rx_bad_descs",              true)                 \
    /* The fill ring wanted frames and the RX pool had none: the kernel */  \
    /* drops what it receives while the fill ring is empty (rx_dropped). */ \
    C(RX_POOL_EMPTY,     "rx_pool_empty",             false)                \
    /* Packets received into their frame's own packet descriptor, all the */\
    /* queue's hot ones being in use (see "Layout" at the top). */          \
    C(RX_COLD_DESC,      "rx_cold_descriptors",       false)                \
    C(TX_ZC,             "tx_zero_copy_forwards",     false)                \
    /* Packets copied into a TX frame: all of them, and by reason.  A */    \
    /* packet not in a UMEM frame: from a port of another type, received */ \
    /* in several frames (copied into one buffer then), or a copy the */    \
    /* datapath made (e.g. to flood it).  A packet in a frame of a UMEM */  \
    /* this queue does not share: another port's private UMEM or group. */  \
    C(TX_COPY,           "tx_copies",                 false)                \
    C(TX_COPY_NOT_UMEM,  "tx_copies_not_umem",        false)                \
    C(TX_COPY_OTHER_UMEM, "tx_copies_other_umem",     false)                \
    /* Packets not transmitted: no TX ring slot, no TX frame (even after */ \
    /* a kick and a reap), or empty or too large to transmit. */            \
    C(TX_RING_FULL,      "tx_ring_full",              true)                 \
    C(TX_NO_FRAME,       "tx_no_frame",               true)                 \
    C(TX_BAD_SIZE,       "tx_bad_size",               true)                 \
    /* A kick (sendto) answered EBUSY: in copy mode, the device dropped */  \
    /* the packet (e.g. the backlog of a veth's peer was full). */          \
    C(TX_DEV_DROP,       "tx_device_drops",           true)                 \
    C(TX_KICKS,          "tx_kicks",                  false)                \
    /* A kick answered EAGAIN and descriptors stayed in the TX ring: the */ \
    /* kernel's budget per call, a full completion ring or a stopped */     \
    /* device queue.  They wait for the next kick. */                       \
    C(TX_KICK_AGAIN,     "tx_kick_eagain",            false)                \
    C(TX_KICK_ERRORS,    "tx_kick_errors",            false)                \
    /* The thread polling the queue found the send path idle with work */   \
    /* left: descriptors in the TX ring (kicked again) or completions */    \
    /* (reaped). */                                                         \
    C(TX_POLL_KICKS,     "tx_poll_kicks",             false)                \
    C(TX_POLL_REAPS,     "tx_poll_reaps",             false)

enum afxdp_queue_counter {
#define AFXDP_COUNTER_ENUM(ENUM, NAME, LOST) AFXDP_##ENUM,
    AFXDP_QUEUE_COUNTERS(AFXDP_COUNTER_ENUM)
#undef AFXDP_COUNTER_ENUM
    AFXDP_N_COUNTERS
};

/* One AF_XDP socket: one queue of a port. */
struct xsk_socket_info {
    struct xsk_socket *xsk;
    int fd;                     /* xsk_socket__fd(xsk), kept where the
                                 * kicks find it in the cache. */
    struct xsk_ring_cons rx;
    struct xsk_ring_prod tx;
    struct xsk_ring_prod fill;
    struct xsk_ring_cons comp;

    struct netdev *netdev;
    int qid;
    struct afxdp_umem *umem;
    unsigned int slot;
    char *tx_frames_start;      /* This queue's TX frames in the UMEM. */
    char *tx_frames_end;

    struct umem_pool rx_pool;   /* Owned by the thread polling the queue. */
    struct umem_pool tx_pool;   /* Owned by the holder of the TX lock. */

    /* Hot packet descriptors (see "Layout" above), owned like 'rx_pool':
     * AFXDP_HOT_XPACKETS of them at 'hot', the free ones stacked in
     * 'hot_free'.  One that is in use has its 'mpool' set to '&rx_pool'. */
    struct afxdp_xpacket *hot;
    struct dp_packet_afxdp **hot_free;
    unsigned int n_hot_free;
    unsigned int outstanding_tx; /* Descriptors not completed yet. */

    bool need_wakeup;
    bool multi_buffer;
    bool busy_poll;             /* Receive runs the device's NAPI itself. */

    /* The send path bumps 'tx_seq' at each batch, under the TX lock; the
     * thread polling the queue compares it with 'tx_seq_seen', which only
     * it touches, to tell whether the send path ran since its last poll
     * (see afxdp_tx_poll()). */
    atomic_uint tx_seq;
    unsigned int tx_seq_seen;

    /* Our counters, indexed by enum afxdp_queue_counter (the kernel's
     * entries stay 0). */
    atomic_uint64_t counters[AFXDP_N_COUNTERS];
};

/* Adds 'n' to counter 'c' of 'xsk'.  Each counter has one writer at a time
 * (see AFXDP_QUEUE_COUNTERS), so a read and a store do, without the cost of
 * an atomic read-modify-write. */
static inline void
afxdp_count(struct xsk_socket_info *xsk, enum afxdp_queue_counter c,
            uint64_t n)
{
    uint64_t value;

    atomic_read_relaxed(&xsk->counters[c], &value);
    atomic_store_relaxed(&xsk->counters[c], value + n);
}

/* The options of an afxdp netdev that take new sockets when they change
 * (all but 'umem-group', a string).  Compared with memcmp(): zero a value
 * before setting its members. */
struct afxdp_settings {
    int n_rxq;
    enum afxdp_mode xdp_mode;
    bool need_wakeup;
    unsigned int umem_frames;
    unsigned int busy_poll_usecs;   /* 0: no busy polling. */
    unsigned int busy_poll_budget;
};

/* What netdev_linux has no room for, one per afxdp netdev, in 'afxdp_devs'.
 * Only the control path looks these up. */
struct afxdp_dev {
    struct hmap_node node;      /* In 'afxdp_devs', hashed on 'netdev'. */
    const struct netdev *netdev;

    /* The options as set_config() took them, and as the sockets were
     * made with. */
    struct afxdp_settings requested;
    struct afxdp_settings applied;
    char *umem_group;
    char *requested_umem_group;

    /* False when the kernel refused the busy polling socket options. */
    bool busy_poll_in_use;

    /* XDP program, when attached. */
    struct xdp_program *prog;
    enum xdp_attach_mode prog_mode;
    int ifindex;
    int xsks_map_fd;
    bool multi_buffer;          /* Sockets bound with XDP_USE_SG. */
    int n_bound;                /* Queues with a socket. */
};

/* The afxdp netdevs, and the lock that guards them, their UMEMs and the
 * set-up of their sockets (defined in netdev-afxdp.c). */
extern struct ovs_mutex afxdp_mutex;
extern struct hmap afxdp_devs OVS_GUARDED_BY(afxdp_mutex);

/* Whether this kernel can do AF_XDP multi-buffer, probed once by
 * netdev_afxdp_init(). */
extern bool afxdp_kernel_has_multi_buffer;

/* netdev-afxdp-xsk.c: sockets, UMEMs and the XDP program. */

/* Probes whether the kernel can do AF_XDP multi-buffer. */
bool afxdp_probe_multi_buffer(void);

/* Brings up the XDP program and 'n_rxq' sockets on 'dev' in 'mode' (not
 * best-effort); on failure, leaves nothing behind. */
int xsk_configure_mode(struct netdev_linux *, struct afxdp_dev *,
                       enum afxdp_mode, int n_rxq, char **errp)
    OVS_REQUIRES(afxdp_mutex);

/* Closes the sockets of 'dev' and detaches its XDP program. */
void xsk_destroy_all(struct netdev_linux *, struct afxdp_dev *)
    OVS_REQUIRES(afxdp_mutex);

/* netdev-afxdp-rxtx.c: the data path. */

/* Tops up the fill ring of 'xsk' from its RX pool: on the thread polling
 * the queue, or before any thread polls it. */
void afxdp_refill(struct xsk_socket_info *, bool backlog);

/* netdev-afxdp-stats.c: "ovs-appctl netdev-afxdp/show [port]". */
void afxdp_unixctl_show(struct unixctl_conn *, int argc, const char *argv[],
                        void *aux);

#endif /* netdev-afxdp-private.h */
