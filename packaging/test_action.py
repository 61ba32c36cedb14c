#!/usr/bin/env python3
"""Runs the composite action (action.yml) on this machine as a GitHub runner would
(packaging/actionsim.py), with `packages` = locally built packages, and checks what a user sees:
each step's outcome, the `exit-code` and `junit` outputs, the job summary, the JUnit file.

Usage: python3 packaging/test_action.py PACKAGES_DIR   (the --out directory of packaging/build.sh)

Cases: the bundled server passes; a server failing lifecycle.ping fails the job with exit 1 and
still writes the summary and JUnit, and passes with that id as its baseline; a Streamable HTTP
URL passes; a server command with quoted words and a working-directory; a command that cannot
start fails with exit 3; bad inputs fail first with a clear ::error:: message.
"""

import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import actionsim  # noqa: E402
from testkit import REPO, Failed, cargo_version, check, run_cases  # noqa: E402

BROKEN_SERVER = REPO / "conformance" / "tests" / "fixtures" / "broken_server.py"
# A bound against a server that never prints its URL: generous, never the thing measured.
URL_BOUND_SECS = 60


class ActionTest:
    def __init__(self, packages, scratch):
        self.packages = packages
        self.scratch = scratch
        self.workspace = scratch / "workspace"
        self.workspace.mkdir()
        self.count = 0
        self.bin = None

    def run(self, env=None, **inputs):
        """Runs the action with `packages` set; returns (RunResult, outputs)."""
        self.count += 1
        runner_temp = self.scratch / ("runner-temp-%d" % self.count)
        runner_temp.mkdir()
        inputs = {"packages": str(self.packages), **inputs}
        return actionsim.run_action(REPO, inputs, self.workspace, runner_temp, {**os.environ, **(env or {})})

    def junit(self, outputs, result):
        path = Path(outputs["junit"])
        check(path.is_file(), "no JUnit file at %s" % path, result)
        root = ET.parse(path).getroot()
        failed = {case.get("name") for case in root.iter("testcase") if case.find("failure") is not None}
        return root, failed

    def bundled_server_passes(self):
        result, outputs = self.run(command="mcp-echo-server", **{"check-set": cargo_version()})
        check(not result.failed, "the bundled server's run failed", result)
        check(outputs["exit-code"] == "0", "exit-code %r, expected 0" % outputs["exit-code"], result)
        install_log = result.step("install").log
        check("mcp-conformance %s installed" % cargo_version() in install_log,
              "the default version is not Cargo.toml's %s" % cargo_version(), result)
        self.bin = result.step("install").outputs["bin"]
        check(self.bin.startswith(str(self.scratch)), "installed outside RUNNER_TEMP: %s" % self.bin)
        check_summary(result, "## mcp-conformance", "| mcp-echo-server", "check set %s" % cargo_version())
        root, failed = self.junit(outputs, result)
        check(root.get("failures") == "0" and not failed, "JUnit failures: %s" % failed, result)
        check(int(root.get("tests")) > 100, "JUnit has %s tests" % root.get("tests"), result)
        check("PASS" in result.step("run").log, "no text report in the log", result)

    def failing_server_fails_then_baseline_passes(self):
        command = "python3 %s --bug no-ping" % BROKEN_SERVER
        result, outputs = self.run(command=command)
        run = result.step("run")
        check(run.outcome == "failure" and run.returncode == 1,
              "run step: %s, exit %s; expected a failure with exit 1" % (run.outcome, run.returncode), result)
        check(outputs["exit-code"] == "1", "exit-code %r, expected 1" % outputs["exit-code"], result)
        check_summary(result, "## mcp-conformance", "FAIL", "`lifecycle.ping` (MUST)")
        root, failed = self.junit(outputs, result)
        check(failed == {"lifecycle.ping"}, "JUnit failures %s, expected lifecycle.ping" % failed, result)
        check("::error title=mcp-conformance::a check failed (exit 1)" in run.log, "no ::error:: line", result)

        (self.workspace / "baseline.txt").write_text("lifecycle.ping  this fixture answers ping with -32601\n")
        result, outputs = self.run(command=command, baseline="baseline.txt")
        check(not result.failed and outputs["exit-code"] == "0",
              "with the baseline: exit-code %r" % outputs["exit-code"], result)
        check_summary(result, "Expected failures", "`lifecycle.ping`")
        root, failed = self.junit(outputs, result)
        check(root.get("failures") == "0" and not failed, "JUnit failures with the baseline: %s" % failed, result)

    def url_passes(self):
        check(self.bin is not None, "no installed bin directory: the bundled-server case failed")
        server = subprocess.Popen([str(Path(self.bin) / "mcp-echo-server"), "--http", "127.0.0.1:0"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        try:
            url = wait_for_url(server)
            result, outputs = self.run(url=url)
            check(not result.failed and outputs["exit-code"] == "0",
                  "against %s: exit-code %r" % (url, outputs["exit-code"]), result)
            check("--url %s" % url in result.step("run").log, "the run did not use --url", result)
            check_summary(result, "## mcp-conformance", "| mcp-echo-server")
        finally:
            server.terminate()
            rc = server.wait(timeout=URL_BOUND_SECS)
        check(rc == 0, "mcp-echo-server --http exited %s on SIGTERM" % rc)

    def url_with_start_command(self):
        """`url` with the server's start command after `--` in `args`: the harness starts it,
        waits for the port, and stops it after the run."""
        with socket.socket() as probe:  # a port free now; the server binds it moments later
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = "http://127.0.0.1:%d/mcp" % port
        result, outputs = self.run(url=url, args="--only 'lifecycle.*' -- mcp-echo-server --http 127.0.0.1:%d" % port)
        check(not result.failed and outputs["exit-code"] == "0",
              "url with a start command: exit-code %r" % outputs["exit-code"], result)
        check_summary(result, "## mcp-conformance", "| mcp-echo-server")

    def quoting_and_working_directory(self):
        """`command` is split as a run: line: quotes keep 'broken server.py' one word, $VARS
        expand (from the step's env, as a user's `env:` on the action step gives them)."""
        project = self.workspace / "my server"
        project.mkdir()
        shutil.copy(BROKEN_SERVER, project / "broken server.py")
        (project / "known failures.txt").write_text("lifecycle.ping\n")
        result, outputs = self.run(command="python3 'broken server.py' --bug \"$BUG_NAME\"",
                                   baseline="known failures.txt", args="--only 'lifecycle.*'",
                                   env={"BUG_NAME": "no-ping"}, **{"working-directory": "my server"})
        check(not result.failed and outputs["exit-code"] == "0",
              "quoted command in 'my server': exit-code %r" % outputs["exit-code"], result)
        default_junit = self.scratch / ("runner-temp-%d" % self.count) / "mcp-conformance" / "junit.xml"
        check(outputs["junit"] == str(default_junit), "default junit path %s" % outputs["junit"], result)
        root, failed = self.junit(outputs, result)
        ids = {case.get("name") for case in root.iter("testcase")}
        check(ids and all(i.startswith("lifecycle.") for i in ids), "--only from args not applied: %s" % ids, result)
        check("lifecycle.ping" in ids, "lifecycle.ping did not run", result)

    def unstartable_server_exits_3(self):
        result, outputs = self.run(command="no-such-mcp-server-for-the-action-test", junit="out/j.xml")
        run = result.step("run")
        check(run.outcome == "failure" and outputs["exit-code"] == "3",
              "a missing command: %s, exit-code %r; expected exit 3" % (run.outcome, outputs["exit-code"]), result)
        check(outputs["junit"] == str(self.workspace / "out" / "j.xml"), "junit output %s" % outputs["junit"], result)
        check("could not be started" in result.summary.lower(), "the summary does not say the server did not start", result)

    def bad_inputs_fail_first(self):
        cases = [
            ({}, "give 'command'"),
            ({"command": "mcp-echo-server", "url": "http://127.0.0.1:9/mcp"}, "not both"),
            ({"command": "mcp-echo-server", "baseline": "missing.txt"}, "baseline file 'missing.txt' not found"),
            ({"url": "127.0.0.1:3001/mcp"}, "url '127.0.0.1:3001/mcp' is not an http:// or https:// URL"),
        ]
        for inputs, message in cases:
            result, outputs = self.run(**inputs)
            first = result.step("inputs")
            check(first.outcome == "failure" and "::error title=mcp-conformance action::" in first.log
                  and message in first.log, "inputs %s: expected ::error:: %r" % (inputs, message), result)
            check([s.outcome for s in result.steps] == ["failure", "skipped", "skipped"],
                  "inputs %s: later steps ran" % inputs, result)
        result, outputs = self.run(command="mcp-echo-server", **{"check-set": "9.9.9"})
        check(result.step("run").returncode == 2 and outputs["exit-code"] == "2" and "9.9.9" in result.step("run").log,
              "check-set 9.9.9 (newer than this harness) should be refused with exit 2", result)
        check("## mcp-conformance: exit 2\n\nusage error: see the step's log." in result.summary,
              "a usage error's summary should say where to look", result)
        result, _ = self.run(command="mcp-echo-server", version="0.0.0-not-built")
        check(result.step("install").outcome == "failure"
              and "mcp-conformance-0.0.0-not-built.tgz" in result.step("install").log,
              "a version with no package must fail the install step and name the tarball", result)


def check_summary(result, *needles):
    check(result.summary.strip() != "", "the job summary is empty", result)
    for needle in needles:
        check(needle in result.summary, "the job summary does not say %r:\n%s" % (needle, result.summary), result)


def wait_for_url(server):
    """Reads the server's stderr until it names its URL; keeps draining it afterwards."""
    lines = queue.Queue()

    def drain():
        for line in server.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    seen = []
    while True:
        line = lines.get(timeout=URL_BOUND_SECS)
        if line is None:
            raise Failed("mcp-echo-server --http exited before naming its URL:\n" + "".join(seen))
        seen.append(line)
        match = re.search(r"http://\S+", line)
        if match:
            return match.group(0)


def static_checks():
    """Every input and output is documented; every step runs bash with inputs via env only."""
    action = actionsim.load_yaml((REPO / "action.yml").read_text())
    for kind in ("inputs", "outputs"):
        for name, spec in action[kind].items():
            check(len(spec.get("description", "")) > 20, "action.yml %s %r has no description" % (kind, name))
    for step in action["runs"]["steps"]:
        check(step.get("shell") == "bash", "step %s: shell must be bash" % step.get("id"))
        check("${{" not in step["run"], "step %s pastes an expression into its script" % step.get("id"))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 packaging/test_action.py PACKAGES_DIR")
    packages = Path(sys.argv[1]).resolve()
    if not (packages / "npm").is_dir():
        sys.exit("FAIL: %s has no npm/ directory (build it with packaging/build.sh --out DIR)" % packages)
    actionsim.ensure_tools()
    scratch = Path(tempfile.mkdtemp(prefix="mcp-action-test-"))
    test = ActionTest(packages, scratch)
    cases = [static_checks, test.bundled_server_passes, test.failing_server_fails_then_baseline_passes,
             test.url_passes, test.url_with_start_command, test.quoting_and_working_directory, test.unstartable_server_exits_3,
             test.bad_inputs_fail_first]
    try:
        ok = run_cases("action", [(case.__name__, case) for case in cases])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(0 if ok else 1)

if __name__ == "__main__":
    main()
