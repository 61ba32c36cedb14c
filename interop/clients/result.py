"""The result every interop client writes: what it is, each step, and whether all passed
(interop/report.py reads these files)."""

import json
import sys


class Steps:
    def __init__(self, client, version, framing="ndjson"):
        self.result = {"client": client, "version": version, "framing": framing}
        self.steps = []

    def expect(self, name, ok, detail=""):
        """Records a step; a failed one ends the run."""
        self.steps.append({"name": name, "ok": bool(ok), "detail": detail})
        if not ok:
            raise AssertionError(f"{name}: {detail}")

    def finish(self, path, error):
        """Writes the result file, prints one line, and returns the exit code."""
        result = dict(self.result, ok=error is None, error=error, steps=self.steps)
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
        marks = ", ".join(("✓ " if s["ok"] else "✗ ") + s["name"] for s in self.steps)
        print(f"{'PASS' if error is None else 'FAIL'} {result['client']} {result['version']}: {marks}")
        if error is not None:
            print(error, file=sys.stderr)
        return 0 if error is None else 1
