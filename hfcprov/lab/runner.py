"""Run a campaign's points into its store, resumably.

Simulator points are independent pure computations: they run on a local
process pool, or on a Dask cluster (``scheduler="tcp://host:8786"``), with at
most one task per worker slot in flight so the store's 'running' state is true.
Each result is committed by this process alone (one writer) as it arrives, so
a kill loses at most the points in flight, and those run again on resume.

Measured points (emu, modem) run one at a time: a modem is one physical thing.
A failed point is recorded with its reason and the campaign goes on; a real modem's
campaign first runs its pre-flight (nothing is measured if a check fails) and stops after
``target.max_unreachable`` points in a row whose modem never answered (the rest stay
pending: ``--resume`` runs them once the modem is back).

A run holds the campaign's lock (``hfcprov.lab.lock``: pid + heartbeat in the database)
from before it touches the points until it ends, so a second run on the same database
is refused with the holder's name, and ``campaign status`` tells a running campaign
from an interrupted one. Pool workers die with the runner (parent-death signal), so a
``kill -9`` of the runner leaves no orphan computing into the void or holding the file.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hfcprov.errors import HfcprovError
from hfcprov.lab import backends
from hfcprov.lab.lock import RunLock
from hfcprov.lab.spec import Campaign, CampaignError, Point
from hfcprov.lab.store import Store
from hfcprov.results import RunResult

# on_event(kind, point, detail): kind is "start", "done" (detail: list[RunResult]) or "failed" (detail: str)
EventHook = Callable[[str, Point, object], None]


@dataclass
class Summary:
    ran: int = 0
    done: int = 0
    failed: int = 0
    errors: dict[str, str] = field(default_factory=dict)  # point key -> reason
    seconds: float = 0.0
    stopped: str | None = None  # why the campaign stopped before its last point


def run_campaign(campaign: Campaign, store: Store, *, resume: bool = False, retry_failed: bool = False,
                 jobs: int | None = None, scheduler: str | None = None, scheduler_timeout: float = 20.0,
                 on_event: EventHook | None = None, command: str | None = None) -> Summary:
    """Run every pending point of ``campaign`` into ``store``; returns what happened this time.

    ``command``: how this run was started, shown to a second run that finds the lock held."""
    with RunLock(store.path, command):
        return _run_locked(campaign, store, resume, retry_failed, jobs, scheduler, scheduler_timeout, on_event)


def _run_locked(campaign, store, resume, retry_failed, jobs, scheduler, scheduler_timeout, on_event) -> Summary:
    store.begin(campaign, resume=resume)
    if retry_failed:
        store.retry_failed()
    points = store.pending()
    summary = Summary()
    t0 = time.monotonic()
    emit = on_event or (lambda *a: None)
    if campaign.target.kind == "sim":
        _run_simulated(campaign, store, points, jobs, scheduler, scheduler_timeout, emit, summary)
    else:
        if scheduler:
            raise CampaignError("--scheduler spreads simulator sweeps only; a modem campaign runs its points in turn")
        _run_measured(campaign, store, points, emit, summary)
    summary.seconds = time.monotonic() - t0
    return summary


def _record_done(store, point, results, emit, summary):
    store.finish(point, results)
    summary.ran += 1
    summary.done += 1
    emit("done", point, results)


def _record_failed(store, point, err: BaseException, emit, summary):
    reason = str(err) if isinstance(err, HfcprovError) else f"{type(err).__name__}: {err}"
    store.fail(point, reason)
    summary.ran += 1
    summary.failed += 1
    summary.errors[point.key] = reason
    emit("failed", point, reason)


# -- simulator: many points in parallel ---------------------------------------------


def _run_simulated(campaign, store, points, jobs, scheduler, scheduler_timeout, emit, summary):
    env = backends.environment(campaign)
    with _executor(jobs or campaign.jobs or os.cpu_count() or 1, scheduler, scheduler_timeout) as ex:
        env.update(ex.describe())
        store.set_environment(env)
        queue = list(points)
        in_flight: dict = {}  # future -> point
        while queue or in_flight:
            while queue and len(in_flight) < ex.slots:
                point = queue.pop(0)
                try:
                    scenario = backends.sim_scenario(campaign, point)
                except HfcprovError as err:
                    store.mark_running(point)
                    _record_failed(store, point, err, emit, summary)
                    continue
                store.mark_running(point)
                emit("start", point, None)
                in_flight[ex.submit(backends.simulate, scenario, campaign.traffic.voip)] = point
            if not in_flight:
                continue
            for fut in ex.wait_first(list(in_flight)):
                point = in_flight.pop(fut)
                try:
                    result = fut.result()
                except Exception as err:  # noqa: BLE001 - a point's failure is data, the campaign goes on
                    _record_failed(store, point, err, emit, summary)
                else:
                    _record_done(store, point, [result], emit, summary)


class _Inline:
    """jobs=1: run in this process (no pickling, clean tracebacks while developing)."""

    slots = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def describe(self) -> dict:
        return {"executor": "inline"}

    def submit(self, fn, *args):
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(fn(*args))
        except Exception as err:  # noqa: BLE001
            fut.set_exception(err)
        return fut

    def wait_first(self, futures):
        return futures


def _init_worker(parent: int) -> None:
    # A terminal's Ctrl-C reaches the whole process group; only the runner handles it, so the
    # workers do not each print a KeyboardInterrupt traceback. The runner stops them below.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` dies, even by ``kill -9`` (which runs no cleanup in the parent).

    Linux: the kernel's parent-death signal. Elsewhere: a thread that polls for being orphaned."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="parent-watch").start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


class _Pool:
    def __init__(self, jobs: int):
        self.slots = jobs
        self.pool = cf.ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(os.getpid(),))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.pool.shutdown(wait=True)
            return False
        # Ctrl-C (or an error): do not wait for running points; they are 'running' in the store
        # and run again on resume. Stop the workers now rather than let them finish unseen.
        workers = list((self.pool._processes or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.join(5)
        return False

    def describe(self) -> dict:
        return {"executor": f"local process pool, {self.slots} workers"}

    def submit(self, fn, *args):
        return self.pool.submit(fn, *args)

    def wait_first(self, futures):
        return cf.wait(futures, return_when=cf.FIRST_COMPLETED).done


class _Dask:
    def __init__(self, scheduler: str, timeout: float):
        try:
            from distributed import Client
        except ImportError:
            raise CampaignError("--scheduler needs Dask distributed: pip install 'hfcprov[dask]'") from None
        try:
            self.client = Client(scheduler, timeout=f"{timeout}s")
        except (OSError, TimeoutError) as err:
            raise CampaignError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
        self.scheduler = scheduler
        self.slots = max(1, sum(self.client.nthreads().values()))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.client.close()
        return False

    def describe(self) -> dict:
        import distributed

        return {"executor": f"dask {self.scheduler}, {self.slots} worker threads",
                "distributed": distributed.__version__}

    def submit(self, fn, *args):
        # pure=False: two repetitions of the same scenario are two runs, not one cached result.
        return self.client.submit(fn, *args, pure=False)

    def wait_first(self, futures):
        from distributed import wait

        return wait(futures, return_when="FIRST_COMPLETED").done


def _executor(jobs: int, scheduler: str | None, timeout: float):
    if scheduler:
        return _Dask(scheduler, timeout)
    if jobs <= 1:
        return _Inline()
    return _Pool(jobs)


# -- measured: one point at a time ----------------------------------------------------


def _run_measured(campaign, store, points, emit, summary):
    from hfcprov.lab.measured import measured_backend

    from hfcprov.lab.proof import PointUnreachable

    with measured_backend(campaign) as backend:
        if points and hasattr(backend, "preflight"):
            backend.preflight()  # raises before the first point: nothing is marked failed
        env = backends.environment(campaign)
        env.update(backend.environment())
        store.set_environment(env)
        limit = getattr(campaign.target, "max_unreachable", 0)
        unreachable = 0
        for point in points:
            store.mark_running(point)
            emit("start", point, None)
            try:
                results = backend.measure(point)
                if campaign.simulate:
                    results.append(backends.simulate(backends.sim_scenario(campaign, point, backend.last_flow),
                                                     campaign.traffic.voip))
            except Exception as err:  # noqa: BLE001 - one point's failure is recorded, the campaign goes on
                _record_failed(store, point, err, emit, summary)
                unreachable = unreachable + 1 if isinstance(err, PointUnreachable) else 0
                if limit and unreachable >= limit:
                    summary.stopped = (f"stopped after {unreachable} points in a row whose modem never answered "
                                       f"(target.max_unreachable: {limit}); the other points are not run")
                    break
            else:
                unreachable = 0
                _record_done(store, point, results, emit, summary)
                if backend.sys_descr and env.get("modem_sysDescr") != backend.sys_descr:
                    env["modem_sysDescr"] = backend.sys_descr
                    store.set_environment({"modem_sysDescr": backend.sys_descr})


def results_of(store: Store) -> dict[int, dict[str, RunResult]]:
    """Every stored result, by point index and source (for tests and comparisons)."""
    out: dict[int, dict[str, RunResult]] = {}
    for row in store.rows():
        if row["run_id"] is not None:
            out.setdefault(row["idx"], {})[row["source"]] = store.result(row["run_id"])
    return out
