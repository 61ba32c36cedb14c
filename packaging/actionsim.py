"""Runs the `run:` steps of a composite action (action.yml) or of a workflow job on this machine,
as a GitHub runner would, for packaging/test_action.py and packaging/test_workflows.py.

What it does as GitHub does: each step's script is written to a file and run with
`bash --noprofile --norc -eo pipefail FILE` (GitHub's `shell: bash`); `${{ … }}` expressions are
substituted in `run:`, `env:` and `working-directory:`; each step gets fresh GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY, GITHUB_PATH and GITHUB_ENV files, read back after it (outputs for
`steps.ID.outputs.X`, PATH entries prepended and variables set for the later steps, summaries
collected); `if:` decides with the job's status so far.

What it refuses: any expression, `if:` condition, or shell it does not know raises
UnknownExpression, so a test cannot pass by silently substituting nothing.

It needs PyYAML: `ensure_tools()` re-runs the calling script in a venv under target/ with the
pinned versions of packaging/requirements-ci.txt.
"""

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / "target" / "ci-tools-venv"
REQUIREMENTS = REPO / "packaging" / "requirements-ci.txt"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# A step may run this long: a bound against a hang, far above any real step here.
STEP_BOUND_SECS = 600


class UnknownExpression(Exception):
    """An expression, condition or shell this runner does not implement."""


def ensure_tools():
    """Re-executes the running script with the venv's Python (PyYAML and uv pinned).

    When the venv cannot be made (no network for pip, say) the script is skipped with a message,
    except in CI (CI=true), where that is a failure."""
    venv_python = VENV / "bin" / "python"
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    try:
        if not venv_python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(venv_python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "-r", str(REQUIREMENTS)],
            check=True,
        )
    except (subprocess.CalledProcessError, OSError) as e:
        message = "cannot install %s into %s: %s" % (REQUIREMENTS.name, VENV, e)
        if os.environ.get("CI") == "true":
            sys.exit("FAIL: " + message)
        print("SKIP %s: %s (CI=true makes this a failure)" % (Path(sys.argv[0]).name, message))
        sys.exit(0)
    os.execv(str(venv_python), [str(venv_python), *sys.argv])


def load_yaml(text):
    import yaml

    # PyYAML reads a bare `on:` key as True (YAML 1.1); GitHub reads it as "on".
    data = yaml.safe_load(text)
    if isinstance(data, dict) and True in data:
        data["on"] = data.pop(True)
    return data


@dataclass
class StepResult:
    id: str
    name: str
    outcome: str  # success, failure, skipped
    returncode: int | None
    log: str
    outputs: dict = field(default_factory=dict)


@dataclass
class RunResult:
    steps: list
    summary: str
    skipped_uses: list

    @property
    def failed(self):
        return any(s.outcome == "failure" for s in self.steps)

    def step(self, step_id):
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def log(self):
        return "\n".join("--- step %s (%s, exit %s)\n%s" % (s.id, s.outcome, s.returncode, s.log)
                         for s in self.steps)


def parse_commands_file(path):
    """GITHUB_OUTPUT / GITHUB_ENV: `NAME=value` lines and `NAME<<DELIMITER` blocks."""
    values = {}
    lines = Path(path).read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            while i < len(lines) and lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            i += 1
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            raise UnknownExpression("unreadable line in %s: %r" % (path, line))
    return values


class Runner:
    """One job's state: the environment, PATH additions, step outputs, the summary so far."""

    def __init__(self, workspace, runner_temp, env, inputs=None, action_path=None, uses=None):
        self.workspace = Path(workspace)
        self.runner_temp = Path(runner_temp)
        self.base_env = dict(env)
        self.inputs = inputs
        self.action_path = action_path
        self.path_added = []
        self.env_added = {}
        self.step_outputs = {}
        self.summary = []
        self.results = []
        self.skipped_uses = []
        # uses(step, runner) -> StepResult, or None to skip the step (as for actions/checkout).
        self.uses = uses

    def expression(self, expr):
        parts = expr.split(".")
        if len(parts) == 2 and parts[0] == "inputs" and self.inputs is not None:
            if parts[1] not in self.inputs:
                raise UnknownExpression("input %r is not declared" % parts[1])
            return self.inputs[parts[1]]
        if expr == "github.action_path" and self.action_path is not None:
            return str(self.action_path)
        if expr == "github.workspace":
            return str(self.workspace)
        if expr == "runner.temp":
            return str(self.runner_temp)
        if len(parts) == 4 and parts[0] == "steps" and parts[2] == "outputs":
            if parts[1] not in self.step_outputs:
                raise UnknownExpression("no step %r ran before: %s" % (parts[1], expr))
            return self.step_outputs[parts[1]].get(parts[3], "")
        raise UnknownExpression("unknown expression ${{ %s }}" % expr)

    def substitute(self, text):
        return EXPRESSION.sub(lambda m: self.expression(m.group(1)), str(text))

    def condition(self, step):
        cond = str(step.get("if", "success()")).strip()
        match = EXPRESSION.fullmatch(cond)
        cond = match.group(1) if match else cond
        failed = any(r.outcome == "failure" for r in self.results)
        known = {"success()": not failed, "always()": True, "failure()": failed,
                 "!cancelled()": True}
        if cond not in known:
            raise UnknownExpression("unknown if: condition %r" % cond)
        return known[cond]

    def run_step(self, step, index, extra_env=None, working_directory=None, replace=None):
        step_id = str(step.get("id", "step%d" % index))
        name = str(step.get("name", step.get("run", step.get("uses", ""))))
        if not self.condition(step):
            self.step_outputs[step_id] = {}  # as on GitHub: a skipped step's outputs are empty
            self.results.append(StepResult(step_id, name, "skipped", None, ""))
            return
        if "uses" in step and self.uses is not None:
            result = self.uses(step, self)
            if result is not None:
                self.step_outputs[step_id] = result.outputs
                self.results.append(result)
                return
        if "uses" in step:
            self.step_outputs[step_id] = {}
            self.skipped_uses.append(step["uses"])
            self.results.append(StepResult(step_id, name, "skipped", None, "uses: not run"))
            return
        shell = step.get("shell", "bash")
        if shell != "bash":
            raise UnknownExpression("step %s: shell %r (only bash is run here)" % (step_id, shell))
        script = self.substitute(step["run"])
        if replace:
            script = replace(script)
        cwd = self.workspace / self.substitute(step.get("working-directory", working_directory or "."))
        self.results.append(self.execute(step_id, name, script, cwd, step, extra_env))

    def execute(self, step_id, name, script, cwd, step, extra_env):
        files = {}
        step_dir = Path(tempfile.mkdtemp(prefix="step-", dir=self.runner_temp))
        for var in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_PATH", "GITHUB_ENV"):
            files[var] = step_dir / var.lower()
            files[var].write_text("")
        script_file = step_dir / "script.sh"
        script_file.write_text(script)
        env = dict(self.base_env)
        env.update(self.env_added)
        env.update({k: self.substitute(v) for k, v in (extra_env or {}).items()})
        env.update({k: self.substitute(v) for k, v in step.get("env", {}).items()})
        env.update({k: str(v) for k, v in files.items()})
        env.update(CI="true", GITHUB_ACTIONS="true", RUNNER_TEMP=str(self.runner_temp),
                   GITHUB_WORKSPACE=str(self.workspace))
        if self.action_path is not None:
            env["GITHUB_ACTION_PATH"] = str(self.action_path)
        env["PATH"] = os.pathsep.join([*reversed(self.path_added), env["PATH"]])
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, timeout=STEP_BOUND_SECS,
        )
        outputs = parse_commands_file(files["GITHUB_OUTPUT"])
        self.step_outputs[step_id] = outputs
        self.path_added += [p for p in files["GITHUB_PATH"].read_text().splitlines() if p]
        self.env_added.update(parse_commands_file(files["GITHUB_ENV"]))
        self.summary.append(files["GITHUB_STEP_SUMMARY"].read_text())
        outcome = "success" if proc.returncode == 0 else "failure"
        return StepResult(step_id, name, outcome, proc.returncode, proc.stdout, outputs)

    def result(self):
        return RunResult(self.results, "".join(self.summary), self.skipped_uses)


def action_inputs(action, given):
    """The inputs a composite action sees: the given ones over the declared defaults."""
    declared = action.get("inputs", {})
    unknown = set(given) - set(declared)
    if unknown:
        raise UnknownExpression("inputs not declared in action.yml: %s" % sorted(unknown))
    inputs = {}
    for name, spec in declared.items():
        if name in given:
            inputs[name] = given[name]
        elif spec.get("required") and "default" not in spec:
            raise UnknownExpression("required input %r not given" % name)
        else:
            inputs[name] = str(spec.get("default", ""))
    return inputs


def run_action(action_dir, inputs, workspace, runner_temp, env):
    """Runs action.yml's composite steps; returns the RunResult and the action's outputs."""
    action = load_yaml((Path(action_dir) / "action.yml").read_text())
    if action["runs"]["using"] != "composite":
        raise UnknownExpression("not a composite action")
    runner = Runner(workspace, runner_temp, env, action_inputs(action, inputs), action_dir)
    for index, step in enumerate(action["runs"]["steps"]):
        runner.run_step(step, index)
    outputs = {name: runner.substitute(spec["value"])
               for name, spec in action.get("outputs", {}).items()}
    return runner.result(), outputs


def run_job(job, workspace, runner_temp, env, replace=None, uses=None):
    """Runs a workflow job's steps. `uses:` steps are skipped and listed in the result unless
    `uses(step, runner)` returns their StepResult; `replace(script)` may swap a script."""
    runner = Runner(workspace, runner_temp, env, uses=uses)
    defaults = job.get("defaults", {}).get("run", {})
    for index, step in enumerate(job["steps"]):
        step = dict(step)
        if "run" in step and "shell" not in step:
            step["shell"] = defaults.get("shell", "bash")
        runner.run_step(step, index, extra_env=job.get("env"),
                        working_directory=defaults.get("working-directory"), replace=replace)
    return runner.result()
