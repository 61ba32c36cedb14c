"""What packaging/test_action.py and packaging/test_workflows.py share: failing a case with the
log that explains it, the one version (Cargo.toml), and running cases to a closing count line."""

import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class Failed(Exception):
    pass


def check(condition, message, result=None):
    """Fails the case; `result` (an actionsim.RunResult) adds every step's log to the message."""
    if not condition:
        raise Failed(message + ("\n" + result.log() if result is not None else ""))


def cargo_version():
    """[workspace.package] version: the one place versions are written."""
    with open(REPO / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def run_cases(label, cases):
    """Runs (name, function) cases; a function may return a note to print. Exits 1 on any FAIL
    after printing `LABEL: N passed, N failed`."""
    passed = failed = 0
    for name, case in cases:
        started = time.monotonic()
        try:
            note = case()
            passed += 1
            print("ok   %s (%.1fs)%s" % (name, time.monotonic() - started, "\n     " + note if note else ""))
        except Failed as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
        sys.stdout.flush()
    print("%s: %d passed, %d failed" % (label, passed, failed))
    return failed == 0
