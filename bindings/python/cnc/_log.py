"""cnc's log messages routed to Python's logging, on the logger named "cnc".

Every cnc.Context (so every cnc.solve, cnc.cg, ...) installs this route with cncSetLogCallback
when it is created. Levels: cnc's warnings (an SSOR request moved to the CPU, zero diagonal
entries, ...) are logging.WARNING, so with no logging configured Python's last-resort handler
prints them on stderr; cnc's info lines (and the solver's progress under CNC_VERBOSE) are
logging.INFO (shown after e.g. logging.basicConfig(level=logging.INFO)). cnc's error lines are
logged at logging.DEBUG: every error also fails its call, which raises cnc.CncError with the same
message, so they are not printed twice.
"""

from __future__ import annotations

import ctypes
import logging

from . import constants as _c
from ._library import LOG_CALLBACK

logger = logging.getLogger("cnc")

LEVELS = {
    _c.LOG_ERROR: logging.DEBUG,  # raised as CncError by the failing call
    _c.LOG_WARNING: logging.WARNING,
    _c.LOG_INFO: logging.INFO,
}


def _route(level: int, message: bytes | None, _user: ctypes.c_void_p | None) -> None:
    try:
        text = message.decode("utf-8", errors="replace") if message else ""
        logger.log(LEVELS.get(level, logging.INFO), "%s", text)
    except Exception:  # noqa: BLE001 -- never let logging fail a solve (or interpreter shutdown)
        pass


# One thunk for every context, alive as long as this module: cnc keeps the raw pointer.
ROUTE_TO_LOGGING = LOG_CALLBACK(_route)
