"""An ordered, bounded process pool: files out in chunks, results back in input order.

``multiprocessing.Pool`` was measured costing the parent process about 2 s of CPU on a
2,000-file tree (a task thread, a result thread and a worker-watching thread that wake
each other per chunk), on a 2-core machine where the parent competes with its own
workers. Here the parent's only thread sends chunks down one pipe per worker and reads
results as they come (``multiprocessing.connection.wait``), with no other threads.

It also fails better than ``Pool.imap``, which waits forever for a worker that died: a
worker that dies (a crash in a native parser, the OOM killer) turns the files of the
chunk it was working on into error results naming the cause, a new worker takes its
place and its other chunks, and the run goes on.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Items a worker is sent at a time: enough to amortise the round trip (a file takes
#: milliseconds), few enough that the ordered stream is not held up by one chunk.
CHUNK = 4

#: Chunks a worker holds (working on one, the next waiting), so it never idles while the
#: parent is busy writing.
QUEUED_PER_WORKER = 2

#: Chunks sent but not yet yielded, per worker: bounds the results waiting in the parent
#: (converted bytes included) however large the tree, while a slow chunk holds up order.
PENDING_PER_WORKER = 8


class WorkerError(RuntimeError):
    """A worker raised: the traceback text from the worker, re-raised in the parent."""


def ordered_map(fn: Callable[[Item], Result], items: Iterator[Item], jobs: int,
                on_lost: Callable[[Item, str], Result]) -> Iterator[Result]:
    """``map(fn, items)`` over ``jobs`` worker processes, streamed and in input order.

    ``fn`` must pickle (a module-level function, or a ``functools.partial`` of one):
    workers may be spawned rather than forked. When a worker dies, ``on_lost(item, why)``
    stands in for the result of each item of the chunk it was working on. An exception
    raised by ``fn`` stops the run and is raised here as WorkerError, as it would be
    in-process.
    """
    pool = _Pool(fn, jobs)
    try:
        yield from pool.map(items, on_lost)
    finally:
        pool.close()


class _Worker:
    """One worker process, its end of the pipe, and the chunks it holds (in order)."""

    def __init__(self, context: Any, fn: Callable, others: list[Any]) -> None:
        self.conn, child = context.Pipe()
        # A forked worker inherits the parent's end of its own pipe and of every earlier
        # worker's: it closes them, so that when the parent dies (even by SIGKILL) every
        # pipe reaches end-of-file and each worker exits instead of waiting forever.
        inherited = [*others, self.conn] if context.get_start_method() == "fork" else []
        self.process = context.Process(target=_serve, args=(child, fn, inherited, os.getpid()),
                                       daemon=True)
        self.process.start()
        child.close()
        self.held: list[tuple[int, list]] = []  # chunks sent, not yet answered


class _Pool:
    """The workers and the scheduling loop of ``ordered_map``."""

    def __init__(self, fn: Callable, jobs: int) -> None:
        import multiprocessing  # deferred: costs start-up time single-file runs never pay

        self._context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        self._fn = fn
        self._workers: list[_Worker] = []
        for _ in range(jobs):
            self._workers.append(_Worker(self._context, fn, [w.conn for w in self._workers]))

    def map(self, items: Iterator, on_lost: Callable[[Any, str], Any]) -> Iterator[Any]:
        from multiprocessing.connection import wait

        chunks = enumerate(iter(lambda: list(islice(items, CHUNK)), []))
        done: dict[int, list] = {}  # answered chunks waiting for their turn
        next_out = sent = 0
        limit = PENDING_PER_WORKER * len(self._workers)
        exhausted = False
        while True:
            # Drain first, so that the bound below counts what is really still pending:
            # with a stale count, workers could all be idle with input left (a run once
            # ended after 120 of 891 files).
            while next_out in done:
                yield from done.pop(next_out)
                next_out += 1
            for w in self._workers:  # top every worker up, within the bound
                while not exhausted and len(w.held) < QUEUED_PER_WORKER and sent - next_out < limit:
                    chunk = next(chunks, None)
                    if chunk is None:
                        exhausted = True
                        break
                    w.held.append(chunk)  # held first: if the send fails, the new worker gets it
                    sent += 1
                    try:
                        w.conn.send(chunk)
                    except OSError:  # it died since the last answer: its EOF below replaces it
                        break
            busy = {w.conn: w for w in self._workers if w.held}
            if not busy:
                # Nothing held: after the drain, a chunk sent and not yielded would be
                # held, so the bound cannot have stopped the top-up; only the input's end.
                if not exhausted:
                    raise RuntimeError("internal: the worker pool stalled with input left")
                return
            for conn in wait(list(busy)):
                w = busy[conn]
                try:
                    index, ok, payload = conn.recv()
                except (EOFError, OSError):
                    self._replace(w, done, on_lost)
                    continue
                if not ok:
                    raise WorkerError(payload)
                w.held = [c for c in w.held if c[0] != index]
                done[index] = payload

    def _replace(self, w: _Worker, done: dict[int, list], on_lost: Callable[[Any, str], Any]) -> None:
        """A worker died: the chunk it was working on (its first: chunks are done in
        order) becomes error results, and a new worker takes its place and the rest."""
        w.process.join(timeout=5)
        code = w.process.exitcode
        why = f"worker process died (exit code {code})" if code is None or code >= 0 \
            else f"worker process killed by signal {-code}"
        (index, chunk), *unstarted = w.held
        done[index] = [on_lost(item, why) for item in chunk]
        w.conn.close()
        new = _Worker(self._context, self._fn, [x.conn for x in self._workers if x is not w])
        for pending in unstarted:
            new.conn.send(pending)
        new.held = unstarted
        self._workers[self._workers.index(w)] = new

    def close(self) -> None:
        for w in self._workers:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.process.join(timeout=1 if not w.held else 0.1)
            if w.process.is_alive():
                w.process.terminate()
                w.process.join()
            w.conn.close()


def _serve(conn: Any, fn: Callable, inherited: list[Any], parent: int) -> None:
    """A worker's loop: a chunk in, its results (or the traceback of a bug) out; it ends
    when the parent says so or its pipe closes (the parent is gone)."""
    for c in inherited:
        c.close()
    if not _die_with(parent):
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        index, chunk = message
        try:
            conn.send((index, True, [fn(item) for item in chunk]))
        except KeyboardInterrupt:
            return
        except (BrokenPipeError, ConnectionResetError):
            return  # the parent is gone: nobody to answer
        except BaseException:
            try:
                conn.send((index, False, traceback.format_exc()))
            except OSError:
                return


def _die_with(parent: int) -> bool:
    """On Linux, ask for SIGTERM when the parent dies: the closed pipe is noticed only
    between chunks, and one chunk can be a 16 MiB file (minutes). False when the parent
    is already gone (it died before the request could cover it)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass  # no prctl: the pipe still ends the worker after its chunk
    return os.getppid() == parent
