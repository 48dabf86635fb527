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

#ifndef NETDEV_AFXDP_POOL_H
#define NETDEV_AFXDP_POOL_H 1

#ifdef HAVE_AF_XDP

#include <stdint.h>

#include "openvswitch/thread.h"
#include "openvswitch/util.h"
#include "ovs-atomic.h"

/* A pool of free UMEM frames.
 *
 * The pool is a LIFO stack of frame start pointers.  Each pool has exactly
 * one owner thread: for the frames an AF_XDP queue puts in its fill ring, the
 * thread that polls that queue; for the frames a queue copies outgoing
 * packets into, whichever thread holds that queue's TX lock.  The owner pushes
 * and pops without any atomic operation or lock, and a LIFO keeps the most
 * recently touched (cache-hot) frames in use.
 *
 * The one case where a frame comes back on another thread is a zero-copy
 * forward between two ports that share a UMEM: the frame is released by the
 * completion ring of the output port, drained by the thread that sends on it.
 * Such frames go to a small side stack, 'returned', under a spinlock; the
 * owner moves them back in one go when its own stack runs low, so the lock is
 * taken once per batch and never on the common path. */
struct umem_pool {
    void **frames;              /* Stack of free frames, 'n' on it. */
    unsigned int n;
    unsigned int size;          /* Capacity of 'frames' and of 'returned'. */

    struct ovs_spin returned_lock;
    void **returned OVS_GUARDED_BY(returned_lock);
    atomic_uint n_returned;     /* Written under 'returned_lock' only. */
};

int umem_pool_init(struct umem_pool *, unsigned int size);
void umem_pool_destroy(struct umem_pool *);
unsigned int umem_pool_reclaim(struct umem_pool *);
void umem_pool_give_back(struct umem_pool *, void **frames, unsigned int n);

/* Number of frames the owner can pop right now. */
static inline unsigned int
umem_pool_count(const struct umem_pool *pool)
{
    return pool->n;
}

/* Owner only: puts 'frame' on top of the stack. */
static inline void
umem_pool_push(struct umem_pool *pool, void *frame)
{
    ovs_assert(pool->n < pool->size);
    pool->frames[pool->n++] = frame;
}

/* Owner only: pops up to 'n' frames into 'frames', returns how many.  When
 * the stack cannot satisfy the request, first takes back the frames other
 * threads returned. */
static inline unsigned int
umem_pool_pop_n(struct umem_pool *pool, void **frames, unsigned int n)
{
    if (OVS_UNLIKELY(pool->n < n)) {
        umem_pool_reclaim(pool);
        n = MIN(n, pool->n);
    }
    pool->n -= n;
    for (unsigned int i = 0; i < n; i++) {
        frames[i] = pool->frames[pool->n + i];
    }
    return n;
}

#endif /* HAVE_AF_XDP */
#endif /* netdev-afxdp-pool.h */
