# Sourced by the scripts that run the Python package from the source tree (docs.sh,
# test-readme.sh): the first interpreter whose Python imports the modules named, among $PYTHON,
# python3 on PATH and Debian's /usr/bin/python3 (PATH's python3 may be another installation,
# e.g. pyenv's, without Debian's python3-numpy and python3-scipy). Prints it, or nothing.
find_python() {  # module...
  local c imports
  imports=$(printf 'import %s;' "$@")
  for c in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$c" >/dev/null && "$c" -c "$imports" 2>/dev/null; then
      echo "$c"
      return 0
    fi
  done
}
