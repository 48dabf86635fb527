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

/* AF_XDP packet I/O for the userspace datapath.
 *
 * Layout
 * ======
 *
 * Each port gets one XDP program, a few BPF instructions assembled below that
 * redirect every frame to the AF_XDP socket (XSK) registered in an XSKMAP
 * under the frame's receive queue, and passes the frame up the kernel stack
 * when there is none.  libxdp attaches it, through its dispatcher when the
 * system allows that and directly otherwise.
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

#include <config.h>

#include "netdev-afxdp.h"
#include "netdev-afxdp-pool.h"

#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "coverage.h"
#include "netlink.h"
#include "netlink-socket.h"
#include "dp-packet.h"
#include "netdev-linux-private.h"
#include "netdev-provider.h"
#include "openvswitch/compiler.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "hmapx.h"
#include "openvswitch/list.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/shash.h"
#include "openvswitch/thread.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-libbpf-log.h"
#include "ovs-thread.h"
#include "packets.h"
#include "smap.h"
#include "timeval.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

COVERAGE_DEFINE(afxdp_rx_fill_short);   /* Fill ring refill ran dry. */
COVERAGE_DEFINE(afxdp_rx_invalid_desc); /* RX descriptor outside the UMEM. */
COVERAGE_DEFINE(afxdp_rx_multibuf);     /* Multi-buffer packet received. */
COVERAGE_DEFINE(afxdp_tx_kick);         /* sendto() to start transmission. */
COVERAGE_DEFINE(afxdp_tx_kick_again);   /* Kicks left descriptors behind. */
COVERAGE_DEFINE(afxdp_tx_dev_drop);     /* The device dropped a packet. */
COVERAGE_DEFINE(afxdp_tx_zero_copy);    /* Frame forwarded without a copy. */
COVERAGE_DEFINE(afxdp_tx_copy);         /* Packet copied into a TX frame. */
COVERAGE_DEFINE(afxdp_tx_drop);         /* No TX frame or ring slot. */
COVERAGE_DEFINE(afxdp_tx_too_big);      /* Packet does not fit in a frame. */
COVERAGE_DEFINE(afxdp_bind_busy);       /* Queue still held by an old XSK. */
COVERAGE_DEFINE(afxdp_rx_closed_drop);  /* Received, never polled: closed. */
COVERAGE_DEFINE(afxdp_tx_orphan);       /* Completed frame of a gone queue. */

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

/* options:umem-frames: frames per queue.  The default, 16384 frames or
 * 64 MiB, is what a 10G queue needs to absorb bursts; the minimum keeps the
 * fill ring and the TX ring full at the same time. */
#define AFXDP_UMEM_FRAMES_DEFAULT 16384
#define AFXDP_UMEM_FRAMES_MIN (AFXDP_RING_SIZE + AFXDP_TX_FRAMES)
#define AFXDP_UMEM_FRAMES_MAX (1u << 20)

/* Queue slices in a UMEM shared by a group of ports. */
#define AFXDP_GROUP_SLOTS 4

/* Refill the fill ring when it has room for this many frames. */
#define AFXDP_FILL_BATCH (2 * NETDEV_MAX_BURST)

/* Drain the completion ring in batches of this size. */
#define AFXDP_COMP_BATCH (2 * NETDEV_MAX_BURST)

/* Largest MTU without multi-buffer.  The kernel puts received data
 * XDP_PACKET_HEADROOM bytes into the frame, and drivers that build an skb
 * around an XDP buffer (veth, generic XDP) keep the end of the page for
 * struct skb_shared_info (320 bytes on x86-64).  What is left carries the
 * Ethernet header, a VLAN tag and the payload. */
#define AFXDP_SHINFO_SIZE 320
#define AFXDP_MTU_SINGLE_FRAME (AFXDP_FRAME_SIZE - XDP_PACKET_HEADROOM   \
                                - AFXDP_SHINFO_SIZE - ETH_HEADER_LEN    \
                                - VLAN_HEADER_LEN)

/* Largest MTU with multi-buffer. */
#define AFXDP_MTU_MAX 9000

/* Reads X once, as it is now: for what another thread writes without a
 * lock and this one only looks at. */
#define AFXDP_READ_ONCE(X) (*(const volatile __typeof__(X) *) &(X))

/* Hot packet descriptors per queue: four receive batches, a few times what
 * a queue has in flight when the datapath sends every batch it receives in
 * the same iteration. */
#define AFXDP_HOT_XPACKETS (4 * NETDEV_MAX_BURST)

/* Largest packet that is transmitted: frames of a multi-buffer packet. */
#define AFXDP_MAX_FRAGS 17

/* Retry binding a socket for up to this long when an XSK that was just
 * closed still holds the queue: the kernel releases it from a workqueue. */
#define AFXDP_BIND_RETRY_MS 2000

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

/* Socket options for busy polling (Linux 5.11), for older headers. */
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

/* options:busy-poll-budget when not given: one NAPI poll brings at most
 * what one receive takes. */
#define AFXDP_BUSY_POLL_BUDGET_DEFAULT NETDEV_MAX_BURST
#define AFXDP_BUSY_POLL_USECS_MAX 1000000
#define AFXDP_BUSY_POLL_BUDGET_MAX 65535

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

static const struct {
    const char *name;
    bool lost;
} afxdp_counters[AFXDP_N_COUNTERS] = {
#define AFXDP_COUNTER_INFO(ENUM, NAME, LOST) { NAME, LOST },
    AFXDP_QUEUE_COUNTERS(AFXDP_COUNTER_INFO)
#undef AFXDP_COUNTER_INFO
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

static struct ovs_mutex afxdp_mutex = OVS_MUTEX_INITIALIZER;
static struct hmap afxdp_devs OVS_GUARDED_BY(afxdp_mutex)
    = HMAP_INITIALIZER(&afxdp_devs);
static struct shash umem_groups OVS_GUARDED_BY(afxdp_mutex)
    = SHASH_INITIALIZER(&umem_groups);

/* Whether this kernel can do AF_XDP multi-buffer, probed once. */
static bool kernel_has_multi_buffer;

static const char *const xdp_mode_names[] = {
    [OVS_AF_XDP_MODE_UNSPEC] = "unspecified",
    [OVS_AF_XDP_MODE_BEST_EFFORT] = "best-effort",
    [OVS_AF_XDP_MODE_NATIVE_ZC] = "native-with-zerocopy",
    [OVS_AF_XDP_MODE_NATIVE] = "native",
    [OVS_AF_XDP_MODE_GENERIC] = "generic",
};

static void afxdp_refill(struct xsk_socket_info *, bool backlog);
static void xsk_destroy_all(struct netdev_linux *, struct afxdp_dev *)
    OVS_REQUIRES(afxdp_mutex);
static void afxdp_unixctl_show(struct unixctl_conn *, int argc,
                               const char *argv[], void *aux);

static struct afxdp_dev *
afxdp_dev_lookup(const struct netdev *netdev)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_dev *d;

    HMAP_FOR_EACH_WITH_HASH (d, node, hash_pointer(netdev, 0), &afxdp_devs) {
        if (d->netdev == netdev) {
            return d;
        }
    }
    OVS_NOT_REACHED();
}

/* libxdp and libbpf messages.
 *
 * Both libraries print warnings for situations that are normal here (no
 * bpffs, no permission to load the dispatcher, which makes libxdp fall back
 * to attaching the program alone).  The caller sees and reports every real
 * failure through return values, so their messages go to the log at INFO
 * and DBG only: libxdp's here, libbpf's through the process's libbpf print
 * hook (ovs-libbpf-log.h). */
static void
afxdp_log_valist(enum vlog_level level, const char *prefix,
                 const char *format, va_list args)
{
    if (!vlog_is_enabled(&this_module, level)) {
        return;
    }

    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_cstr(&s, prefix);
    ds_put_format_valist(&s, format, args);
    ds_chomp(&s, '\n');
    vlog(&this_module, level, "%s", ds_cstr(&s));
    ds_destroy(&s);
}

static int
afxdp_libxdp_print(enum libxdp_print_level level, const char *format,
                   va_list args)
{
    afxdp_log_valist(level == LIBXDP_WARN ? VLL_INFO : VLL_DBG, "libxdp: ",
                     format, args);
    return 0;
}

/* The XDP program.
 *
 *     r2 = ctx->rx_queue_index;
 *     return bpf_redirect_map(&xsks_map, r2, XDP_PASS);
 *
 * The flags argument of bpf_redirect_map() is the action when the map has
 * no socket for the queue (Linux 5.3), so frames arriving before a socket is
 * bound, or on a queue without one, go to the kernel stack.  The program is
 * this small on purpose: assembling it here spares a BPF object file to
 * build and install, and libxdp takes it by file descriptor. */
static int
afxdp_load_prog(int xsks_map_fd, bool frags)
{
    const struct bpf_insn insns[] = {
        /* r2 = *(u32 *)(r1 + offsetof(struct xdp_md, rx_queue_index)) */
        { .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2,
          .src_reg = BPF_REG_1,
          .off = offsetof(struct xdp_md, rx_queue_index) },
        /* r1 = xsks_map (a 64-bit immediate takes two instructions) */
        { .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
          .src_reg = BPF_PSEUDO_MAP_FD, .imm = xsks_map_fd },
        { .code = 0 },
        /* r3 = XDP_PASS */
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3,
          .imm = XDP_PASS },
        { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map },
        { .code = BPF_JMP | BPF_EXIT },
    };
    LIBBPF_OPTS(bpf_prog_load_opts, opts,
                .prog_flags = frags ? BPF_F_XDP_HAS_FRAGS : 0);

    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "ovs_afxdp", "Apache-2.0",
                           insns, ARRAY_SIZE(insns), &opts);
    return fd < 0 ? -errno : fd;
}

/* Probes for AF_XDP multi-buffer: a frags-aware XDP program must load, and
 * bind() must know XDP_USE_SG.  bind() checks its flags before it looks up
 * the device, so binding to ifindex 0 fails with ENODEV on a kernel that
 * knows the flag and with EINVAL on one that does not. */
static bool
afxdp_probe_multi_buffer(void)
{
    int map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "ovs_xsks_probe",
                                sizeof(int), sizeof(int), 1, NULL);
    if (map_fd < 0) {
        return false;
    }
    int prog_fd = afxdp_load_prog(map_fd, true);
    close(map_fd);
    if (prog_fd < 0) {
        VLOG_DBG("kernel rejects frags-aware XDP programs (%s): "
                 "no AF_XDP multi-buffer", ovs_strerror(-prog_fd));
        return false;
    }
    close(prog_fd);

    int sock = socket(AF_XDP, SOCK_RAW, 0);
    if (sock < 0) {
        return false;
    }
    struct sockaddr_xdp sxdp = {
        .sxdp_family = AF_XDP,
        .sxdp_flags = XDP_USE_SG,
        .sxdp_ifindex = 0,
    };
    int error = bind(sock, (struct sockaddr *) &sxdp, sizeof sxdp) ? errno : 0;
    close(sock);
    if (error == EINVAL) {
        VLOG_DBG("kernel does not know XDP_USE_SG: no AF_XDP multi-buffer");
        return false;
    }
    return true;
}

int
netdev_afxdp_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        /* No setrlimit(RLIMIT_MEMLOCK): since Linux 5.11 BPF maps and
         * programs are charged to the memory cgroup, and UMEM pinning has
         * never needed it for root. */
        libxdp_set_print(afxdp_libxdp_print);
        ovs_libbpf_log_init();
        kernel_has_multi_buffer = afxdp_probe_multi_buffer();
        unixctl_command_register("netdev-afxdp/show", "[port]", 0, 1,
                                 afxdp_unixctl_show, NULL);
        /* Not INFO: this runs before ovs-vswitchd detaches, and OVS's
         * tests check that nothing unexpected reaches stderr then. */
        VLOG_DBG("AF_XDP multi-buffer (jumbo frames): %s",
                  kernel_has_multi_buffer ? "available" : "not available");
        ovsthread_once_done(&once);
    }
    return 0;
}

/* Device XDP features.
 *
 * Since Linux 6.3 the "netdev" generic netlink family tells what a device
 * can do with XDP.  Asking it lets set_config() reject a mode the device
 * cannot do, so that the Interface's error column says why, instead of the
 * failure surfacing later at reconfiguration, where nothing reports it to
 * the database.  The uapi header (linux/netdev.h) is too new for some
 * distributions, hence the local definitions. */
#define AFXDP_GENL_NETDEV_NAME "netdev"
#define AFXDP_NETDEV_CMD_DEV_GET 1
#define AFXDP_NETDEV_A_DEV_IFINDEX 1
#define AFXDP_NETDEV_A_DEV_XDP_FEATURES 3
#define AFXDP_NETDEV_XDP_ACT_BASIC (1 << 0)
#define AFXDP_NETDEV_XDP_ACT_REDIRECT (1 << 1)
#define AFXDP_NETDEV_XDP_ACT_XSK_ZEROCOPY (1 << 3)
#define AFXDP_NETDEV_XDP_ACT_RX_SG (1 << 5)

/* Stores the XDP feature flags of device 'ifindex' in '*features'.  Returns
 * 0 on success, otherwise a positive errno value (e.g. when the kernel is
 * too old to tell). */
static int
afxdp_get_xdp_features(int ifindex, uint64_t *features)
{
    static const struct nl_policy policy[] = {
        [AFXDP_NETDEV_A_DEV_XDP_FEATURES] = { .type = NL_A_U64,
                                              .optional = true },
    };
    struct nlattr *attrs[ARRAY_SIZE(policy)];
    /* nl_lookup_genl_family() caches the family's number (or the lookup
     * error) here. */
    static int family;
    struct ofpbuf request, *reply;
    int error;

    error = nl_lookup_genl_family(AFXDP_GENL_NETDEV_NAME, &family);
    if (error) {
        return error;
    }

    ofpbuf_init(&request, 0);
    nl_msg_put_genlmsghdr(&request, 0, family, NLM_F_REQUEST,
                          AFXDP_NETDEV_CMD_DEV_GET, 1);
    nl_msg_put_u32(&request, AFXDP_NETDEV_A_DEV_IFINDEX, ifindex);
    error = nl_transact(NETLINK_GENERIC, &request, &reply);
    ofpbuf_uninit(&request);
    if (error) {
        return error;
    }

    if (!nl_policy_parse(reply, NLMSG_HDRLEN + GENL_HDRLEN, policy, attrs,
                         ARRAY_SIZE(policy))
        || !attrs[AFXDP_NETDEV_A_DEV_XDP_FEATURES]) {
        error = EPROTO;
    } else {
        *features = nl_attr_get_u64(attrs[AFXDP_NETDEV_A_DEV_XDP_FEATURES]);
    }
    ofpbuf_delete(reply);
    return error;
}

/* Checks that device 'name' can do 'mode'.  Returns 0 if it can, or if the
 * kernel does not say; otherwise EOPNOTSUPP with an explanation in
 * '*errp'. */
static int
afxdp_check_mode(const char *name, enum afxdp_mode mode, char **errp)
{
    int ifindex = if_nametoindex(name);
    uint64_t features;

    if (mode == OVS_AF_XDP_MODE_BEST_EFFORT || mode == OVS_AF_XDP_MODE_GENERIC
        || ifindex <= 0) {
        return 0;
    }
    int error = afxdp_get_xdp_features(ifindex, &features);
    if (error) {
        VLOG_DBG("%s: cannot get XDP features (%s), not checking xdp-mode",
                 name, ovs_strerror(error));
        return 0;
    }
    VLOG_DBG("%s: XDP features %#"PRIx64, name, features);

    uint64_t native = (AFXDP_NETDEV_XDP_ACT_BASIC
                       | AFXDP_NETDEV_XDP_ACT_REDIRECT);
    if ((features & native) != native) {
        *errp = xasprintf("%s: xdp-mode %s: the device has no native XDP "
                          "support (try generic)", name,
                          xdp_mode_names[mode]);
        return EOPNOTSUPP;
    }
    if (mode == OVS_AF_XDP_MODE_NATIVE_ZC
        && !(features & AFXDP_NETDEV_XDP_ACT_XSK_ZEROCOPY)) {
        *errp = xasprintf("%s: xdp-mode %s: the device has no AF_XDP "
                          "zero-copy support (try native)", name,
                          xdp_mode_names[mode]);
        return EOPNOTSUPP;
    }
    return 0;
}

/* UMEMs. */

static void
afxdp_umem_free(struct afxdp_umem *umem)
    OVS_REQUIRES(afxdp_mutex)
{
    if (umem->group) {
        shash_find_and_delete(&umem_groups, umem->group);
    }
    if (umem->xumem) {
        int error = xsk_umem__delete(umem->xumem);
        if (error) {
            VLOG_ERR("failed to delete UMEM: %s", ovs_strerror(-error));
        }
    }
    if (umem->area) {
        munmap(umem->area, umem->size);
    }
    if (umem->xpackets) {
        munmap(umem->xpackets, umem->xpackets_size);
    }
    free(umem->slots);
    free(umem->group);
    free(umem);
}

static struct afxdp_umem *
afxdp_umem_create(unsigned int slice_frames, unsigned int n_slots,
                  char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_umem *umem = xzalloc(sizeof *umem);
    const struct xsk_umem_config config = {
        .fill_size = AFXDP_RING_SIZE,
        .comp_size = AFXDP_RING_SIZE,
        .frame_size = AFXDP_FRAME_SIZE,
        .frame_headroom = 0,
        .flags = 0,
    };
    size_t n_frames = (size_t) slice_frames * n_slots;
    int error;

    umem->slice_frames = slice_frames;
    umem->n_slots = n_slots;
    umem->slots = xcalloc(n_slots, sizeof *umem->slots);
    umem->size = n_frames * AFXDP_FRAME_SIZE;
    umem->area = mmap(NULL, umem->size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (umem->area == MAP_FAILED) {
        umem->area = NULL;
        *errp = xasprintf("cannot map a %"PRIuSIZE"-byte UMEM: %s",
                          umem->size, ovs_strerror(errno));
        goto error;
    }

    error = xsk_umem__create(&umem->xumem, umem->area, umem->size,
                             &umem->fill0, &umem->comp0, &config);
    if (error) {
        umem->xumem = NULL;
        *errp = xasprintf("cannot register a %"PRIuSIZE"-byte UMEM: %s",
                          umem->size, ovs_strerror(-error));
        goto error;
    }

    /* The packet descriptors, one per frame, kept out of the frames.  What
     * never changes for a frame's packet (its base, the frame, its size and
     * its source) is set here once, so that receiving only sets what a
     * packet's life changes (see afxdp_rx_packet_init()).
     *
     * They take megabytes (9 MB for the default 16384 frames), mapped here
     * rather than malloc()'ed: glibc serves a block that big with mmap(),
     * and freeing it raises glibc's dynamic mmap threshold to its size, so
     * that the next port's descriptors came from the heap and left a free
     * chunk of megabytes there when freed.  Each small realloc() that then
     * split that chunk wrote over all of it when MALLOC_PERTURB_ is set, as
     * in OVS's tests: building an OpenFlow table features reply, which
     * grows its buffer 64 bytes at a time, took the main thread over 30
     * seconds on a loaded machine. */
    umem->xpackets_size = ROUND_UP(n_frames * sizeof *umem->xpackets,
                                   get_page_size());
    umem->xpackets = mmap(NULL, umem->xpackets_size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (umem->xpackets == MAP_FAILED) {
        umem->xpackets = NULL;
        *errp = xasprintf("cannot map the packet descriptors of a "
                          "%"PRIuSIZE"-frame UMEM: %s",
                          n_frames, ovs_strerror(errno));
        goto error;
    }
    for (size_t i = 0; i < n_frames; i++) {
        struct dp_packet_afxdp *xp = &umem->xpackets[i].xp;
        char *frame = umem->area + i * AFXDP_FRAME_SIZE;

        xp->mpool = NULL;
        dp_packet_use_afxdp(&xp->packet, frame + XDP_PACKET_HEADROOM,
                            AFXDP_FRAME_SIZE, XDP_PACKET_HEADROOM);
    }
    return umem;

error:
    afxdp_umem_free(umem);
    return NULL;
}

/* Finds or creates the UMEM for a new queue of a port in 'group' (NULL for
 * a private UMEM) and reserves a slice in it. */
static struct afxdp_umem *
afxdp_umem_get(const char *group, unsigned int slice_frames, bool zero_copy,
               unsigned int *slotp, char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_umem *umem = group ? shash_find_data(&umem_groups, group)
                                    : NULL;

    if (umem) {
        if (umem->anchor && umem->zero_copy != zero_copy) {
            /* The kernel gives later sockets the mode of the first. */
            *errp = xasprintf("the sockets of umem-group %s are in %s mode",
                              group, umem->zero_copy ? "zero-copy" : "copy");
            return NULL;
        }
        if (umem->slice_frames != slice_frames) {
            *errp = xasprintf("umem-group %s uses umem-frames=%u, not %u",
                              group, umem->slice_frames, slice_frames);
            return NULL;
        }
        if (umem->next_slot >= umem->n_slots) {
            *errp = xasprintf("umem-group %s has no room for another queue "
                              "(%d queues per group)", group,
                              AFXDP_GROUP_SLOTS);
            return NULL;
        }
    } else {
        umem = afxdp_umem_create(slice_frames,
                                 group ? AFXDP_GROUP_SLOTS : 1, errp);
        if (!umem) {
            return NULL;
        }
        if (group) {
            umem->group = xstrdup(group);
            shash_add(&umem_groups, group, umem);
        }
    }

    /* Slices are not reused: a frame of a former member may still sit in
     * another member's TX ring, and would come back to the new owner of its
     * slice as a duplicate.  The UMEM is retired instead (see
     * afxdp_umem_put()). */
    *slotp = umem->next_slot++;
    umem->n_users++;
    return umem;
}

/* The anchor of 'umem', the socket that registered it, has been deleted
 * while other sockets still use the UMEM.  libxdp keeps the anchor's file
 * descriptor open as the UMEM's until xsk_umem__delete(), which leaves the
 * anchor bound to its queue: the port it belonged to could not bind that
 * queue again until all the other members have left too, and when they
 * reconfigure in the same pass, after it, they never would (the bind gives
 * up with EBUSY and the port is removed).  The kernel does not need the
 * anchor once the others are bound, since each of them holds the UMEM, so
 * put an unbound AF_XDP socket in its place: dup2() closes the anchor, whose
 * queue the kernel then frees, and xsk_umem__delete() later closes the
 * placeholder instead.  libxdp unmapped the anchor's rings already, in
 * xsk_socket__delete(). */
static void
afxdp_umem_release_anchor(struct afxdp_umem *umem)
{
    int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

    if (fd < 0 || dup2(fd, xsk_umem__fd(umem->xumem)) < 0) {
        VLOG_WARN("cannot release the anchor socket of a shared UMEM (%s): "
                  "its queue stays bound until the UMEM's last member "
                  "leaves", ovs_strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
    umem->anchor = NULL;
}

/* Releases the slice of 'xsk' in its UMEM, whose socket is already gone.
 * 'bound' is false if the socket never got bound, in which case no frame of
 * the slice ever left it. */
static void
afxdp_umem_put(struct xsk_socket_info *xsk, bool bound)
    OVS_REQUIRES(afxdp_mutex)
{
    struct afxdp_umem *umem = xsk->umem;

    umem->slots[xsk->slot] = NULL;
    umem->n_users--;

    if (!bound) {
        if (xsk->slot + 1 == umem->next_slot) {
            umem->next_slot--;
        }
    } else if (umem->group && (umem->n_users || xsk == umem->anchor)) {
        /* A member leaves a live group.  Retire the UMEM: its slices cannot
         * be reused.  The remaining members move to a fresh UMEM at their
         * next reconfiguration, which this requests. */
        shash_find_and_delete(&umem_groups, umem->group);
        free(umem->group);
        umem->group = NULL;
        for (unsigned int i = 0; i < umem->n_slots; i++) {
            if (umem->slots[i]) {
                netdev_request_reconfigure(umem->slots[i]->netdev);
            }
        }
    }

    if (bound && xsk == umem->anchor && umem->n_users) {
        afxdp_umem_release_anchor(umem);
    }
    if (!umem->n_users) {
        afxdp_umem_free(umem);
    }
}

/* Sockets. */

static inline struct dp_packet_afxdp *
afxdp_xpacket_of_frame(const struct afxdp_umem *umem, const char *frame)
{
    return &umem->xpackets[(frame - umem->area) >> AFXDP_FRAME_SHIFT].xp;
}

/* Whether the frame of AF_XDP packet 'pkt' is in 'umem'. */
static bool
afxdp_umem_contains(const struct afxdp_umem *umem,
                    const struct dp_packet *pkt)
{
    const char *frame = dp_packet_base(pkt);

    return (uintptr_t) frame - (uintptr_t) umem->area < umem->size;
}

/* Gives the packet descriptor 'xp', which owned a frame of the RX pool its
 * 'mpool' points to until now, back to that queue if it is one of the
 * queue's hot descriptors, and marks it free ('mpool' NULL).  Called on
 * the thread polling that queue, like umem_pool_push() on 'mpool'. */
static inline void
afxdp_xpacket_release(struct dp_packet_afxdp *xp)
{
    struct xsk_socket_info *owner = CONTAINER_OF(xp->mpool,
                                                 struct xsk_socket_info,
                                                 rx_pool);

    xp->mpool = NULL;
    if ((uintptr_t) xp - (uintptr_t) owner->hot
        < AFXDP_HOT_XPACKETS * sizeof *owner->hot) {
        owner->hot_free[owner->n_hot_free++] = xp;
    }
}

/* Binds a socket for queue 'qid' of 'netdev', retrying while an XSK closed a
 * moment ago still holds the queue. */
static int
xsk_bind(struct xsk_socket_info *xsk, const char *name, int qid,
         const struct xsk_socket_config *cfg)
{
    long long int deadline = time_msec() + AFXDP_BIND_RETRY_MS;
    struct afxdp_umem *umem = xsk->umem;
    /* The first socket of a UMEM uses the rings libxdp created with the
     * UMEM.  Passing libxdp the very structures it filled in then keeps it
     * from unmapping those rings when the bind fails, so that we can try
     * again; we take a copy once the socket is up. */
    bool first = !umem->anchor;
    struct xsk_ring_prod *fill = first ? &umem->fill0 : &xsk->fill;
    struct xsk_ring_cons *comp = first ? &umem->comp0 : &xsk->comp;
    int error;

    for (;;) {
        error = xsk_socket__create_shared(&xsk->xsk, name, qid, umem->xumem,
                                          &xsk->rx, &xsk->tx, fill, comp,
                                          cfg);
        if (error != -EBUSY || time_msec() >= deadline) {
            break;
        }
        COVERAGE_INC(afxdp_bind_busy);
        xnanosleep(10 * 1000 * 1000);
    }
    if (error) {
        xsk->xsk = NULL;
    } else if (first) {
        xsk->fill = umem->fill0;
        xsk->comp = umem->comp0;
    }
    return -error;
}

/* Asks the kernel to let the receive of 'xsk' poll the device's NAPI
 * instance itself (busy polling, see "options:busy-poll-usecs" in
 * Documentation/howto/afxdp-netdev.rst): SO_PREFER_BUSY_POLL, so that a
 * device configured to defer its interrupts (napi_defer_hard_irqs,
 * gro_flush_timeout) leaves its receive work to our polls, SO_BUSY_POLL
 * for how long a blocking poll may spin (ours never block, but the kernel
 * busy polls a socket only with it non-zero) and SO_BUSY_POLL_BUDGET for
 * the packets of one NAPI poll.  Returns 0 or an errno value: a kernel
 * before 5.11 lacks the options, and values above the sysctls
 * net.core.busy_read and net.core.busy_poll_budget need CAP_NET_ADMIN. */
static int
xsk_set_busy_poll(const struct xsk_socket_info *xsk,
                  const struct afxdp_dev *ad)
{
    const struct {
        int opt;
        int value;
    } opts[] = {
        { SO_PREFER_BUSY_POLL, 1 },
        { SO_BUSY_POLL, ad->applied.busy_poll_usecs },
        { SO_BUSY_POLL_BUDGET, ad->applied.busy_poll_budget },
    };

    for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
        if (setsockopt(xsk->fd, SOL_SOCKET, opts[i].opt, &opts[i].value,
                       sizeof opts[i].value)) {
            return errno;
        }
    }
    return 0;
}

/* Creates the socket of queue 'qid'.  'mode' is the socket mode to try:
 * OVS_AF_XDP_MODE_NATIVE_ZC for zero-copy, anything else for copy mode. */
static struct xsk_socket_info *
xsk_create(struct netdev_linux *dev, struct afxdp_dev *ad, int qid,
           enum afxdp_mode mode, int *errorp, char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    const char *name = netdev_get_name(&dev->up);
    struct xsk_socket_info *xsk = xzalloc(sizeof *xsk);
    struct xsk_socket_config cfg;
    unsigned int slot;
    char *msg = NULL;
    int error;

    xsk->netdev = &dev->up;
    xsk->qid = qid;
    xsk->umem = afxdp_umem_get(ad->umem_group, ad->applied.umem_frames,
                               mode == OVS_AF_XDP_MODE_NATIVE_ZC, &slot,
                               &msg);
    if (!xsk->umem) {
        *errp = xasprintf("%s: %s", name, msg);
        free(msg);
        free(xsk);
        *errorp = EINVAL;
        return NULL;
    }
    xsk->slot = slot;

    struct afxdp_umem *umem = xsk->umem;

    memset(&cfg, 0, sizeof cfg);
    cfg.rx_size = AFXDP_RING_SIZE;
    cfg.tx_size = AFXDP_RING_SIZE;
    /* We attach our own program and fill the XSKMAP ourselves. */
    cfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
    cfg.bind_flags = (mode == OVS_AF_XDP_MODE_NATIVE_ZC
                      ? XDP_ZEROCOPY : XDP_COPY);
    if (dev->use_need_wakeup) {
        cfg.bind_flags |= XDP_USE_NEED_WAKEUP;
    }
    if (kernel_has_multi_buffer) {
        cfg.bind_flags |= XDP_USE_SG;
    }

    /* libxdp ignores 'bind_flags' for every socket after the first on a
     * UMEM: such sockets inherit the mode of the first one. */
    error = xsk_bind(xsk, name, qid, &cfg);
    if (error && (cfg.bind_flags & XDP_USE_SG)
        && (error == EOPNOTSUPP || error == EINVAL)) {
        /* Zero-copy drivers without multi-buffer support refuse SG. */
        cfg.bind_flags &= ~XDP_USE_SG;
        error = xsk_bind(xsk, name, qid, &cfg);
    }
    if (error) {
        *errp = xasprintf("%s: cannot bind an AF_XDP socket to queue %d "
                          "in %s mode: %s", name, qid,
                          mode == OVS_AF_XDP_MODE_NATIVE_ZC
                          ? "zero-copy" : "copy", ovs_strerror(error));
        *errorp = error;
        afxdp_umem_put(xsk, false);
        free(xsk);
        return NULL;
    }

    if (!umem->anchor) {
        umem->anchor = xsk;
        umem->zero_copy = mode == OVS_AF_XDP_MODE_NATIVE_ZC;
        umem->need_wakeup = dev->use_need_wakeup;
        umem->multi_buffer = (cfg.bind_flags & XDP_USE_SG) != 0;
    }
    umem->slots[slot] = xsk;
    xsk->fd = xsk_socket__fd(xsk->xsk);
    xsk->need_wakeup = umem->need_wakeup;
    xsk->multi_buffer = umem->multi_buffer;
    if (ad->applied.busy_poll_usecs) {
        error = xsk_set_busy_poll(xsk, ad);
        if (error) {
            VLOG_WARN_RL(&rl, "%s: queue %d: busy polling refused by the "
                         "kernel, receiving without: %s", name, qid,
                         ovs_strerror(error));
            ad->busy_poll_in_use = false;
        } else {
            xsk->busy_poll = true;
        }
    }

    /* Hand out the slice: RX frames to the pool that feeds the fill ring,
     * the rest to the TX pool. */
    unsigned int n_rx = ad->applied.umem_frames - AFXDP_TX_FRAMES;
    char *slice = xsk->umem->area
                  + (size_t) slot * ad->applied.umem_frames * AFXDP_FRAME_SIZE;

    umem_pool_init(&xsk->rx_pool, n_rx);
    for (unsigned int i = 0; i < n_rx; i++) {
        umem_pool_push(&xsk->rx_pool, slice + (size_t) i * AFXDP_FRAME_SIZE);
    }
    umem_pool_init(&xsk->tx_pool, AFXDP_TX_FRAMES);
    xsk->tx_frames_start = slice + (size_t) n_rx * AFXDP_FRAME_SIZE;
    xsk->tx_frames_end = xsk->tx_frames_start
                         + (size_t) AFXDP_TX_FRAMES * AFXDP_FRAME_SIZE;
    for (unsigned int i = 0; i < AFXDP_TX_FRAMES; i++) {
        umem_pool_push(&xsk->tx_pool,
                       xsk->tx_frames_start + (size_t) i * AFXDP_FRAME_SIZE);
    }

    /* The hot descriptors: their base is set at each receive, what else
     * never changes is set here, as for the frames' own. */
    xsk->hot = xmalloc_cacheline(AFXDP_HOT_XPACKETS * sizeof *xsk->hot);
    xsk->hot_free = xmalloc(AFXDP_HOT_XPACKETS * sizeof *xsk->hot_free);
    for (unsigned int i = 0; i < AFXDP_HOT_XPACKETS; i++) {
        struct dp_packet_afxdp *xp = &xsk->hot[i].xp;

        xp->mpool = NULL;
        dp_packet_use_afxdp(&xp->packet, slice + XDP_PACKET_HEADROOM,
                            AFXDP_FRAME_SIZE, XDP_PACKET_HEADROOM);
        /* Popped from the top: the first ones go out first. */
        xsk->hot_free[AFXDP_HOT_XPACKETS - 1 - i] = xp;
    }
    xsk->n_hot_free = AFXDP_HOT_XPACKETS;

    return xsk;
}

/* Returns the number of packets in 'xsk''s RX ring, which no one polls any
 * more: a packet is its descriptors up to one without XDP_PKT_CONTD. */
static uint32_t
xsk_rx_unpolled(struct xsk_socket_info *xsk)
{
    uint32_t idx, n, packets = 0;

    n = xsk_ring_cons__peek(&xsk->rx, AFXDP_RING_SIZE, &idx);
    for (uint32_t i = 0; i < n; i++) {
        if (!(xsk_ring_cons__rx_desc(&xsk->rx, idx + i)->options
              & XDP_PKT_CONTD)) {
            packets++;
        }
    }
    xsk_ring_cons__cancel(&xsk->rx, n);
    return packets;
}

static void
xsk_destroy(struct afxdp_dev *ad, struct xsk_socket_info *xsk)
    OVS_REQUIRES(afxdp_mutex)
{
    if (ad->xsks_map_fd >= 0) {
        bpf_map_delete_elem(ad->xsks_map_fd, &xsk->qid);
    }
    /* The datapath stopped polling this queue before the port was deleted
     * or reconfigured (dpif-netdev reloads its PMD threads first): what the
     * kernel put in the ring since then is dropped here, counted. */
    COVERAGE_ADD(afxdp_rx_closed_drop, xsk_rx_unpolled(xsk));
    xsk_socket__delete(xsk->xsk);
    afxdp_umem_put(xsk, true);
    umem_pool_destroy(&xsk->rx_pool);
    umem_pool_destroy(&xsk->tx_pool);
    free_cacheline(xsk->hot);
    free(xsk->hot_free);
    free(xsk);
}

/* XDP program attachment. */

static void
afxdp_detach_prog(struct afxdp_dev *ad)
{
    if (ad->prog) {
        int error = xdp_program__detach(ad->prog, ad->ifindex,
                                        ad->prog_mode, 0);
        if (error) {
            VLOG_INFO("%s: failed to detach XDP program: %s",
                      netdev_get_name(ad->netdev), ovs_strerror(-error));
        }
        xdp_program__close(ad->prog);
        ad->prog = NULL;
    }
    if (ad->xsks_map_fd >= 0) {
        close(ad->xsks_map_fd);
        ad->xsks_map_fd = -1;
    }
}

/* Removes an XDP program of ours that a vswitchd that died without cleaning
 * up left on 'ifindex'; leaves any other program alone. */
static void
afxdp_remove_stale_prog(int ifindex)
{
    struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);

    if (libxdp_get_error(mp) || !mp) {
        return;
    }
    struct xdp_program *main_prog = xdp_multiprog__main_prog(mp);
    if (xdp_multiprog__is_legacy(mp) && main_prog
        && !strcmp(xdp_program__name(main_prog), "ovs_afxdp")) {
        VLOG_INFO("ifindex %d: removing a stale ovs_afxdp XDP program",
                  ifindex);
        xdp_multiprog__detach(mp);
    }
    xdp_multiprog__close(mp);
}

static int
afxdp_attach_prog(struct afxdp_dev *ad, enum xdp_attach_mode mode,
                  int n_queues)
{
    int prog_fd, error;

    ad->xsks_map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "ovs_xsks_map",
                                     sizeof(int), sizeof(int), n_queues,
                                     NULL);
    if (ad->xsks_map_fd < 0) {
        error = errno;
        ad->xsks_map_fd = -1;
        return error;
    }

    prog_fd = afxdp_load_prog(ad->xsks_map_fd, kernel_has_multi_buffer);
    if (prog_fd < 0) {
        afxdp_detach_prog(ad);
        return -prog_fd;
    }
    ad->prog = xdp_program__from_fd(prog_fd);
    close(prog_fd);             /* libxdp keeps a duplicate. */
    error = libxdp_get_error(ad->prog);
    if (error) {
        ad->prog = NULL;
        afxdp_detach_prog(ad);
        return -error;
    }

    error = xdp_program__attach(ad->prog, ad->ifindex, mode, 0);
    if (error == -EEXIST || error == -EBUSY) {
        afxdp_remove_stale_prog(ad->ifindex);
        error = xdp_program__attach(ad->prog, ad->ifindex, mode, 0);
    }
    if (error) {
        xdp_program__close(ad->prog);
        ad->prog = NULL;
        afxdp_detach_prog(ad);
        return -error;
    }
    ad->prog_mode = mode;
    return 0;
}

/* Brings up the XDP program and 'n_rxq' sockets on 'dev' in 'mode' (not
 * best-effort).  On failure, leaves nothing behind. */
static int
xsk_configure_mode(struct netdev_linux *dev, struct afxdp_dev *ad,
                   enum afxdp_mode mode, int n_rxq, char **errp)
    OVS_REQUIRES(afxdp_mutex)
{
    enum xdp_attach_mode attach = (mode == OVS_AF_XDP_MODE_GENERIC
                                   ? XDP_MODE_SKB : XDP_MODE_NATIVE);
    int error;

    error = afxdp_attach_prog(ad, attach, n_rxq);
    if (error) {
        *errp = xasprintf("%s: cannot attach XDP program in %s mode: %s",
                          netdev_get_name(&dev->up),
                          attach == XDP_MODE_SKB ? "generic" : "native",
                          ovs_strerror(error));
        return error;
    }

    dev->xsks = xcalloc(n_rxq, sizeof *dev->xsks);
    for (int i = 0; i < n_rxq; i++) {
        struct xsk_socket_info *xsk;

        xsk = xsk_create(dev, ad, i, mode, &error, errp);
        if (!xsk) {
            goto error;
        }
        dev->xsks[i] = xsk;
        ad->n_bound = i + 1;

        /* Fill the fill ring before the XSKMAP sends packets to the socket:
         * left to the first poll of the queue, which comes only after the
         * datapath has taken the new queue in, the kernel dropped what came
         * meanwhile for want of a frame (rx_dropped and
         * rx_fill_ring_empty_descs moved in "busy polling", on a loaded
         * machine).  No thread polls the queue yet, so this one may act as
         * its owner. */
        afxdp_refill(xsk, false);

        error = xsk_socket__update_xskmap(xsk->xsk, ad->xsks_map_fd);
        if (error) {
            error = -error;
            *errp = xasprintf("%s: cannot add queue %d to the XSKMAP: %s",
                              netdev_get_name(&dev->up), i,
                              ovs_strerror(error));
            goto error;
        }
    }
    ad->multi_buffer = dev->xsks[0]->multi_buffer;
    return 0;

error:
    xsk_destroy_all(dev, ad);
    return error;
}

static void
xsk_destroy_all(struct netdev_linux *dev, struct afxdp_dev *ad)
    OVS_REQUIRES(afxdp_mutex)
{
    if (dev->xsks) {
        for (int i = 0; i < ad->n_bound; i++) {
            if (dev->xsks[i]) {
                xsk_destroy(ad, dev->xsks[i]);
            }
        }
        free(dev->xsks);
        dev->xsks = NULL;
    }
    ad->n_bound = 0;
    afxdp_detach_prog(ad);
    ad->multi_buffer = false;
}

/* Netdev life cycle. */

int
netdev_afxdp_construct(struct netdev *netdev)
{
    int error = netdev_linux_construct(netdev);

    if (error) {
        return error;
    }

    /* netdev_linux_alloc() zeroed 'dev': no sockets, no TX locks and
     * OVS_AF_XDP_MODE_UNSPEC until the first reconfiguration binds them.
     * Only the requested defaults differ from zero. */
    struct afxdp_dev *ad = xzalloc(sizeof *ad);
    ad->netdev = netdev;
    ad->xsks_map_fd = -1;
    ad->requested.n_rxq = 1;
    ad->requested.xdp_mode = OVS_AF_XDP_MODE_BEST_EFFORT;
    ad->requested.need_wakeup = true;
    ad->requested.umem_frames = AFXDP_UMEM_FRAMES_DEFAULT;
    ad->requested.busy_poll_budget = AFXDP_BUSY_POLL_BUDGET_DEFAULT;

    ovs_mutex_lock(&afxdp_mutex);
    hmap_insert(&afxdp_devs, &ad->node, hash_pointer(netdev, 0));
    ovs_mutex_unlock(&afxdp_mutex);

    netdev_request_reconfigure(netdev);
    return 0;
}

static void
afxdp_free_tx_locks(struct netdev_linux *dev, int n)
{
    if (dev->tx_locks) {
        for (int i = 0; i < n; i++) {
            ovs_spin_destroy(&dev->tx_locks[i].lock);
        }
        free_cacheline(dev->tx_locks);
        dev->tx_locks = NULL;
    }
}

void
netdev_afxdp_destruct(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_dev *ad;

    ovs_mutex_lock(&afxdp_mutex);
    ad = afxdp_dev_lookup(netdev);
    xsk_destroy_all(dev, ad);
    hmap_remove(&afxdp_devs, &ad->node);
    ovs_mutex_unlock(&afxdp_mutex);

    afxdp_free_tx_locks(dev, netdev->n_txq);
    free(ad->umem_group);
    free(ad->requested_umem_group);
    free(ad);

    ovs_mutex_destroy(&dev->mutex);
}

/* Returns the number of RX queues of the device named 'name', or 0 if it
 * cannot tell. */
static int
afxdp_device_n_rxq(const char *name)
{
    char *path = xasprintf("/sys/class/net/%s/queues", name);
    DIR *dir = opendir(path);
    struct dirent *de;
    int n = 0;

    free(path);
    if (!dir) {
        return 0;
    }
    while ((de = readdir(dir)) != NULL) {
        if (!strncmp(de->d_name, "rx-", 3)) {
            n++;
        }
    }
    closedir(dir);
    return n;
}

static enum afxdp_mode
afxdp_mode_from_string(const char *s)
{
    for (int i = OVS_AF_XDP_MODE_BEST_EFFORT; i < OVS_AF_XDP_MODE_MAX; i++) {
        if (!strcmp(s, xdp_mode_names[i])) {
            return i;
        }
    }
    return OVS_AF_XDP_MODE_UNSPEC;
}

int
netdev_afxdp_set_config(struct netdev *netdev, const struct smap *args,
                        char **errp)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    const char *name = netdev_get_name(netdev);
    const char *mode_str, *group;
    enum afxdp_mode mode;
    int n_rxq, dev_n_rxq, frames;
    bool need_wakeup;

    n_rxq = smap_get_int(args, "n_rxq", 1);
    if (n_rxq < 1) {
        *errp = xasprintf("%s: invalid 'n_rxq' %d: must be at least 1",
                          name, n_rxq);
        return EINVAL;
    }
    dev_n_rxq = afxdp_device_n_rxq(name);
    if (dev_n_rxq && n_rxq > dev_n_rxq) {
        *errp = xasprintf("%s: Too big 'n_rxq' (%d): the device has %d "
                          "receive queue%s", name, n_rxq, dev_n_rxq,
                          dev_n_rxq == 1 ? "" : "s");
        return EINVAL;
    }

    mode_str = smap_get_def(args, "xdp-mode", "best-effort");
    mode = afxdp_mode_from_string(mode_str);
    if (mode == OVS_AF_XDP_MODE_UNSPEC) {
        *errp = xasprintf("%s: unsupported xdp-mode '%s' (use best-effort, "
                          "native-with-zerocopy, native or generic)",
                          name, mode_str);
        return EINVAL;
    }

    int error = afxdp_check_mode(name, mode, errp);
    if (error) {
        return error;
    }

    need_wakeup = smap_get_bool(args, "use-need-wakeup", true);

    frames = smap_get_int(args, "umem-frames", AFXDP_UMEM_FRAMES_DEFAULT);
    if (frames < AFXDP_UMEM_FRAMES_MIN || frames > AFXDP_UMEM_FRAMES_MAX) {
        *errp = xasprintf("%s: 'umem-frames' must be between %u and %u",
                          name, AFXDP_UMEM_FRAMES_MIN, AFXDP_UMEM_FRAMES_MAX);
        return EINVAL;
    }

    group = smap_get(args, "umem-group");
    if (group && !group[0]) {
        group = NULL;
    }

    int bp_usecs = smap_get_int(args, "busy-poll-usecs", 0);
    int bp_budget = smap_get_int(args, "busy-poll-budget",
                                 AFXDP_BUSY_POLL_BUDGET_DEFAULT);
    if (bp_usecs < 0 || bp_usecs > AFXDP_BUSY_POLL_USECS_MAX) {
        *errp = xasprintf("%s: 'busy-poll-usecs' must be between 0 and %d",
                          name, AFXDP_BUSY_POLL_USECS_MAX);
        return EINVAL;
    }
    if (bp_budget < 1 || bp_budget > AFXDP_BUSY_POLL_BUDGET_MAX) {
        *errp = xasprintf("%s: 'busy-poll-budget' must be between 1 and %d",
                          name, AFXDP_BUSY_POLL_BUDGET_MAX);
        return EINVAL;
    }

    struct afxdp_settings settings;

    memset(&settings, 0, sizeof settings);
    settings.n_rxq = n_rxq;
    settings.xdp_mode = mode;
    settings.need_wakeup = need_wakeup;
    settings.umem_frames = frames;
    settings.busy_poll_usecs = bp_usecs;
    settings.busy_poll_budget = bp_budget;

    ovs_mutex_lock(&dev->mutex);
    ovs_mutex_lock(&afxdp_mutex);
    struct afxdp_dev *ad = afxdp_dev_lookup(netdev);

    /* A reconfiguration is asked for only if a setting changed. */
    bool changed = memcmp(&ad->requested, &settings, sizeof settings);
    ad->requested = settings;
    if (!nullable_string_is_equal(ad->requested_umem_group, group)) {
        free(ad->requested_umem_group);
        ad->requested_umem_group = nullable_xstrdup(group);
        changed = true;
    }
    if (changed) {
        netdev_request_reconfigure(netdev);
    }
    ovs_mutex_unlock(&afxdp_mutex);
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

int
netdev_afxdp_get_config(const struct netdev *netdev, struct smap *args)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_dev *ad;

    /* The same locks, in the same order, as set_config. */
    ovs_mutex_lock(&dev->mutex);
    ovs_mutex_lock(&afxdp_mutex);
    ad = afxdp_dev_lookup(netdev);

    smap_add(args, "xdp-mode", xdp_mode_names[ad->requested.xdp_mode]);
    smap_add(args, "xdp-mode-in-use", xdp_mode_names[dev->xdp_mode_in_use]);
    smap_add_format(args, "n_rxq", "%d", netdev->n_rxq);
    smap_add(args, "use-need-wakeup",
             dev->use_need_wakeup ? "true" : "false");
    smap_add_format(args, "umem-frames", "%u", ad->requested.umem_frames);
    if (ad->umem_group) {
        smap_add(args, "umem-group", ad->umem_group);
    }
    smap_add(args, "multi-buffer", ad->multi_buffer ? "true" : "false");
    if (ad->requested.busy_poll_usecs) {
        smap_add_format(args, "busy-poll-usecs", "%u",
                        ad->requested.busy_poll_usecs);
        smap_add_format(args, "busy-poll-budget", "%u",
                        ad->requested.busy_poll_budget);
        smap_add(args, "busy-poll-in-use",
                 ad->busy_poll_in_use ? "true" : "false");
    }

    ovs_mutex_unlock(&afxdp_mutex);
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* Checks that the device's current MTU fits the sockets' capabilities. */
static int
afxdp_check_mtu(struct netdev_linux *dev, int mtu, bool multi_buffer,
                char **errp)
{
    if (mtu > AFXDP_MTU_SINGLE_FRAME && !multi_buffer) {
        *errp = xasprintf("%s: MTU %d does not fit one %u-byte AF_XDP frame "
                          "(at most %d without multi-buffer)",
                          netdev_get_name(&dev->up), mtu, AFXDP_FRAME_SIZE,
                          AFXDP_MTU_SINGLE_FRAME);
        return EINVAL;
    }
    return 0;
}

int
netdev_afxdp_reconfigure(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    char *err_msg = NULL;
    int error = 0;
    int ifindex, mtu;

    /* Both take 'dev->mutex'. */
    ifindex = netdev_get_ifindex(netdev);
    if (netdev_get_mtu(netdev, &mtu)) {
        mtu = 0;
    }

    ovs_mutex_lock(&dev->mutex);
    ovs_mutex_lock(&afxdp_mutex);
    struct afxdp_dev *ad = afxdp_dev_lookup(netdev);

    if (dev->xsks
        && !memcmp(&ad->applied, &ad->requested, sizeof ad->applied)
        && nullable_string_is_equal(ad->umem_group, ad->requested_umem_group)
        && (!ad->umem_group || dev->xsks[0]->umem->group)) {
        /* Nothing changed, and the UMEM group (if any) is still live. */
        goto out;
    }

    xsk_destroy_all(dev, ad);
    afxdp_free_tx_locks(dev, netdev->n_txq);
    netdev->n_rxq = 0;
    netdev->n_txq = 0;
    ad->applied = ad->requested;
    dev->xdp_mode = ad->applied.xdp_mode;
    dev->xdp_mode_in_use = OVS_AF_XDP_MODE_UNSPEC;
    dev->use_need_wakeup = ad->applied.need_wakeup;
    ad->busy_poll_in_use = ad->applied.busy_poll_usecs != 0;
    free(ad->umem_group);
    ad->umem_group = nullable_xstrdup(ad->requested_umem_group);

    if (ifindex < 0) {
        err_msg = xasprintf("%s: cannot find the device: %s",
                            netdev_get_name(netdev), ovs_strerror(-ifindex));
        error = -ifindex;
        goto out;
    }
    ad->ifindex = ifindex;

    int n_rxq = ad->applied.n_rxq;

    if (dev->xdp_mode == OVS_AF_XDP_MODE_BEST_EFFORT) {
        /* Best first, and each failure is expected on some device: no
         * zero-copy on veth, no native XDP on some drivers. */
        static const enum afxdp_mode tries[] = {
            OVS_AF_XDP_MODE_NATIVE_ZC,
            OVS_AF_XDP_MODE_NATIVE,
            OVS_AF_XDP_MODE_GENERIC,
        };

        for (size_t i = 0; i < ARRAY_SIZE(tries); i++) {
            free(err_msg);
            err_msg = NULL;
            error = xsk_configure_mode(dev, ad, tries[i], n_rxq, &err_msg);
            if (!error) {
                dev->xdp_mode_in_use = tries[i];
                break;
            }
            VLOG_DBG("%s", err_msg);
        }
    } else {
        error = xsk_configure_mode(dev, ad, dev->xdp_mode, n_rxq, &err_msg);
        if (!error) {
            dev->xdp_mode_in_use = dev->xdp_mode;
        }
    }
    if (error) {
        goto out;
    }

    error = afxdp_check_mtu(dev, mtu, ad->multi_buffer, &err_msg);
    if (error) {
        xsk_destroy_all(dev, ad);
        dev->xdp_mode_in_use = OVS_AF_XDP_MODE_UNSPEC;
        goto out;
    }

    dev->tx_locks = xzalloc_cacheline(n_rxq * sizeof *dev->tx_locks);
    for (int i = 0; i < n_rxq; i++) {
        ovs_spin_init(&dev->tx_locks[i].lock);
    }
    netdev->n_rxq = n_rxq;
    netdev->n_txq = n_rxq;
    VLOG_INFO("%s: %d AF_XDP queue%s in %s mode%s%s%s",
              netdev_get_name(netdev), n_rxq, n_rxq == 1 ? "" : "s",
              xdp_mode_names[dev->xdp_mode_in_use],
              ad->multi_buffer ? ", multi-buffer" : "",
              ad->umem_group ? ", umem-group " : "",
              ad->umem_group ? ad->umem_group : "");
    netdev_change_seq_changed(netdev);

out:
    ovs_mutex_unlock(&afxdp_mutex);
    ovs_mutex_unlock(&dev->mutex);
    if (err_msg) {
        VLOG_WARN_RL(&rl, "%s", err_msg);
        free(err_msg);
    }
    return error;
}

int
netdev_afxdp_verify_mtu_size(const struct netdev *netdev, int mtu)
{
    if (mtu > AFXDP_MTU_MAX) {
        VLOG_WARN_RL(&rl, "%s: MTU %d is above the AF_XDP maximum of %d",
                     netdev_get_name(netdev), mtu, AFXDP_MTU_MAX);
        return EINVAL;
    }
    if (mtu <= AFXDP_MTU_SINGLE_FRAME) {
        return 0;
    }
    if (!kernel_has_multi_buffer) {
        VLOG_WARN_RL(&rl, "%s: MTU %d needs AF_XDP multi-buffer, which this "
                     "kernel lacks (at most %d)", netdev_get_name(netdev),
                     mtu, AFXDP_MTU_SINGLE_FRAME);
        return EINVAL;
    }

    /* In native mode the driver must build multi-buffer XDP frames too.
     * Called with the netdev's mutex held, which comes before
     * 'afxdp_mutex'. */
    int ifindex = if_nametoindex(netdev_get_name(netdev));
    enum afxdp_mode mode;
    uint64_t features;

    ovs_mutex_lock(&afxdp_mutex);
    mode = afxdp_dev_lookup(netdev)->requested.xdp_mode;
    ovs_mutex_unlock(&afxdp_mutex);
    if (mode != OVS_AF_XDP_MODE_GENERIC && ifindex > 0
        && !afxdp_get_xdp_features(ifindex, &features)
        && !(features & AFXDP_NETDEV_XDP_ACT_RX_SG)) {
        VLOG_WARN_RL(&rl, "%s: MTU %d needs multi-buffer native XDP, which "
                     "the device lacks (at most %d, or use xdp-mode=generic)",
                     netdev_get_name(netdev), mtu, AFXDP_MTU_SINGLE_FRAME);
        return EINVAL;
    }
    return 0;
}

void
signal_remove_xdp(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);

    /* Runs in a fatal signal handler: no locks, no allocation, a system
     * call on the cached ifindex only.  The sockets go away with the
     * process. */
    if (dev->xsks) {
        int ifindex = if_nametoindex(netdev_get_name(netdev));
        __u32 flags = (dev->xdp_mode_in_use == OVS_AF_XDP_MODE_GENERIC
                       ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);

        if (ifindex > 0) {
            bpf_xdp_detach(ifindex, flags, NULL);
        }
    }
}

/* Receiving. */

static void afxdp_tx_poll(struct netdev_linux *, struct xsk_socket_info *);

static inline struct xsk_socket_info *
afxdp_xsk(struct netdev_linux *dev, int qid)
{
    if (OVS_UNLIKELY(!dev->xsks || qid >= dev->up.n_rxq)) {
        return NULL;
    }
    return dev->xsks[qid];
}

int
netdev_afxdp_rxq_construct(struct netdev_rxq *rxq)
{
    struct netdev_rxq_linux *rx = netdev_rxq_linux_cast(rxq);
    struct netdev_linux *dev = netdev_linux_cast(rxq->netdev);
    struct xsk_socket_info *xsk;

    /* The sockets belong to the netdev, created at reconfiguration, which
     * comes first.  The fd is for netdev_linux_rxq_wait(), which non-PMD
     * ports sleep in: an XSK is readable when its RX ring is not empty. */
    ovs_mutex_lock(&dev->mutex);
    xsk = afxdp_xsk(dev, rxq->queue_id);
    rx->fd = xsk ? xsk_socket__fd(xsk->xsk) : -1;
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

void
netdev_afxdp_rxq_destruct(struct netdev_rxq *rxq OVS_UNUSED)
{
}

/* Sets up 'pkt' for a frame just received, 'len' bytes at 'offset' in
 * 'frame'.  The packet's allocated size and source never change and were set
 * with the descriptor; dpif-netdev initializes the metadata of every packet
 * it receives (pkt_metadata_init() in dfc_processing()), as it does for
 * DPDK's.  What is left is the frame and what a previous use of the
 * descriptor may have changed: where the data starts and ends, the header
 * offsets, the offload flags, the cut length and the packet type.
 * dp_packet_use_afxdp() would redo all of it, metadata included, in a
 * function call per packet. */
static inline void
afxdp_rx_packet_init(struct dp_packet *pkt, char *frame, uint64_t offset,
                     uint32_t len)
{
    dp_packet_set_base(pkt, frame);
    dp_packet_set_data(pkt, frame + offset);
    dp_packet_set_size(pkt, len);
    dp_packet_reset_offsets(pkt);
    dp_packet_reset_cutlen(pkt);
    dp_packet_reset_offload(pkt);
    pkt->packet_type = htonl(PT_ETH);
}

/* Publishes all that was reserved in 'prod' to the kernel.  The same as
 * xsk_ring_prod__submit() for all of it, without reading the producer
 * index back: our 'cached_prod' is what it will be. */
static inline void
afxdp_prod_publish(struct xsk_ring_prod *prod)
{
    __atomic_store_n(prod->producer, prod->cached_prod, __ATOMIC_RELEASE);
}

/* Releases all that was peeked from 'cons' to the kernel, like
 * xsk_ring_cons__release() for all of it, without reading the consumer
 * index back. */
static inline void
afxdp_cons_publish(struct xsk_ring_cons *cons)
{
    __atomic_store_n(cons->consumer, cons->cached_cons, __ATOMIC_RELEASE);
}

/* Updates what afxdp_refill() knows of the room in the fill ring from the
 * RX ring's producer index as last read ('rx.cached_prod', read anyway to
 * receive).
 *
 * The kernel takes a fill ring entry for each frame it receives into before
 * it posts the frame's RX descriptor, and a frame comes back to the fill
 * ring only through us, so it has consumed at least as many fill ring
 * entries as it posted RX descriptors.  That gives the room without reading
 * the fill ring's consumer index, a cache line that the kernel writes at
 * every packet (most of the refill's samples in a profile, where this CPU
 * runs the kernel's receive work too).  It underestimates the room by the
 * frames the kernel took and has not posted yet (a zero-copy driver keeps a
 * ring of them), which only keeps the fill ring that much less full: those
 * frames are the kernel's to receive into already.  Counting only the
 * descriptors we consumed would not do: when this thread falls behind, the
 * frames waiting in the RX ring would be counted as still in the fill ring,
 * which then ran dry under a burst (the kernel dropped 357 packets in "bulk
 * TCP under CPU load").
 *
 * libxdp keeps the fill ring's 'cached_cons' 'size' ahead of the consumer
 * index; it never gets ahead of what we produced. */
static inline void
afxdp_fill_update(struct xsk_socket_info *xsk)
{
    uint32_t cons = xsk->rx.cached_prod;

    if ((int32_t) (cons - xsk->fill.cached_prod) > 0) {
        /* More descriptors than frames given: cannot happen. */
        cons = xsk->fill.cached_prod;
    }
    cons += xsk->fill.size;
    if ((int32_t) (cons - xsk->fill.cached_cons) > 0) {
        xsk->fill.cached_cons = cons;
    }
}

/* Tops up the fill ring from the RX pool, in batches, as far as
 * afxdp_fill_update() knows it has room, without reading memory the kernel
 * writes.  'backlog' says that the receive found a full batch: this thread
 * may be behind, the RX producer index it last read stale, and the kernel
 * eating the fill ring meanwhile.  Then, if that bound leaves no room, the
 * fill ring's consumer index is read as it always was: without that, "bulk
 * TCP under CPU load" saw the kernel drop 45 packets of a burst for want of
 * fill ring entries. */
static void
afxdp_refill(struct xsk_socket_info *xsk, bool backlog)
{
    uint32_t room = xsk->fill.cached_cons - xsk->fill.cached_prod;

    if (room < AFXDP_FILL_BATCH && backlog) {
        room = xsk_prod_nb_free(&xsk->fill, AFXDP_FILL_BATCH);
    }

    while (room >= AFXDP_FILL_BATCH) {
        struct umem_pool *pool = &xsk->rx_pool;
        const char *area = xsk->umem->area;
        unsigned int n;
        uint32_t idx;

        /* umem_pool_pop_n(), writing the frames straight into the ring
         * rather than through an array. */
        if (OVS_UNLIKELY(pool->n < AFXDP_FILL_BATCH)) {
            umem_pool_reclaim(pool);
        }
        n = MIN(pool->n, AFXDP_FILL_BATCH);
        if (!n) {
            COVERAGE_INC(afxdp_rx_fill_short);
            afxdp_count(xsk, AFXDP_RX_POOL_EMPTY, 1);
            return;
        }
        pool->n -= n;

        /* xsk_ring_prod__reserve(), knowing the room. */
        idx = xsk->fill.cached_prod;
        xsk->fill.cached_prod += n;
        for (unsigned int i = 0; i < n; i++) {
            *xsk_ring_prod__fill_addr(&xsk->fill, idx + i)
                = (char *) pool->frames[pool->n + i] - area;
        }
        afxdp_prod_publish(&xsk->fill);
        room -= n;
    }
}

/* Copies the chain of descriptors that starts at 'idx' (multi-buffer
 * packet, XDP_PKT_CONTD on all but the last) into a new packet and gives the
 * frames back.  Returns the number of descriptors consumed; '*pktp' is NULL
 * if the chain was bad. */
static uint32_t
afxdp_recv_chain(struct xsk_socket_info *xsk, uint32_t idx, uint32_t avail,
                 struct dp_packet **pktp)
{
    struct afxdp_umem *umem = xsk->umem;
    uint32_t n = 0, extra;
    size_t total = 0;
    bool bad = false;

    /* Find the end of the chain, peeking past the batch if needed: the
     * kernel publishes a packet's descriptors together. */
    for (;;) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx, idx + n);

        n++;
        total += d->len;
        if (d->addr + d->len > umem->size) {
            bad = true;
        }
        if (!(d->options & XDP_PKT_CONTD)) {
            break;
        }
        if (n == avail) {
            if (!xsk_ring_cons__peek(&xsk->rx, 1, &extra)) {
                /* Should not happen; drop what we have. */
                bad = true;
                break;
            }
            avail++;
        }
    }

    struct dp_packet *pkt = bad ? NULL : dp_packet_new(total);
    for (uint32_t i = 0; i < n; i++) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx, idx + i);

        if (d->addr + d->len > umem->size) {
            continue;
        }
        if (pkt) {
            dp_packet_put(pkt, umem->area + d->addr, d->len);
        }
        umem_pool_push(&xsk->rx_pool,
                       umem->area + (d->addr & ~AFXDP_FRAME_MASK));
    }
    *pktp = pkt;
    return n;
}

int
netdev_afxdp_rxq_recv(struct netdev_rxq *rxq, struct dp_packet_batch *batch,
                      int *qfill)
{
    struct netdev_linux *dev = netdev_linux_cast(rxq->netdev);
    struct xsk_socket_info *xsk = afxdp_xsk(dev, rxq->queue_id);
    struct afxdp_umem *umem;
    uint32_t rcvd, idx, i;
    uint64_t bad = 0, multibuf = 0, cold_descs = 0;

    if (OVS_UNLIKELY(!xsk)) {
        return EAGAIN;
    }
    umem = xsk->umem;

    afxdp_tx_poll(dev, xsk);

    if (OVS_UNLIKELY(xsk->busy_poll)) {
        /* The kernel runs one NAPI poll of the device's queue in this
         * call (with SO_PREFER_BUSY_POLL and the device's interrupts
         * deferred, nothing else does) and the XDP program redirects what
         * it receives into our RX ring. */
        recvfrom(xsk->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
    }

    rcvd = xsk_ring_cons__peek(&xsk->rx, NETDEV_MAX_BURST, &idx);
    afxdp_fill_update(xsk);
    if (!rcvd) {
        /* Only when the RX pool ran dry and frames came back to it (the
         * socket's creation filled the ring): the room only grows when the
         * kernel posts packets. */
        afxdp_refill(xsk, false);
        if (xsk->need_wakeup && !xsk->busy_poll
            && xsk_ring_prod__needs_wakeup(&xsk->fill)) {
            /* The driver sleeps until we poke it. */
            recvfrom(xsk->fd, NULL, 0, MSG_DONTWAIT,
                     NULL, NULL);
        }
        if (qfill) {
            *qfill = 0;
        }
        return EAGAIN;
    }

    /* The packet descriptors are the hot ones, in the cache; when those
     * run out, fetch the frames' own, scattered over a large array.
     *
     * The packets' data is not prefetched.  Each frame is a page of its
     * own, out of the TLB when the packet arrives, and a prefetch that
     * misses the TLB walks the page tables before it retires: in profiles
     * on a virtual machine, a loop that prefetched the data took 47% to 58%
     * of this function's samples, stalled rather than overlapped with
     * anything.  Without it dpif-netdev's parsing takes that miss, as it
     * does with OVS 3.1's netdev, which never prefetched. */
    if (OVS_UNLIKELY(xsk->n_hot_free < rcvd)) {
        for (i = 0; i < rcvd; i++) {
            const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx,
                                                              idx + i);

            if (OVS_LIKELY(d->addr < umem->size)) {
                OVS_PREFETCH_WRITE(afxdp_xpacket_of_frame(
                                       umem, umem->area
                                             + (d->addr
                                                & ~AFXDP_FRAME_MASK)));
            }
        }
    }

    for (i = 0; i < rcvd; ) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xsk->rx, idx + i);

        if (OVS_UNLIKELY(d->options & XDP_PKT_CONTD)) {
            struct dp_packet *pkt;
            uint32_t n = afxdp_recv_chain(xsk, idx + i, rcvd - i, &pkt);

            if (n > rcvd - i) {
                rcvd = i + n;   /* The chain ran past the first peek. */
            }
            i += n;
            if (pkt) {
                multibuf++;
                dp_packet_batch_add(batch, pkt);
            } else {
                bad++;
            }
            continue;
        }
        i++;

        if (OVS_UNLIKELY(d->addr + d->len > umem->size
                         || d->len > AFXDP_FRAME_SIZE)) {
            /* The frame is lost to us, but a kernel that hands out bad
             * descriptors has bigger problems. */
            bad++;
            continue;
        }

        char *frame = umem->area + (d->addr & ~AFXDP_FRAME_MASK);
        struct dp_packet_afxdp *xpacket;

        if (OVS_LIKELY(xsk->n_hot_free)) {
            xpacket = xsk->hot_free[--xsk->n_hot_free];
        } else {
            xpacket = afxdp_xpacket_of_frame(umem, frame);
            cold_descs++;
        }
        xpacket->mpool = &xsk->rx_pool;
        afxdp_rx_packet_init(&xpacket->packet, frame,
                             d->addr & AFXDP_FRAME_MASK, d->len);
        dp_packet_batch_add(batch, &xpacket->packet);
    }
    afxdp_cons_publish(&xsk->rx);

    if (OVS_UNLIKELY(bad)) {
        COVERAGE_ADD(afxdp_rx_invalid_desc, bad);
        afxdp_count(xsk, AFXDP_RX_BAD, bad);
    }
    if (OVS_UNLIKELY(multibuf)) {
        COVERAGE_ADD(afxdp_rx_multibuf, multibuf);
        afxdp_count(xsk, AFXDP_RX_MULTIBUF, multibuf);
    }
    if (OVS_UNLIKELY(cold_descs)) {
        afxdp_count(xsk, AFXDP_RX_COLD_DESC, cold_descs);
    }

    /* Refill right away so that the kernel does not run dry during the
     * time the datapath takes to process this batch. */
    afxdp_refill(xsk, rcvd >= NETDEV_MAX_BURST);

    if (qfill) {
        *qfill = xsk_cons_nb_avail(&xsk->rx, UINT32_MAX);
    }
    return 0;
}

void
free_afxdp_buf(struct dp_packet *p)
{
    struct dp_packet_afxdp *xpacket;

    xpacket = CONTAINER_OF(p, struct dp_packet_afxdp, packet);
    if (xpacket->mpool) {
        /* dp_packet_base() is the frame start: set so at receive time, and
         * an AF_XDP packet is never reallocated. */
        umem_pool_push(xpacket->mpool, dp_packet_base(p));
        afxdp_xpacket_release(xpacket);
    }
    /* Otherwise a TX ring holds the frame: zero-copy forward. */
}

/* Sending. */

/* dp_packet_delete_batch(), with the frames of AF_XDP packets given back
 * inline rather than through a call of free_afxdp_buf() per packet: after a
 * copy, all the packets of a batch from an afxdp port are. */
static void
afxdp_delete_batch(struct dp_packet_batch *batch)
{
    struct dp_packet *pkt;

    DP_PACKET_BATCH_FOR_EACH (i, pkt, batch) {
        if (OVS_LIKELY(pkt->source == DPBUF_AFXDP)) {
            struct dp_packet_afxdp *xpacket;

            xpacket = CONTAINER_OF(pkt, struct dp_packet_afxdp, packet);
            if (xpacket->mpool) {
                umem_pool_push(xpacket->mpool, dp_packet_base(pkt));
                afxdp_xpacket_release(xpacket);
            }
        } else {
            dp_packet_delete(pkt);
        }
    }
    dp_packet_batch_init(batch);
}

/* Returns a completed TX frame to where it belongs.  Frames from this
 * queue's TX slice go to its TX pool, which we own since we hold the TX
 * lock; frames of a zero-copy forward go back to the RX pool they came
 * from. */
static void
afxdp_return_frame(struct xsk_socket_info *xsk, char *frame)
{
    if (frame >= xsk->tx_frames_start && frame < xsk->tx_frames_end) {
        umem_pool_push(&xsk->tx_pool, frame);
        return;
    }

    struct afxdp_umem *umem = xsk->umem;
    size_t slot = ((frame - umem->area) >> AFXDP_FRAME_SHIFT)
                  / umem->slice_frames;
    struct xsk_socket_info *owner = (slot < umem->n_slots
                                     ? umem->slots[slot] : NULL);

    if (owner) {
        void *frames[1] = { frame };

        umem_pool_give_back(&owner->rx_pool, frames, 1);
    } else {
        /* The owner left; the UMEM is retired and goes with its last
         * user, frames and all. */
        COVERAGE_INC(afxdp_tx_orphan);
    }
}

/* Reaps the completion ring: gives the frames the kernel is done with back
 * to where they belong.  Returns the number of frames reaped. */
static uint32_t
afxdp_complete_tx(struct xsk_socket_info *xsk)
{
    uint32_t n, idx, total = 0;

    while (xsk->outstanding_tx) {
        n = xsk_ring_cons__peek(&xsk->comp, AFXDP_COMP_BATCH, &idx);
        if (!n) {
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t addr = *xsk_ring_cons__comp_addr(&xsk->comp, idx + i);

            afxdp_return_frame(xsk, xsk->umem->area
                                    + (addr & ~AFXDP_FRAME_MASK));
        }
        afxdp_cons_publish(&xsk->comp);
        xsk->outstanding_tx -= MIN(n, xsk->outstanding_tx);
        total += n;
        if (n < AFXDP_COMP_BATCH) {
            break;
        }
    }
    return total;
}

/* Whether the TX ring of 'xsk' holds descriptors that the kernel has not
 * taken yet.  Both indexes are in memory shared with the kernel, so any
 * thread may ask. */
static inline bool
afxdp_tx_ring_pending(const struct xsk_socket_info *xsk)
{
    return (__atomic_load_n(xsk->tx.producer, __ATOMIC_ACQUIRE)
            != __atomic_load_n(xsk->tx.consumer, __ATOMIC_ACQUIRE));
}

/* Whether the completion ring of 'xsk' holds frames not reaped yet. */
static inline bool
afxdp_comp_ring_pending(const struct xsk_socket_info *xsk)
{
    return (__atomic_load_n(xsk->comp.producer, __ATOMIC_ACQUIRE)
            != __atomic_load_n(xsk->comp.consumer, __ATOMIC_ACQUIRE));
}

/* Kicks per call of afxdp_kick_tx() at most: in copy mode each one moves up
 * to the kernel's budget per call (32 descriptors by default), so a few are
 * enough to drain what a batch adds and some backlog.  The rest is left to
 * the next batch or to afxdp_tx_poll(), so that one call never holds the
 * thread for long. */
#define AFXDP_KICK_MAX 8

/* Tells the kernel to transmit what the TX ring holds.
 *
 * In copy mode (veth, generic XDP, any driver without zero-copy) the kernel
 * reads the TX ring only inside sendto(), synchronously, and leaves
 * descriptors in it when it stops early: after its budget per call, when the
 * completion ring has no room (it reserves a completion slot per packet), or
 * when the device's queue is stopped; all three answer EAGAIN.  Nothing else
 * will move those descriptors, so kick again for as long as the kernel makes
 * progress, reaping completions when it makes none, and leave what is still
 * there to afxdp_tx_poll().  A kick answered EBUSY means that the device
 * dropped a packet and the kernel stopped after it.
 *
 * With zero-copy the driver sends from its own context and sendto() only
 * wakes it up, which the ring's need_wakeup flag says when to do.  Without
 * 'force', the kick also honours the flag in copy mode (where the kernel
 * never clears it) and always happens when a backlog builds up. */
static void
afxdp_kick_tx(struct xsk_socket_info *xsk, bool force)
{
    if (!force && xsk->need_wakeup && !xsk_ring_prod__needs_wakeup(&xsk->tx)
        && xsk->outstanding_tx < AFXDP_RING_SIZE / 4 * 3) {
        return;
    }

    int fd = xsk->fd;
    /* The TX ring's consumer index as the last EAGAIN left it, to tell
     * whether the next kick made progress.  It is not read before the
     * first kick, which nearly always empties the ring, because the line
     * is one the kernel writes (a cache miss per batch): a first EAGAIN
     * counts as progress, which at worst costs one more kick. */
    uint32_t before = 0;

    for (int i = 0; i < AFXDP_KICK_MAX; i++) {
        COVERAGE_INC(afxdp_tx_kick);
        afxdp_count(xsk, AFXDP_TX_KICKS, 1);
        if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0
            || xsk->umem->zero_copy) {
            /* Copy mode: the kernel emptied the ring.  Zero-copy: the
             * driver is awake and takes it from here. */
            return;
        }

        int error = errno;

        if (error == EBUSY) {
            COVERAGE_INC(afxdp_tx_dev_drop);
            afxdp_count(xsk, AFXDP_TX_DEV_DROP, 1);
        } else if (error == EAGAIN) {
            uint32_t now = __atomic_load_n(xsk->tx.consumer,
                                           __ATOMIC_ACQUIRE);

            if (i && now == before && !afxdp_complete_tx(xsk)) {
                /* No progress, and no completion slot freed: the device's
                 * queue is stopped, or packets are still in flight. */
                break;
            }
            before = now;
        } else if (error != EINTR) {
            afxdp_count(xsk, AFXDP_TX_KICK_ERRORS, 1);
            if (error != ENOBUFS && error != ENETDOWN && error != ENXIO) {
                VLOG_WARN_RL(&rl, "%s: AF_XDP transmit kick failed on queue "
                             "%d: %s", netdev_get_name(xsk->netdev),
                             xsk->qid, ovs_strerror(error));
            }
            return;
        }
        if (!afxdp_tx_ring_pending(xsk)) {
            return;
        }
    }
    COVERAGE_INC(afxdp_tx_kick_again);
    afxdp_count(xsk, AFXDP_TX_KICK_AGAIN, 1);
}

/* Called at each poll of an RX queue by the thread polling it, to keep the
 * TX queue of the same number moving when the send path has gone quiet.
 *
 * The send path kicks the kernel and reaps completions only when it has
 * packets to send.  Without this, what a kick left in the TX ring (see
 * afxdp_kick_tx()) would wait for the next packet to that port: a TCP
 * sender whose last segments sit there sends nothing new until its
 * retransmission timer fires, which under CPU contention ended bulk
 * transfers.  Frames would also stay in the completion ring, which with a
 * shared UMEM holds the frames another port receives into.
 *
 * 'tx_seq' tells whether the send path ran since the previous poll; while
 * it runs it does this work itself, and nothing is done here.  When it did
 * not, and the rings hold work, this takes the TX lock if it is free: the
 * send path always takes it, so that this thread may stand in for it.
 *
 * The rings' indexes are in memory the kernel writes, four cache lines that
 * the kernel's work on this CPU evicts between two polls: reading them at
 * every poll of a port that transmits nothing cost more than receiving a
 * packet (a fifth of netdev_afxdp_rxq_recv()'s samples in a profile).  When
 * every descriptor the send path posted was reaped ('outstanding_tx' is 0),
 * both rings are empty and nothing is read.  A stale 0 from a send path
 * running on another thread only delays the check to a later poll, as a
 * send path that goes quiet stores its last value once and for all. */
static void
afxdp_tx_poll(struct netdev_linux *dev, struct xsk_socket_info *xsk)
{
    unsigned int seq;

    atomic_read_relaxed(&xsk->tx_seq, &seq);
    if (seq != xsk->tx_seq_seen) {
        xsk->tx_seq_seen = seq;
    } else if (OVS_UNLIKELY(AFXDP_READ_ONCE(xsk->outstanding_tx))
               && (afxdp_tx_ring_pending(xsk)
                   || afxdp_comp_ring_pending(xsk))
               && dev->tx_locks
               && !ovs_spin_trylock(&dev->tx_locks[xsk->qid].lock)) {
        if (afxdp_complete_tx(xsk)) {
            afxdp_count(xsk, AFXDP_TX_POLL_REAPS, 1);
        }
        if (afxdp_tx_ring_pending(xsk)) {
            afxdp_count(xsk, AFXDP_TX_POLL_KICKS, 1);
            afxdp_kick_tx(xsk, !xsk->umem->zero_copy);
        }
        ovs_spin_unlock(&dev->tx_locks[xsk->qid].lock);
    } else {
        return;
    }

    /* A non-PMD port is polled by the main thread, which sleeps until its
     * socket has something to receive: have it come back soon while work
     * is left. */
    if (!netdev_is_pmd(&dev->up)
        && (afxdp_tx_ring_pending(xsk) || afxdp_comp_ring_pending(xsk))) {
        poll_timer_wait(1);
    }
}

/* Copies 'size' bytes of packet data from 'data' into the TX frame 'frame'.
 *
 * The callers have checked that 'size' is at most a frame, and knowing that
 * bound GCC inlines the copy as "rep movsq", whose start-up alone costs more
 * than copying a 64-byte packet: the instruction after it took 86% of the
 * samples in netdev_afxdp_batch_send() in a profile.  The C library's
 * memcpy() copies a small packet in a few vector moves.  The empty asm
 * hides the bound from the compiler, so that memcpy() is called. */
static inline void
afxdp_copy_to_frame(void *frame, const void *data, size_t size)
{
    asm("" : "+r" (size));
    memcpy(frame, data, size);
}

/* Places 'pkt' in the TX ring.  Returns the number of descriptors used, or
 * 0 if the packet could not be placed, with the counter of the reason in
 * '*why'. */
static uint32_t
afxdp_tx_one(struct xsk_socket_info *xsk, struct dp_packet *pkt, bool *zc,
             enum afxdp_queue_counter *why)
{
    struct afxdp_umem *umem = xsk->umem;
    uint32_t size = dp_packet_size(pkt);
    uint32_t idx;

    if (pkt->source == DPBUF_AFXDP) {
        struct dp_packet_afxdp *xpacket;

        xpacket = CONTAINER_OF(pkt, struct dp_packet_afxdp, packet);
        if (xpacket->mpool && afxdp_umem_contains(umem, pkt)) {
            /* Same UMEM: post the frame itself. */
            if (!xsk_ring_prod__reserve(&xsk->tx, 1, &idx)) {
                *why = AFXDP_TX_RING_FULL;
                return 0;
            }
            struct xdp_desc *d = xsk_ring_prod__tx_desc(&xsk->tx, idx);

            d->addr = (char *) dp_packet_data(pkt) - umem->area;
            d->len = size;
            d->options = 0;
            /* The ring owns the frame now. */
            afxdp_xpacket_release(xpacket);
            *zc = true;
            return 1;
        }
    }

    uint32_t n_frames = DIV_ROUND_UP(size, AFXDP_FRAME_SIZE);
    void *frames[AFXDP_MAX_FRAGS];

    if (OVS_UNLIKELY(n_frames > 1)) {
        if (!xsk->multi_buffer || n_frames > AFXDP_MAX_FRAGS) {
            COVERAGE_INC(afxdp_tx_too_big);
            *why = AFXDP_TX_BAD_SIZE;
            return 0;
        }
    } else if (!n_frames) {
        *why = AFXDP_TX_BAD_SIZE;
        return 0;
    }

    /* The TX pool only refills from the completion ring, which the caller
     * drains. */
    if (umem_pool_count(&xsk->tx_pool) < n_frames) {
        *why = AFXDP_TX_NO_FRAME;
        return 0;
    }
    umem_pool_pop_n(&xsk->tx_pool, frames, n_frames);
    if (!xsk_ring_prod__reserve(&xsk->tx, n_frames, &idx)) {
        for (uint32_t i = 0; i < n_frames; i++) {
            umem_pool_push(&xsk->tx_pool, frames[i]);
        }
        *why = AFXDP_TX_RING_FULL;
        return 0;
    }

    const char *data = dp_packet_data(pkt);
    for (uint32_t i = 0; i < n_frames; i++) {
        struct xdp_desc *d = xsk_ring_prod__tx_desc(&xsk->tx, idx + i);
        uint32_t len = MIN(size, AFXDP_FRAME_SIZE);

        afxdp_copy_to_frame(frames[i], data, len);
        d->addr = (char *) frames[i] - umem->area;
        d->len = len;
        d->options = i + 1 < n_frames ? XDP_PKT_CONTD : 0;
        data += len;
        size -= len;
    }
    *zc = false;
    return n_frames;
}

/* Posts 'pkts[0]' to 'pkts[n - 1]' in the TX ring of 'xsk', each in one
 * descriptor, for as long as they fit in a frame and there are ring slots and
 * TX frames for them, with one ring reservation and one submission for all.
 * Returns the number of packets posted, adding the zero-copy forwards, the
 * copies and, of those, the AF_XDP packets of another UMEM to '*n_zc',
 * '*n_copies' and '*n_other'. */
static size_t
afxdp_tx_burst(struct xsk_socket_info *xsk, struct dp_packet **pkts,
               size_t n, uint64_t *n_zc, uint64_t *n_copies,
               uint64_t *n_other)
{
    struct afxdp_umem *umem = xsk->umem;
    struct umem_pool *pool = &xsk->tx_pool;
    uint32_t idx;
    size_t i;

    n = MIN(n, xsk_prod_nb_free(&xsk->tx, n));
    if (!n || !xsk_ring_prod__reserve(&xsk->tx, n, &idx)) {
        return 0;
    }

    for (i = 0; i < n; i++) {
        struct dp_packet *pkt = pkts[i];
        struct xdp_desc *d = xsk_ring_prod__tx_desc(&xsk->tx, idx + i);
        uint32_t size = dp_packet_size(pkt);

        if (pkt->source == DPBUF_AFXDP) {
            struct dp_packet_afxdp *xpacket;

            xpacket = CONTAINER_OF(pkt, struct dp_packet_afxdp, packet);
            if (xpacket->mpool && afxdp_umem_contains(umem, pkt)) {
                /* Same UMEM: post the frame itself. */
                d->addr = (char *) dp_packet_data(pkt) - umem->area;
                d->len = size;
                d->options = 0;
                /* The ring owns the frame now. */
                afxdp_xpacket_release(xpacket);
                ++*n_zc;
                continue;
            }
        }

        if (OVS_UNLIKELY(size - 1 >= AFXDP_FRAME_SIZE || !pool->n)) {
            /* Empty, or larger than a frame, or no frame left. */
            break;
        }

        char *frame = pool->frames[--pool->n];

        afxdp_copy_to_frame(frame, dp_packet_data(pkt), size);
        d->addr = frame - umem->area;
        d->len = size;
        d->options = 0;
        ++*n_copies;
        *n_other += pkt->source == DPBUF_AFXDP;
    }

    /* Hand back the slots reserved for packets after the one that stopped
     * the burst: libxdp has no call for this, and 'cached_prod' is only
     * ours until the submission publishes it. */
    xsk->tx.cached_prod -= n - i;
    afxdp_prod_publish(&xsk->tx);
    xsk->outstanding_tx += i;
    return i;
}

int
netdev_afxdp_batch_send(struct netdev *netdev, int qid,
                        struct dp_packet_batch *batch,
                        bool concurrent_txq OVS_UNUSED)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    int n_txq = netdev_n_txq(netdev);
    struct xsk_socket_info *xsk;
    uint64_t n_zc = 0, n_copies = 0, n_other = 0;
    struct dp_packet *pkt;

    if (OVS_UNLIKELY(!n_txq || !dev->xsks)) {
        dp_packet_delete_batch(batch, true);
        return 0;
    }

    qid %= n_txq;
    /* Taken even when dpif-netdev does not share the queue between threads
     * ('concurrent_txq' false): the thread that polls the RX queue of the
     * same number may stand in for us when we go quiet (afxdp_tx_poll()).
     * Uncontended, it costs an atomic operation per batch. */
    ovs_spin_lock(&dev->tx_locks[qid].lock);
    xsk = dev->xsks[qid];

    unsigned int seq;

    atomic_read_relaxed(&xsk->tx_seq, &seq);
    atomic_store_relaxed(&xsk->tx_seq, seq + 1);

    size_t n_pkts = dp_packet_batch_size(batch);

    /* Reap what the kernel sent since last time once there is a batch of
     * it to reap, or when this batch may need the TX frames.  Reading the
     * completion ring's producer index misses the cache at nearly every
     * batch (the kernel's transmit on this CPU writes it), and batches are
     * small when the thread keeps up: once per AFXDP_COMP_BATCH frames
     * pays it for many packets at once.  The completion ring has room for
     * every descriptor the TX ring can hold, so a kick never waits for
     * room that this leaves unreaped; what is left when the port goes
     * quiet is reaped by afxdp_tx_poll(). */
    if (xsk->outstanding_tx >= AFXDP_COMP_BATCH
        || umem_pool_count(&xsk->tx_pool) < n_pkts) {
        afxdp_complete_tx(xsk);
    }

    for (size_t i = 0; i < n_pkts; ) {
        i += afxdp_tx_burst(xsk, &batch->packets[i], n_pkts - i,
                            &n_zc, &n_copies, &n_other);
        if (i == n_pkts) {
            break;
        }

        /* The burst stopped at a packet that needs several frames, or for
         * want of a ring slot or a TX frame: that packet goes alone, after
         * a kick and a reap if it has to. */
        enum afxdp_queue_counter why;
        bool zc = false;

        pkt = batch->packets[i++];
        uint32_t n = afxdp_tx_one(xsk, pkt, &zc, &why);
        if (OVS_UNLIKELY(!n) && why != AFXDP_TX_BAD_SIZE) {
            afxdp_kick_tx(xsk, false);
            afxdp_complete_tx(xsk);
            n = afxdp_tx_one(xsk, pkt, &zc, &why);
        }
        if (OVS_UNLIKELY(!n)) {
            COVERAGE_INC(afxdp_tx_drop);
            afxdp_count(xsk, why, 1);
            continue;
        }
        afxdp_prod_publish(&xsk->tx);
        xsk->outstanding_tx += n;
        if (zc) {
            n_zc++;
        } else {
            n_copies++;
            n_other += pkt->source == DPBUF_AFXDP;
        }
    }

    /* Free the packets now, while what the loop above read of them is in
     * the cache: the kick runs the kernel's transmit (and, on a veth, the
     * receive of its peer) on this CPU, after which reading each packet's
     * source missed the cache (a fifth of this function's samples in a
     * profile).  Their data is in the TX frames or, forwarded without a
     * copy, in the TX ring already. */
    afxdp_delete_batch(batch);
    afxdp_kick_tx(xsk, false);

    if (n_zc) {
        COVERAGE_ADD(afxdp_tx_zero_copy, n_zc);
        afxdp_count(xsk, AFXDP_TX_ZC, n_zc);
    }
    if (n_copies) {
        COVERAGE_ADD(afxdp_tx_copy, n_copies);
        afxdp_count(xsk, AFXDP_TX_COPY, n_copies);
        if (n_copies > n_other) {
            afxdp_count(xsk, AFXDP_TX_COPY_NOT_UMEM, n_copies - n_other);
        }
        if (n_other) {
            afxdp_count(xsk, AFXDP_TX_COPY_OTHER_UMEM, n_other);
        }
    }

    ovs_spin_unlock(&dev->tx_locks[qid].lock);
    return 0;
}

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
/* A read of a variable that another thread writes, which the compiler must
 * not tear, repeat or elide. */
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

static void
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
