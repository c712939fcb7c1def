"""Every numeric #define CNC_* of include/cnc.h has the same value as the Python constant."""

import os
import re
from pathlib import Path

import pytest

import cnc

REPO = Path(__file__).resolve().parents[3]
HEADER = Path(os.environ.get("CNC_HEADER", REPO / "include" / "cnc.h"))
NON_NUMERIC = {"CNC_H", "CNC_API"}


def header_defines():
    """name -> value of each #define CNC_* whose value is an integer expression of numbers and
    earlier CNC_ macros (CNC_VERSION_NUMBER is computed from the other three)."""
    if not HEADER.is_file():
        pytest.skip(f"SKIP: {HEADER} not found (set CNC_HEADER to check the constants)")
    values = {}
    for line in HEADER.read_text().splitlines():
        m = re.match(r"\s*#\s*define\s+(CNC_\w+)(?:\s+(.*?))?\s*(?:/\*.*)?$", line)
        if not m or m.group(1) in NON_NUMERIC or m.group(2) is None:
            continue
        name, expr = m.group(1), m.group(2)
        if not re.fullmatch(r"[\sA-Za-z0-9_()*+\-x]+", expr) or "__" in expr:
            continue  # attribute and declspec macros
        expr = re.sub(r"\bCNC_\w+\b", lambda t: str(values[t.group(0)]), expr)
        values[name] = eval(expr, {"__builtins__": {}})  # digits, operators and parentheses only
    return values


def test_header_constants_match():
    defines = header_defines()
    assert len(defines) >= 90, f"parsed only {len(defines)} constants from {HEADER}"
    missing = [name for name in defines if not hasattr(cnc, name[len("CNC_"):])]
    assert not missing, f"constants missing from the Python package: {missing}"
    wrong = {
        name: (value, getattr(cnc, name[len("CNC_"):]))
        for name, value in defines.items()
        if getattr(cnc, name[len("CNC_"):]) != value
    }
    assert not wrong, f"header value != Python value: {wrong}"


def test_no_extra_python_constants():
    defines = header_defines()
    extra = [n for n in dir(cnc.constants) if n.isupper() and "CNC_" + n not in defines]
    assert not extra, f"Python constants absent from cnc.h: {extra}"


def test_status_names_and_strings():
    assert cnc.status_name(cnc.ERR_STATE) == "CNC_ERR_STATE"
    assert cnc.status_name(cnc.OK) == "CNC_OK"
    # cnc's own text for a status names it, so the two tables agree.
    for value in range(min(cnc.errors.STATUS_NAMES), 0):
        assert cnc.status_string(value).startswith(cnc.status_name(value)), value


def test_loaded_library_version_matches_header():
    assert cnc.version() == (cnc.VERSION_MAJOR, cnc.VERSION_MINOR, cnc.VERSION_PATCH)
    assert cnc.version_string() == f"{cnc.VERSION_MAJOR}.{cnc.VERSION_MINOR}.{cnc.VERSION_PATCH}"


FORTRAN_MODULE = HEADER.parents[1] / "bindings" / "fortran" / "cnc.f90"


def test_fortran_module_constants_match():
    """The Fortran module's named parameters are cnc.h's constants, all of them."""
    defines = header_defines()
    if not FORTRAN_MODULE.is_file():
        pytest.skip(f"SKIP: {FORTRAN_MODULE} not found")
    params = {}
    pattern = (r"integer\(c_int\), parameter :: (CNC_\w+) = "
               r"(?:int\(z'([0-9A-Fa-f]+)', c_int\)|(-?\d+))\s*$")
    for line in FORTRAN_MODULE.read_text().splitlines():
        m = re.match(r"\s*" + pattern, line)
        if m:
            params[m.group(1)] = int(m.group(2), 16) if m.group(2) else int(m.group(3))
    params["CNC_VERSION_NUMBER"] = (
        params["CNC_VERSION_MAJOR"] * 10000 + params["CNC_VERSION_MINOR"] * 100
        + params["CNC_VERSION_PATCH"]
    )
    assert params == defines
