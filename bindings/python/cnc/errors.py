"""CncError: a cnc status code with its name and message.

Errors found by cnc carry the message of the failed call (cncGetLastErrorMessage). A few errors
can only be seen on the Python side (a non-square matrix, a right-hand side of the wrong length,
an unknown option string); they are raised with the cnc status that fits, so callers test one
exception type and one set of codes.
"""

from __future__ import annotations

from . import constants as _c

# status code -> "CNC_ERR_..." name
STATUS_NAMES = {
    value: "CNC_" + name
    for name, value in vars(_c).items()
    if name == "OK" or (name.startswith("ERR_") and isinstance(value, int))
}


def status_name(status: int) -> str:
    """The C name of a status code, e.g. "CNC_ERR_STATE" ("CNC_STATUS_<n>" if unknown)."""
    return STATUS_NAMES.get(status, f"CNC_STATUS_{status}")


class CncError(RuntimeError):
    """A cnc call failed. Attributes: status (int, negative), status_name, message."""

    def __init__(self, status: int, message: str) -> None:
        self.status = int(status)
        self.status_name = status_name(self.status)
        self.message = message
        super().__init__(f"{self.status_name}: {message}")
