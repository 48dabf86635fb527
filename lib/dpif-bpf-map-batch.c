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

/* BPF map updates and deletes in batches (BPF_MAP_UPDATE_BATCH,
 * BPF_MAP_DELETE_BATCH) for the megaflow table of the BPF datapath, with
 * their fallback to one entry per system call where the kernel refuses
 * them. */

#include <config.h>

#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>

#include "coverage.h"
#include "dpif-bpf-flow-private.h"
#include "dpif-bpf-flow-table.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_map_batch);

COVERAGE_DEFINE(dpif_bpf_map_update_batch);
COVERAGE_DEFINE(dpif_bpf_map_delete_batch);

/* Set once a kernel has refused a batch of 'op' where the entry alone was
 * fine: the entries then go alone from then on. */
static atomic_bool map_batch_unsupported[DP_BPF_N_MAP_BATCH_OPS];

/* Set by dp_bpf_map_batches_disable() (tests): the entries go alone, as
 * with a kernel without batch operations. */
static atomic_bool map_batches_disabled;

void
dp_bpf_map_batches_disable(bool disable)
{
    atomic_store_relaxed(&map_batches_disabled, disable);
}

/* Whether dp_bpf_map_batches_disable() has disabled the batches, for
 * batches of other operations (the batch lookups of flow dumps). */
bool
dp_bpf_map_batches_disabled(void)
{
    bool disabled;

    atomic_read_relaxed(&map_batches_disabled, &disabled);
    return disabled;
}

static bool
map_batch_usable(enum dp_bpf_map_batch_op op)
{
    bool unsupported, disabled;

    atomic_read_relaxed(&map_batch_unsupported[op], &unsupported);
    atomic_read_relaxed(&map_batches_disabled, &disabled);
    return !unsupported && !disabled;
}

/* Runs 'op' on the 'n' entries of the BPF map 'fd' whose keys ('key_size'
 * bytes each) and, for an update, values ('value_size' bytes each) lie back
 * to back in 'keys' and 'values', with the update flags 'flags', in as few
 * batch calls of at most 'max_batch' entries as the kernel allows.  Stores
 * in 'errors[i]' 0 or the errno value of entry 'i' (ENOENT for a delete of
 * a key without an entry).
 *
 * The kernel runs the entries of a batch in order and stops at the first
 * one it refuses, saying how many it did: the refused entry goes again
 * alone, which gives its own error (a batch error may also be about the
 * batch as a whole), and the batch goes on after it.  A kernel or map
 * without the batch operation makes every entry go alone from then on. */
void
dp_bpf_map_batch(enum dp_bpf_map_batch_op op, int fd, const void *keys_,
                 size_t key_size, const void *values_, size_t value_size,
                 size_t n, uint32_t max_batch, uint64_t flags, int *errors)
{
    static const char *const names[DP_BPF_N_MAP_BATCH_OPS] = {
        [DP_BPF_MAP_BATCH_UPDATE] = "updates: flows are installed",
        [DP_BPF_MAP_BATCH_DELETE] = "deletes: flows are deleted",
    };
    LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = flags);
    const uint8_t *values = values_;
    const uint8_t *keys = keys_;
    size_t i = 0;

    while (i < n) {
        const void *key, *value;
        uint32_t count = 0;
        int batch_error = 0;

        if (n - i > 1 && map_batch_usable(op)) {
            uint32_t asked = MIN(n - i, max_batch);
            int retval;

            count = asked;
            key = keys + i * key_size;
            if (op == DP_BPF_MAP_BATCH_UPDATE) {
                COVERAGE_INC(dpif_bpf_map_update_batch);
                retval = bpf_map_update_batch(fd, key, values + i * value_size,
                                              &count, &opts);
            } else {
                COVERAGE_INC(dpif_bpf_map_delete_batch);
                retval = bpf_map_delete_batch(fd, key, &count, &opts);
            }
            if (!retval) {
                memset(&errors[i], 0, asked * sizeof *errors);
                i += asked;
                continue;
            }
            batch_error = errno;
            if (count >= asked) {
                /* Refused before the first entry. */
                count = 0;
            }
        }
        memset(&errors[i], 0, count * sizeof *errors);
        i += count;

        key = keys + i * key_size;
        value = values ? values + i * value_size : NULL;
        errors[i] = ((op == DP_BPF_MAP_BATCH_UPDATE
                      ? bpf_map_update_elem(fd, key, value, flags)
                      : bpf_map_delete_elem(fd, key))
                     ? errno : 0);
        if (!errors[i] && (batch_error == EINVAL
                           || batch_error == EOPNOTSUPP
                           || batch_error == ENOTSUPP)) {
            /* The entry alone was fine: the kernel cannot run 'op' on this
             * map in batches. */
            bool was;

            atomic_read_relaxed(&map_batch_unsupported[op], &was);
            if (!was) {
                VLOG_INFO("BPF map batch %s one system call each (%s)",
                          names[op], ovs_strerror(batch_error));
                atomic_store_relaxed(&map_batch_unsupported[op], true);
            }
        }
        i++;
    }
}
