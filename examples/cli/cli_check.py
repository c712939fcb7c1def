#!/usr/bin/env python3
"""Checks the files cnc-solve writes (CTest, through cli_test.cmake). Exits 1 and says why when
a check fails.

  cli_check.py vector FILE ROWS COLS TOL V...   Matrix Market array, column-major values V
                                                (a single V: every entry; 'k+1': column k is k+1)
  cli_check.py json FILE KEY=VALUE...           valid JSON (json.load, as python3 -m json.tool),
                                                the keys every report has, and KEY == VALUE
                                                (VALUE parsed as JSON, else compared as a string)
  cli_check.py csv FILE THRESHOLD               history: header, increasing iterations,
                                                non-decreasing seconds, last residual <= THRESHOLD
  cli_check.py png FILE WIDTH HEIGHT            PNG signature and IHDR size
"""
import json
import struct
import sys

JSON_KEYS = ["cnc_solve_version", "library_version", "problem", "file", "n", "nrhs", "nnz",
             "backend", "device", "format", "precision", "solver", "solver_choice", "threshold",
             "max_iterations", "iterations", "reason", "residual", "true_residual", "times",
             "exit_status", "exit_meaning", "error"]


def fail(message):
    print("cli_check: " + message)
    sys.exit(1)


def vector(path, rows, cols, tol, values):
    with open(path) as f:
        lines = [l.strip() for l in f if l.strip()]
    if lines[0] != "%%MatrixMarket matrix array real general":
        fail(f"{path}: banner {lines[0]!r}")
    body = [l for l in lines[1:] if not l.startswith("%")]
    if body[0].split() != [str(rows), str(cols)]:
        fail(f"{path}: size line {body[0]!r}, expected '{rows} {cols}'")
    x = [float(v) for v in body[1:]]
    if len(x) != rows * cols:
        fail(f"{path}: {len(x)} values, expected {rows * cols}")
    if values == ["k+1"]:
        expected = [float(k + 1) for k in range(cols) for _ in range(rows)]
    elif len(values) == 1:
        expected = [float(values[0])] * (rows * cols)
    else:
        expected = [float(v) for v in values]
    for i, (got, want) in enumerate(zip(x, expected)):
        if not abs(got - want) <= tol * max(1.0, abs(want)):
            fail(f"{path}: entry {i}: {got!r}, expected {want!r} (tolerance {tol})")
    print(f"{path}: {rows} x {cols} values within {tol} of the known solution")


def check_json(path, pairs):
    with open(path) as f:
        text = f.read()
    try:
        report = json.loads(text)
    except ValueError as e:
        fail(f"{path}: not valid JSON: {e}\n{text}")
    for key in JSON_KEYS:
        if key not in report:
            fail(f"{path}: no key {key!r}")
    for pair in pairs:
        key, _, want = pair.partition("=")
        try:
            want_value = json.loads(want)
        except ValueError:
            want_value = want
        if report.get(key) != want_value:
            fail(f"{path}: {key} = {report.get(key)!r}, expected {want_value!r}")
    print(f"{path}: valid JSON, {len(report)} keys, {' '.join(pairs)}")


def csv(path, threshold):
    with open(path) as f:
        lines = f.read().splitlines()
    if lines[0] != "iteration,relative_residual,seconds":
        fail(f"{path}: header {lines[0]!r}")
    rows = [l.split(",") for l in lines[1:]]
    if not rows:
        fail(f"{path}: no samples")
    it = [int(r[0]) for r in rows]
    res = [float(r[1]) for r in rows]
    sec = [float(r[2]) for r in rows]
    if any(len(r) != 3 for r in rows):
        fail(f"{path}: a row without 3 fields")
    if any(b <= a for a, b in zip(it, it[1:])):
        fail(f"{path}: iterations not increasing")
    if any(b < a for a, b in zip(sec, sec[1:])) or sec[0] < 0:
        fail(f"{path}: seconds decreasing")
    if not res[-1] <= float(threshold):
        fail(f"{path}: last residual {res[-1]} above the threshold {threshold}")
    print(f"{path}: {len(rows)} samples, iterations {it[0]}..{it[-1]}, last residual {res[-1]}")


def png(path, width, height):
    with open(path, "rb") as f:
        data = f.read(33)
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        fail(f"{path}: not a PNG")
    w, h = struct.unpack(">II", data[16:24])
    if (w, h) != (int(width), int(height)):
        fail(f"{path}: {w} x {h}, expected {width} x {height}")
    print(f"{path}: PNG {w} x {h}")


def main(argv):
    kind, path, rest = argv[1], argv[2], argv[3:]
    if kind == "vector":
        vector(path, int(rest[0]), int(rest[1]), float(rest[2]), rest[3:])
    elif kind == "json":
        check_json(path, rest)
    elif kind == "csv":
        csv(path, rest[0])
    elif kind == "png":
        png(path, rest[0], rest[1])
    else:
        fail(f"unknown check {kind!r}")


if __name__ == "__main__":
    main(sys.argv)
