#!/usr/bin/env bash
# The prepared device check of issue 14: the backend tests on CuPy, then exhaustive `verify` on the GPU
# against the CPU numbers in benchmarks/gpu_check_cpu.json. Runs in under 8 minutes on one NVIDIA GPU
# with no network, from the checkout (no build step: PYTHONPATH), with a Python that has CuPy, numpy,
# sympy, networkx, rich, pytest and hypothesis. array-api-compat is installed offline from the wheel
# carried in .whl/ (fetch it beside the checkout with `pip download array-api-compat --no-deps -d .whl`).
#
#   OUT=/some/dir bash benchmarks/gpu_check.sh                 # the device check (writes into $OUT)
#   GPU_CHECK_BACKEND=numpy GPU_CHECK_N="12 13" GPU_CHECK_REACHABLE="" GPU_CHECK_ROWS=16384 \
#       OUT=/tmp/check bash benchmarks/gpu_check.sh            # the same script on CPU, small sizes
#
# Environment (defaults in brackets): GPU_CHECK_BACKEND [cupy], GPU_CHECK_N, LO HI or a list [16 24],
# GPU_CHECK_BUDGET, seconds for the size sweep [140], GPU_CHECK_ROWS, instances per chunk [2097152],
# GPU_CHECK_REACHABLE, n for the reachable-state engine when present [2048 4096], GPU_CHECK_FORCE_WHEEL=1
# installs the carried wheel even where array-api-compat is present (to test the offline install).
# Writes to $OUT: gpu_check.log, environment.json, nvidia-smi.txt, backend_tests.txt/.xml,
# gpu_verify.json (the sweep, with CPU ratios and count checks), reachable.json, summary.txt.
# Exit status: 0 when the tests passed and the benchmark ran; 1 otherwise (the files are written anyway).
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$REPO/gpu_check_out}"
BACKEND="${GPU_CHECK_BACKEND:-cupy}"
N_RANGE="${GPU_CHECK_N:-16 24}"
BUDGET="${GPU_CHECK_BUDGET:-140}"
ROWS="${GPU_CHECK_ROWS:-2097152}"
REACHABLE="${GPU_CHECK_REACHABLE-2048 4096}"
PYTHON="${PYTHON:-python}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
cd "$REPO"
t0=$(date +%s)
status=0
echo "== gpu_check: backend $BACKEND, n $N_RANGE, budget ${BUDGET}s, rows $ROWS, reachable '${REACHABLE}'"

# 1. array-api-compat, offline, into a private folder on PYTHONPATH (nothing installed system-wide)
PYLIB="$(mktemp -d)/pylib"
if [ -n "${GPU_CHECK_FORCE_WHEEL:-}" ] || ! "$PYTHON" -c "import array_api_compat" 2>/dev/null; then
    wheel=$(ls "$REPO"/.whl/array_api_compat-*.whl 2>/dev/null | head -n 1)
    if [ -z "$wheel" ]; then
        echo "gpu_check: array-api-compat is not installed and no wheel is in $REPO/.whl/" >&2
        exit 1
    fi
    # a pure-Python wheel is a zip of the package: extracting it is the install (no pip, no network)
    "$PYTHON" -m zipfile -e "$wheel" "$PYLIB" || exit 1
    echo "array-api-compat from $(basename "$wheel") -> $PYLIB"
fi
export PYTHONPATH="$REPO:$PYLIB${PYTHONPATH:+:$PYTHONPATH}"

# 2. what ran where
(nvidia-smi || echo "no nvidia-smi") > "$OUT/nvidia-smi.txt" 2>&1
"$PYTHON" - "$BACKEND" > "$OUT/environment.json" <<'PY'
import json, platform, sys
import array_api_compat, numpy
from commcomp.backend import available_namespaces, namespace
info = {"python": platform.python_version(), "numpy": numpy.__version__,
        "array_api_compat": f"{array_api_compat.__version__} ({array_api_compat.__file__})",
        "available": available_namespaces()}
try:
    import cupy
    info["cupy"] = cupy.__version__
    info["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    info["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
except Exception as exc:  # recorded, not fatal: the CPU dry run has no CuPy
    info["cupy_error"] = f"{type(exc).__name__}: {exc}"
namespace(sys.argv[1])  # the backend asked for must load
print(json.dumps(info, indent=1))
PY
[ $? -eq 0 ] || { echo "gpu_check: backend $BACKEND does not load"; status=1; }
cat "$OUT/environment.json"

# 3. the backend tests (their CuPy cases run where CuPy is; conversions to NumPy are refused there).
#    Worst case of the whole script: 200 s tests + 190 s sweep + 40 s reachable + setup, about 7.5 min;
#    CuPy compiles each new kernel on first use (a cold cache), which is why the tests get the most time.
echo "== backend tests"
timeout 200 "$PYTHON" -m pytest -q -p no:cacheprovider -rs tests/backend --junitxml "$OUT/backend_tests.xml" \
    > "$OUT/backend_tests.txt" 2>&1
tests_rc=$?
tail -n 15 "$OUT/backend_tests.txt"
[ $tests_rc -eq 0 ] || status=1

# 4. exhaustive verify, INDEX -> Index Lookup, LSTM width 64, against the CPU numbers measured here
echo "== exhaustive verify on $BACKEND"
timeout $((BUDGET + 50)) "$PYTHON" benchmarks/bench_gpu_verify.py --backend "$BACKEND" --n $N_RANGE \
    --budget "$BUDGET" --rows "$ROWS" --warmup 8 --reference benchmarks/gpu_check_cpu.json --out "$OUT/gpu_verify.json"
[ $? -eq 0 ] || status=1

# 5. the reachable-state engine at n in the thousands, when this checkout has it
if [ -n "$REACHABLE" ]; then
    echo "== reachable-state engine"
    timeout 40 "$PYTHON" benchmarks/bench_gpu_verify.py --backend "$BACKEND" --n --reachable $REACHABLE \
        --out "$OUT/reachable.json" || { echo "reachable-state run failed (timeout, error or results unequal to NumPy)"; status=1; }
fi

# 6. summary
"$PYTHON" - "$OUT" "$tests_rc" "$(( $(date +%s) - t0 ))" > "$OUT/summary.txt" <<'PY'
import json, sys
from pathlib import Path
out, tests_rc, seconds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
print(f"backend tests: {'passed' if tests_rc == 0 else f'FAILED (exit {tests_rc})'}; wall {seconds} s")
path = out / "gpu_verify.json"
if path.exists():
    res = json.loads(path.read_text())
    print(f"exhaustive verify, index-lookup, lstm width {res['width']}, {res['precision']}, backend {res['backend']}:")
    for r in res["runs"]:
        if "error" in r:
            print(f"  n={r['n']:3d}  ERROR {r['error']}")
            continue
        cpu = f"cpu {r['cpu_seconds']:.1f} s{' (extrapolated)' if r.get('cpu_extrapolated') else ''}, " \
              f"speedup {r['speedup']:.1f}x" if "cpu_seconds" in r else "no cpu number"
        same = {True: "counts = cpu", False: "COUNTS DIFFER FROM CPU", None: ""}[r.get("counts_equal_cpu")]
        print(f"  n={r['n']:3d}  {r['instances']:>12d} instances  {r['seconds']:8.2f} s  {cpu}  faithful "
              f"{r['faithful_count']}/{r['instances']}  distinct {r['distinct_messages']}  {same}")
    for s in res["skipped"]:
        print(f"  n={s['n']:3d}  skipped: predicted {s['predicted_seconds']:.0f} s past the budget")
else:
    print("no benchmark result")
reach = out / "reachable.json"
if reach.exists():
    for r in json.loads(reach.read_text()).get("reachable", []):
        print(f"  reachable-states n={r['n']}: " + (r["error"] if "error" in r else
              f"lstm w{r['width']} {r['precision']}, {r['distinct_messages']} messages, {r['seconds']:.2f} s "
              f"(numpy {r['numpy_seconds']:.2f} s), exact results equal to numpy: {r['equal_to_numpy']}"))
PY
cat "$OUT/summary.txt"
echo "== gpu_check done in $(( $(date +%s) - t0 )) s, status $status"
exit $status
