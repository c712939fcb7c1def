#!/usr/bin/env bash
# README.md's code blocks, run as a reader runs them (issue 16). The rule, read from each fenced
# block's info string (the words after ```):
#   ```c            written to a file, compiled with
#                   cc -std=c99 -pedantic -Wall -Wextra -Werror FILE $(pkg-config --cflags --libs cnc_opennl)
#                   (cnc_opennl.pc requires cnc.pc: cnc and OpenNL programs alike), and run;
#   ```python       run with python3 (or $PYTHON; it needs numpy and scipy): the package of
#                   bindings/python on the installed libcnc (CNC_LIBRARY), or with --python PY
#                   the package that PY imports;
#   ```sh           run with bash -e -u -o pipefail;
#   file=NAME       the block is (also) written to NAME before any block runs, so that another
#                   block can use it (any language: a CMakeLists.txt, a program built by a command);
#   no-run: REASON  not run, for the reason given there (required: a block is run unless it says
#                   why not).
# A block in another language needs file= or no-run:, and an indented code block (no language) is
# refused: every block is either run or says why it is not. A block fails on a non-zero exit
# status, or after 300 s; each failure is printed with its line in README.md, the block and its
# output, the remaining blocks still run, and the script exits 1 when any failed.
#
# The blocks run in README order in one scratch directory, which also holds the Matrix Market files
# the cnc-solve examples name (A.mtx: the 1D Laplacian (-1, 2, -1) of n = 100, symmetric; b.mtx: its
# right-hand side, ones; nonsym.mtx: the convection-diffusion matrix (-1.5, 2, -0.5), general).
# The build is installed there with `cmake --install BUILD --prefix` and used as the README says
# for a prefix other than /usr/local: PATH (cnc-solve), PKG_CONFIG_PATH, LD_LIBRARY_PATH,
# CMAKE_PREFIX_PATH; nothing else of the build tree is visible.
#
#   scripts/test-readme.sh [BUILD]        every block, BUILD a built tree (default build-test,
#                                         as scripts/test.sh leaves it)
#   scripts/test-readme.sh --only python --python VENV/bin/python   only the Python blocks, with
#                                         that interpreter's cnc (scripts/test-python.sh: the wheel)
#   scripts/test-readme.sh --list         the blocks and what is done with each; runs nothing
#   KEEP=1 scripts/test-readme.sh         keep the scratch directory (its path is printed)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readme="$repo/README.md"
only="" python="" list=0 build=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --only) only=${2:?--only needs a language: c, python or sh}; shift 2 ;;
    --python) python=${2:?--python needs an interpreter}; shift 2 ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test-readme: unknown option $1 (see --help)" >&2; exit 1 ;;
    *) build=$1; shift ;;
  esac
done
build=$(cd "$repo" && realpath -m "${build:-build-test}")
start=$(date +%s)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cnc-test-readme.XXXXXX")
cleanup() {
  if [[ -n "${KEEP:-}" ]]; then echo "test-readme: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
mkdir -p "$tmp/blocks" "$tmp/work"

# The blocks: $tmp/blocks/LINE holds the text of the block whose fence is on README line LINE, and
# the manifest one line per block: LINE, LANGUAGE, FILE, ACTION (run, file or no-run), REASON
# separated by \x1f (empty fields kept). Malformed blocks are errors here.
python3 - "$readme" "$tmp/blocks" >"$tmp/manifest" <<'PY'
import re, sys

readme, out = sys.argv[1], sys.argv[2]
runnable = {"c", "python", "sh"}
errors = []
lines = open(readme, encoding="utf-8").read().split("\n")
fence = None  # (line, indent, marker, language, file, action, reason, body)
context = 0  # content indent of the list item the text is in (0 outside lists)
blank = True
for number, line in enumerate(lines, 1):
    if fence:
        start, indent, marker = fence[:3]
        if re.fullmatch(r" *" + marker + r"`* *", line):
            start, indent, marker, language, name, action, reason, body = fence
            with open(f"{out}/{start}", "w", encoding="utf-8") as f:
                f.write("\n".join(body) + "\n")
            print(f"{start}\x1f{language}\x1f{name}\x1f{action}\x1f{reason}")
            fence = None
        else:
            fence[7].append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
        continue
    m = re.fullmatch(r"( *)(```+)\s*(.*)", line)
    if m:
        info = m.group(3).strip()
        language, _, rest = info.partition(" ")
        name, reason = "", ""
        nm = re.match(r"file=(\S+)\s*", rest)
        if nm:
            name, rest = nm.group(1), rest[nm.end():]
        rm = re.fullmatch(r"no-run:\s*(.*)", rest)
        if rm:
            reason = rm.group(1).strip()
            action = "no-run"
            if not reason:
                errors.append(f"README.md:{number}: 'no-run:' without a reason")
        elif rest:
            errors.append(f"README.md:{number}: '{rest}' in the info string: expected "
                          "file=NAME and/or 'no-run: REASON'")
            action = "no-run"
        elif language in runnable:
            action = "run"
        elif name:
            action = "file"
        else:
            action = "no-run"
            errors.append(f"README.md:{number}: a block in '{language or 'no language'}' is not "
                          f"run: give it one of {sorted(runnable)}, file=NAME (a file another "
                          "block uses) or 'no-run: REASON'")
        fence = [number, len(m.group(1)), m.group(2), language, name, action, reason, []]
        blank = False
        continue
    if not line.strip():
        blank = True
        continue
    indent = len(line) - len(line.lstrip(" "))
    item = re.match(r"( *)([-*+]|\d+[.)]) +", line)
    if item:
        context = len(item.group(0))
    elif blank and indent >= context + 4:
        errors.append(f"README.md:{number}: an indented code block: fence it with its language "
                      "(```sh, ```c, ```python) and, when it is not to be run, 'no-run: REASON'")
    elif indent < context:
        context = indent
    blank = False
if fence:
    errors.append(f"README.md:{fence[0]}: a code block that is never closed")
if errors:
    sys.stderr.write("\n".join(errors) + "\n")
    sys.exit(1)
PY

if [[ $list = 1 ]]; then
  while IFS=$'\x1f' read -r line language name action reason; do
    printf 'README.md:%-4s %-7s %-7s %s%s\n' "$line" "$language" "$action" \
      "${name:+file=$name }" "$reason"
  done <"$tmp/manifest"
  exit 0
fi

step() { echo "test-readme: $* ($(($(date +%s) - start)) s)"; }
work="$tmp/work"
unset CNC_LIBRARY PYTHONPATH LD_LIBRARY_PATH LIBRARY_PATH CPATH C_INCLUDE_PATH PKG_CONFIG_PATH \
  PKG_CONFIG_LIBDIR CMAKE_PREFIX_PATH cnc_DIR
export PYTHONDONTWRITEBYTECODE=1
if [[ -z $only || $only != python || -z $python ]]; then
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    echo "test-readme: $build is not a build tree (build cnc first: scripts/test.sh makes" \
      "build-test; or name one: scripts/test-readme.sh BUILD)" >&2
    exit 1
  fi
  step "cmake --install $build --prefix $tmp/prefix"
  cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log" >&2
    echo "test-readme: cmake --install $build failed (build it first)" >&2
    exit 1
  }
  libdir=$(dirname "$(find "$tmp/prefix" -name 'libcnc.so' | head -n 1)")
  export PATH="$tmp/prefix/bin:$PATH" PKG_CONFIG_PATH="$libdir/pkgconfig"
  export LD_LIBRARY_PATH="$libdir" CMAKE_PREFIX_PATH="$tmp/prefix"
fi
if [[ -z $python ]]; then
  . "$repo/scripts/find-python.sh"
  python=$(find_python numpy scipy)
  python=${python:-${PYTHON:-python3}}  # none has them: the block's own error says so
  export PYTHONPATH="$repo/bindings/python" CNC_LIBRARY="$libdir/libcnc.so"
fi

# The files the cnc-solve examples name.
{
  echo "%%MatrixMarket matrix coordinate real symmetric"
  echo "100 100 199"
  for i in $(seq 1 100); do echo "$i $i 2"; done
  for i in $(seq 2 100); do echo "$i $((i - 1)) -1"; done
} >"$work/A.mtx"
{
  echo "%%MatrixMarket matrix array real general"
  echo "100 1"
  for _ in $(seq 1 100); do echo 1; done
} >"$work/b.mtx"
{
  echo "%%MatrixMarket matrix coordinate real general"
  echo "100 100 298"
  for i in $(seq 1 100); do echo "$i $i 2"; done
  for i in $(seq 2 100); do echo "$i $((i - 1)) -1.5"; done
  for i in $(seq 2 100); do echo "$((i - 1)) $i -0.5"; done
} >"$work/nonsym.mtx"

# Named files first: a block may build a file that a later block of the README shows.
while IFS=$'\x1f' read -r line language name action reason; do
  [[ -n $name ]] && cp "$tmp/blocks/$line" "$work/$name"
done <"$tmp/manifest"

ran=0 skipped=0 failed=()
while IFS=$'\x1f' read -r line language name action reason; do
  [[ -n $only && $language != "$only" ]] && continue
  if [[ $action != run ]]; then
    skipped=$((skipped + 1))
    continue
  fi
  file=${name:-readme_$line.$language}
  cp "$tmp/blocks/$line" "$work/$file"
  case $language in
    c) cmd=(bash -euo pipefail -c 'cc -std=c99 -pedantic -Wall -Wextra -Werror "$1" -o "${1%.c}" \
             $(pkg-config --cflags --libs cnc_opennl) -lm && "./${1%.c}"' - "$file") ;;
    python) cmd=("$python" "$file") ;;
    sh) cmd=(bash -euo pipefail "$file") ;;
  esac
  log="$tmp/log.$line"
  rc=0
  t0=$(date +%s%N)
  (cd "$work" && timeout 300 "${cmd[@]}") </dev/null >"$log" 2>&1 || rc=$?
  ds=$((($(date +%s%N) - t0) / 100000000))
  seconds="$((ds / 10)).$((ds % 10))"
  ran=$((ran + 1))
  if [[ $rc = 0 ]]; then
    echo "test-readme: README.md:$line ($language): ok, $seconds s"
  else
    failed+=("README.md:$line")
    {
      echo "test-readme: README.md:$line ($language): FAILED, exit status $rc$([[ $rc = 124 ]] &&
        echo ' (timed out after 300 s)'), $seconds s"
      echo "--- the block (README.md line $((line + 1)) on) ---"
      cat "$tmp/blocks/$line"
      echo "--- its output ---"
      cat "$log"
      echo "---"
    } >&2
  fi
done <"$tmp/manifest"

if [[ $ran = 0 ]]; then
  echo "test-readme: no block of README.md ran${only:+ (--only $only)}" >&2
  exit 1
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test-readme: ${#failed[@]} of $ran blocks failed: ${failed[*]}" >&2
  exit 1
fi
step "all $ran blocks ran; $skipped not run, each with its reason (--list shows them)"
