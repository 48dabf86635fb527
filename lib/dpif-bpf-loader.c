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
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "bpf/datapath-abi.h"
#include "bpf/datapath.skel.h"
#include "dirs.h"
#include "openvswitch/vlog.h"
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

    error = -bpf_object__open_skeleton(o->skel->skeleton, &opts);
    if (error) {
        /* ESRCH: a map or a program of the skeleton is not in the file. */
        *errorp = xasprintf("cannot open BPF object %s as a datapath of ABI "
                            "version %d (%s)", o->path, OVS_BPF_ABI_VERSION,
                            ovs_strerror(error));
    }
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
    struct dpif_bpf_obj *o = xzalloc(sizeof *o);
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
    if (o->abi_version != OVS_BPF_ABI_VERSION) {
        error = EPROTO;
        *errorp = xasprintf("BPF object %s has ABI version %"PRIu32", "
                            "ovs-vswitchd expects %d", o->path,
                            o->abi_version, OVS_BPF_ABI_VERSION);
        goto error;
    }

    if (cfg->flow_table_size) {
        for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
            bpf_map__set_max_entries(flow_table_map(skel, t),
                                     cfg->flow_table_size);
        }
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

    for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        o->flow_table_fds[t] = bpf_map__fd(flow_table_map(skel, t));
    }
    o->flow_masks_fd = bpf_map__fd(skel->maps.flow_masks);
    o->mask_order_fd = bpf_map__fd(skel->maps.mask_order);
    o->mask_stats_fd = bpf_map__fd(skel->maps.mask_stats);
    o->dp_config_fd = bpf_map__fd(skel->maps.dp_config);
    o->dp_stats_fd = bpf_map__fd(skel->maps.dp_stats);
    o->meters_fd = bpf_map__fd(skel->maps.meters);
    o->ports_fd = bpf_map__fd(skel->maps.ports);
    o->ifindex_ports_fd = bpf_map__fd(skel->maps.ifindex_ports);
    o->ifindexes_fd = bpf_map__fd(skel->maps.ifindexes);
    o->upcalls_fd = bpf_map__fd(skel->maps.upcalls);
    o->tailcalls_fd = bpf_map__fd(skel->maps.tailcalls);
    o->ingress_prog_fd = bpf_program__fd(skel->progs.ovs_bpf_ingress);
    o->downcall_prog_fd = bpf_program__fd(skel->progs.ovs_bpf_downcall);
    o->meter_prog_fd = bpf_program__fd(skel->progs.ovs_bpf_meter_packet);

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
    dpif_bpf_obj_unload(o);
    return error;
}

void
dpif_bpf_obj_unload(struct dpif_bpf_obj *o)
{
    if (!o) {
        return;
    }
    if (o->pin_dir) {
        remove_pins(o->pin_dir);
        free(o->pin_dir);
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
