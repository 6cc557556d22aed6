#!/bin/bash
# Instructions executed by one workload of two builds of `bench`, counted by valgrind's callgrind.
# On a busy or virtual machine wall-clock times of two builds can drift 10-30% between runs;
# instruction counts repeat to the last few digits, so a change of 1% shows. They do not show
# cache misses or lock waits: confirm a gain with `bench` itself, alternating the two builds.
#
#   Benchmarks/instructions.sh BEFORE_CHECKOUT AFTER_CHECKOUT WORKLOAD [ONLY]
#   Benchmarks/instructions.sh /work/old /work/main fetch_mixed "dicrecord find"
#
# Each checkout needs a release build of its benchmarks (swift build -c release --package-path
# Benchmarks). ONLY (default "dicrecord") picks implementations as `bench --only` does. The
# callgrind files are left in $OUT (default a temporary folder) for callgrind_annotate.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
before=$1 after=$2 workload=$3 only=${4:-dicrecord}
command -v valgrind > /dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
for side in before after; do
    dir=$(cd "${!side}" && pwd)
    binary="$dir/Benchmarks/.build/release/bench"
    [ -x "$binary" ] || { echo "instructions.sh: no release build at $binary" >&2; exit 1; }
    (cd "$dir/Benchmarks" && valgrind --tool=callgrind --callgrind-out-file="$out/$side.out" \
        "$binary" "$workload" --only "$only" > /dev/null 2> "$out/$side.log") &
done
wait
count() { grep -o 'refs: *[0-9,]*' "$out/$1.log" | tr -dc '0-9'; }
b=$(count before) a=$(count after)
echo "$workload ($only): before $b, after $a instructions ($(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.2f%%", (a - b) * 100 / b }'))"
echo "callgrind files: $out/before.out $out/after.out"
