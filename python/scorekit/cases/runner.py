"""The benchmark runner: every case through every pipeline, scored and aggregated.

:class:`BenchmarkRunner` discovers the cases and checks the whole configuration in its
constructor, raising one :class:`~scorekit.cases.errors.CasesConfigError` with every problem
before anything runs. :meth:`BenchmarkRunner.run` runs the pipelines in order and the cases in
sorted order, each case's run and scoring either in this process (``jobs=1``, no timeout) or in
worker processes. A worker that crashes (even ``os._exit`` or a segfault) or outlives the timeout
marks only its case ``error``; a fresh worker takes over. Results are placed by case index, so
the summary never depends on the order in which workers finish.
"""

from __future__ import annotations

import copy
import math
import multiprocessing
import os
import pickle
import signal
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from scorekit.cases.errors import CasesConfigError, ComparatorConfigError, ComparatorError
from scorekit.cases.pipelines import PipelineError, PyconveyorPipeline, resolve_pipeline
from scorekit.cases.results import (MISSING_STEPS, BenchmarkSummary, CaseResult, PipelineBenchmarkResult,
                                    aggregate_pipeline, case_score, jsonable)

__all__ = ["BenchmarkRunner", "MATCHING_METHODS", "WORKER_GRACE_SECONDS"]

MATCHING_METHODS = ("greedy", "optimal")
#: A worker whose case runs this much longer than ``timeout`` is killed (a command pipeline's
#: own timeout fires first and reports itself).
WORKER_GRACE_SECONDS = 2.0


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, PipelineError):
        return str(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class BenchmarkRunner:
    """Run ``pipelines`` over the cases of ``benchmark_dir`` (docs/cases-pipelines.md).

    ``pipelines``: adapters, callables or strings (:func:`~scorekit.cases.pipelines.resolve_pipeline`),
    baseline first. ``comparators`` map step or field paths (``*`` for any key or list position) to
    ``(actual, expected) -> score`` callables or named comparators (:mod:`scorekit.cases.comparators`);
    a path that matches no case's expected output, or an unknown name, is a
    :class:`~scorekit.cases.errors.ComparatorConfigError` (when it is the only problem).
    ``pass_threshold`` in [0, 1]. ``schemas`` go to pyconveyor pipelines. ``matching`` is
    ``"greedy"`` or ``"optimal"`` (needs scipy). ``jobs`` worker processes (1: in this process,
    unless ``timeout`` is set). ``timeout``: seconds per case run. ``allow_external_files`` and
    ``max_file_bytes`` govern ``$file`` references. ``progress(done, total)`` is called after
    every case. ``missing_steps``: ``"exclude"`` (default, the seed's rule) leaves a step the
    pipeline gave no output for out of its case's score, ``"fail"`` scores it 0 there; either
    way missing steps are counted per case and per pipeline.
    """

    def __init__(self, benchmark_dir: "str | Path", pipelines: Sequence[Any], comparators: Optional[Mapping[str, Any]] = None,
                 pass_threshold: float = 1.0, schemas: Optional[Mapping[str, type]] = None, *, matching: str = "greedy",
                 jobs: int = 1, timeout: Optional[float] = None, allow_external_files: bool = False,
                 max_file_bytes: int = 10 * 2**20, progress: Optional[Callable[[int, int], None]] = None,
                 missing_steps: str = "exclude") -> None:
        from scorekit.cases.comparators import resolve_comparators
        from scorekit.cases.discovery import discover_cases

        problems: list[str] = []
        if isinstance(pass_threshold, bool) or not isinstance(pass_threshold, (int, float)):
            problems.append(f"pass_threshold must be a number in [0, 1], got {pass_threshold!r}")
        elif not 0.0 <= pass_threshold <= 1.0:
            problems.append(f"pass_threshold must be between 0 and 1, got {pass_threshold!r}")
        if matching not in MATCHING_METHODS:
            problems.append(f"matching must be 'greedy' or 'optimal', got {matching!r}")
        elif matching == "optimal":
            try:
                import scipy.optimize  # noqa: F401
            except ImportError:
                problems.append("matching='optimal' needs scipy (pip install scipy)")
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            problems.append(f"jobs must be a whole number of at least 1, got {jobs!r}")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not math.isfinite(timeout) or timeout <= 0):
            problems.append(f"timeout must be a positive number of seconds, got {timeout!r}")
        if progress is not None and not callable(progress):
            problems.append("progress must be a callable progress(done, total)")
        if not isinstance(missing_steps, str) or missing_steps not in MISSING_STEPS:
            problems.append(f"missing_steps must be 'exclude' or 'fail', got {missing_steps!r}")
        if isinstance(pipelines, (str, Path)) or callable(pipelines):
            pipelines = [pipelines]
        self.pipelines: list[Any] = []
        for spec in pipelines:
            try:
                self.pipelines.append(resolve_pipeline(spec, timeout=timeout, schemas=schemas))
            except CasesConfigError as exc:
                problems.extend(exc.problems)
        if not pipelines:
            problems.append("no pipeline given")
        if schemas and not any(isinstance(p, PyconveyorPipeline) for p in self.pipelines):
            problems.append("schemas are given but no pyconveyor pipeline uses them")
        try:
            self.cases, self.skipped = discover_cases(benchmark_dir, allow_external_files=allow_external_files,
                                                      max_file_bytes=max_file_bytes)
        except CasesConfigError as exc:
            problems.extend(exc.problems)
            self.cases, self.skipped = [], []
        try:
            self.comparators = resolve_comparators(comparators or {}, [c.expected for c in self.cases])
        except ComparatorConfigError as exc:
            if not problems:
                raise
            problems.extend(exc.problems)
        if problems:
            raise CasesConfigError(problems)
        self.benchmark_dir = Path(benchmark_dir)
        self.pass_threshold = float(pass_threshold)
        self.matching, self.jobs, self.timeout, self.progress = matching, jobs, timeout, progress
        self.missing_steps = missing_steps

    @property
    def case_names(self) -> list[str]:
        return [c.name for c in self.cases]

    def input_paths(self) -> list[Path]:
        """Every file and folder the run reads, for :func:`scorekit.files.check_outputs`: each
        case folder and every file under it (sub-folders too, so that a hard link of any of
        them is known), the files loading the cases read (``$file`` targets, external ones
        included), and what each pipeline reads (its ``inputs()``: a script, a YAML file, a
        folder of saved outputs)."""
        paths: list[Path] = []
        for case in self.cases:
            folder = case.directory.resolve()
            paths.append(folder)
            for parent, _, names in os.walk(folder):
                paths.extend(Path(parent) / name for name in names)
            paths.extend(case.files)
        for pipeline in self.pipelines:
            inputs = getattr(pipeline, "inputs", None)
            if callable(inputs):
                paths.extend(Path(p) for p in inputs())
        return list(dict.fromkeys(paths))

    # ------------------------------------------------------------------------------------ run
    def run(self) -> BenchmarkSummary:
        """Run every case through every pipeline; the :class:`BenchmarkSummary`."""
        total, done = len(self.cases) * len(self.pipelines), 0
        results: list[PipelineBenchmarkResult] = []
        names = _unique_names([p.name for p in self.pipelines])
        for index, pipeline in enumerate(self.pipelines):
            result = PipelineBenchmarkResult(pipeline_path=str(pipeline.path), name=names[index],
                                             dag=list(pipeline.dag()))
            if self.jobs == 1 and self.timeout is None:
                cases = []
                for case_index in range(len(self.cases)):
                    cases.append(self.run_case(index, case_index))
                    done += 1
                    self._report(done, total)
            else:
                cases = _WorkerPool(self, index, done, total).run()
                done += len(cases)
            result.cases = cases
            results.append(aggregate_pipeline(result, self.pass_threshold))
        return BenchmarkSummary(results, self.case_names, self.pass_threshold, list(self.skipped), self.matching,
                                missing_steps=self.missing_steps)

    def _report(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)

    def run_case(self, pipeline_index: int, case_index: int, on_ran: Optional[Callable[[], None]] = None) -> CaseResult:
        """Case ``case_index`` run through pipeline ``pipeline_index`` and scored; an exception
        (or ``SystemExit``) of the pipeline or of a comparator makes the case an error. The
        pipeline gets a deep copy of the input unless it declares ``input_read_only = True``.
        ``on_ran()`` is called when the pipeline run ends."""
        from scorekit.cases.comparators import label_fields
        from scorekit.cases.scoring import score_case

        pipeline, case = self.pipelines[pipeline_index], self.cases[case_index]
        result = CaseResult(case.name, str(pipeline.path), "success", expecteds=case.expected)
        case_input = case.input if getattr(pipeline, "input_read_only", False) else copy.deepcopy(case.input)
        start = time.perf_counter()
        try:
            run = pipeline.run(case_input, case)
        except (Exception, SystemExit) as exc:  # SystemExit from a callable is that case's error too
            result.elapsed_seconds = time.perf_counter() - start
            return _failed(result, exc, getattr(exc, "attempt_logs", []))
        result.elapsed_seconds = time.perf_counter() - start
        result.attempt_logs = list(run.attempt_logs)
        if on_ran is not None:
            on_ran()
        try:
            result.step_scores = score_case(case.expected, run.outputs, comparators=self.comparators or None,
                                            matching=self.matching, runner_statuses=run.step_statuses)
        except ComparatorError as exc:
            return _failed(result, exc, result.attempt_logs)
        except MemoryError:
            raise
        except Exception as exc:  # a scorer bug must not end the run: the case shows it
            return _failed(result, RuntimeError(f"scoring failed: {_error_text(exc)}"), result.attempt_logs)
        label_fields(result.step_scores, self.comparators)
        result.overall_score = case_score(result.step_scores, self.missing_steps)
        result.actuals = {step: _dumped(run.outputs[step]) for step in case.expected if step in run.outputs}
        return result


def _failed(result: CaseResult, exc: BaseException, logs: list[dict[str, Any]]) -> CaseResult:
    result.status, result.error, result.error_message = "error", exc, _error_text(exc)
    result.overall_score, result.step_scores, result.attempt_logs = 0.0, [], list(logs)
    return result


def _dumped(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) and not isinstance(value, type) else value


def _unique_names(names: list[str]) -> list[str]:
    """Pipeline names as shown in reports; a repeated name gets `` (2)``, `` (3)`` …"""
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return unique


# ------------------------------------------------------------------------------- worker pool
class _Stop(BaseException):
    """SIGTERM in a worker: stop now (a running command's process group is killed on the way out)."""


def _on_term(signum: int, frame: Any) -> None:
    raise _Stop()


def _worker_main(runner: BenchmarkRunner, pipeline_index: int, conn: Any) -> None:
    """A worker process: run the case indices it receives; send :data:`_RAN` when a pipeline
    run ends, then the pickled result. Ctrl-C is the parent's to handle; SIGTERM stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_term)
    try:
        while True:
            case_index = conn.recv()
            if case_index is None:
                return
            result = runner.run_case(pipeline_index, case_index, on_ran=lambda: conn.send_bytes(_RAN))
            conn.send_bytes(_pickled(result))
    except (_Stop, EOFError, BrokenPipeError):
        return


#: A worker's message "the pipeline run is over, scoring now" (the timeout stops applying).
_RAN = b"ran"


def _pickled(result: CaseResult) -> bytes:
    """``result`` pickled; what does not survive a pickle round trip (an exception whose class
    cannot be rebuilt, an object of a class defined on the fly) becomes plain data."""
    try:
        data = pickle.dumps(result)
        if result.error is not None:
            pickle.loads(data)
        return data
    except Exception:
        pass
    if result.error is not None:
        result.error = RuntimeError(result.error_message)
    result.actuals, result.attempt_logs = jsonable(result.actuals), jsonable(result.attempt_logs)
    return pickle.dumps(result)


@dataclass
class _Worker:
    process: Any
    conn: Any
    case_index: Optional[int] = None
    deadline: Optional[float] = None


class _WorkerPool:
    """Up to ``runner.jobs`` worker processes running one pipeline's cases, one case at a time each;
    a worker that died or overran is replaced by a fresh one."""

    def __init__(self, runner: BenchmarkRunner, pipeline_index: int, done: int, total: int) -> None:
        self.runner, self.pipeline_index, self.done, self.total = runner, pipeline_index, done, total
        methods = multiprocessing.get_all_start_methods()
        self.context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.limit = None if runner.timeout is None else runner.timeout + WORKER_GRACE_SECONDS

    def _start(self) -> _Worker:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_worker_main, args=(self.runner, self.pipeline_index, child))
        process.start()
        child.close()
        return _Worker(process, parent)

    def _assign(self, worker: _Worker, case_index: int) -> None:
        worker.case_index = case_index
        worker.deadline = None if self.limit is None else time.monotonic() + self.limit
        worker.conn.send(case_index)

    def run(self) -> list[CaseResult]:
        count = len(self.runner.cases)
        results: list[Optional[CaseResult]] = [None] * count
        pending = deque(range(count))
        workers: list[_Worker] = []
        try:
            for _ in range(min(self.runner.jobs, count)):
                workers.append(self._start())
                self._assign(workers[-1], pending.popleft())
            while any(w.case_index is not None for w in workers):
                busy = [w for w in workers if w.case_index is not None]
                deadlines = [w.deadline for w in busy if w.deadline is not None]
                wait_for = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], wait_for)
                for slot, worker in enumerate(workers):
                    if worker.case_index is None:
                        continue
                    case_index = worker.case_index
                    outcome = self._poll(worker, ready)
                    if outcome is None:
                        continue
                    results[case_index] = outcome
                    self.done += 1
                    self.runner._report(self.done, self.total)
                    worker.case_index = None
                    if not worker.process.is_alive():
                        worker.conn.close()
                        workers[slot] = worker = self._start()
                    if pending:
                        self._assign(worker, pending.popleft())
        finally:
            for worker in workers:
                self._stop(worker)
        return results  # type: ignore[return-value]

    def _poll(self, worker: _Worker, ready: list[Any]) -> Optional[CaseResult]:
        """The worker's finished case result, an error result if it died or overran, else ``None``."""
        if worker.conn in ready or worker.process.sentinel in ready:
            try:
                while worker.conn.poll():
                    message = worker.conn.recv_bytes()
                    if message != _RAN:
                        return pickle.loads(message)
                    worker.deadline = None  # the pipeline run is over; scoring has no time limit
            except (EOFError, OSError):
                pass
            if not worker.process.is_alive():
                worker.process.join()
                return self._error(worker, _death(worker.process.exitcode))
        if worker.deadline is not None and time.monotonic() >= worker.deadline:
            self._end(worker.process)
            return self._error(worker, f"pipeline run timed out after {self.runner.timeout:g} s "
                                       "(its worker process was killed)")
        return None

    def _error(self, worker: _Worker, message: str) -> CaseResult:
        pipeline = self.runner.pipelines[self.pipeline_index]
        case = self.runner.cases[worker.case_index]  # type: ignore[index]
        result = CaseResult(case.name, str(pipeline.path), "error", expecteds=case.expected)
        return _failed(result, PipelineError(message), [])

    @staticmethod
    def _end(process: Any) -> None:
        """SIGTERM (a command it runs is killed with its group), then SIGKILL after a second."""
        process.terminate()
        process.join(1.0)
        if process.is_alive():
            process.kill()
            process.join()

    def _stop(self, worker: _Worker) -> None:
        if worker.process.is_alive():
            if worker.case_index is None:
                try:
                    worker.conn.send(None)
                    worker.process.join(1.0)
                except (OSError, ValueError):
                    pass
            if worker.process.is_alive():
                self._end(worker.process)
        worker.conn.close()


def _death(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = str(-exitcode)
        return f"pipeline process died (signal {name})"
    return f"pipeline process exited unexpectedly (status {exitcode})"
