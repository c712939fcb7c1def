#!/usr/bin/env bash
# The main job: install dependencies, build cnc (Release) and solve the embedded default problem
# (7-point 3D Poisson, 64^3 = 262,144 unknowns) with the automatically chosen backend.
# Extra arguments go to cnc-solve, e.g. scripts/main.sh --grid 128 or scripts/main.sh file.mtx
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCNC_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target cnc-solve
./build/examples/cnc-solve "$@"
