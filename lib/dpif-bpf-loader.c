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
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "bpf/datapath-abi.h"
#include "dirs.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "ovs-libbpf-log.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_loader);

#ifndef BPF_DATAPATH_BUILD_OBJ
#define BPF_DATAPATH_BUILD_OBJ "bpf/datapath.bpf.o"
#endif

/* Our TC filter: one per device, at a fixed handle and priority so that a
 * re-attach replaces it and a detach finds it. */
#define DPIF_BPF_TC_HANDLE 0x4f56
#define DPIF_BPF_TC_PRIORITY 1

/* The action programs, by the slot of the 'tailcalls' program array that
 * holds them: the slot is the action type, the program ovs_bpf_act_NAME (see
 * OVS_BPF_ACTIONS in bpf/datapath-abi.h).  A program missing from the object
 * leaves its slot empty: the tail call fails and the BPF side counts an
 * action error. */
const char *const dpif_bpf_tailcall_progs[__OVS_BPF_TAILCALL_MAX] = {
#define OVS_BPF_ACTION_PROG(ENUM, NAME) \
    [OVS_BPF_ACTION_##ENUM] = "ovs_bpf_act_" #NAME,
    OVS_BPF_ACTIONS(OVS_BPF_ACTION_PROG)
#undef OVS_BPF_ACTION_PROG
    /* Recirculation enters the ingress program again (see
     * bpf/datapath.bpf.c). */
    [OVS_BPF_TAILCALL_LOOKUP] = OVS_BPF_PROG_INGRESS,
};

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

static const char *const flow_table_names[OVS_BPF_N_FLOW_TABLES]
    = OVS_BPF_MAP_FLOW_TABLES;

static const char *const pinned_maps[] = {
    OVS_BPF_MAP_FLOW_MASKS, OVS_BPF_MAP_DP_CONFIG,
    OVS_BPF_MAP_DP_STATS, OVS_BPF_MAP_PORTS, OVS_BPF_MAP_IFINDEXES,
    OVS_BPF_MAP_UPCALLS, OVS_BPF_MAP_TAILCALLS,
};

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

static int
pin_map(struct dpif_bpf_obj *o, const char *name, char **errorp)
{
    struct bpf_map *map = bpf_object__find_map_by_name(o->obj, name);
    char *pin = xasprintf("%s/%s", o->pin_dir, name);
    int error = -bpf_map__pin(map, pin);

    free(pin);
    if (error) {
        *errorp = xasprintf("cannot pin map %s in %s (%s)", name, o->pin_dir,
                            ovs_strerror(error));
    }
    return error;
}

/* Finds the __u32 .rodata variable 'name' of 'obj' through the object's BTF.
 * On success stores the .rodata map in '*mapp' and the variable's offset in
 * it in '*offsetp' and returns 0. */
static int
rodata_find_u32(struct bpf_object *obj, const char *name,
                struct bpf_map **mapp, size_t *offsetp)
{
    const struct btf_var_secinfo *vsi;
    const struct btf_type *sec;
    struct bpf_map *rodata = NULL;
    struct bpf_map *map;
    struct btf *btf;
    size_t size;
    int id;

    bpf_object__for_each_map (map, obj) {
        const char *map_name = bpf_map__name(map);
        size_t len = strlen(map_name);

        if (bpf_map__is_internal(map) && len >= 7
            && !strcmp(map_name + len - 7, ".rodata")) {
            rodata = map;
            break;
        }
    }
    btf = bpf_object__btf(obj);
    if (!rodata || !btf || !bpf_map__initial_value(rodata, &size)) {
        return ENOENT;
    }
    id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
    if (id < 0) {
        return ENOENT;
    }
    sec = btf__type_by_id(btf, id);
    vsi = btf_var_secinfos(sec);
    for (int i = 0; i < btf_vlen(sec); i++, vsi++) {
        const struct btf_type *var = btf__type_by_id(btf, vsi->type);
        const char *var_name = btf__name_by_offset(btf, var->name_off);

        if (var_name && !strcmp(var_name, name)) {
            if (vsi->size != sizeof(uint32_t)
                || vsi->offset + sizeof(uint32_t) > size) {
                return EINVAL;
            }
            *mapp = rodata;
            *offsetp = vsi->offset;
            return 0;
        }
    }
    return ENOENT;
}

static int
rodata_get_u32(struct bpf_object *obj, const char *name, uint32_t *value)
{
    struct bpf_map *map;
    size_t offset, size;
    int error;

    error = rodata_find_u32(obj, name, &map, &offset);
    if (!error) {
        const char *data = bpf_map__initial_value(map, &size);

        memcpy(value, data + offset, sizeof *value);
    }
    return error;
}

/* Sets the initial value of a .rodata variable, which the programs see as a
 * constant once the object is loaded. */
static int
rodata_set_u32(struct bpf_object *obj, const char *name, uint32_t value)
{
    struct bpf_map *map;
    size_t offset, size;
    int error;

    error = rodata_find_u32(obj, name, &map, &offset);
    if (!error) {
        char *data = xmemdup(bpf_map__initial_value(map, &size), size);

        memcpy(data + offset, &value, sizeof value);
        error = -bpf_map__set_initial_value(map, data, size);
        free(data);
    }
    return error;
}

static int
map_fd(struct bpf_object *obj, const char *name, int *fdp)
{
    struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

    *fdp = map ? bpf_map__fd(map) : -1;
    return *fdp >= 0 ? 0 : ENOENT;
}

static int
prog_fd(struct bpf_object *obj, const char *name, int *fdp)
{
    struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

    *fdp = prog ? bpf_program__fd(prog) : -1;
    return *fdp >= 0 ? 0 : ENOENT;
}

/* Opens, checks and loads the datapath object for the datapath 'dp_name'.
 * On failure, returns a positive errno value and stores in '*errorp' a
 * message for the user (to be freed by the caller); the details, with the
 * verifier's log if the kernel refused a program, are in the log. */
int
dpif_bpf_obj_load(const char *dp_name, const struct dpif_bpf_obj_config *cfg,
                  struct dpif_bpf_obj **objp, char **errorp)
{
    struct dpif_bpf_obj *o = xzalloc(sizeof *o);
    const char *path = find_object();
    char *libbpf_log;
    int error;

    *objp = NULL;
    *errorp = NULL;
    o->path = xstrdup(path);

    /* libbpf's messages are in the log at DBG level; the warnings of a
     * failed load, the verifier's log among them, are also logged at ERR
     * with the error. */
    ovs_libbpf_log_capture_start();

    o->obj = bpf_object__open_file(path, NULL);
    if (!o->obj) {
        error = errno;
        *errorp = xasprintf("cannot open BPF object %s (%s)", path,
                            ovs_strerror(error));
        goto error;
    }

    error = rodata_get_u32(o->obj, OVS_BPF_RODATA_ABI_VERSION,
                           &o->abi_version);
    if (error) {
        *errorp = xasprintf("BPF object %s has no readable %s (%s)", path,
                            OVS_BPF_RODATA_ABI_VERSION, ovs_strerror(error));
        goto error;
    }
    if (o->abi_version != OVS_BPF_ABI_VERSION) {
        error = EPROTO;
        *errorp = xasprintf("BPF object %s has ABI version %"PRIu32", "
                            "ovs-vswitchd expects %d", path, o->abi_version,
                            OVS_BPF_ABI_VERSION);
        goto error;
    }

    for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        struct bpf_map *flow_table;

        flow_table = bpf_object__find_map_by_name(o->obj,
                                                  flow_table_names[t]);
        if (!flow_table) {
            error = ENOENT;
            *errorp = xasprintf("BPF object %s has no map %s", path,
                                flow_table_names[t]);
            goto error;
        }
        if (cfg->flow_table_size) {
            bpf_map__set_max_entries(flow_table, cfg->flow_table_size);
        }
    }

    /* The parser must decode as many VLAN tags as flow_extract() does for
     * the upcalled packets, or the megaflows of packets with more tags
     * would never match in BPF. */
    if (!rodata_set_u32(o->obj, OVS_BPF_RODATA_VLAN_LIMIT,
                        cfg->vlan_limit)) {
        o->vlan_limit = cfg->vlan_limit;
    } else {
        VLOG_INFO("%s: BPF object has no %s: it decodes its default number "
                  "of VLAN tags", dp_name, OVS_BPF_RODATA_VLAN_LIMIT);
    }

    error = -bpf_object__load(o->obj);
    if (error) {
        *errorp = xasprintf("cannot load BPF object %s (%s)", path,
                            ovs_strerror(error));
        goto error;
    }

    for (int t = 0; t < OVS_BPF_N_FLOW_TABLES; t++) {
        error = map_fd(o->obj, flow_table_names[t], &o->flow_table_fds[t]);
        if (error) {
            *errorp = xasprintf("BPF object %s lacks a map or program of "
                                "the datapath ABI", path);
            goto error;
        }
    }
    if (map_fd(o->obj, OVS_BPF_MAP_FLOW_MASKS, &o->flow_masks_fd)
        || map_fd(o->obj, OVS_BPF_MAP_DP_CONFIG, &o->dp_config_fd)
        || map_fd(o->obj, OVS_BPF_MAP_DP_STATS, &o->dp_stats_fd)
        || map_fd(o->obj, OVS_BPF_MAP_PORTS, &o->ports_fd)
        || map_fd(o->obj, OVS_BPF_MAP_IFINDEXES, &o->ifindexes_fd)
        || map_fd(o->obj, OVS_BPF_MAP_UPCALLS, &o->upcalls_fd)
        || map_fd(o->obj, OVS_BPF_MAP_TAILCALLS, &o->tailcalls_fd)
        || prog_fd(o->obj, OVS_BPF_PROG_INGRESS, &o->ingress_prog_fd)
        || prog_fd(o->obj, OVS_BPF_PROG_DOWNCALL, &o->downcall_prog_fd)) {
        error = ENOENT;
        *errorp = xasprintf("BPF object %s lacks a map or program of the "
                            "datapath ABI", path);
        goto error;
    }

    for (uint32_t i = 0; i < ARRAY_SIZE(dpif_bpf_tailcall_progs); i++) {
        int fd;

        if (!dpif_bpf_tailcall_progs[i]) {
            continue;
        }
        if (prog_fd(o->obj, dpif_bpf_tailcall_progs[i], &fd)) {
            /* Not fatal: the translation only uses actions whose program
             * exists... or the packet is dropped and counted. */
            VLOG_INFO("%s: BPF object has no program %s",
                      dp_name, dpif_bpf_tailcall_progs[i]);
            continue;
        }
        if (bpf_map_update_elem(o->tailcalls_fd, &i, &fd, BPF_ANY)) {
            error = errno;
            *errorp = xasprintf("cannot insert %s into the tail call "
                                "array (%s)", dpif_bpf_tailcall_progs[i],
                                ovs_strerror(error));
            goto error;
        }
    }

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
    o->pin_dir = xasprintf("%s/%s", DPIF_BPF_PIN_ROOT, cfg->pin_name);
    /* Pins that a killed ovs-vswitchd left behind only keep its old maps
     * alive: nothing uses them any more. */
    remove_pins(o->pin_dir);
    if (mkdir(o->pin_dir, 0700)) {
        error = errno;
        *errorp = xasprintf("cannot create %s (%s)", o->pin_dir,
                            ovs_strerror(error));
        goto error;
    }
    for (size_t i = 0; i < ARRAY_SIZE(pinned_maps); i++) {
        error = pin_map(o, pinned_maps[i], errorp);
        if (error) {
            goto error;
        }
    }
    for (size_t i = 0; i < ARRAY_SIZE(flow_table_names); i++) {
        error = pin_map(o, flow_table_names[i], errorp);
        if (error) {
            goto error;
        }
    }

    free(ovs_libbpf_log_capture_end());
    VLOG_INFO("%s: loaded BPF datapath %s (ABI version %"PRIu32"), maps "
              "pinned in %s", dp_name, path, o->abi_version, o->pin_dir);
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
    if (o->obj) {
        bpf_object__close(o->obj);
    }
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
