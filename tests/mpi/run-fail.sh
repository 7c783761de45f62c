#!/bin/sh
# run-fail.sh MPIEXEC PROGRAM stop|kill|slow|allreduce-stop|allreduce-kill [MPIEXEC FLAGS...]:
# runs PROGRAM (test-mpi-fail) on 3 ranks with a short timeout and checks that
# the job ends non-zero, that rank 0 reported the failure (stop; after kill
# mpirun may end rank 0 first; allreduce-stop: within twice the timeout, as
# the failure of the allreduce), and that no rank is
# left running; slow: that the job ends with 0 (a long computation is no
# failure).
set -u
mpiexec=$1
program=$2
mode=$3
shift 3
dir=$(mktemp -d)
timeout_s=3
if [ "$mode" = slow ]; then timeout_s=1; fi
GGML_MPI_TIMEOUT=$timeout_s timeout 120 "$mpiexec" "$@" -np 3 "$program" "$mode" "$dir" > "$dir/log" 2>&1
rc=$?
grep -v '^\[' "$dir/log" | tail -n 25
echo "run-fail.sh: $mode: mpirun exited with $rc"
fail=0
if [ "$mode" = slow ]; then
    if [ "$rc" -ne 0 ]; then echo "FAIL: the job of a long computation exited with $rc"; fail=1; fi
elif [ "$rc" -eq 0 ]; then echo "FAIL: the job exited 0"; fail=1; fi
if [ "$rc" -eq 124 ]; then echo "FAIL: the job did not end within 120 s"; fail=1; fi
case $mode in *stop)
    if ! grep -q "worker failure reported" "$dir/log"; then
        echo "FAIL: rank 0 did not report the failure"; fail=1
    elif [ "$mode" = allreduce-stop ]; then
        took=$(sed -n 's/.*worker failure reported after \([0-9]*\)\..*/\1/p' "$dir/log")
        if [ "${took:-999}" -ge $((2 * timeout_s)) ]; then
            echo "FAIL: the failure took ${took} s to report (timeout ${timeout_s} s)"; fail=1
        fi
    fi
esac
if [ "$mode" = allreduce-stop ] && ! grep -q "no answer to an allreduce" "$dir/log"; then
    echo "FAIL: rank 0 did not see the allreduce fail"; fail=1
fi
# a running (not zombie) process of this pid
alive() {
    kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}
for f in "$dir"/rank*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    # mpirun has ended; the kernel may take a moment to finish a killed process
    waited=0
    while alive "$pid" && [ "$waited" -lt 30 ]; do sleep 0.5; waited=$((waited + 1)); done
    if alive "$pid"; then
        echo "FAIL: $(basename "$f" .pid) (pid $pid) is still running"; kill -9 "$pid"; fail=1
    fi
done
rm -rf "$dir"
exit $fail
