"""Running a study on Dask: chunks of points as tasks, rows streamed to a Parquet dataset.

The dataset of a study is a folder::

    <out>/<name>/study.json            the study, its fingerprint, the chunking
    <out>/<name>/parts/part-000007.parquet   the rows of chunk 7, written atomically

A chunk is a fixed, contiguous range of points, so a study that stops (the client killed, a
machine rebooted) resumes by running only the chunks that have no part file, and a finished
study is never recomputed. Dask reruns the tasks of a worker that dies. The same study gives
the same table with any number of workers, in process or on a cluster: every point's run is
deterministic (its noise is seeded from the point).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io._files import write_bytes_atomic
from .description import Study
from .evaluate import points, run_chunk

__all__ = ["StudyRun", "run_study", "run_part", "read_results", "chunk_size_for", "SCHEDULERS"]

#: --scheduler values besides an address (``tcp://host:8786``).
SCHEDULERS = ("local", "inprocess")


@dataclass
class StudyRun:
    """What a run did.

    Attributes:
        folder: the dataset folder.
        table: every row so far, by point (a pyarrow Table).
        computed_points, skipped_points: points run now, and found already done.
        wall_time: seconds of this run; task_time: seconds the workers spent in the points.
        scheduler: where it ran.
    """

    folder: Path
    table: Any
    computed_points: int
    skipped_points: int
    wall_time: float
    task_time: float
    scheduler: str


def chunk_size_for(n_points: int, workers: int) -> int:
    """Points per task: about four tasks per worker, at most 64 points (progress, load balance)."""
    return max(1, min(64, math.ceil(n_points / max(1, 4 * workers))))


def _manifest(folder: Path, study: Study, chunk: int, restart: bool) -> int:
    path = folder / "study.json"
    if path.exists() and not restart:
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        if old.get("fingerprint") != study.fingerprint():
            raise InputError(
                f"{folder}: holds the results of a different study (its points or settings changed); "
                "run with --restart to discard them, or give the study another name"
            )
        return int(old["chunk_size"])
    if restart and (folder / "parts").exists():
        for p in (folder / "parts").glob("part-*.parquet"):
            p.unlink()
    doc = {"fingerprint": study.fingerprint(), "chunk_size": chunk, "n_points": study.n_points, "study": study.to_dict()}
    write_bytes_atomic(path, json.dumps(doc, indent=1, default=str))
    return chunk


def run_part(study: dict[str, Any], chunk: list[dict[str, float]]) -> tuple[bytes, int, float]:
    """A chunk's points run and encoded as their Parquet part where they ran (a Dask task):
    (the part's bytes, points, seconds in the points). The client then only writes the bytes:
    building the table and encoding it there took 0.09 ms per point of its CPU, which caps the
    workers one client keeps up with."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows, seconds = run_chunk(study, chunk)
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    return buf.getvalue(), len(rows), seconds


def read_results(folder: str | os.PathLike[str]) -> Any:
    """The rows of a study folder, one per point, ordered by point (a pyarrow Table)."""
    from .._extras import require

    require("studies", "study results")
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = sorted(Path(folder, "parts").glob("part-*.parquet"))
    if not parts:
        return pa.table({})
    table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="default")
    return table.sort_by("point")


def run_study(
    study: Study,
    out: str | os.PathLike[str] = "robot_dynamics_out",
    *,
    scheduler: str = "local",
    workers: int = 2,
    restart: bool = False,
    progress: bool = False,
    stop_after_chunks: int | None = None,
    on_chunk: Callable[[int], None] | None = None,
) -> StudyRun:
    """Run (or resume) a study and return its table.

    Args:
        study: the study.
        out: the parent folder of the dataset (``<out>/<study.name>``).
        scheduler: ``"local"`` (a LocalCluster of ``workers`` processes), ``"inprocess"`` (this
            process, no Dask), or the address of a running Dask scheduler (``tcp://host:8786``).
        workers: worker processes of the local cluster (the chunking uses it too).
        restart: discard the results of a previous run of this study.
        progress: a progress bar on stderr with the throughput and the time left (the
            ``sweep`` command shows one on a terminal; a library call is quiet by default).
        stop_after_chunks: stop after this many chunks are written (a test of resuming).
        on_chunk: called with the index of each chunk written.
    """
    from .._extras import require

    require("studies", "studies")
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= 1024:
        raise InputError(f"workers: expected an integer from 1 to 1024, got {workers!r}")
    folder = Path(out) / study.name
    all_points = points(study)
    chunk = _manifest(folder, study, chunk_size_for(len(all_points), workers), restart)
    chunks = [all_points[i : i + chunk] for i in range(0, len(all_points), chunk)]
    for stale in (folder / "parts").glob(".part-*.parquet.*"):
        stale.unlink(missing_ok=True)  # a part's temporary file, left by a run killed while writing it
    done = {int(p.stem.split("-")[1]) for p in (folder / "parts").glob("part-*.parquet")}
    todo = [k for k in range(len(chunks)) if k not in done]
    skipped = sum(len(chunks[k]) for k in done if k < len(chunks))
    bar = None
    if progress and todo:
        from .._progress import progress_bar

        bar = progress_bar(len(all_points), initial=skipped, unit="pt", desc=f"sweep {study.name}")
    t0 = time.perf_counter()
    task_time = 0.0
    written = 0
    data = study.to_dict()

    def take(k: int, part: bytes, n: int, seconds: float) -> bool:
        nonlocal task_time, written
        write_bytes_atomic(folder / "parts" / f"part-{k:06d}.parquet", part)
        task_time += seconds
        written += 1
        if bar is not None:
            bar.update(n)
        if on_chunk is not None:
            on_chunk(k)
        return stop_after_chunks is not None and written >= stop_after_chunks

    where = scheduler
    try:
        if scheduler == "inprocess":
            for k in todo:
                if take(k, *run_part(data, chunks[k])):
                    break
        elif todo:
            where = _run_dask(scheduler, workers, data, chunks, todo, take)
    finally:
        if bar is not None:
            bar.close()
    computed = sum(len(chunks[k]) for k in todo[:written])
    return StudyRun(folder, read_results(folder), computed, skipped, time.perf_counter() - t0, task_time, where)


def _run_dask(scheduler: str, workers: int, data: dict[str, Any], chunks: list[Any], todo: list[int], take: Callable[..., bool]) -> str:
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        where = f"LocalCluster, {workers} workers"
    else:
        try:
            client = Client(scheduler, timeout=10)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"--scheduler: cannot reach a Dask scheduler at {scheduler!r} ({exc}); valid: an address, or one of {list(SCHEDULERS)}") from None
        where = f"Dask scheduler {scheduler}"
    try:
        scattered = client.scatter(data, broadcast=True)
        futures = {client.submit(run_part, scattered, chunks[k], key=f"study-chunk-{k}-{id(data)}", retries=2): k for k in todo}
        # as_completed waits on the default client's loop unless told; with another client in
        # the process (a notebook's, a test's) a rerun task's event would be awaited on two loops
        for fut in as_completed(futures, loop=client.loop):
            if take(futures[fut], *fut.result()):
                for f in futures:
                    f.cancel()
                break
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return where
