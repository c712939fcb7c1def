#!/usr/bin/env python3
"""The programs a build's selected tests run, one target name a line (scripts/test.sh's
TESTED_ONLY): the tests ctest selects with the given arguments (-R, -E, -L, -LE ...), their
commands read from the build's CTestTestfile.cmake files (ctest's own listing names no program
that is not built yet), and of each command the program, or the one a CMake script runs
(-DPROG=), when it is one of the build's test_* or cnc-* targets (named as their files).
  scripts/tested-programs.py BUILD_DIR [ctest selection arguments...]"""
import json
import os
import re
import subprocess
import sys

build = os.path.abspath(sys.argv[1])
listing = subprocess.run(["ctest", "-N", "--show-only=json-v1", *sys.argv[2:]], cwd=build,
                         check=True, capture_output=True, text=True).stdout
names = {t["name"] for t in json.loads(listing)["tests"]}
add_test = re.compile(r'^add_test\((?:\[=\[(.*?)\]=\]|(\S+)) "([^"]*)"(.*)')
programs = set()
for root, _, files in os.walk(build):
    if "CTestTestfile.cmake" not in files:
        continue
    with open(os.path.join(root, "CTestTestfile.cmake"), encoding="utf-8") as f:
        for line in f:
            m = add_test.match(line)
            if not m or (m.group(1) or m.group(2)) not in names:
                continue
            for exe in [m.group(3), *re.findall(r'"-DPROG=([^"]*)"', m.group(4))]:
                base = os.path.basename(exe)
                if exe.startswith(build + "/") and base.startswith(("test_", "cnc-")):
                    programs.add(base)
print("\n".join(sorted(programs)))
