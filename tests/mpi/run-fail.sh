#!/bin/sh
# run-fail.sh MPIEXEC PROGRAM stop|kill [MPIEXEC FLAGS...]: runs PROGRAM (test-mpi-fail)
# on 3 ranks with a 3 s timeout and checks that the job ends non-zero, that
# rank 0 reported the failure (stop; after kill mpirun may end rank 0 first),
# and that no rank is left running.
set -u
mpiexec=$1
program=$2
mode=$3
shift 3
dir=$(mktemp -d)
GGML_MPI_TIMEOUT=3 timeout 120 "$mpiexec" "$@" -np 3 "$program" "$mode" "$dir" > "$dir/log" 2>&1
rc=$?
grep -v '^\[' "$dir/log" | tail -n 25
echo "run-fail.sh: $mode: mpirun exited with $rc"
fail=0
if [ "$rc" -eq 0 ]; then echo "FAIL: the job exited 0"; fail=1; fi
if [ "$rc" -eq 124 ]; then echo "FAIL: the job did not end within 120 s"; fail=1; fi
if [ "$mode" = stop ] && ! grep -q "worker failure reported" "$dir/log"; then
    echo "FAIL: rank 0 did not report the failure"; fail=1
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
