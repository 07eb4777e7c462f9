#!/usr/bin/env python3
"""Sorts the samples of a perf profile into the layers a request crosses.

Reads collapsed stacks (inferno-collapse-perf's format: `thread;frame;...;leaf COUNT`,
root first) and attributes each sample to one category: the first frame, walking from the
leaf towards the root, that matches a category's pattern decides (a stack that matches
none counts as kernel when its leaf is a kernel frame). So a `memcpy` called by
protobuf encoding counts as protobuf, and a `malloc` anywhere counts as allocation. Prints
a Markdown table: the share of samples per category, split by thread group (the thread
name with its number removed), and, when --ops-per-sec, --freq and --seconds are given, the
CPU time per operation each category costs.

    scripts/profile-categories.py STACKS.folded [--title T] [--ops-per-sec N --freq HZ --seconds S]
"""

import argparse
import collections
import re
import sys

# (category, pattern), tried in this order on each frame, leaf first.
CATEGORIES = [
    ("fsync", r"fdatasync|\bfsync|sync_data|sync_all|jbd2|file_write_and_wait|ext4_sync_file"),
    ("allocation", r"\bmalloc\b|\bfree\b|\brealloc\b|\bcalloc\b|_int_malloc|_int_free|__rust_alloc|__rust_dealloc|__rust_realloc|malloc_consolidate|cfree|alloc::raw_vec::finish_grow|_rjem_|je_|cache_bin_|sz_index2size|\bsbrk\b|mmap|munmap|page_fault|exc_page_fault"),
    ("protobuf (prost)", r"prost::|::encode_raw|::encoded_len|::merge_field|protobuf"),
    ("network, HTTP/2, gRPC framing", r"\bh2::|hyper::|hyper_util::|tonic::|tower::|mio::|tokio::net|tcp_|sock_|__sys_sendto|__sys_recvfrom|sendmsg|recvmsg|\bsend\b|\brecv\b|__libc_recv|__libc_send|writev|readv|epoll|ep_poll|ip_|__dev_queue|net_rx|loopback|skb"),
    ("thread wake-ups and scheduling (futex, channels)", r"futex|schedule\b|__schedule|pthread_cond|std::sync::mpmc|std::sync::mpsc|try_to_wake_up|finish_task_switch|syscall_exit_to_user_mode|tokio::runtime::park|parking_lot_core::thread_parker"),
    ("session lookup", r"rowtree_server::spanner::session|rowtree_server::.*sessions"),
    ("parse, bind, plan", r"rowtree_parser::|rowtree_sql::plan|rowtree_sql::bind|rowtree_sql::planner|rowtree_sql::binder"),
    ("locks (row locks, mutexes)", r"rowtree_txn::lock|parking_lot::|lock_api::|std::sync::.*Mutex|RwLock"),
    ("commit pipeline", r"rowtree_txn::commit"),
    ("storage (fjall, LSM, page cache)", r"fjall::|lsm_tree::|value_log|lz4|crc32|xxhash|filemap_|copy_page_to_iter|ext4_file_read|generic_file_read|pread|\bread\b.*_\[k\]"),
    ("SQL execution, expressions", r"rowtree_sql::|rowtree_expr::"),
    ("rows, keys, MVCC (db, encoding, kv)", r"rowtree_db::|rowtree_encoding::|rowtree_kv::|rowtree_types::"),
    ("server request handling (Spanner API)", r"rowtree_server::"),
    ("bench client (operation mix, checks)", r"rowtree_bench::|rowtree_cli::"),
    ("async runtime (tokio)", r"tokio::"),
]
# Samples whose stack matches none of the above: in the kernel, or elsewhere.
KERNEL = ("kernel, other", re.compile(r"_\[k\]$"))
COMPILED = [(name, re.compile(pat)) for name, pat in CATEGORIES]
OTHER = "other (libc, std)"


def categorize(frames):
    for frame in reversed(frames):
        for name, pattern in COMPILED:
            if pattern.search(frame):
                return name
    if KERNEL[1].search(frames[-1] if frames else ""):
        return KERNEL[0]
    return OTHER


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folded")
    parser.add_argument("--title", default="")
    parser.add_argument("--ops-per-sec", type=float)
    parser.add_argument("--freq", type=float)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--threads", type=int, default=8, help="thread groups shown as columns")
    args = parser.parse_args()

    by_cat = collections.Counter()
    by_cat_thread = collections.Counter()
    by_thread = collections.Counter()
    total = 0
    with open(args.folded) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            try:
                n = int(count)
            except ValueError:
                continue
            frames = stack.split(";")
            thread = re.sub(r"[-_ ]?[0-9/]+$", "", frames[0]) or frames[0]
            cat = categorize(frames[1:])
            by_cat[cat] += n
            by_cat_thread[(cat, thread)] += n
            by_thread[thread] += n
            total += n
    if total == 0:
        sys.exit("no samples")

    threads = [t for t, _ in by_thread.most_common(args.threads)]
    per_op = args.ops_per_sec and args.freq and args.seconds
    print(f"### Where the time goes: {args.title}" if args.title else "### Where the time goes")
    print()
    print(f"{total} samples. Share of all samples, by category and by thread group.")
    if per_op:
        cpu_per_op_us = total / args.freq / args.seconds / args.ops_per_sec * 1e6
        print(
            f"CPU per operation: {cpu_per_op_us:.1f} µs "
            f"({total / args.freq / args.seconds:.2f} cores busy at {args.ops_per_sec:,.0f} operations/s)."
        )
    print()
    head = ["category", "all"] + threads + (["µs CPU / op"] if per_op else [])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cat, n in by_cat.most_common():
        row = [cat, f"{100 * n / total:.1f}%"]
        for t in threads:
            row.append(f"{100 * by_cat_thread[(cat, t)] / total:.1f}%")
        if per_op:
            row.append(f"{cpu_per_op_us * n / total:.1f}")
        print("| " + " | ".join(row) + " |")
    row = ["all", "100%"] + [f"{100 * by_thread[t] / total:.1f}%" for t in threads]
    if per_op:
        row.append(f"{cpu_per_op_us:.1f}")
    print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
