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

/* The pool of free UMEM frames of an AF_XDP queue: a LIFO stack its owner
 * thread uses without atomics, and a side stack for frames that come back on
 * another thread (see netdev-afxdp-pool.h). */

#include <config.h>

#include "netdev-afxdp-pool.h"

#include <errno.h>

#include "util.h"

/* Prepares 'pool' to hold up to 'size' frames.  The pool starts empty; the
 * caller pushes the frames it owns. */
int
umem_pool_init(struct umem_pool *pool, unsigned int size)
{
    if (!size) {
        return EINVAL;
    }
    pool->frames = xcalloc(size, sizeof *pool->frames);
    pool->n = 0;
    pool->size = size;

    ovs_spin_init(&pool->returned_lock);
    pool->returned = xcalloc(size, sizeof *pool->returned);
    atomic_init(&pool->n_returned, 0);
    return 0;
}

void
umem_pool_destroy(struct umem_pool *pool)
{
    if (!pool->frames) {
        return;
    }
    free(pool->frames);
    pool->frames = NULL;
    free(pool->returned);
    pool->returned = NULL;
    ovs_spin_destroy(&pool->returned_lock);
    pool->n = pool->size = 0;
}

/* Owner only: moves the frames that other threads gave back onto the stack.
 * Returns the number of frames moved.  Reading 'n_returned' first keeps the
 * lock off the path when nothing came back, which is nearly always. */
unsigned int
umem_pool_reclaim(struct umem_pool *pool)
{
    unsigned int n;

    atomic_read_relaxed(&pool->n_returned, &n);
    if (!n) {
        return 0;
    }

    ovs_spin_lock(&pool->returned_lock);
    atomic_read_relaxed(&pool->n_returned, &n);
    ovs_assert(pool->n + n <= pool->size);
    for (unsigned int i = 0; i < n; i++) {
        pool->frames[pool->n++] = pool->returned[i];
    }
    atomic_store_relaxed(&pool->n_returned, 0);
    ovs_spin_unlock(&pool->returned_lock);
    return n;
}

/* Any thread: hands 'n' frames back to the owner of 'pool'. */
void
umem_pool_give_back(struct umem_pool *pool, void **frames, unsigned int n)
{
    unsigned int cur;

    ovs_spin_lock(&pool->returned_lock);
    atomic_read_relaxed(&pool->n_returned, &cur);
    /* A frame is on the stack, in a ring, in a packet or here, never in two
     * places, so 'returned' cannot overflow. */
    ovs_assert(cur + n <= pool->size);
    for (unsigned int i = 0; i < n; i++) {
        pool->returned[cur + i] = frames[i];
    }
    atomic_store_relaxed(&pool->n_returned, cur + n);
    ovs_spin_unlock(&pool->returned_lock);
}
