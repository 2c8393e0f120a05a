# CPU per operation by where it ran, from a system-wide `perf record` (docs/BENCHMARKS.md, "Where a TLS get's CPU
# goes"). Each sample is 1/F s of one CPU; the script counts the samples of the given processes inside a time window
# and divides by the operations done in it.
#
#   perf record -a -F 499 -g -o tls.data -- bin/tiffin bench kv --tls --sizes 1MiB --operations get --no-local \
#     --rounds 1 --duration 10
#   perf script -i tls.data -F pid,time,ip,sym,dso -G > flat.txt
#   awk -v t0=T0 -v t1=T1 -v pids=PID,PID -v ops=N -v hz=499 -f cpu_per_op.awk flat.txt | sort -rn
#
# T0..T1: the case's measured seconds (perf's clock; the last 10 s of the case's 15, after its 5 s warm-up); N: the
# case's ops/s times the seconds. Prints µs of CPU per operation by library, the kernel split into copies, page
# clearing and the rest, and the named symbols that the accounting quotes.
BEGIN { split(pids, P, ","); for (i in P) want[P[i]] = 1; if (hz == "") hz = 499 }
{
    t = $2 + 0
    if (t < t0 || t >= t1 || !($1 in want)) next
    d = $NF; gsub(/[()]/, "", d); sub(/.*\//, "", d); sub(/_x86_64[0-9]+/, "", d)
    sym = $4
    if (d ~ /kallsyms/) {
        if (sym ~ /copy_(from|to)_iter|copy_user|rep_movs/) k = "kernel: copies"
        else if (sym ~ /clear_page/) k = "kernel: page clearing"
        else k = "kernel: other"
    } else if (d ~ /^perf-/ || d == "unknown") k = "Java (JIT-compiled code)"
    else k = d
    a[k]++; n++
    if (sym ~ /memmove|fill_in_stack_trace|BacktraceBuilder/) s["  of which " sym]++
}
END {
    us = 1e6 / hz / ops
    for (k in a) printf "%7.1f %s\n", a[k] * us, k
    for (k in s) printf "%7.1f %s\n", s[k] * us, k
    printf "%7.1f TOTAL µs of CPU per operation\n", n * us
}
