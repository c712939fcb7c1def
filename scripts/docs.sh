#!/usr/bin/env bash
# The API reference: Doxygen HTML of the public headers (include/*.h: cnc.h, cnc_nl*.h) from
# docs/Doxyfile, into build-docs/html (or the folder given as $1). Installs doxygen with apt-get
# when it is missing, as scripts/install-deps.sh does. Open build-docs/html/cnc_8h.html.
# Every warning (an undocumented public name, a broken reference) goes to build-docs/warnings.log
# and is counted here per header. CNC_DOCS_STRICT=1 fails (exit 1) on any warning about cnc.h,
# the C API; CNC_DOCS_STRICT=all on any warning at all (Doxygen's WARN_AS_ERROR).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-docs}
strict=${CNC_DOCS_STRICT:-0}
if ! command -v doxygen >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "docs: installing doxygen"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends doxygen
fi
version=$(sed -n 's/^project(cnc VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/html"
log=$out/warnings.log
{
  cat docs/Doxyfile
  echo "OUTPUT_DIRECTORY = \"$out\""
  echo "PROJECT_NUMBER = $version"
  echo "WARN_LOGFILE = \"$log\""
  if [ "$strict" = all ]; then echo "WARN_AS_ERROR = FAIL_ON_WARNINGS"; fi
} | doxygen - || { cat "$log"; echo "docs: doxygen failed (warnings above)"; exit 1; }
[ -f "$out/html/index.html" ] || { echo "docs: no $out/html/index.html"; exit 1; }

status=0
for h in $(cd include && ls -- *.h); do
  count=$(grep -c "/$h:[0-9]*: warning" "$log" || true)
  undocumented=$(grep "/$h:[0-9]*: warning" "$log" | grep -c "is not documented" || true)
  echo "docs: include/$h: $count warning(s), $undocumented of them undocumented public names"
done
if [ "$strict" = 1 ] && grep -q "/cnc.h:[0-9]*: warning" "$log"; then
  grep "/cnc.h:[0-9]*: warning" "$log"
  echo "docs: FAILED: the warnings above are about include/cnc.h (CNC_DOCS_STRICT=1)"
  status=1
fi
echo "docs: API reference in $out/html/index.html (warnings: $log)"

# The Python package's reference from its docstrings (pydoc), when a built libcnc is at hand:
# CNC_LIBRARY, else build/ or build-test/. Without one (or without numpy) it is skipped, said so.
lib=${CNC_LIBRARY:-}
for c in build/libcnc.so build-test/libcnc.so; do
  [ -z "$lib" ] && [ -f "$c" ] && lib=$PWD/$c
done
# The first interpreter that has numpy (the package needs it): python3 on PATH, else Debian's.
. "$(dirname "$0")/find-python.sh"
py=$(find_python numpy)
if [ -n "$lib" ] && [ -n "$py" ]; then
  mkdir -p "$out/python"
  modules=(cnc cnc.context cnc.info cnc.errors)
  pkg=$PWD/bindings/python
  if ! (cd "$out/python" && CNC_LIBRARY=$lib PYTHONPATH=$pkg:${PYTHONPATH:-} \
    "$py" -m pydoc -w "${modules[@]}" >/dev/null); then
    echo "docs: FAILED: pydoc could not document the Python package"
    status=1
  fi
  for m in "${modules[@]}"; do
    [ -s "$out/python/$m.html" ] || { echo "docs: FAILED: no $out/python/$m.html"; status=1; }
  done
  echo "docs: Python reference in $out/python/cnc.html (pydoc, libcnc: $lib)"
else
  echo "docs: Python reference skipped: no built libcnc (CNC_LIBRARY, build/, build-test/) or no numpy"
fi
exit $status
