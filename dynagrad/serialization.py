"""Checkpoints without pickle: ``save`` / ``load`` for tensors inside nested containers, and
``save_safetensors`` / ``load_safetensors`` for flat dicts of tensors in the safetensors layout.

File layout (every ``dg.save`` file is also a valid safetensors file)::

    8 bytes    N, the header length, unsigned little-endian
    N bytes    JSON header, space-padded to a multiple of 8:
                 {"__metadata__": {string: string, ...},
                  "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
    rest       raw little-endian tensor bytes, C order, offsets relative to the end of the header

``dg.save`` names tensors "0", "1", ... and stores the container tree, as JSON, in the metadata
(``dynagrad.tree``), with a CRC-32 of each tensor's bytes and of the tree. Loading parses JSON
and copies bytes: it never runs code. A pickle or a ``torch.save`` zip is refused with an
explanation; a truncated or corrupted file raises ``RuntimeError`` naming what is wrong.

Example:
    >>> import io, dynagrad as dg
    >>> buf = io.BytesIO()
    >>> dg.serialization.save({"w": dg.ones(2), "step": 3}, buf)
    >>> _ = buf.seek(0)
    >>> dg.serialization.load(buf)
    {'w': tensor([1., 1.]), 'step': 3}
"""
from __future__ import annotations

import base64
import collections
import json
import os
import sys
import tempfile
import zlib
from typing import Any, BinaryIO, Callable, Union

import numpy as np

from . import dtypes
from .device import as_device
from .kernels.buffers import host
from .tensor import Size, Tensor, _wrap

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "load_safetensors",
           "safe_globals", "save", "save_safetensors"]

FileLike = Union[str, os.PathLike, BinaryIO]

_FORMAT = "dynagrad"
_VERSION = "1"
# safetensors' own limit: a header bigger than this is a corrupted length, not a real header
_MAX_HEADER = 100_000_000

_CODE_BY_DTYPE = {dtypes.float16: "F16", dtypes.float32: "F32", dtypes.float64: "F64",
                  dtypes.bool_: "BOOL", dtypes.uint8: "U8", dtypes.int8: "I8",
                  dtypes.int16: "I16", dtypes.int32: "I32", dtypes.int64: "I64",
                  # safetensors' C64; it has no code for complex128, so C128 is ours (a file
                  # holding one loads here, not in safetensors)
                  dtypes.complex64: "C64", dtypes.complex128: "C128"}
_DTYPE_BY_CODE = {v: k for k, v in _CODE_BY_DTYPE.items()}


# --- writing -------------------------------------------------------------------------------------

def _le_bytes(t: Tensor) -> np.ndarray:
    """The tensor's elements as a flat little-endian uint8 array (C order; views saved by value)."""
    arr = np.ascontiguousarray(host(t._data))
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr.reshape(-1).view(np.uint8)


def _write_file(tensors: list[tuple[str, Tensor]], metadata: dict[str, str] | None,
                f: FileLike, op: str) -> None:
    blobs, header, offset = [], {}, 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: value for key {name!r} is a {type(t).__name__}, expected a "
                            "Tensor")
        blob = _le_bytes(t)
        header[name] = {"dtype": _CODE_BY_DTYPE[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + blob.size]}
        blobs.append(blob)
        offset += blob.size
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    head += b" " * (-len(head) % 8)  # tensor data starts 8-byte aligned, as safetensors writes it

    def write(out: BinaryIO) -> None:
        out.write(len(head).to_bytes(8, "little"))
        out.write(head)
        for blob in blobs:
            if blob.size:
                out.write(blob.data)

    if hasattr(f, "write"):
        write(f)
        return
    path = os.fspath(f)
    # write beside the target, then rename: a crash never leaves a half-written checkpoint
    fd, tmp = tempfile.mkstemp(prefix=".dg-save-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class _Encoder:
    """Turns a container tree into JSON-able nodes, collecting tensors (each object once)."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self._slot: dict[int, int] = {}
        self._open: set[int] = set()

    def node(self, obj: Any, path: str):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)  # int subclasses (IntEnum) are stored as plain ints
        if isinstance(obj, float):
            return {"f": float.hex(obj)}  # exact, and covers inf and nan
        if isinstance(obj, Tensor):
            return self.tensor(obj, path)
        if isinstance(obj, (np.ndarray, np.generic)):
            return self.numpy(obj, path)
        if isinstance(obj, (bytes, bytearray)):
            return {"b": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, dtypes.dtype):
            return {"dt": obj.name}
        if isinstance(obj, Size):
            return {"S": [int(s) for s in obj]}
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            raise TypeError(f"save: {path} is a namedtuple ({type(obj).__name__}); it cannot be "
                            "rebuilt without running code on load: convert it to a tuple or dict")
        if type(obj) in (list, tuple, dict, collections.OrderedDict):
            return self.container(obj, path)
        raise TypeError(f"save: {path} has type {type(obj).__module__}.{type(obj).__qualname__}, "
                        "which dg.save cannot store: it stores tensors, NumPy arrays, "
                        "dict/OrderedDict/list/tuple containers, int, float, bool, str, bytes, "
                        "None, dtypes and Size")

    def container(self, obj, path: str):
        if id(obj) in self._open:
            raise ValueError(f"save: {path} contains itself; self-referencing structures cannot "
                             "be saved")
        self._open.add(id(obj))
        try:
            if isinstance(obj, dict):
                tag = "o" if type(obj) is collections.OrderedDict else "d"
                return {tag: [[self.node(k, f"{path} key {k!r}"), self.node(v, f"{path}[{k!r}]")]
                              for k, v in obj.items()]}
            tag = "l" if isinstance(obj, list) else "t"
            return {tag: [self.node(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        finally:
            self._open.discard(id(obj))

    def _add(self, t: Tensor, key: int) -> int:
        slot = self._slot.get(key)
        if slot is None:
            slot = self._slot[key] = len(self.tensors)
            self.tensors.append(t)
        return slot

    def tensor(self, t: Tensor, path: str) -> dict:
        if t.dtype not in _CODE_BY_DTYPE:
            raise TypeError(f"save: {path} has dtype {t.dtype.name}, which cannot be saved")
        # the same tensor object twice (tied weights) is stored once and loads as one object
        node = {"T": self._add(t, id(t))}
        if t.is_cuda:  # where it lived: load puts it back there unless map_location says else
            node["D"] = str(t.device)
        if t.requires_grad:
            node["g"] = 1
        if _is_parameter(t):
            node["P"] = 1
        return node

    def numpy(self, a, path: str) -> dict:
        arr = np.asarray(a)
        try:
            dt = dtypes.from_numpy_dtype(arr.dtype.newbyteorder("="))
        except TypeError:
            raise TypeError(f"save: {path} is a NumPy value of dtype {arr.dtype}, which cannot be "
                            "saved") from None
        node = {"N": self._add(_wrap(arr.astype(dt.np, copy=False), dt), id(a))}
        if isinstance(a, np.generic):
            node["s"] = 1
        return node


def _is_parameter(t: Tensor) -> bool:
    return type(t).__name__ == "Parameter" and type(t).__module__.startswith("dynagrad.nn")


def save(obj: Any, f: FileLike) -> None:
    """Save ``obj`` (tensors in nested dict / OrderedDict / list / tuple containers with plain
    values) to the path or binary file ``f``. No pickle: see the module docstring for the format.

    Non-contiguous tensors and views are saved by value; the same tensor object appearing twice is
    saved once and loads as one shared tensor. ``requires_grad`` and ``nn.Parameter`` survive.

    Example:
        >>> import dynagrad as dg, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.dg")
        >>> dg.serialization.save({"epoch": 2, "w": dg.arange(3.0)}, path)
        >>> dg.serialization.load(path)["w"]
        tensor([0., 1., 2.])
    """
    enc = _Encoder()
    tree = json.dumps(enc.node(obj, "obj"), separators=(",", ":"), ensure_ascii=False)
    named = [(str(i), t) for i, t in enumerate(enc.tensors)]
    crcs = [zlib.crc32(_le_bytes(t)) for t in enc.tensors]
    metadata = {"format": _FORMAT, "dynagrad.version": _VERSION, "dynagrad.tree": tree,
                "dynagrad.tree_crc32": str(zlib.crc32(tree.encode("utf-8"))),
                "dynagrad.crc32": json.dumps(crcs)}
    _write_file(named, metadata, f, "save")


# --- reading -------------------------------------------------------------------------------------

class _Source:
    """A readable binary stream with a name for messages and, when it can be measured, its size
    (bytes from where reading starts), which bounds every size the header may claim."""

    def __init__(self, f: FileLike, op: str) -> None:
        self.op = op
        self.size = None
        if hasattr(f, "read"):
            self.stream, self.owned, self.name = f, False, getattr(f, "name", "<file object>")
            if getattr(f, "seekable", lambda: False)():
                start = f.tell()
                self.size = f.seek(0, os.SEEK_END) - start
                f.seek(start)
            self.start = f.tell() if self.size is not None else 0
        else:
            self.name = os.fspath(f)
            self.stream, self.owned = open(self.name, "rb"), True
            self.size = os.fstat(self.stream.fileno()).st_size
            self.start = 0

    def consumed(self) -> int:
        return self.stream.tell() - self.start

    def fail(self, what: str) -> RuntimeError:
        return RuntimeError(f"{self.op}: {self.name!s}: {what}")

    def read_exact(self, n: int, what: str) -> bytes:
        data = self.stream.read(n)
        if len(data) != n:
            raise self.fail(f"file is truncated: expected {n} bytes of {what}, found {len(data)}")
        return data

    def close(self) -> None:
        if self.owned:
            self.stream.close()


def _refuse_foreign(src: _Source, first: bytes) -> None:
    """Name the common formats that carry pickles, so the refusal explains itself."""
    if first[:4] == b"PK\x03\x04":
        raise src.fail("this is a zip archive, the format of torch.save, which stores objects as "
                       "a pickle. Unpickling can run arbitrary code, so dynagrad never loads "
                       "pickles. Convert it where you trust it: load it with torch and write the "
                       "tensors with safetensors, then use dg.serialization.load_safetensors")
    if first[:1] == b"\x80" and 2 <= first[1] <= 5:
        raise src.fail(f"this is a Python pickle (protocol {first[1]}). Unpickling can run "
                       "arbitrary code, so dynagrad refuses to load pickles; save tensors with "
                       "dg.save or as safetensors instead")


def _read_header(src: _Source) -> dict:
    first = src.stream.read(8)
    if len(first) < 8:
        raise src.fail(f"file is truncated or empty ({len(first)} bytes): not a dynagrad or "
                       "safetensors file")
    _refuse_foreign(src, first)
    n = int.from_bytes(first, "little")
    available = None if src.size is None else src.size - 8
    if n > _MAX_HEADER or (available is not None and n > available):
        raise src.fail(f"bad header length {n} (file has {src.size} bytes): not a dynagrad or "
                       "safetensors file (a pickle of protocol 0/1 looks like this too, and is "
                       "refused), or the file is corrupted")
    raw = src.read_exact(n, "header")
    if raw[:1] != b"{":
        raise src.fail("bad magic: the header does not start with '{'; not a dynagrad or "
                       "safetensors file")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise src.fail(f"corrupted header (not valid JSON: {e})") from None
    if not isinstance(header, dict):
        raise src.fail("corrupted header (expected a JSON object)")
    return header


def _tensor_table(src: _Source, header: dict, data_size: int | None):
    """Validate the tensor entries: (name, dtype, shape, begin, end) tuples in file order."""
    entries = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            code, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
            ok = (isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)
                  and type(begin) is int and type(end) is int and 0 <= begin <= end)
        except (TypeError, KeyError, ValueError):
            ok = False
        if not ok:
            raise src.fail(f"corrupted header: bad entry for tensor {name!r}: {info!r}")
        dt = _DTYPE_BY_CODE.get(code)
        if dt is None:
            raise src.fail(f"tensor {name!r} has dtype {code!r}, which dynagrad cannot hold "
                           f"(supported: {', '.join(_DTYPE_BY_CODE)})")
        expected = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if end - begin != expected:
            raise src.fail(f"corrupted header: tensor {name!r} of shape {shape} and dtype {code} "
                           f"needs {expected} bytes but its data_offsets span {end - begin}")
        entries.append((name, dt, tuple(shape), begin, end))
    entries.sort(key=lambda e: (e[3], e[4]))
    pos = 0
    for name, _, _, begin, end in entries:
        if begin != pos:
            raise src.fail(f"corrupted header: tensor {name!r} starts at byte {begin} of the data, "
                           f"expected {pos} (tensors must be packed back to back)")
        pos = end
    if data_size is not None and data_size != pos:
        if data_size < pos:
            raise src.fail(f"file is truncated: the header describes {pos} bytes of tensor data "
                           f"but the file holds {data_size}")
        raise src.fail(f"corrupted file: {data_size - pos} unexpected bytes after the tensor data")
    return entries


def _read_tensors(src: _Source, entries) -> dict[str, Tensor]:
    out = {}
    for name, dt, shape, begin, end in entries:
        # a fresh aligned array per tensor, filled straight from the file (no intermediate copy)
        arr = np.empty(shape, dtype=dt.np.newbyteorder("<"))
        view = arr.reshape(-1).view(np.uint8)
        got = src.stream.readinto(view.data) if view.size else 0
        if got != view.size:
            raise src.fail(f"file is truncated: tensor {name!r} needs {view.size} bytes, found "
                           f"{got or 0}")
        if sys.byteorder == "big":
            arr = arr.astype(dt.np)
        out[name] = _wrap(arr, dt)
    return out


def _read_all(f: FileLike, op: str) -> tuple[dict, dict[str, Tensor], _Source]:
    src = _Source(f, op)
    try:
        header = _read_header(src)
        data_size = None if src.size is None else src.size - src.consumed()
        metadata = header.get("__metadata__") or {}
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise src.fail("corrupted header: __metadata__ must map strings to strings")
        entries = _tensor_table(src, header, data_size)
        tensors = _read_tensors(src, entries)
    finally:
        src.close()
    return metadata, tensors, src


class _Decoder:
    """Rebuilds the container tree; every node is checked, nothing is evaluated."""

    def __init__(self, tensors: list[Tensor], fail: Callable[[str], RuntimeError],
                 place: Callable[[Tensor, str], Tensor]) -> None:
        self.tensors, self.fail, self.place = tensors, fail, place
        self._made: dict[tuple, Any] = {}

    def node(self, n):
        if n is None or isinstance(n, (bool, int, str)):
            return n
        if not isinstance(n, dict) or len(n) == 0:
            raise self.fail(f"corrupted structure: unexpected node {n!r:.80}")
        if "T" in n or "N" in n:
            return self.tensor(n)
        if len(n) != 1:
            raise self.fail(f"corrupted structure: unexpected node {n!r:.80}")
        (tag, v), = n.items()
        try:
            if tag == "f":
                return float.fromhex(v)
            if tag in ("l", "t", "S"):
                items = [self.node(x) for x in v]
                return items if tag == "l" else tuple(items) if tag == "t" else Size(items)
            if tag in ("d", "o"):
                pairs = [(self.node(k), self.node(x)) for k, x in v]
                return dict(pairs) if tag == "d" else collections.OrderedDict(pairs)
            if tag == "b":
                return base64.b64decode(v.encode("ascii"), validate=True)
            if tag == "dt":
                return dtypes.from_name(v)
        except RuntimeError:
            raise
        except Exception as e:  # wrong payload types in a crafted or damaged file
            raise self.fail(f"corrupted structure in node {tag!r}: {type(e).__name__}: {e}") \
                from None
        raise self.fail(f"corrupted structure: unknown node type {tag!r}")

    def tensor(self, n: dict):
        kind = "T" if "T" in n else "N"
        slot = n[kind]
        if type(slot) is not int or not 0 <= slot < len(self.tensors):
            raise self.fail(f"corrupted structure: reference to tensor {slot!r}, file has "
                            f"{len(self.tensors)}")
        key = (kind, slot)
        if key in self._made:  # shared on save, shared on load
            return self._made[key]
        t = self.tensors[slot]
        if kind == "N":  # a NumPy value: stays on the host
            obj = t._data[()] if n.get("s") else t._data
        else:
            location = n.get("D", "cpu")
            if type(location) is not str:
                raise self.fail(f"corrupted structure: device {location!r:.40} is not a string")
            t = self.place(t, location)
            if n.get("P"):
                from .nn.parameter import Parameter
                obj = Parameter(t, requires_grad=bool(n.get("g")))
            else:
                obj = t
                if n.get("g"):
                    obj.requires_grad = True
        self._made[key] = obj
        return obj


def _placer(map_location) -> Callable[[Tensor, str], Tensor]:
    """``place(tensor, saved_location) -> tensor`` on the device ``map_location`` chooses (as
    PyTorch: None keeps the saved device, a device or string moves everything there, a dict maps
    saved locations, a function decides)."""
    if callable(map_location):
        return lambda t, loc: map_location(t, loc)
    if map_location is None or isinstance(map_location, dict):
        table = map_location or {}

        def place(t: Tensor, loc: str) -> Tensor:
            target = table.get(loc, loc)
            if loc.startswith("cuda") and target == loc and not _cuda_available():
                raise RuntimeError(f"load: a tensor was saved on {loc}, but CUDA is not available "
                                   "on this machine; pass map_location='cpu' to load it onto the "
                                   "CPU")
            return t.to(target)
        return place
    target = as_device(map_location)
    return lambda t, loc: t.to(target)


def _cuda_available() -> bool:
    from . import cuda
    return cuda.is_available()


def load(f: FileLike, map_location=None, weights_only: bool = True, **kwargs) -> Any:
    """Load what ``save`` wrote (or a plain safetensors file, as a dict of tensors).

    ``map_location`` may be None (each tensor back on the device it was saved from), ``"cpu"``,
    ``"cuda:0"``, a device, a dict ``{"cuda:0": "cpu"}`` mapping saved locations, or a function
    ``fn(tensor, saved_location) -> tensor``. ``weights_only`` is accepted for PyTorch compatibility: the
    format holds no code, so loading is always as safe as ``weights_only=True``. Pickles and
    ``torch.save`` archives are refused (``RuntimeError``), as are truncated or corrupted files.
    """
    if kwargs:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(kwargs)}")
    if not isinstance(weights_only, bool):
        raise TypeError(f"load: weights_only must be a bool, got {weights_only!r}")
    metadata, tensors, src = _read_all(f, "load")
    if metadata.get("format") != _FORMAT:
        place = _placer(map_location)  # a plain safetensors file: a flat dict of CPU tensors
        return {k: place(t, "cpu") for k, t in tensors.items()}
    if metadata.get("dynagrad.version") != _VERSION:
        raise src.fail(f"written by an unsupported format version "
                       f"{metadata.get('dynagrad.version')!r} (this dynagrad reads {_VERSION})")
    tree = metadata.get("dynagrad.tree", "")
    if str(zlib.crc32(tree.encode("utf-8"))) != metadata.get("dynagrad.tree_crc32"):
        raise src.fail("checksum mismatch in the structure header: the file is corrupted")
    try:
        crcs = json.loads(metadata.get("dynagrad.crc32", ""))
    except ValueError:
        raise src.fail("corrupted header: bad checksum list") from None
    ordered = [tensors.get(str(i)) for i in range(len(tensors))]
    if any(t is None for t in ordered) or not isinstance(crcs, list) or len(crcs) != len(ordered):
        raise src.fail("corrupted header: tensor names or checksums do not match the tensors")
    for i, (t, crc) in enumerate(zip(ordered, crcs)):
        if zlib.crc32(_le_bytes(t)) != crc:
            raise src.fail(f"checksum mismatch in the data of tensor {i} (shape "
                           f"{tuple(t.shape)}, {t.dtype.name}): the file is corrupted")
    try:
        tree_node = json.loads(tree)
    except (ValueError, RecursionError) as e:
        raise src.fail(f"corrupted structure header: {e}") from None
    try:
        obj = _Decoder(ordered, src.fail, _placer(map_location)).node(tree_node)
    except RecursionError:
        raise src.fail("structure is nested too deeply to load") from None
    return obj


# --- safetensors ---------------------------------------------------------------------------------

def save_safetensors(tensors: dict[str, Tensor], f: FileLike,
                     metadata: dict[str, str] | None = None) -> None:
    """Write a flat ``{name: tensor}`` dict in the safetensors layout (readable by the
    ``safetensors`` package, e.g. ``safetensors.numpy.load_file``). ``metadata`` maps str to str.

    Example:
        >>> import dynagrad as dg, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> dg.serialization.save_safetensors({"w": dg.eye(2)}, path)
        >>> dg.serialization.load_safetensors(path)["w"]
        tensor([[1., 0.],
                [0., 1.]])
    """
    if not isinstance(tensors, dict):
        raise TypeError(f"save_safetensors: expected a dict of tensors, got "
                        f"{type(tensors).__name__}")
    for k in tensors:
        if not isinstance(k, str):
            raise TypeError(f"save_safetensors: keys must be str, got {k!r}")
        if k == "__metadata__":
            raise ValueError("save_safetensors: '__metadata__' is reserved; pass metadata=")
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str)
                                        for k, v in metadata.items()):
        raise TypeError("save_safetensors: metadata must map str to str")
    _write_file(list(tensors.items()), metadata, f, "save_safetensors")


def load_safetensors(f: FileLike, *, return_metadata: bool = False):
    """Read a safetensors file into ``{name: tensor}`` (in file order); with
    ``return_metadata=True`` return ``(tensors, metadata)``."""
    metadata, tensors, _ = _read_all(f, "load_safetensors")
    return (tensors, dict(metadata)) if return_metadata else tensors



# --- PyTorch's weights-only allow-list ----------------------------------------------------------
# ``torch.load(weights_only=True)`` unpickles only allow-listed globals. dynagrad's format holds no
# code, so the list is never consulted: it is kept, with PyTorch's functions, so that scripts which
# register their classes before loading run unchanged.

_SAFE_GLOBALS: list = []


def _checked_globals(safe_globals, op: str) -> list:
    items = list(safe_globals)  # PyTorch's TypeError for a non-iterable ("'int' object is not ...")
    for g in items:
        ok = callable(g) or (isinstance(g, tuple) and len(g) == 2 and callable(g[0])
                             and isinstance(g[1], str))
        if not ok:
            raise TypeError(f"{op}: expected a class or function, or a (class or function, name) "
                            f"pair, got {g!r}")
    return items


def add_safe_globals(safe_globals) -> None:
    """Add classes/functions to the weights-only allow-list (recorded; see above)."""
    _SAFE_GLOBALS.extend(_checked_globals(safe_globals, "add_safe_globals"))


def get_safe_globals() -> list:
    """The allow-list, as a new list."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    """Empty the allow-list."""
    _SAFE_GLOBALS.clear()


class safe_globals:  # (PyTorch's name, a lower-case class)
    """``with safe_globals([MyClass]): ...`` extends the allow-list inside the block only."""

    def __init__(self, safe_globals) -> None:
        self.safe_globals = _checked_globals(safe_globals, "safe_globals")

    def __enter__(self) -> None:
        self._saved = list(_SAFE_GLOBALS)
        _SAFE_GLOBALS.extend(self.safe_globals)

    def __exit__(self, *exc) -> None:
        _SAFE_GLOBALS[:] = self._saved
