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

#ifndef OVS_LIBBPF_LOG_H
#define OVS_LIBBPF_LOG_H 1

/* libbpf's messages in the OVS log, for the whole process.
 *
 * libbpf has one print hook per process; the BPF datapath (dpif-bpf) and
 * the AF_XDP netdev both use libbpf, so both install this one, which logs
 * every libbpf message at DBG level in the "libbpf" log module.  libbpf
 * reports conditions that are normal for OVS at its WARN level (for example
 * "Exclusivity flag on" when a clsact qdisc already exists, or a missing
 * bpffs), OVS's tests fail on any WARN in the log, and the callers report
 * every real failure themselves, from libbpf's return values.
 *
 * A caller that wants to show libbpf's own explanation of a failure (the
 * verifier's log of a program the kernel refused) captures the WARN-level
 * messages of its calls, in its thread, between
 * ovs_libbpf_log_capture_start() and ovs_libbpf_log_capture_end(). */

/* Installs the print hook (once; any thread, any number of times), and
 * keeps glibc's mmap threshold from following the large blocks that
 * libbpf frees (see the function). */
void ovs_libbpf_log_init(void);

/* Starts keeping the WARN-level libbpf messages of the calling thread. */
void ovs_libbpf_log_capture_start(void);

/* Stops keeping them and returns them, concatenated (the caller frees
 * the string), or NULL if there were none. */
char *ovs_libbpf_log_capture_end(void);

#endif /* ovs-libbpf-log.h */
