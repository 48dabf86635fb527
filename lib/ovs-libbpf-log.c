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

/* The libbpf print hook of the process: see ovs-libbpf-log.h. */

#include <config.h>

#include "ovs-libbpf-log.h"

#include <bpf/libbpf.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>

#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(libbpf);

/* The WARN-level messages of this thread's libbpf calls, while a caller
 * captures them; NULL otherwise. */
DEFINE_STATIC_PER_THREAD_DATA(struct ds *, capture, NULL);

static int
ovs_libbpf_print(enum libbpf_print_level level, const char *format,
                 va_list args)
{
    struct ds *captured = *capture_get();

    if (captured && level == LIBBPF_WARN) {
        va_list args2;

        va_copy(args2, args);
        ds_put_format_valist(captured, format, args2);
        va_end(args2);
    }
    if (VLOG_IS_DBG_ENABLED()) {
        struct ds s = DS_EMPTY_INITIALIZER;

        ds_put_format_valist(&s, format, args);
        ds_chomp(&s, '\n');
        VLOG_DBG("%s", ds_cstr(&s));
        ds_destroy(&s);
    }
    return 0;
}

void
ovs_libbpf_log_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        libbpf_set_print(ovs_libbpf_print);
#ifdef __GLIBC__
        /* glibc maps each malloc() block of 128 kB or more and, when one is
         * freed, raises its mmap threshold to that block's size for the
         * rest of the process's life.  libbpf frees blocks of megabytes:
         * loading an object that uses CO-RE (the BPF datapath's) reads the
         * kernel's BTF, 5.5 MB on Linux 6.18, in one.  Blocks up to that
         * size then came from the heap and left free chunks of that size
         * there; with MALLOC_PERTURB_ set, as in OVS's tests, each
         * realloc() that grows a buffer into such a chunk writes over all
         * of the rest of it, the way netdev-afxdp's packet descriptors once
         * made ovs-vswitchd's main thread stall for 30 s (see
         * afxdp_umem_create()).  Setting the threshold keeps it at glibc's
         * default and turns that adjustment off. */
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
        ovsthread_once_done(&once);
    }
}

void
ovs_libbpf_log_capture_start(void)
{
    struct ds **captured = capture_get();

    ovs_libbpf_log_init();
    if (!*captured) {
        *captured = xmalloc(sizeof **captured);
        ds_init(*captured);
    }
    ds_clear(*captured);
}

char *
ovs_libbpf_log_capture_end(void)
{
    struct ds **captured = capture_get();
    char *text = NULL;

    if (*captured) {
        if ((*captured)->length) {
            text = ds_steal_cstr(*captured);
        } else {
            ds_destroy(*captured);
        }
        free(*captured);
        *captured = NULL;
    }
    return text;
}
