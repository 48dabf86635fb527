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

#include <config.h>

#include "dpif-bpf-loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <linux/magic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf/datapath-abi.h"
#include "bpf/datapath.skel.h"
#include "dirs.h"
#include "dpif-bpf-ct-limit.h"
#include "openvswitch/vlog.h"
#include "sset.h"
#include "ovs-thread.h"
#include "ovs-libbpf-log.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_loader);

#ifndef BPF_DATAPATH_BUILD_OBJ
#define BPF_DATAPATH_BUILD_OBJ "bpf/datapath.bpf.o"
#endif

/* Our TC filter: one per device, at a fixed handle and priority so that a
 * re-attach replaces it and a detach finds it. */
#define DPIF_BPF_TC_HANDLE 0x4f56
#define DPIF_BPF_TC_PRIORITY 1

static const char *
find_object(void)
{
    static char *installed;
    const char *env = getenv(DPIF_BPF_OBJ_ENV);
    struct stat s;

    if (env && env[0]) {
        return env;
    }
    if (!installed) {
        installed = xasprintf("%s/bpf/datapath.bpf.o", ovs_pkgdatadir());
    }
    if (!stat(installed, &s)) {
        return installed;
    }
    return BPF_DATAPATH_BUILD_OBJ;
}

/* Returns the BPF ABI version that this ovs-vswitchd speaks (see
 * DPIF_BPF_TEST_ABI_BUMP_ENV). */
uint32_t
dpif_bpf_abi_version(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    static uint32_t version = OVS_BPF_ABI_VERSION;

    if (ovsthread_once_start(&once)) {
        const char *bump = getenv(DPIF_BPF_TEST_ABI_BUMP_ENV);

        if (bump && !strcmp(bump, "1")) {
            version++;
            VLOG_INFO("%s=1: speaking BPF ABI version %"PRIu32" instead of "
                      "%d (for tests only)", DPIF_BPF_TEST_ABI_BUMP_ENV,
                      version, OVS_BPF_ABI_VERSION);
        }
        ovsthread_once_done(&once);
    }
    return version;
}

/* Kills this process with SIGKILL, as a crash would, if the environment
 * variable DPIF_BPF_TEST_CRASH_ENV says "<point>" (with a null 'arg') or
 * "<point>:<arg>".  For the tests of what the next ovs-vswitchd makes of
 * what a crash in the middle of a datapath's or a port's setup leaves. */
void
dpif_bpf_test_crash_point(const char *point, const char *arg)
{
    const char *env = getenv(DPIF_BPF_TEST_CRASH_ENV);
    size_t len = strlen(point);

    if (env && !strncmp(env, point, len)
        && (arg ? env[len] == ':' && !strcmp(env + len + 1, arg)
            : !env[len])) {
        /* Written before the kill, which an asynchronous log would lose:
         * the test checks for it. */
        vlog_disable_async();
        VLOG_INFO("%s=%s: killing ovs-vswitchd here (for tests only)",
                  DPIF_BPF_TEST_CRASH_ENV, env);
        raise(SIGKILL);
    }
}

/* Mounts the BPF filesystem on /sys/fs/bpf unless it is already there. */
static int
ensure_bpffs(void)
{
    struct statfs fs;

    if (!statfs("/sys/fs/bpf", &fs) && fs.f_type == BPF_FS_MAGIC) {
        return 0;
    }
    if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
        return errno;
    }
    VLOG_INFO("mounted the BPF filesystem on /sys/fs/bpf");
    return 0;
}

/* Removes the pin directory 'dir' of a datapath with every pin in it,
 * including pins of map names an older object had (after an upgrade, a
 * killed ovs-vswitchd may have left those). */
static void
remove_pins(const char *dir)
{
    DIR *d = opendir(dir);

    if (d) {
        struct dirent *de;

        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                char *path = xasprintf("%s/%s", dir, de->d_name);

                unlink(path);
                free(path);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Removes the pins that a replacement of the datapath of 'o' (see
 * dp_bpf_replace()) left in its staging directory if ovs-vswitchd died in
 * the middle of it: nothing uses them once the datapath is taken over
 * (whose ports get its programs again) or removed. */
static void
remove_staging_pins(const struct dpif_bpf_obj *o)
{
    char *staging = xasprintf("%s"DPIF_BPF_STAGING_SUFFIX, o->pin_dir);

    remove_pins(staging);
    free(staging);
}

/* Reads the object file 'path' into '*datap' and '*sizep'. */
static int
read_object(const char *path, void **datap, size_t *sizep)
{
    FILE *file = fopen(path, "rb");
    struct stat s;
    int error = 0;

    *datap = NULL;
    *sizep = 0;
    if (!file) {
        return errno;
    }
    if (fstat(fileno(file), &s)) {
        error = errno;
    } else {
        *sizep = s.st_size;
        *datap = xmalloc(MAX(*sizep, 1));
        if (fread(*datap, 1, *sizep, file) != *sizep) {
            error = ferror(file) ? errno : EIO;
        }
    }
    fclose(file);
    if (error) {
        free(*datap);
        *datap = NULL;
    }
    return error;
}

static struct bpf_map *
flow_table_map(const struct datapath_bpf *skel, enum ovs_bpf_flow_table t)
{
    struct bpf_map *const maps[] = {
        [OVS_BPF_FLOW_TABLE_W2] = skel->maps.flow_table_w2,
        [OVS_BPF_FLOW_TABLE_W4] = skel->maps.flow_table_w4,
        [OVS_BPF_FLOW_TABLE_W6] = skel->maps.flow_table_w6,
        [OVS_BPF_FLOW_TABLE_W8] = skel->maps.flow_table_w8,
        [OVS_BPF_FLOW_TABLE_W12] = skel->maps.flow_table_w12,
        [OVS_BPF_FLOW_TABLE_W16] = skel->maps.flow_table_w16,
        [OVS_BPF_FLOW_TABLE_W24] = skel->maps.flow_table_w24,
        [OVS_BPF_FLOW_TABLE_W32] = skel->maps.flow_table_w32,
    };
    BUILD_ASSERT_DECL(ARRAY_SIZE(maps) == OVS_BPF_N_FLOW_TABLES);

    return maps[t];
}

/* True if libbpf finds the running kernel's configuration, where it reads
 * the CONFIG_* values that the BPF programs use (CONFIG_HZ, see
 * ovs_bpf_ct_refresh() in bpf/actions-ct.h): the places libbpf looks. */
static bool
kernel_config_found(void)
{
    struct utsname uts;
    char *path;
    bool found;

    if (uname(&uts)) {
        return false;
    }
    path = xasprintf("/boot/config-%s", uts.release);
    found = !access(path, R_OK) || !access("/proc/config.gz", R_OK);
    free(path);
    return found;
}

/* Opens the object of 'o' (file 'o->path') with its skeleton, struct
 * datapath_bpf, which finds the object's maps, programs and .rodata, and
 * tells libbpf to pin the maps of the ABI in 'o->pin_dir'.  The skeleton
 * has the object of the build built in: the file's bytes replace them, so
 * that the object checked and loaded is the one found at run time. */
static int
open_object(struct dpif_bpf_obj *o, char **errorp)
{
    LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = o->pin_dir);
    size_t size;
    int error;

    error = read_object(o->path, &o->elf, &size);
    if (error) {
        *errorp = xasprintf("cannot read BPF object %s (%s)", o->path,
                            ovs_strerror(error));
        return error;
    }

    sha1_bytes(o->elf, size, o->elf_sha1);
    o->skel = xzalloc(sizeof *o->skel);
    error = -datapath_bpf__create_skeleton(o->skel);
    if (error) {
        /* The skeleton is already freed. */
        o->skel->skeleton = NULL;
        *errorp = xasprintf("cannot create the skeleton of BPF object %s "
                            "(%s)", o->path, ovs_strerror(error));
        return error;
    }
    o->skel->skeleton->data = o->elf;
    o->skel->skeleton->data_sz = size;
    if (!kernel_config_found()) {
        /* libbpf would refuse to load an object with CONFIG_* externs:
         * CONFIG_HZ 0 makes the programs do without (they refresh every
         * connection's timeout on every packet, as before). */
        opts.kconfig = "CONFIG_HZ=0";
    }

    error = -bpf_object__open_skeleton(o->skel->skeleton, &opts);
    if (error) {
        /* ESRCH: a map or a program of the skeleton is not in the file. */
        *errorp = xasprintf("cannot open BPF object %s as a datapath of ABI "
                            "version %"PRIu32" (%s)", o->path,
                            dpif_bpf_abi_version(), ovs_strerror(error));
    }
    return error;
}

/* The pins of the programs, next to the maps', which tell the next
 * ovs-vswitchd which programs are attached (see dpif_bpf_obj_adopt()). */
#define PIN_PROG_INGRESS "prog_ingress"
#define PIN_PROG_DOWNCALL "prog_downcall"
#define PIN_PROG_METER "prog_meter"
#define PIN_PROG_CT_REASS "prog_ct_reass"

/* The size of the mapping of the 'ct_zones' array map: its values, each
 * 8-byte aligned, in whole pages. */
static size_t
ct_zones_size(void)
{
    size_t size = ROUND_UP(sizeof(struct ovs_bpf_ct_zone), 8)
                  * OVS_BPF_N_CT_ZONES;

    return ROUND_UP(size, get_page_size());
}

static void
get_map_fds(struct dpif_bpf_obj *o)
{
    struct datapath_bpf *skel = o->skel;

    for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        o->flow_table_fds[t] = bpf_map__fd(flow_table_map(skel, t));
    }
    o->flow_actions_fd = bpf_map__fd(skel->maps.flow_actions);
    o->flow_masks_fd = bpf_map__fd(skel->maps.flow_masks);
    o->mask_order_fd = bpf_map__fd(skel->maps.mask_order);
    o->mask_stats_fd = bpf_map__fd(skel->maps.mask_stats);
    o->dp_config_fd = bpf_map__fd(skel->maps.dp_config);
    o->dp_stats_fd = bpf_map__fd(skel->maps.dp_stats);
    o->meters_fd = bpf_map__fd(skel->maps.meters);
    o->ct_reass_fd = bpf_map__fd(skel->maps.ct_reass);
    o->ct_tps_fd = bpf_map__fd(skel->maps.ct_tps);
    o->ct_tp_conns_fd = bpf_map__fd(skel->maps.ct_tp_conns);
    o->ct_tcp_win_fd = bpf_map__fd(skel->maps.ct_tcp_win);
    o->ct_zones_fd = bpf_map__fd(skel->maps.ct_zones);
    if (!o->ct_zones) {
        void *p = mmap(NULL, ct_zones_size(), PROT_READ | PROT_WRITE,
                       MAP_SHARED, o->ct_zones_fd, 0);

        if (p == MAP_FAILED) {
            VLOG_WARN("cannot map the zone limits (%s): ct-set-limits "
                      "will not work", ovs_strerror(errno));
        } else {
            o->ct_zones = p;
        }
    }
    o->ports_fd = bpf_map__fd(skel->maps.ports);
    o->ifindex_ports_fd = bpf_map__fd(skel->maps.ifindex_ports);
    o->ifindexes_fd = bpf_map__fd(skel->maps.ifindexes);
    o->upcall_rings_fd = bpf_map__fd(skel->maps.upcall_rings);
    o->upcall_config_fd = bpf_map__fd(skel->maps.upcall_config);
    o->tailcalls_fd = bpf_map__fd(skel->maps.tailcalls);
}

static int
pin_fd(const struct dpif_bpf_obj *o, const char *name, int fd, char **errorp)
{
    char *path = xasprintf("%s/%s", o->pin_dir, name);
    int error = bpf_obj_pin(fd, path) ? errno : 0;

    if (error) {
        *errorp = xasprintf("cannot pin %s (%s)", path, ovs_strerror(error));
    }
    free(path);
    return error;
}

/* Returns true if 'fd' is a BPF program named 'name' (as the kernel keeps
 * it: cut to BPF_OBJ_NAME_LEN - 1 characters). */
static bool
is_prog_named(int fd, const char *name)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof info;

    memset(&info, 0, sizeof info);
    return (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)
            && len >= offsetof(struct bpf_prog_info, name) + sizeof info.name
            && !strncmp(info.name, name, sizeof info.name - 1));
}

static int
get_pinned(const struct dpif_bpf_obj *o, const char *name)
{
    char *path = xasprintf("%s/%s", o->pin_dir, name);
    int fd = bpf_obj_get(path);

    free(path);
    return fd;
}

/* Creates and pins the maps of ovs-vswitchd's own state (see
 * DPIF_BPF_SAVED_PORTS in dpif-bpf-loader.h). */
static int
create_saved_maps(struct dpif_bpf_obj *o,
                  const struct dpif_bpf_obj_config *cfg, char **errorp)
{
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
    uint32_t n_flows = cfg->flow_table_size ? cfg->flow_table_size : 65536;
    int error;

    o->saved_ports_fd = bpf_map_create(BPF_MAP_TYPE_HASH,
                                       DPIF_BPF_SAVED_PORTS, sizeof(uint32_t),
                                       sizeof(struct dpif_bpf_saved_port),
                                       OVS_BPF_MAX_PORTS, &opts);
    /* Preallocated: every flow install writes an entry here, and in a map
     * without preallocation the kernel allocates each entry (a 2 kB slab
     * object for its 1 kB value) through the BPF memory allocator, whose
     * refills of such large objects come a few at a time: about 4.5 us of
     * CPU time per entry against 0.7 us preallocated (2 CPUs, loaded, see
     * "Performance" in Documentation/topics/dpif-bpf.rst).  The price is
     * the memory of a full map from the start, 71 MB for 65,536 flows. */
    o->saved_flows_fd = bpf_map_create(BPF_MAP_TYPE_HASH,
                                       DPIF_BPF_SAVED_FLOWS, sizeof(ovs_u128),
                                       sizeof(struct dpif_bpf_saved_flow),
                                       n_flows, NULL);
    if (o->saved_ports_fd < 0 || o->saved_flows_fd < 0) {
        error = errno;
        *errorp = xasprintf("cannot create the maps of ovs-vswitchd's state "
                            "(%s)", ovs_strerror(error));
        return error;
    }
    error = pin_fd(o, DPIF_BPF_SAVED_PORTS, o->saved_ports_fd, errorp);
    if (!error) {
        error = pin_fd(o, DPIF_BPF_SAVED_FLOWS, o->saved_flows_fd, errorp);
    }
    return error;
}

/* Reads the .rodata of the loaded program 'prog_fd', which begins with its
 * ABI version: stores the version in '*abi_version' and, if 'datap' is
 * nonnull, the .rodata in '*datap' (to be freed by the caller) and its
 * size in '*sizep'.  The one place that reads the ABI version of a pinned
 * datapath. */
static int
read_prog_rodata(int prog_fd, uint32_t *abi_version, void **datap,
                 uint32_t *sizep)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof info;
    uint32_t ids[64];
    uint32_t n_ids;

    if (datap) {
        *datap = NULL;
    }
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
        return errno;
    }
    n_ids = MIN(info.nr_map_ids, ARRAY_SIZE(ids));
    memset(&info, 0, sizeof info);
    info.nr_map_ids = n_ids;
    info.map_ids = (uintptr_t) ids;
    len = sizeof info;
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
        return errno;
    }
    for (uint32_t i = 0; i < MIN(n_ids, info.nr_map_ids); i++) {
        int fd = bpf_map_get_fd_by_id(ids[i]);
        struct bpf_map_info minfo;
        uint32_t mlen = sizeof minfo;
        size_t name_len;

        if (fd < 0) {
            continue;
        }
        memset(&minfo, 0, sizeof minfo);
        if (!bpf_obj_get_info_by_fd(fd, &minfo, &mlen)
            && minfo.type == BPF_MAP_TYPE_ARRAY && minfo.max_entries == 1
            && (name_len = strnlen(minfo.name, sizeof minfo.name)) >= 7
            && !strcmp(minfo.name + name_len - 7, ".rodata")
            && minfo.value_size >= sizeof(uint32_t)) {
            uint32_t zero = 0;
            void *data = xmalloc(minfo.value_size);

            if (!bpf_map_lookup_elem(fd, &zero, data)) {
                memcpy(abi_version, data, sizeof *abi_version);
                if (datap) {
                    *datap = data;
                    *sizep = minfo.value_size;
                } else {
                    free(data);
                }
                close(fd);
                return 0;
            }
            free(data);
        }
        close(fd);
    }
    return ENOENT;
}

/* Checks that 'fd', the map pinned as 'path', is a map of 'type' with
 * 'key_size'-byte keys and 'value_size'-byte values: a map that an
 * ovs-vswitchd of another layout pinned must not be read or written with
 * ours.  Returns 0 or EPROTO (or another errno value if 'fd' cannot be
 * queried), with a message in '*errorp'. */
static int
check_map_layout(int fd, const char *path, uint32_t type, uint32_t key_size,
                 uint32_t value_size, char **errorp)
{
    struct bpf_map_info info;
    uint32_t len = sizeof info;

    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
        int error = errno;

        *errorp = xasprintf("cannot query the map pinned as %s (%s)", path,
                            ovs_strerror(error));
        return error;
    }
    if (info.type != type || info.key_size != key_size
        || info.value_size != value_size) {
        const char *has = libbpf_bpf_map_type_str(info.type);
        const char *wants = libbpf_bpf_map_type_str(type);

        *errorp = xasprintf("the map pinned as %s has type %s, key size "
                            "%"PRIu32" and value size %"PRIu32", not %s, "
                            "%"PRIu32" and %"PRIu32" as this ovs-vswitchd "
                            "expects", path, has ? has : "unknown",
                            info.key_size, info.value_size,
                            wants ? wants : "unknown", key_size, value_size);
        return EPROTO;
    }
    return 0;
}

/* Opens the map of ovs-vswitchd's state 'map_name' (DPIF_BPF_SAVED_PORTS or
 * DPIF_BPF_SAVED_FLOWS) pinned in the directory 'pin_name' below
 * DPIF_BPF_PIN_ROOT and checks its layout.  Returns its fd, or -1: with
 * ENOENT if there is no such pin, otherwise with a message in '*errorp'
 * (to be freed by the caller) if the map does not fit. */
int
dpif_bpf_saved_map_open(const char *pin_name, const char *map_name,
                        char **errorp)
{
    bool ports = !strcmp(map_name, DPIF_BPF_SAVED_PORTS);
    char *path = xasprintf("%s/%s/%s", DPIF_BPF_PIN_ROOT, pin_name,
                           map_name);
    int fd = bpf_obj_get(path);

    *errorp = NULL;
    if (fd >= 0
        && check_map_layout(fd, path, BPF_MAP_TYPE_HASH,
                            ports ? sizeof(uint32_t) : sizeof(ovs_u128),
                            (ports ? sizeof(struct dpif_bpf_saved_port)
                             : sizeof(struct dpif_bpf_saved_flow)),
                            errorp)) {
        close(fd);
        fd = -1;
    }
    free(path);
    return fd;
}

/* Opens the 'dp_stats' map (the datapath's counters) of the datapath pinned
 * in the directory 'pin_name' below DPIF_BPF_PIN_ROOT, which is about to be
 * replaced, for its counters to be reported: returns its fd, or -1 if
 * there is no such map or it is not a per-CPU array of __u64 counters.
 * Stores in '*abi_version' the ABI version of the pinned ingress program,
 * 0 if there is none that says, and in '*n_stats' the number of
 * counters. */
int
dpif_bpf_pinned_stats_open(const char *pin_name, uint32_t *abi_version,
                           uint32_t *n_stats)
{
    char *path = xasprintf("%s/%s/dp_stats", DPIF_BPF_PIN_ROOT, pin_name);
    struct bpf_map_info info;
    uint32_t len = sizeof info;
    int fd = bpf_obj_get(path);
    int prog_fd;

    free(path);
    *abi_version = 0;
    *n_stats = 0;
    if (fd < 0) {
        return -1;
    }
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len)
        || info.type != BPF_MAP_TYPE_PERCPU_ARRAY
        || info.key_size != sizeof(uint32_t)
        || info.value_size != sizeof(uint64_t)) {
        close(fd);
        return -1;
    }
    *n_stats = info.max_entries;

    path = xasprintf("%s/%s/"PIN_PROG_INGRESS, DPIF_BPF_PIN_ROOT, pin_name);
    prog_fd = bpf_obj_get(path);
    free(path);
    if (prog_fd >= 0) {
        /* '*abi_version' stays 0 if the version cannot be read. */
        if (is_prog_named(prog_fd, "ovs_bpf_ingress")) {
            ignore(read_prog_rodata(prog_fd, abi_version, NULL, NULL));
        }
        close(prog_fd);
    }
    return fd;
}

/* Gives 'o', whose object file is open, the fd of the pinned map of each of
 * its pinned maps, checking that the pinned map fits. */
static int
reuse_pinned_maps(struct dpif_bpf_obj *o, char **errorp)
{
    struct bpf_map *map;
    int error;

    bpf_object__for_each_map (map, o->skel->obj) {
        const char *path = bpf_map__pin_path(map);
        int fd;

        if (!path) {
            continue;
        }
        fd = bpf_obj_get(path);
        if (fd < 0) {
            error = errno;
            *errorp = xasprintf("cannot open %s (%s)", path,
                                ovs_strerror(error));
            return error;
        }
        error = check_map_layout(fd, path, bpf_map__type(map),
                                 bpf_map__key_size(map),
                                 bpf_map__value_size(map), errorp);
        if (!error) {
            error = -bpf_map__reuse_fd(map, fd);
            if (error) {
                *errorp = xasprintf("cannot reuse the map pinned as %s (%s)",
                                    path, ovs_strerror(error));
            }
        }
        close(fd);
        if (error) {
            return error;
        }
    }
    get_map_fds(o);

    const char *pin_name = o->pin_dir + strlen(DPIF_BPF_PIN_ROOT) + 1;
    o->saved_ports_fd = dpif_bpf_saved_map_open(pin_name,
                                                DPIF_BPF_SAVED_PORTS, errorp);
    if (o->saved_ports_fd >= 0) {
        o->saved_flows_fd = dpif_bpf_saved_map_open(pin_name,
                                                    DPIF_BPF_SAVED_FLOWS,
                                                    errorp);
    }
    if (o->saved_ports_fd < 0 || o->saved_flows_fd < 0) {
        if (!*errorp) {
            *errorp = xasprintf("%s has no maps of ovs-vswitchd's state %s "
                                "and %s", o->pin_dir, DPIF_BPF_SAVED_PORTS,
                                DPIF_BPF_SAVED_FLOWS);
        }
        return EPROTO;
    }
    return 0;
}

static struct dpif_bpf_obj *
obj_alloc(void)
{
    struct dpif_bpf_obj *o = xzalloc(sizeof *o);

    o->ingress_prog_fd = o->downcall_prog_fd = o->meter_prog_fd = -1;
    o->ct_reass_prog_fd = -1;
    o->saved_ports_fd = o->saved_flows_fd = -1;
    return o;
}

/* Pins in the pin directory of 'o' the mark of the instance 'instance' (see
 * DPIF_BPF_INSTANCE_PIN), unless it is there. */
static int
pin_instance_mark(const struct dpif_bpf_obj *o, const char *instance,
                  char **errorp)
{
    char *name = xasprintf(DPIF_BPF_INSTANCE_PIN"%s", instance);
    int fd = get_pinned(o, name);
    int error = 0;

    if (fd < 0) {
        uint32_t zero = 0;

        fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "vsw_instance",
                            sizeof(uint32_t), sizeof o->elf_sha1, 1, NULL);
        error = (fd < 0 || bpf_map_update_elem(fd, &zero, o->elf_sha1, 0)
                 ? errno : pin_fd(o, name, fd, errorp));
        if (error && !*errorp) {
            *errorp = xasprintf("cannot create the map %s (%s)", name,
                                ovs_strerror(error));
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    free(name);
    return error;
}

/* Returns 0 if the datapath pinned for 'o' was loaded from an object file
 * with the bytes of that of 'o' (or if that is not known: a datapath pinned
 * before the marks existed), otherwise EPROTO with a message in
 * '*errorp'. */
static int
check_object_mark(const struct dpif_bpf_obj *o, const char *instance,
                  char **errorp)
{
    char *name = xasprintf(DPIF_BPF_INSTANCE_PIN"%s", instance);
    uint8_t sha1[SHA1_DIGEST_SIZE];
    int fd = get_pinned(o, name);
    char *layout_error = NULL;
    uint32_t zero = 0;
    int error = 0;

    free(name);
    if (fd < 0) {
        return 0;
    }
    /* A mark of another layout tells nothing. */
    if (!check_map_layout(fd, "", BPF_MAP_TYPE_ARRAY, sizeof zero,
                          sizeof sha1, &layout_error)
        && !bpf_map_lookup_elem(fd, &zero, sha1)
        && memcmp(sha1, o->elf_sha1, sizeof sha1)) {
        *errorp = xasprintf("the datapath pinned in %s was loaded from "
                            "another BPF object than %s", o->pin_dir,
                            o->path);
        error = EPROTO;
    }
    free(layout_error);
    close(fd);
    return error;
}

/* Adds to 'names' the name of each datapath of the instance 'instance'
 * (OVS_BPF_INSTANCE, "" if unset) whose pins are below DPIF_BPF_PIN_ROOT,
 * open or not: "ovs-dpctl dump-dps" lists them, as it lists the kernel's
 * datapaths, also while no ovs-vswitchd runs. */
void
dpif_bpf_enumerate_pinned(const char *instance, struct sset *names)
{
    size_t inst_len = strlen(instance);
    DIR *d = opendir(DPIF_BPF_PIN_ROOT);
    struct dirent *de;

    if (!d) {
        return;
    }
    while ((de = readdir(d)) != NULL) {
        const char *dir = de->d_name;
        size_t len = strlen(dir);
        struct stat st;
        char *path;
        bool ours;

        /* A staging directory is not a datapath, even if a crash left a
         * whole one there. */
        if (dir[0] == '.'
            || (len >= strlen(DPIF_BPF_STAGING_SUFFIX)
                && !strcmp(dir + len - strlen(DPIF_BPF_STAGING_SUFFIX),
                           DPIF_BPF_STAGING_SUFFIX))) {
            continue;
        }
        path = xasprintf("%s/%s/"DPIF_BPF_INSTANCE_PIN"%s",
                         DPIF_BPF_PIN_ROOT, dir, instance);
        ours = !stat(path, &st);
        free(path);
        path = xasprintf("%s/%s/%s", DPIF_BPF_PIN_ROOT, dir,
                         PIN_PROG_INGRESS);
        ours = ours && !stat(path, &st);
        free(path);
        if (!ours) {
            continue;
        }
        if (!inst_len) {
            sset_add(names, dir);
        } else if (len > inst_len + 1 && dir[len - inst_len - 1] == '-'
                   && !strcmp(dir + len - inst_len, instance)) {
            sset_add_and_free(names, xmemdup0(dir, len - inst_len - 1));
        }
    }
    closedir(d);
}

/* Returns true if the pin directory of 'cfg' holds a datapath's programs
 * (not necessarily of our ABI version). */
bool
dpif_bpf_obj_exists(const struct dpif_bpf_obj_config *cfg)
{
    char *path = xasprintf("%s/%s/%s", DPIF_BPF_PIN_ROOT, cfg->pin_name,
                           PIN_PROG_INGRESS);
    struct stat st;
    bool exists = !stat(path, &st);

    free(path);
    return exists;
}

/* Takes over the datapath 'dp_name' that an earlier ovs-vswitchd left
 * pinned: the attached programs and the maps they use, if the programs are
 * of our ABI version.  Returns 0 and stores the object in '*objp' if it
 * did, ENOENT if there is nothing to take over, another positive errno
 * value (after a log message that says why) if what is pinned is not of
 * use; then dpif_bpf_obj_load() makes a fresh datapath in its place. */
int
dpif_bpf_obj_adopt(const char *dp_name, const struct dpif_bpf_obj_config *cfg,
                   struct dpif_bpf_obj **objp)
{
    struct dpif_bpf_obj *o = obj_alloc();
    uint32_t rodata_size = 0;
    char *errmsg = NULL;
    void *rodata = NULL;
    struct stat st;
    int error;

    *objp = NULL;
    o->path = xstrdup(find_object());
    o->pin_dir = xasprintf("%s/%s", DPIF_BPF_PIN_ROOT, cfg->pin_name);
    if (stat(o->pin_dir, &st)) {
        error = ENOENT;
        goto out;
    }

    o->ingress_prog_fd = get_pinned(o, PIN_PROG_INGRESS);
    o->downcall_prog_fd = get_pinned(o, PIN_PROG_DOWNCALL);
    o->meter_prog_fd = get_pinned(o, PIN_PROG_METER);
    o->ct_reass_prog_fd = get_pinned(o, PIN_PROG_CT_REASS);
    if (!is_prog_named(o->ingress_prog_fd, "ovs_bpf_ingress")
        || !is_prog_named(o->downcall_prog_fd, "ovs_bpf_downcall")
        || !is_prog_named(o->meter_prog_fd, "ovs_bpf_meter_packet")
        || !is_prog_named(o->ct_reass_prog_fd, OVS_BPF_PROG_CT_REASS)) {
        error = EPROTO;
        errmsg = xasprintf("%s holds no programs of a BPF datapath",
                           o->pin_dir);
        goto out;
    }
    error = read_prog_rodata(o->ingress_prog_fd, &o->abi_version, &rodata,
                             &rodata_size);
    if (error) {
        errmsg = xasprintf("cannot read the ABI version of the program "
                           "pinned in %s (%s)", o->pin_dir,
                           ovs_strerror(error));
        goto out;
    }
    if (o->abi_version != dpif_bpf_abi_version()) {
        error = EPROTO;
        errmsg = xasprintf("the datapath pinned in %s has ABI version "
                           "%"PRIu32", this ovs-vswitchd has %"PRIu32,
                           o->pin_dir, o->abi_version,
                           dpif_bpf_abi_version());
        goto out;
    }

    ovs_libbpf_log_capture_start();
    error = open_object(o, &errmsg);
    free(ovs_libbpf_log_capture_end());
    if (!error) {
        size_t ofs = ((char *) &o->skel->rodata->ovs_bpf_vlan_limit
                      - (char *) o->skel->rodata);

        if (rodata_size < ofs + sizeof o->vlan_limit) {
            error = EPROTO;
            errmsg = xasprintf("the program pinned in %s has a short "
                               ".rodata", o->pin_dir);
        } else {
            memcpy(&o->vlan_limit, (char *) rodata + ofs,
                   sizeof o->vlan_limit);
            error = (cfg->check_object
                     ? check_object_mark(o, cfg->instance
                                            ? cfg->instance : "", &errmsg)
                     : 0);
        }
        if (!error) {
            error = reuse_pinned_maps(o, &errmsg);
        }
        if (!error) {
            error = pin_instance_mark(o, cfg->instance ? cfg->instance : "",
                                      &errmsg);
        }
    }

out:
    free(rodata);
    if (error) {
        if (errmsg) {
            VLOG_INFO("%s: not taking over the pinned datapath: %s; "
                      "creating a new one", dp_name, errmsg);
            free(errmsg);
        }
        dpif_bpf_obj_unload(o, false);
        return error;
    }
    o->adopted = true;
    remove_staging_pins(o);
    VLOG_INFO("%s: took over the BPF datapath pinned in %s (ABI version "
              "%"PRIu32")", dp_name, o->pin_dir, o->abi_version);
    *objp = o;
    return 0;
}

/* Opens, checks and loads the datapath object for the datapath 'dp_name'.
 * On failure, returns a positive errno value and stores in '*errorp' a
 * message for the user (to be freed by the caller); the details, with the
 * verifier's log if the kernel refused a program, are in the log. */
int
dpif_bpf_obj_load(const char *dp_name, const struct dpif_bpf_obj_config *cfg,
                  struct dpif_bpf_obj **objp, char **errorp)
{
    long long int start = time_msec();
    struct dpif_bpf_obj *o = obj_alloc();
    struct datapath_bpf *skel;
    char *libbpf_log;
    size_t rodata_size;
    int error;

    *objp = NULL;
    *errorp = NULL;
    o->path = xstrdup(find_object());

    /* libbpf's messages are in the log at DBG level; the warnings of a
     * failed load, the verifier's log among them, are also logged at ERR
     * with the error. */
    ovs_libbpf_log_capture_start();

    error = ensure_bpffs();
    if (error) {
        *errorp = xasprintf("cannot mount the BPF filesystem on /sys/fs/bpf "
                            "(%s)", ovs_strerror(error));
        goto error;
    }
    if (mkdir(DPIF_BPF_PIN_ROOT, 0700) && errno != EEXIST) {
        error = errno;
        *errorp = xasprintf("cannot create %s (%s)", DPIF_BPF_PIN_ROOT,
                            ovs_strerror(error));
        goto error;
    }
    /* libbpf pins the maps at load time, creating this directory, and
     * reuses a map already pinned under its name.  Pins that a killed
     * ovs-vswitchd left behind only keep its old maps alive: nothing must
     * use them any more. */
    o->pin_dir = xasprintf("%s/%s", DPIF_BPF_PIN_ROOT, cfg->pin_name);
    remove_pins(o->pin_dir);

    error = open_object(o, errorp);
    if (error) {
        goto error;
    }
    skel = o->skel;

    /* ovs_bpf_abi_version is the first .rodata variable of every version
     * of the object, so it is read at the same place in all; the rest of
     * the skeleton's view of .rodata is right only for our version. */
    if (!bpf_map__initial_value(skel->maps.rodata, &rodata_size)
        || rodata_size < sizeof skel->rodata->ovs_bpf_abi_version) {
        error = EPROTO;
        *errorp = xasprintf("BPF object %s has no %s", o->path,
                            OVS_BPF_RODATA_ABI_VERSION);
        goto error;
    }
    o->abi_version = skel->rodata->ovs_bpf_abi_version;
    if (o->abi_version != dpif_bpf_abi_version()) {
        error = EPROTO;
        *errorp = xasprintf("BPF object %s has ABI version %"PRIu32", "
                            "ovs-vswitchd expects %"PRIu32, o->path,
                            o->abi_version, dpif_bpf_abi_version());
        goto error;
    }

    if (cfg->flow_table_size) {
        for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
            bpf_map__set_max_entries(flow_table_map(skel, t),
                                     cfg->flow_table_size);
        }
        bpf_map__set_max_entries(skel->maps.flow_actions,
                                 cfg->flow_table_size);
    }

    /* The parser must decode as many VLAN tags as flow_extract() does for
     * the upcalled packets, or the megaflows of packets with more tags
     * would never match in BPF. */
    skel->rodata->ovs_bpf_vlan_limit = cfg->vlan_limit;
    o->vlan_limit = cfg->vlan_limit;

    /* Loads the programs, fills the 'tailcalls' program array (see
     * bpf/maps.h) and pins the maps. */
    error = -datapath_bpf__load(skel);
    if (error) {
        *errorp = xasprintf("cannot load BPF object %s (%s)", o->path,
                            ovs_strerror(error));
        goto error;
    }

    get_map_fds(o);
    dpif_bpf_test_crash_point("load", NULL);
    o->ingress_prog_fd = dup(bpf_program__fd(skel->progs.ovs_bpf_ingress));
    o->downcall_prog_fd = dup(bpf_program__fd(skel->progs.ovs_bpf_downcall));
    o->meter_prog_fd = dup(bpf_program__fd(skel->progs.ovs_bpf_meter_packet));
    o->ct_reass_prog_fd = dup(bpf_program__fd(skel->progs.ovs_bpf_ct_reass));
    error = create_saved_maps(o, cfg, errorp);
    if (!error) {
        error = pin_fd(o, PIN_PROG_INGRESS, o->ingress_prog_fd, errorp);
    }
    if (!error) {
        error = pin_fd(o, PIN_PROG_DOWNCALL, o->downcall_prog_fd, errorp);
    }
    if (!error) {
        error = pin_fd(o, PIN_PROG_METER, o->meter_prog_fd, errorp);
    }
    if (!error) {
        error = pin_fd(o, PIN_PROG_CT_REASS, o->ct_reass_prog_fd, errorp);
    }
    if (!error) {
        error = pin_instance_mark(o, cfg->instance ? cfg->instance : "",
                                  errorp);
    }
    if (error) {
        goto error;
    }

    free(ovs_libbpf_log_capture_end());
    VLOG_INFO("%s: loaded BPF datapath %s (ABI version %"PRIu32") in "
              "%lld ms, maps pinned in %s", dp_name, o->path, o->abi_version,
              time_msec() - start, o->pin_dir);
    *objp = o;
    return 0;

error:
    libbpf_log = ovs_libbpf_log_capture_end();
    if (libbpf_log) {
        VLOG_ERR("%s: %s; libbpf said:\n%s", dp_name, *errorp, libbpf_log);
        free(libbpf_log);
    } else {
        VLOG_ERR("%s: %s", dp_name, *errorp);
    }
    dpif_bpf_obj_unload(o, true);
    return error;
}

/* Moves the pins of 'o' to the pin directory 'pin_name', in place of what
 * is there. */
int
dpif_bpf_obj_move_pins(struct dpif_bpf_obj *o, const char *pin_name)
{
    char *dir = xasprintf("%s/%s", DPIF_BPF_PIN_ROOT, pin_name);

    remove_pins(dir);
    if (rename(o->pin_dir, dir)) {
        int error = errno;

        free(dir);
        return error;
    }
    free(o->pin_dir);
    o->pin_dir = dir;
    return 0;
}

/* Closes 'o'.  With 'remove_pins', the programs and maps go away with the
 * last of what uses them (the TC filters must be gone); without, they stay
 * for the next ovs-vswitchd. */
void
dpif_bpf_obj_unload(struct dpif_bpf_obj *o, bool remove_pins_)
{
    if (!o) {
        return;
    }
    if (o->pin_dir) {
        if (remove_pins_) {
            remove_pins(o->pin_dir);
            remove_staging_pins(o);
        }
        free(o->pin_dir);
    }
    int fds[] = { o->ingress_prog_fd, o->downcall_prog_fd, o->meter_prog_fd,
                  o->ct_reass_prog_fd,
                  o->saved_ports_fd, o->saved_flows_fd };
    for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
    if (o->ct_zones) {
        dpif_bpf_ct_limit_forget(o->ct_zones);
        munmap(o->ct_zones, ct_zones_size());
    }
    datapath_bpf__destroy(o->skel);
    free(o->elf);
    free(o->path);
    free(o);
}

int
dpif_bpf_tc_attach(int ifindex, const char *devname, int fd,
                   bool *created_qdisc)
{
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
                .attach_point = BPF_TC_INGRESS);
    LIBBPF_OPTS(bpf_tc_opts, opts, .handle = DPIF_BPF_TC_HANDLE,
                .priority = DPIF_BPF_TC_PRIORITY, .prog_fd = fd,
                .flags = BPF_TC_F_REPLACE);
    int error;

    ovs_libbpf_log_init();
    error = -bpf_tc_hook_create(&hook);
    *created_qdisc = !error;
    if (error == EEXIST) {
        LIBBPF_OPTS(bpf_tc_opts, ours, .handle = DPIF_BPF_TC_HANDLE,
                    .priority = DPIF_BPF_TC_PRIORITY);

        /* Our filter already there means that an ovs-vswitchd of ours that
         * did not exit cleanly (e.g. killed) made this qdisc: take it over,
         * so that removing the port removes it. */
        *created_qdisc = !bpf_tc_query(&hook, &ours);
        error = 0;
    }
    if (error) {
        VLOG_WARN("%s: cannot create clsact qdisc (%s)",
                  devname, ovs_strerror(error));
    } else {
        error = -bpf_tc_attach(&hook, &opts);
        if (error) {
            VLOG_WARN("%s: cannot attach BPF program at TC ingress (%s)",
                      devname, ovs_strerror(error));
            if (*created_qdisc) {
                hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
                bpf_tc_hook_destroy(&hook);
                *created_qdisc = false;
            }
        }
    }
    return error;
}

void
dpif_bpf_tc_detach(int ifindex, bool remove_qdisc)
{
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
                .attach_point = BPF_TC_INGRESS);
    LIBBPF_OPTS(bpf_tc_opts, opts, .handle = DPIF_BPF_TC_HANDLE,
                .priority = DPIF_BPF_TC_PRIORITY);
    ovs_libbpf_log_init();
    /* Errors are expected if the device is already gone. */
    bpf_tc_detach(&hook, &opts);
    if (remove_qdisc) {
        hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
        bpf_tc_hook_destroy(&hook);
    }
}
