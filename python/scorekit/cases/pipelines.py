"""What a pipeline is for :class:`scorekit.cases.BenchmarkRunner`: one small protocol and its adapters.

A pipeline has a ``name`` (shown in reports; a file's basename), the ``path`` it was given as, a
``run(case_input, case) -> PipelineRun`` (raising means the case is an ``error``) and a
``dag() -> list[DagNode]`` (its steps, recorded into the summary; empty when unknown); an
adapter that never changes the input says ``input_read_only = True`` (no copy is made for it).

Adapters (docs/cases-pipelines.md):

- :class:`CallablePipeline`: a Python callable ``input -> {step: output}`` (``module:function``);
- :class:`CommandPipeline`: any program reading the input JSON on stdin and writing a JSON object
  of step outputs on stdout; per-case timeout (its whole process group is killed); its stderr kept,
  truncated, in the attempt log; no shell unless asked (``sh:``);
- :class:`SavedOutputsPipeline`: a folder of ``<case>.json`` step outputs made elsewhere;
- :class:`PyconveyorPipeline`: a pyconveyor YAML pipeline, when pyconveyor is importable.

:func:`resolve_pipeline` turns the command line's strings into adapters.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Protocol, runtime_checkable

from scorekit.cases.errors import CasesConfigError
from scorekit.cases.results import DagNode
from scorekit.errors import ScorekitError

if TYPE_CHECKING:
    from scorekit.cases.discovery import Case

__all__ = ["CallablePipeline", "CommandPipeline", "Pipeline", "PipelineError", "PipelineRun",
           "PyconveyorPipeline", "SavedOutputsPipeline", "STDERR_LIMIT", "resolve_pipeline"]

#: A command's stderr kept in the attempt log: at most this many characters (its head and tail).
STDERR_LIMIT = 16_384
#: Prefixes :func:`resolve_pipeline` understands.
PREFIXES = ("py:", "cmd:", "sh:", "saved:", "pyconveyor:")
_PYTHON_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@dataclass
class PipelineRun:
    """What one pipeline run gave: ``outputs`` maps step names to values; ``step_statuses`` holds
    the runner's status of steps that ran without an output (``"skipped"``, ``"failed"``, their
    value ``None``); ``attempt_logs`` are kept in the case result; ``log`` is free text of the run
    (a command's stderr) for callers of :meth:`Pipeline.run`, not stored in the summary."""

    outputs: dict[str, Any]
    step_statuses: dict[str, str] = field(default_factory=dict)
    attempt_logs: list[dict[str, Any]] = field(default_factory=list)
    log: str = ""


class PipelineError(ScorekitError, RuntimeError):
    """A pipeline run failed (a command's exit status, timeout or output; a missing saved file);
    the case becomes an ``error`` with this message and keeps ``attempt_logs``."""

    def __init__(self, message: str, attempt_logs: Optional[list[dict[str, Any]]] = None) -> None:
        super().__init__(message)
        self.attempt_logs = attempt_logs or []

    def __reduce__(self) -> Any:  # survives the trip back from a worker process
        return (PipelineError, (str(self), self.attempt_logs))


@runtime_checkable
class Pipeline(Protocol):
    """The protocol every pipeline follows (module docstring)."""

    name: str
    path: str

    def run(self, case_input: dict, case: "Case") -> PipelineRun: ...

    def dag(self) -> list[DagNode]: ...


def _outputs(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PipelineError(f"{where} gave {type(value).__name__}, not an object mapping step names to outputs")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise PipelineError(f"{where} gave a step name that is not text: {bad[0]!r}")
    return value


# ----------------------------------------------------------------------------------- callables
class CallablePipeline:
    """A Python callable ``fn(case_input) -> {step: output}`` (or a :class:`PipelineRun`)."""

    def __init__(self, fn: Callable[[dict], Any], *, path: Optional[str] = None, name: Optional[str] = None) -> None:
        if not callable(fn):
            raise CasesConfigError([f"pipeline {fn!r} is not callable"])
        self.fn = fn
        qualname = f"{getattr(fn, '__module__', None) or '?'}:{getattr(fn, '__qualname__', type(fn).__name__)}"
        self.path = path or qualname
        self.name = name or self.path

    @classmethod
    def from_ref(cls, ref: str) -> "CallablePipeline":
        """``package.module:function`` (attributes may be dotted: ``mod:Class.method``)."""
        module_name, sep, attr = ref.partition(":")
        if not sep or not module_name or not attr:
            raise CasesConfigError([f"pipeline {ref!r}: a Python pipeline is named module:function"])
        try:
            target: Any = importlib.import_module(module_name)
        except Exception as exc:
            raise CasesConfigError([f"pipeline {ref!r}: cannot import module {module_name!r} "
                                    f"({type(exc).__name__}: {exc})"]) from None
        for part in attr.split("."):
            if not hasattr(target, part):
                raise CasesConfigError([f"pipeline {ref!r}: module {module_name!r} has no attribute {attr!r}"])
            target = getattr(target, part)
        if not callable(target):
            raise CasesConfigError([f"pipeline {ref!r}: {attr!r} is not callable"])
        return cls(target, path=ref)

    def inputs(self) -> list[Path]:
        """The source file of the callable, when Python knows it (read by the run: never written)."""
        try:
            source = inspect.getsourcefile(self.fn) or inspect.getfile(self.fn)
        except (TypeError, OSError):
            return []
        return [Path(source)] if os.path.isfile(source) else []

    def run(self, case_input: dict, case: "Case") -> PipelineRun:
        value = self.fn(case_input)
        if isinstance(value, PipelineRun):
            _outputs(value.outputs, f"pipeline {self.name}")
            return value
        return PipelineRun(_outputs(value, f"pipeline {self.name}"))

    def dag(self) -> list[DagNode]:
        return []


# ------------------------------------------------------------------------------------ commands
def _truncate(text: str, limit: int = STDERR_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters cut] …\n{text[-half:]}"


def _json_default(value: Any) -> Any:
    return str(value)


class CommandPipeline:
    """An external program: the case input as JSON on stdin, a JSON object of step outputs on stdout.

    ``command`` is a list of arguments, or a string split as a POSIX shell would (``shlex``)
    without running a shell; ``shell=True`` runs the string through ``/bin/sh -c``. A run that
    exits non-zero, is killed, outlives ``timeout`` seconds (its whole process group is killed),
    or prints anything but a JSON object is a case error naming the reason. Its stderr is kept
    (truncated to :data:`STDERR_LIMIT` characters) in the attempt log.
    """

    input_read_only = True  # the input is only serialised, never changed

    def __init__(self, command: "str | list[str]", *, timeout: Optional[float] = None, shell: bool = False,
                 name: Optional[str] = None, path: Optional[str] = None, cwd: "str | Path | None" = None) -> None:
        if shell:
            if not isinstance(command, str):
                raise CasesConfigError(["a shell pipeline command must be one string"])
            self.argv = ["/bin/sh", "-c", command]
            text = command
        else:
            try:
                self.argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
            except ValueError as exc:
                raise CasesConfigError([f"pipeline command {command!r}: {exc}"]) from None
            text = command if isinstance(command, str) else shlex.join(self.argv)
        if not self.argv or not self.argv[0]:
            raise CasesConfigError(["a pipeline command is empty"])
        self.timeout, self.cwd, self.shell = timeout, cwd, shell
        self.path = path or text
        self.name = name or self._default_name(shell)

    def _default_name(self, shell: bool) -> str:
        """The basename of the last argument that is an existing file (``python3 v2.py`` -> ``v2.py``),
        else the command text."""
        if not shell:
            for arg in reversed(self.argv):
                if os.path.isfile(arg):
                    return os.path.basename(arg)
        return self.path

    def inputs(self) -> list[Path]:
        """Every word of the command that names an existing file (the program, its script, the
        files it is given), relative to the command's folder."""
        words = self.argv
        if self.shell:
            try:
                words = shlex.split(self.argv[2])
            except ValueError:
                words = self.argv[2].split()
        folder = Path(self.cwd) if self.cwd is not None else Path.cwd()
        return [folder / word for word in words if word and (folder / word).is_file()]

    def run(self, case_input: dict, case: "Case") -> PipelineRun:
        data = json.dumps(case_input, ensure_ascii=False, default=_json_default).encode("utf-8")
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, cwd=self.cwd)
        except OSError as exc:
            raise PipelineError(f"cannot start command {self.argv[0]!r}: {exc.strerror or exc}") from None
        timed_out = False
        try:
            stdout, stderr = proc.communicate(data, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._kill_group(proc)
            try:
                stdout, stderr = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # a process outside the group still holds the pipes
                proc.kill()
                proc.wait()
                stdout, stderr = b"", b""
        except BaseException:
            self._kill_group(proc)
            proc.wait()
            raise
        else:
            self._kill_group(proc)  # stragglers the command left running in its group
        elapsed = time.perf_counter() - start
        err_text = _truncate(stderr.decode("utf-8", "replace"))
        log = {"step": None, "attempt": 1, "status": "success", "exit_code": proc.returncode,
               "elapsed": elapsed, "stderr": err_text}

        def fail(status: str, message: str) -> PipelineError:
            log["status"] = status
            return PipelineError(message + _stderr_hint(err_text), [log])

        if timed_out:
            raise fail("timeout", f"command timed out after {self.timeout:g} s (its process group was killed)")
        if proc.returncode < 0:
            raise fail("error", f"command killed by signal {_signal_name(-proc.returncode)}")
        if proc.returncode:
            raise fail("error", f"command exited with status {proc.returncode}")
        try:
            value = json.loads(stdout.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise fail("error", f"command output is not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            what = "empty" if not stdout.strip() else f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
            raise fail("error", f"command output is {what}") from None
        except RecursionError:
            raise fail("error", "command output is nested too deeply") from None
        if not isinstance(value, dict):
            raise fail("error", f"command output is a JSON {_json_kind(value)}, not an object of step outputs")
        return PipelineRun(_outputs(value, "command"), attempt_logs=[log], log=err_text)

    @staticmethod
    def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def dag(self) -> list[DagNode]:
        return []


def _stderr_hint(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return f"; stderr: {lines[-1][:300]}" if lines else ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


# --------------------------------------------------------------------------------- saved outputs
def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {duplicate!r}")
    return result


class SavedOutputsPipeline:
    """Step outputs made elsewhere: ``<directory>/<case name>.json`` holds one case's JSON object.

    A missing file makes that case an error ("no saved output"), as does a file that is not a
    JSON object (duplicate keys included). A case name that is not a plain file name (a path
    separator, ``..``, a NUL) or whose file resolves outside the folder is refused.
    """

    input_read_only = True  # the input is not used

    def __init__(self, directory: "str | Path", *, name: Optional[str] = None, path: Optional[str] = None) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise CasesConfigError([f"saved outputs folder not found: {str(directory)!r}"])
        self.root = self.directory.resolve()
        self.path = path or str(directory)
        self.name = name or self.root.name or self.path

    def file_for(self, case_name: str) -> Path:
        """The saved file of ``case_name``; a :class:`PipelineError` if the name could leave the folder."""
        if (not case_name or case_name in (".", "..") or "/" in case_name or "\\" in case_name
                or "\0" in case_name or os.sep in case_name or (os.altsep and os.altsep in case_name)):
            raise PipelineError(f"case name {case_name!r} is not a plain file name; no saved output can match it")
        target = self.root / f"{case_name}.json"  # the folder is resolved: only a link can lead out
        if target.is_symlink() and target.resolve().parent != self.root:
            raise PipelineError(f"saved output of case {case_name!r} resolves outside {self.path!r}")
        return target

    def inputs(self) -> list[Path]:
        """The folder of saved outputs and every file in it."""
        return [self.directory, *(entry for entry in self.directory.iterdir() if entry.is_file())]

    def run(self, case_input: dict, case: "Case") -> PipelineRun:
        target = self.file_for(case.name)
        try:
            raw = target.read_bytes()
        except FileNotFoundError:
            raise PipelineError(f"no saved output: {self.path}/{case.name}.json not found") from None
        except OSError as exc:
            raise PipelineError(f"cannot read saved output {self.path}/{case.name}.json: {exc.strerror or exc}") from None
        try:
            value = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=_unique_keys)
        except UnicodeDecodeError as exc:
            raise PipelineError(f"saved output {case.name}.json is not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise PipelineError(f"saved output {case.name}.json is not valid JSON "
                                f"({exc.msg} at line {exc.lineno} column {exc.colno})") from None
        except ValueError as exc:
            raise PipelineError(f"saved output {case.name}.json: {exc}") from None
        except RecursionError:
            raise PipelineError(f"saved output {case.name}.json is nested too deeply") from None
        return PipelineRun(_outputs(value, f"saved output {case.name}.json"))

    def dag(self) -> list[DagNode]:
        return []


# ------------------------------------------------------------------------------------ pyconveyor
def _short(ref: Any) -> str:
    text = str(ref)
    return text.rsplit(":", 1)[-1].rsplit(".", 1)[-1] if ":" in text else text


def _dag_nodes(steps: Any) -> list[DagNode]:
    nodes: list[DagNode] = []
    for step in steps if isinstance(steps, list) else [steps] if isinstance(steps, dict) else []:
        if not isinstance(step, dict):
            continue
        kind = str(step.get("type", "llm"))
        details = {key: (str(step[key]) if key == "model" else _short(step[key]))
                   for key in ("model", "schema", "fn") if isinstance(step.get(key), (str, int, float))}
        if isinstance(step.get("condition"), str):
            details["if"] = step["condition"]
        children: list[DagNode] = []
        if kind == "parallel":
            children = _dag_nodes(step.get("steps", []))
        elif kind == "ensemble":
            for member in step.get("members", []) or []:
                if isinstance(member, dict):
                    label = str(member.get("name", member.get("model", "member")))
                    extra = {"model": str(member["model"])} if member.get("model") else {}
                    children.append(DagNode(f"{step.get('name', '')}.{label}", "member", extra))
        elif kind == "condition":
            for branch in ("then", "else"):
                if step.get(branch):
                    children.append(DagNode(branch, "branch", {}, _dag_nodes(step[branch])))
        nodes.append(DagNode(str(step.get("name", "?")), kind, details, children))
    return nodes


class PyconveyorPipeline:
    """A pyconveyor YAML pipeline (optional: pyconveyor must be importable).

    Its run context maps to a :class:`PipelineRun`: a failed run raises (the case is an error);
    every step in the context gives an output (parallel children under their own names);
    skipped steps and steps failed with ``on_error: continue`` give ``None`` with their status;
    attempt logs keep their metadata (status, tokens, timing), never the raw model text.
    """

    def __init__(self, yaml_path: "str | Path", *, schemas: Optional[Mapping[str, type]] = None,
                 name: Optional[str] = None, path: Optional[str] = None) -> None:
        try:
            from pyconveyor import PipelineRunner
        except ImportError:
            raise CasesConfigError([f"pipeline {str(yaml_path)!r}: a YAML pipeline needs pyconveyor "
                                    "(pip install pyconveyor)"]) from None
        self.file = Path(yaml_path)
        self.path = path or str(yaml_path)
        self.name = name or self.file.name
        if not self.file.is_file():
            raise CasesConfigError([f"pipeline file not found: {self.path!r}"])
        try:
            self.runner = PipelineRunner(self.file, schemas=dict(schemas) if schemas else None)
        except Exception as exc:
            raise CasesConfigError([f"pipeline {self.path!r} does not load: {type(exc).__name__}: {exc}"]) from None
        import yaml

        try:
            spec = yaml.safe_load(self.file.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise CasesConfigError([f"pipeline {self.path!r}: {exc}"]) from None
        self._dag = _dag_nodes(spec.get("steps", []) if isinstance(spec, dict) else [])

    def inputs(self) -> list[Path]:
        """The pipeline's YAML file."""
        return [self.file]

    def run(self, case_input: dict, case: "Case") -> PipelineRun:
        rctx = self.runner.run(case_input)
        logs = [{"step": a.step, "attempt": a.attempt, "status": a.status, "errors": list(a.errors or []),
                 "error_type": a.error_type, "elapsed": a.elapsed_seconds,
                 "prompt_tokens": (a.tokens or {}).get("prompt_tokens"),
                 "completion_tokens": (a.tokens or {}).get("completion_tokens")}
                for a in rctx.summary().attempt_logs]
        if rctx.failed:
            state = rctx.failure_state
            message = (f"step {state.step_name!r} failed: {type(state.exception).__name__}: {state.exception}"
                       if state else "the pipeline run failed")
            raise PipelineError(message, logs)
        outputs = {name: result.value for name, result in rctx.steps.items()}
        statuses = {name: result.status for name, result in rctx.steps.items() if result.status != "success"}
        return PipelineRun(outputs, statuses, logs)

    def dag(self) -> list[DagNode]:
        return self._dag


# -------------------------------------------------------------------------------------- resolver
def resolve_pipeline(spec: Any, *, timeout: Optional[float] = None,
                     schemas: Optional[Mapping[str, type]] = None) -> Any:
    """The pipeline ``spec`` names, as an adapter; a :class:`CasesConfigError` if it names none.

    ``spec`` may be an adapter already (returned as is), a callable, a :class:`~pathlib.Path`, or
    a string: ``py:module:function``, ``cmd:COMMAND`` (split like a shell, run without one),
    ``sh:COMMAND`` (run by ``/bin/sh -c``), ``saved:DIR``, ``pyconveyor:FILE.yaml``; without a
    prefix, an existing folder is saved outputs, a ``.yaml``/``.yml`` file a pyconveyor pipeline,
    an executable file a command, and ``package.module:function`` a Python callable.
    ``timeout`` applies to commands, ``schemas`` to pyconveyor pipelines.
    """
    if isinstance(spec, Pipeline) and not isinstance(spec, (str, Path)):
        return spec
    if isinstance(spec, Path):
        spec = str(spec)
    if not isinstance(spec, str):
        if callable(spec):
            return CallablePipeline(spec)
        raise CasesConfigError([f"pipeline {spec!r}: not a pipeline, a callable or a string naming one"])
    kind, body = _split_prefix(spec)
    if kind is None:
        kind, body = _detect(spec), spec
    if not body.strip():
        raise CasesConfigError([f"pipeline {spec!r}: nothing after the prefix"])
    if kind == "py":
        return CallablePipeline.from_ref(body)
    if kind in ("cmd", "sh"):
        return CommandPipeline(body, timeout=timeout, shell=kind == "sh", path=spec if kind == "sh" else body)
    if kind == "saved":
        return SavedOutputsPipeline(body, path=body)
    return PyconveyorPipeline(body, schemas=schemas, path=body)


def _split_prefix(spec: str) -> tuple[Optional[str], str]:
    for prefix in PREFIXES:
        if spec.startswith(prefix) and not os.path.exists(spec):
            return prefix[:-1], spec[len(prefix):]
    return None, spec


def _detect(spec: str) -> str:
    path = Path(spec)
    if path.is_dir():
        return "saved"
    if path.suffix.lower() in (".yaml", ".yml"):
        return "pyconveyor"
    if path.is_file() and os.access(path, os.X_OK):
        return "cmd"
    if _PYTHON_REF.fullmatch(spec):
        return "py"
    hint = " (no such file or folder)" if not path.exists() else ""
    raise CasesConfigError([f"pipeline {spec!r}: cannot tell what kind of pipeline this is{hint}; "
                            "name it py:module:function, cmd:COMMAND, sh:COMMAND, saved:DIR or pyconveyor:FILE.yaml"])
