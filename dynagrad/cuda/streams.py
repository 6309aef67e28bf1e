"""CUDA streams and events, as in PyTorch: enough to order work and to time it on the device.

dynagrad's kernels run on the default stream. A ``Stream`` is for user-side ordering and waiting;
an ``Event`` marks a point in a stream, and two timed events give the device time between them.
Under the simulator every launch finishes before it returns, so waits are no-ops and an event's
time is the host clock when it was recorded.

Example:
    >>> import dynagrad as dg
    >>> if dg.cuda.is_available():
    ...     start, end = dg.cuda.Event(enable_timing=True), dg.cuda.Event(enable_timing=True)
    ...     start.record(); y = dg.ones(8, device="cuda") * 2; end.record()
    ...     end.synchronize(); ms = start.elapsed_time(end)
"""
from __future__ import annotations

import time

from ..kernels.cuda import runtime as _runtime

__all__ = ["Stream", "Event"]


def _not_ready(err) -> bool:
    """True when a numba CudaAPIError says the queried work is still running."""
    from numba.cuda.cudadrv.driver import binding
    return getattr(err, "code", None) == binding.CUresult.CUDA_ERROR_NOT_READY


class Stream:
    """A queue of device work on ``device`` (default: the current device).

    Example:
        >>> import dynagrad as dg
        >>> if dg.cuda.is_available():
        ...     s = dg.cuda.Stream()
        ...     s.synchronize(); assert s.query()
    """

    def __init__(self, device=None):
        cuda = _runtime.require("dg.cuda.Stream")
        self.device_index = _runtime.resolve(device, "dg.cuda.Stream")
        self._sim = _runtime.is_simulator()
        if self._sim or self.device_index == _runtime.current_index("dg.cuda.Stream"):
            self.numba_stream = cuda.stream()
        else:
            with cuda.gpus[self.device_index]:  # a stream belongs to the context it is made in
                self.numba_stream = cuda.stream()

    @property
    def device(self):
        from ..device import device
        return device("cuda", self.device_index)

    def synchronize(self) -> None:
        """Wait until all work queued on this stream is done."""
        self.numba_stream.synchronize()

    def query(self) -> bool:
        """True if all work queued on this stream is done (never waits)."""
        if self._sim:
            return True
        from numba.cuda.cudadrv.driver import CudaAPIError, driver
        try:
            driver.cuStreamQuery(int(self.numba_stream.handle))
        except CudaAPIError as err:
            if _not_ready(err):
                return False
            raise
        return True

    def wait_event(self, event: "Event") -> None:
        """Make work queued on this stream from now on wait until ``event`` has happened."""
        event.wait(self)

    def wait_stream(self, stream: "Stream") -> None:
        """Make work queued on this stream from now on wait for the work queued so far on
        ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one if None) at this point of the stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __repr__(self) -> str:
        return f"<dg.cuda.Stream device=cuda:{self.device_index} {self.numba_stream!r}>"


def _numba_stream(stream: "Stream | None"):
    """The numba stream to enqueue on: the wrapped one, or 0 (the default stream) for None."""
    if stream is None:
        return 0
    if not isinstance(stream, Stream):
        raise TypeError(f"expected a dg.cuda.Stream or None, got {type(stream).__name__}")
    return stream.numba_stream


class Event:
    """A marker in a stream's work: wait for it, or time the device between two of them.

    ``enable_timing=True`` is needed for ``elapsed_time``, as in PyTorch.

    Example:
        >>> import dynagrad as dg
        >>> if dg.cuda.is_available():
        ...     a, b = dg.cuda.Event(enable_timing=True), dg.cuda.Event(enable_timing=True)
        ...     a.record(); b.record(); b.synchronize()
        ...     assert a.elapsed_time(b) >= 0.0
    """

    def __init__(self, enable_timing: bool = False):
        cuda = _runtime.require("dg.cuda.Event")
        self.enable_timing = bool(enable_timing)
        self._sim = _runtime.is_simulator()
        # The simulator's events record no time (elapsed_time gives -1), and its work is done on
        # return, so the host clock at record() is the event's time there.
        self._event = None if self._sim else cuda.event(timing=self.enable_timing)
        self._recorded_at: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        """Mark the current end of ``stream``'s queued work (default: the default stream)."""
        handle = _numba_stream(stream)
        if self._event is not None:
            self._event.record(handle)
        self._recorded_at = time.perf_counter()

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` (default: the default stream) wait for this event."""
        handle = _numba_stream(stream)
        if self._event is not None:
            self._event.wait(handle)

    def query(self) -> bool:
        """True if the work before the last ``record`` is done (or the event was never recorded)."""
        return True if self._event is None else bool(self._event.query())

    def synchronize(self) -> None:
        """Wait until the work before the last ``record`` is done."""
        if self._event is not None:
            self._event.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds of device time from this event to ``end_event`` (both recorded, timed).

        Waits for ``end_event`` to complete first, so the result is always ready.
        """
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Event.elapsed_time: both events must be created with "
                               "dg.cuda.Event(enable_timing=True)")
        if self._recorded_at is None or end_event._recorded_at is None:
            raise RuntimeError("Event.elapsed_time: both events must be recorded (event.record()) "
                               "before their elapsed time can be measured")
        if self._event is None:
            return (end_event._recorded_at - self._recorded_at) * 1000.0
        end_event.synchronize()
        return float(self._event.elapsed_time(end_event._event))

    def __repr__(self) -> str:
        state = "recorded" if self._recorded_at is not None else "not recorded"
        return f"<dg.cuda.Event enable_timing={self.enable_timing} {state}>"
