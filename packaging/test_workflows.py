#!/usr/bin/env python3
"""Runs the ready workflows of docs/ci.md against real servers, offline, as a runner would
(packaging/actionsim.py), with the harness from locally built packages.

Usage: python3 packaging/test_workflows.py PACKAGES_DIR [--interop DIR]
  PACKAGES_DIR: the --out directory of packaging/build.sh (npm/ tarballs, wheel/)
  --interop:    where interop/run.sh installed the pinned SDKs (default: interop/ of this repo)

Every ```yaml block of docs/ci.md must be a workflow this test knows how to run:
  - the TypeScript workflow (actions/setup-node) runs in a project whose server is
    interop/servers/ts_sdk2_server.mjs on the official TypeScript SDK; `npx` finds
    mcp-conformance in the project's node_modules (npm offline, no registry reachable);
  - the Python workflow (astral-sh/setup-uv) runs in a project whose server.py is
    interop/servers/py_echo_server.py on the official Python SDK; `uvx` installs the locally
    built wheel (uv offline, find-links to it);
  - the action workflow (uses: OWNER/REPO@…) runs this repository's action.yml, installing the
    local npm packages, in the TypeScript project.
Each project's baseline is the interop suite's for that server. `uses:` steps other than the
action are skipped and listed; the install steps that need the network (`npm ci`,
`uv sync --locked`) are replaced by offline equivalents, named in the output; every other `run:`
command runs verbatim. Every version written in docs/ci.md must be Cargo.toml's.
"""

import os
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import actionsim  # noqa: E402
from testkit import REPO, Failed, cargo_version, check, run_cases  # noqa: E402

DOC = REPO / "docs" / "ci.md"
BASELINE = ".github/mcp-conformance-baseline.txt"
SEMVER = re.compile(r"(?<![\d.])\d+\.\d+\.\d+(?![\d.])")


def check_versions(text, version):
    """Every x.y.z in the page is the harness version, and each install names it."""
    found = set(SEMVER.findall(text))
    check(found == {version}, "docs/ci.md names versions %s; Cargo.toml says %s" % (sorted(found), version))
    for needle in ("npx --yes mcp-conformance@%s" % version, "uvx mcp-conformance@%s" % version,
                   "OWNER/REPO@v%s" % version, "--check-set %s" % version):
        check(needle in text, "docs/ci.md does not say %r" % needle)


def workflows(text):
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)
    check(len(blocks) == 3, "docs/ci.md has %d yaml blocks, expected 3 workflows" % len(blocks))
    found = {}
    for block in blocks:
        workflow = actionsim.load_yaml(block)
        check(isinstance(workflow, dict) and "jobs" in workflow and "on" in workflow,
              "a yaml block of docs/ci.md is not a workflow:\n" + block)
        (job,) = workflow["jobs"].values()
        uses = [s["uses"] for s in job["steps"] if "uses" in s]
        if any(u.startswith("OWNER/REPO@") for u in uses):
            kind = "action"
        elif any(u.startswith("actions/setup-node@") for u in uses):
            kind = "typescript"
        elif any(u.startswith("astral-sh/setup-uv@") for u in uses):
            kind = "python"
        else:
            raise Failed("a workflow of docs/ci.md this test cannot run (uses %s)" % uses)
        check(kind not in found, "two %s workflows in docs/ci.md" % kind)
        found[kind] = job
    return found


class Projects:
    def __init__(self, packages, interop, scratch):
        self.packages = packages
        self.interop = interop
        self.scratch = scratch
        self.count = 0

    def fresh(self, name):
        self.count += 1
        root = self.scratch / ("%d-%s" % (self.count, name))
        (root / "project" / ".github").mkdir(parents=True)
        (root / "temp").mkdir()
        return root, root / "project"

    def typescript(self):
        root, project = self.fresh("typescript")
        (project / "src").mkdir()
        shutil.copy(self.interop / "servers" / "ts_sdk2_server.mjs", project / "src" / "index.js")
        shutil.copy(self.interop / "baselines" / "ts-sdk2.txt", project / BASELINE)
        (project / "package.json").write_text(
            '{"name": "my-mcp-server", "private": true, "type": "module",\n'
            ' "scripts": {"build": "mkdir -p build && cp src/index.js build/index.js"}}\n')
        env = {**os.environ, "npm_config_cache": str(root / "npm-cache"), "npm_config_offline": "true",
               "npm_config_registry": "http://127.0.0.1:9/", "npm_config_update_notifier": "false"}
        version = cargo_version()
        tarballs = " ".join("'%s'" % (self.packages / "npm" / name) for name in
                            ("mcp-conformance-%s.tgz" % version, "mcp-conformance-linux-x64-%s.tgz" % version))
        sdk = self.interop / "node_modules"
        # `npm ci` needs the registry: instead, the harness from the local tarballs, and the SDK
        # (with zod) linked from the interop suite's pinned install.
        npm_ci = ("npm install --no-audit --no-fund --no-save --no-package-lock %s\n"
                  "mkdir -p node_modules/@modelcontextprotocol\n"
                  "ln -s '%s' node_modules/@modelcontextprotocol/server\n"
                  "ln -s '%s' node_modules/zod\n") % (tarballs, sdk / "@modelcontextprotocol" / "server", sdk / "zod")
        return root, project, env, {"npm ci": npm_ci}

    def python(self):
        root, project = self.fresh("python")
        shutil.copy(self.interop / "servers" / "py_echo_server.py", project / "server.py")
        shutil.copy(self.interop / "baselines" / "python.txt", project / BASELINE)
        (project / "pyproject.toml").write_text(
            '[project]\nname = "my-mcp-server"\nversion = "1.0.0"\nrequires-python = ">=3.10"\n'
            'dependencies = ["mcp"]\n')
        venv_bin = Path(sys.prefix) / "bin"  # the pinned uv of packaging/requirements-ci.txt
        env = {**os.environ, "PATH": "%s%s%s" % (venv_bin, os.pathsep, os.environ["PATH"]),
               "UV_OFFLINE": "1", "UV_FIND_LINKS": str(self.packages / "wheel"),
               "UV_CACHE_DIR": str(root / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never",
               "UV_TOOL_DIR": str(root / "uv-tools"),
               # `uv sync --locked` needs the index: instead, `uv run` uses the interop suite's
               # pinned venv (the official SDK) as the project environment, unchanged.
               "UV_PROJECT_ENVIRONMENT": str(self.interop / ".venv"), "UV_NO_SYNC": "1"}
        return root, project, env, {"uv sync --locked": "test -x \"$UV_PROJECT_ENVIRONMENT/bin/python\"\n"}


def run_workflow(kind, job, projects):
    root, project, env, replacements = (projects.python() if kind == "python" else projects.typescript())
    replaced = []

    def replace(script):
        key = script.strip()
        if key in replacements:
            replaced.append(key)
            return replacements[key]
        return script

    def uses(step, runner):
        if not step["uses"].startswith("OWNER/REPO@"):
            return None
        inputs = {k: runner.substitute(v) for k, v in step.get("with", {}).items()}
        check("packages" not in inputs and "version" not in inputs,
              "the docs' action step sets %s: the ref alone should pin the version" % sorted(inputs))
        temp = Path(tempfile.mkdtemp(prefix="action-", dir=root / "temp"))
        result, outputs = actionsim.run_action(REPO, {**inputs, "packages": str(projects.packages)},
                                               project, temp, runner.base_env)
        runner.summary.append(result.summary)
        failed = result.failed
        return actionsim.StepResult("action", step["uses"], "failure" if failed else "success",
                                    int(outputs["exit-code"] or 1) if failed else 0, result.log(), outputs)

    result = actionsim.run_job(job, project, root / "temp", env, replace=replace, uses=uses)
    check(not result.failed, "the %s workflow failed" % kind, result)
    check(set(replaced) == set(replacements), "%s: steps %s not found in the workflow"
          % (kind, sorted(set(replacements) - set(replaced))), result)
    harness = [s for s in result.steps if "mcp-conformance" in s.name or s.id == "action"]
    check(len(harness) == 1, "%s: no single mcp-conformance step" % kind, result)
    check("Overall: PASS" in harness[0].log, "%s: the report does not say Overall: PASS" % kind, result)
    for needle in ("## mcp-conformance", "Expected failures, in the baseline"):
        check(needle in result.summary, "%s: the job summary does not say %r:\n%s" % (kind, needle, result.summary), result)
    junit = Path(harness[0].outputs["junit"]) if kind == "action" else project / "mcp-conformance.xml"
    root_el = ET.parse(junit).getroot()
    expected = {c.get("name") for c in root_el.iter("testcase") if c.find("skipped") is not None
                and "expected failure" in c.find("skipped").get("message", "")}
    check(root_el.get("failures") == "0" and expected, "%s: JUnit failures %s, expected failures %s"
          % (kind, root_el.get("failures"), sorted(expected)), result)
    verbatim = [" ".join(step["run"].split()) for step in job["steps"]
                if "run" in step and step["run"].strip() not in replaced]
    return "%s: ran verbatim %s; replaced offline %s; ran this repository's action: %s; skipped %s; " \
           "expected failures %s" % (kind, verbatim, replaced, kind == "action", result.skipped_uses, sorted(expected))


def main():
    args = sys.argv[1:]
    interop = REPO / "interop"
    if "--interop" in args:
        i = args.index("--interop")
        interop = Path(args[i + 1]).resolve()
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit("usage: python3 packaging/test_workflows.py PACKAGES_DIR [--interop DIR]")
    packages = Path(args[0]).resolve()
    for need in (packages / "npm", packages / "wheel", interop / "node_modules" / "@modelcontextprotocol" / "server",
                 interop / ".venv" / "bin" / "python"):
        if not need.exists():
            sys.exit("FAIL: %s is missing (build the packages with packaging/build.sh; "
                     "install the SDKs with interop/run.sh)" % need)
    actionsim.ensure_tools()
    text = DOC.read_text()
    scratch = Path(tempfile.mkdtemp(prefix="mcp-workflows-test-"))
    projects = Projects(packages, interop, scratch)
    try:
        jobs = workflows(text)
    except Failed as e:
        jobs = {}
        print("FAIL workflows: %s" % e)
    cases = [("versions", lambda: check_versions(text, cargo_version()))]
    cases += [(kind, lambda kind=kind, job=job: run_workflow(kind, job, projects)) for kind, job in sorted(jobs.items())]
    try:
        ok = run_cases("workflows", cases) and jobs
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(0 if ok else 1)

if __name__ == "__main__":
    main()
