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

/* Loading the BPF datapath object of a new datapath: opening it through
 * its skeleton, loading and pinning its programs and maps, closing it, and
 * attaching its programs at TC ingress.  Taking over a datapath that is
 * already pinned is in dpif-bpf-pinned.c. */

#include <config.h>

#include "dpif-bpf-loader.h"
#include "dpif-bpf-loader-private.h"

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

const char *
dpif_bpf_obj_file(void)
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
void
dpif_bpf_obj_remove_staging_pins(const struct dpif_bpf_obj *o)
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
int
dpif_bpf_obj_open(struct dpif_bpf_obj *o, char **errorp)
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

/* The size of the mapping of the 'ct_zones' array map: its values, each
 * 8-byte aligned, in whole pages. */
static size_t
ct_zones_size(void)
{
    size_t size = ROUND_UP(sizeof(struct ovs_bpf_ct_zone), 8)
                  * OVS_BPF_N_CT_ZONES;

    return ROUND_UP(size, get_page_size());
}

void
dpif_bpf_obj_get_map_fds(struct dpif_bpf_obj *o)
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

int
dpif_bpf_obj_get_pinned(const struct dpif_bpf_obj *o, const char *name)
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

struct dpif_bpf_obj *
dpif_bpf_obj_alloc(void)
{
    struct dpif_bpf_obj *o = xzalloc(sizeof *o);

    o->ingress_prog_fd = o->downcall_prog_fd = o->meter_prog_fd = -1;
    o->ct_reass_prog_fd = -1;
    o->saved_ports_fd = o->saved_flows_fd = -1;
    return o;
}

/* Pins in the pin directory of 'o' the mark of the instance 'instance' (see
 * DPIF_BPF_INSTANCE_PIN), unless it is there. */
int
dpif_bpf_obj_pin_instance_mark(const struct dpif_bpf_obj *o,
                               const char *instance, char **errorp)
{
    char *name = xasprintf(DPIF_BPF_INSTANCE_PIN"%s", instance);
    int fd = dpif_bpf_obj_get_pinned(o, name);
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

/* Opens, checks and loads the datapath object for the datapath 'dp_name'.
 * On failure, returns a positive errno value and stores in '*errorp' a
 * message for the user (to be freed by the caller); the details, with the
 * verifier's log if the kernel refused a program, are in the log. */
int
dpif_bpf_obj_load(const char *dp_name, const struct dpif_bpf_obj_config *cfg,
                  struct dpif_bpf_obj **objp, char **errorp)
{
    long long int start = time_msec();
    struct dpif_bpf_obj *o = dpif_bpf_obj_alloc();
    struct datapath_bpf *skel;
    char *libbpf_log;
    size_t rodata_size;
    int error;

    *objp = NULL;
    *errorp = NULL;
    o->path = xstrdup(dpif_bpf_obj_file());

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

    error = dpif_bpf_obj_open(o, errorp);
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

    dpif_bpf_obj_get_map_fds(o);
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
        error = dpif_bpf_obj_pin_instance_mark(
            o, cfg->instance ? cfg->instance : "", errorp);
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
            dpif_bpf_obj_remove_staging_pins(o);
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
