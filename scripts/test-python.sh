#!/usr/bin/env bash
# The Python package as a user gets it: a clean virtual environment in a temporary directory,
# `pip install <repository root>` (scikit-build-core builds libcnc into the wheel), then, from a
# directory outside the repository and with CNC_LIBRARY unset, `import cnc` solves a small system
# and the package's pytest suite (bindings/python/tests) runs against the installed package.
# Fails on any failure.
#
#   scripts/test-python.sh                 CPU + OpenCL build (CNC_WITH_CUDA=OFF: faster)
#   CNC_WITH_CUDA=ON scripts/test-python.sh   the project's default, CUDA where nvcc is found
#   PYTHON=python3.12 scripts/test-python.sh  another interpreter
#   KEEP=1 scripts/test-python.sh          keep the temporary directory (its path is printed)
#
# Needs python3 with venv (Debian: apt-get install python3-venv), a C++20 compiler, CMake >= 3.18,
# libxxhash-dev, and PyPI (numpy, scipy, pytest, scikit-build-core).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-python3}
cuda=${CNC_WITH_CUDA:-OFF}
start=$(date +%s)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cnc-test-python.XXXXXX")
cleanup() {
  if [[ -n "${KEEP:-}" ]]; then echo "test-python: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

step() { echo "test-python: $* ($(($(date +%s) - start)) s)"; }

step "clean venv in $tmp/venv"
if ! "$python" -m venv "$tmp/venv"; then
  echo "test-python: '$python -m venv' failed (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip

step "pip install $repo[test] (CNC_WITH_CUDA=$cuda)"
if ! "$py" -m pip install --verbose "$repo[test]" \
    --config-settings=cmake.define.CNC_WITH_CUDA="$cuda" >"$tmp/pip-install.log" 2>&1; then
  tail -n 60 "$tmp/pip-install.log" >&2
  echo "test-python: pip install failed (log above, full log in $tmp/pip-install.log with KEEP=1)" >&2
  exit 1
fi
grep -E "Successfully installed|Created wheel" "$tmp/pip-install.log" || true

# From outside the repository, with nothing set: the installed package and its own libcnc.
cd "$tmp"
unset CNC_LIBRARY PYTHONPATH
export PYTHONDONTWRITEBYTECODE=1

step "import cnc from $tmp with CNC_LIBRARY unset"
"$py" - "$tmp/venv" <<'PY'
import os, sys
import numpy as np
import scipy.sparse as sp
import cnc

venv = os.path.realpath(sys.argv[1])
pkg = os.path.dirname(os.path.realpath(cnc.__file__))
lib = os.path.realpath(cnc.library_path())
assert pkg.startswith(venv), f"cnc imported from {pkg}, not from the venv {venv}"
assert os.path.dirname(lib) == pkg, f"libcnc loaded from {lib}, not from the package {pkg}"
assert os.path.isfile(os.path.join(pkg, "py.typed")), "py.typed missing from the wheel"

n = 100
A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
b = np.ones(n)
x, info = cnc.cg(A, b, rtol=1e-10)
assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b) * 1.0001, info
x2, solve_info = cnc.solve(A, b, tol=1e-10)
assert solve_info.converged
print(f"cnc {cnc.__version__} (library {cnc.version_string()}) from {lib}: cg info={info}, "
      f"solve: {solve_info.iterations} iterations on {solve_info.backend}")
PY

step "the README's Python blocks, as written, with the installed package"
bash "$repo/scripts/test-readme.sh" --only python --python "$py"

step "shared-library dependencies of the installed libcnc"
libfile=$("$py" -c "import cnc, os; print(os.path.realpath(cnc.library_path()))")
ldd "$libfile"
if ldd "$libfile" | grep -q "not found"; then
  echo "test-python: $libfile has unresolved dependencies" >&2
  exit 1
fi
# Only the C/C++ runtime: OpenCL and the CUDA driver are opened at run time, the CUDA runtime is
# linked statically.
unexpected=$(ldd "$libfile" | awk '{print $1}' |
  grep -Ev '^(linux-vdso\.so|/lib64/ld-linux|ld-linux|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libpthread\.so|libdl\.so|librt\.so)' || true)
if [[ -n "$unexpected" ]]; then
  echo "test-python: unexpected dependencies of $libfile: $unexpected" >&2
  exit 1
fi

step "pytest bindings/python/tests against the installed package"
"$py" -m pytest -q -rs -p no:cacheprovider --rootdir "$repo/bindings/python/tests" \
  "$repo/bindings/python/tests"

step "passed"
