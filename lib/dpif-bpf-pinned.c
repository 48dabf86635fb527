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

/* The BPF datapaths that an earlier ovs-vswitchd left pinned: finding them
 * (dpif_bpf_enumerate_pinned()), checking what is pinned against this
 * ovs-vswitchd (ABI version, object file, map layouts), taking a datapath
 * over (dpif_bpf_obj_adopt()) and reading its saved state and counters. */

#include <config.h>

#include "dpif-bpf-loader.h"
#include "dpif-bpf-loader-private.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/datapath-abi.h"
#include "bpf/datapath.skel.h"
#include "openvswitch/vlog.h"
#include "ovs-libbpf-log.h"
#include "sset.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(dpif_bpf_pinned);

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
    dpif_bpf_obj_get_map_fds(o);

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
    int fd = dpif_bpf_obj_get_pinned(o, name);
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
    struct dpif_bpf_obj *o = dpif_bpf_obj_alloc();
    uint32_t rodata_size = 0;
    char *errmsg = NULL;
    void *rodata = NULL;
    struct stat st;
    int error;

    *objp = NULL;
    o->path = xstrdup(dpif_bpf_obj_file());
    o->pin_dir = xasprintf("%s/%s", DPIF_BPF_PIN_ROOT, cfg->pin_name);
    if (stat(o->pin_dir, &st)) {
        error = ENOENT;
        goto out;
    }

    o->ingress_prog_fd = dpif_bpf_obj_get_pinned(o, PIN_PROG_INGRESS);
    o->downcall_prog_fd = dpif_bpf_obj_get_pinned(o, PIN_PROG_DOWNCALL);
    o->meter_prog_fd = dpif_bpf_obj_get_pinned(o, PIN_PROG_METER);
    o->ct_reass_prog_fd = dpif_bpf_obj_get_pinned(o, PIN_PROG_CT_REASS);
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
    error = dpif_bpf_obj_open(o, &errmsg);
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
            error = dpif_bpf_obj_pin_instance_mark(
                o, cfg->instance ? cfg->instance : "", &errmsg);
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
    dpif_bpf_obj_remove_staging_pins(o);
    VLOG_INFO("%s: took over the BPF datapath pinned in %s (ABI version "
              "%"PRIu32")", dp_name, o->pin_dir, o->abi_version);
    *objp = o;
    return 0;
}
