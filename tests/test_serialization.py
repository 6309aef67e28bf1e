"""dg.save / dg.load and the safetensors interop: bit-exact round trips, structure, sharing,
refusal of pickles (including a payload that would leave a marker file), and clear errors for
truncated or corrupted files."""
import collections
import io
import json
import math
import os
import pickle
import struct

import numpy as np
import pytest

import dynagrad as dg
from dynagrad import nn
from dynagrad.serialization import load, load_safetensors, save, save_safetensors

ALL_DTYPES = [dg.float16, dg.float32, dg.float64, dg.bool, dg.uint8, dg.int8, dg.int16, dg.int32,
              dg.int64]


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **load_kw)


def random_array(dt, shape, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    if dt is dg.bool:
        return np.asarray(raw[:int(np.prod(shape))].reshape(shape) % 2 == 1)
    # arbitrary bit patterns, including NaN payloads, infinities and subnormals for floats
    return raw.view(dt.np).reshape(shape)


def assert_bits_equal(t, arr):
    assert t._data.dtype == arr.dtype and t.shape == arr.shape
    assert t._data.tobytes() == np.ascontiguousarray(arr).tobytes()


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)])
def test_round_trip_is_bit_exact(dt, shape):
    arr = random_array(dt, shape)
    out = roundtrip(dg.from_numpy(arr.copy()))
    assert out.dtype is dt
    assert_bits_equal(out, arr)


def test_float16_special_values_bit_exact():
    bits = np.array([0x0000, 0x8000, 0x0001, 0x7C00, 0xFC00, 0x7E01, 0x3C00, 0x7BFF], np.uint16)
    arr = bits.view(np.float16)
    out = roundtrip({"h": dg.from_numpy(arr.copy())})["h"]
    assert out._data.view(np.uint16).tolist() == bits.tolist()


def test_file_path_and_file_object(tmp_path):
    obj = {"w": dg.randn(3, 2), "b": dg.zeros(2)}
    path = tmp_path / "ckpt.dg"
    save(obj, path)
    save(obj, str(tmp_path / "ckpt2.dg"))
    with open(tmp_path / "ckpt3.dg", "wb") as f:
        save(obj, f)
    for p in (path, str(tmp_path / "ckpt2.dg")):
        out = load(p)
        np.testing.assert_array_equal(out["w"].numpy(), obj["w"].numpy())
    with open(tmp_path / "ckpt3.dg", "rb") as f:
        out = load(f)
    assert list(out) == ["w", "b"]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".dg-save-")]  # no temp files


def test_nested_structure_and_plain_values():
    obj = collections.OrderedDict(
        model=collections.OrderedDict([("layer.weight", dg.arange(6.0).view(2, 3)),
                                       ("layer.bias", dg.tensor([1.5, -2.0]))]),
        optimizer={"state": {0: {"step": dg.tensor(3.0), "exp_avg": dg.ones(2, 3)},
                             1: {"step": dg.tensor(3.0)}},
                   "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                                     "params": [0, 1], "amsgrad": False, "name": None}]},
        epoch=7, loss=float("nan"), best=float("-inf"), tiny=5e-324, big=2 ** 80, neg=-3,
        tag="run-α", raw=b"\x00\xffbytes", empty_list=[], empty_tuple=(), empty_dict={},
        keys={(1, "a"): "tuple key", 2.5: "float key", None: "none key", True: "bool key"},
        dtype=dg.float16, size=dg.zeros(2, 5).shape)
    out = roundtrip(obj)
    assert type(out) is collections.OrderedDict and list(out) == list(obj)
    assert type(out["model"]) is collections.OrderedDict
    assert list(out["model"]) == ["layer.weight", "layer.bias"]
    np.testing.assert_array_equal(out["model"]["layer.weight"].numpy(),
                                  obj["model"]["layer.weight"].numpy())
    st = out["optimizer"]["state"]
    assert type(out["optimizer"]) is dict and list(st) == [0, 1]
    assert st[0]["step"].shape == () and st[0]["step"].item() == 3.0
    assert out["optimizer"]["param_groups"] == [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                                                 "params": [0, 1], "amsgrad": False,
                                                 "name": None}]
    assert isinstance(out["optimizer"]["param_groups"][0]["betas"], tuple)
    assert out["epoch"] == 7 and type(out["epoch"]) is int
    assert math.isnan(out["loss"]) and out["best"] == float("-inf") and out["tiny"] == 5e-324
    assert out["big"] == 2 ** 80 and out["neg"] == -3
    assert out["tag"] == "run-α" and out["raw"] == b"\x00\xffbytes"
    assert out["empty_list"] == [] and out["empty_tuple"] == () and out["empty_dict"] == {}
    assert out["keys"] == obj["keys"]
    assert out["dtype"] is dg.float16
    assert out["size"] == dg.Size([2, 5]) and isinstance(out["size"], dg.Size)


def test_floats_round_trip_exactly():
    values = [0.1, 1 / 3, -0.0, 1e308, 2.2250738585072014e-308, math.pi]
    out = roundtrip(values)
    assert [v.hex() for v in out] == [v.hex() for v in values]
    assert math.copysign(1, out[2]) == -1


def test_views_and_non_contiguous_tensors_saved_by_value():
    base = dg.arange(24.0).view(4, 6)
    t = base.t()[1:5:2]  # transposed, strided
    row = base[2]
    assert not t.is_contiguous()
    out = roundtrip({"t": t, "row": row})
    np.testing.assert_array_equal(out["t"].numpy(), t.numpy())
    assert out["t"].is_contiguous()
    np.testing.assert_array_equal(out["row"].numpy(), [12, 13, 14, 15, 16, 17])
    out["row"][0] = 99.0  # views are independent after loading
    assert out["t"].numpy()[0, 2] == base.numpy()[2, 1]


def test_same_tensor_twice_is_stored_once_and_stays_shared():
    w = dg.randn(3, 3)
    buf = io.BytesIO()
    save({"encoder": w, "decoder": w, "other": dg.randn(3, 3)}, buf)
    header, _ = header_of(buf.getvalue())
    assert sorted(k for k in header if k != "__metadata__") == ["0", "1"]  # two blobs, not three
    buf.seek(0)
    out = load(buf)
    assert out["encoder"] is out["decoder"] and out["encoder"] is not out["other"]


def test_requires_grad_and_parameters_survive():
    p = nn.Parameter(dg.randn(2))
    frozen = nn.Parameter(dg.randn(2), requires_grad=False)
    leaf = dg.ones(3, requires_grad=True)
    out = roundtrip({"p": p, "frozen": frozen, "leaf": leaf, "plain": dg.ones(1)})
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], nn.Parameter) and not out["frozen"].requires_grad
    assert not isinstance(out["leaf"], nn.Parameter) and out["leaf"].requires_grad
    assert not out["plain"].requires_grad


def test_numpy_values_round_trip():
    arr = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = roundtrip({"a": arr, "s": np.float32(2.5), "big_endian": np.arange(3, dtype=">i4")})
    assert isinstance(out["a"], np.ndarray) and out["a"].dtype == np.int16
    np.testing.assert_array_equal(out["a"], arr)
    assert isinstance(out["s"], np.float32) and out["s"] == np.float32(2.5)
    np.testing.assert_array_equal(out["big_endian"], [0, 1, 2])


def test_module_state_dict_round_trip():
    model = nn.Linear(3, 2)
    sd = model.state_dict()
    out = roundtrip(sd)
    assert list(out) == list(sd)
    for k in sd:
        assert out[k]._data.tobytes() == sd[k]._data.tobytes()
    fresh = nn.Linear(3, 2)
    fresh.load_state_dict(out)
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), model.weight.detach().numpy())


def test_map_location():
    obj = {"w": dg.ones(2)}
    assert roundtrip(obj, map_location="cpu")["w"].tolist() == [1.0, 1.0]
    assert roundtrip(obj, map_location=dg.device("cpu"))["w"].tolist() == [1.0, 1.0]
    assert roundtrip(obj, map_location={"cpu": "cpu"})["w"].tolist() == [1.0, 1.0]
    seen = []
    out = roundtrip(obj, map_location=lambda t, loc: seen.append(loc) or t * 2)
    assert out["w"].tolist() == [2.0, 2.0] and seen == ["cpu"]
    # map_location="cuda": tests/cuda/test_cuda_tensor.py (on a GPU, and without one)


def test_weights_only_argument():
    assert roundtrip([1], weights_only=False) == [1]
    with pytest.raises(TypeError, match="weights_only must be a bool"):
        roundtrip([1], weights_only="yes")


@pytest.mark.parametrize("bad,match", [
    (object(), r"obj\['x'\] has type builtins.object"),
    (collections.namedtuple("P", "a")(1), "namedtuple"),
    ({1, 2}, "builtins.set"),
    (collections.defaultdict(int), "defaultdict"),
    (np.array(["s"]), "NumPy value of dtype <U1"),
])
def test_unsupported_values_are_refused_on_save(bad, match):
    with pytest.raises(TypeError, match=match):
        save({"x": bad}, io.BytesIO())


def test_self_reference_refused():
    a = []
    a.append(a)
    with pytest.raises(ValueError, match="contains itself"):
        save(a, io.BytesIO())


# --- refusing code -------------------------------------------------------------------------------

class MakeMarker:
    """Unpickling this runs os.system, which would create the marker file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_pickle_payload_is_refused_and_never_runs(tmp_path, protocol):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"w": MakeMarker(marker)}, protocol=protocol))
    # the payload really is live: plain pickle.loads would create the marker (checked in a copy
    # path so the real marker stays absent)
    probe = tmp_path / "probe"
    pickle.loads(pickle.dumps(MakeMarker(probe), protocol=protocol))
    assert probe.exists()
    with pytest.raises(RuntimeError) as err:
        load(evil)
    msg = str(err.value)
    assert "evil.pt" in msg
    if protocol >= 2:
        assert f"Python pickle (protocol {protocol})" in msg and "arbitrary code" in msg
    else:
        assert "not a dynagrad or safetensors file" in msg
    assert not marker.exists()
    with pytest.raises(RuntimeError):
        load_safetensors(evil)
    assert not marker.exists()


def test_torch_save_archive_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2), "evil": MakeMarker(marker)}, path)
    with pytest.raises(RuntimeError, match="zip archive, the format of torch.save"):
        load(path)
    assert not marker.exists()


def test_pickle_hidden_in_metadata_is_just_a_string(tmp_path):
    payload = pickle.dumps(MakeMarker(tmp_path / "pwned")).hex()
    path = tmp_path / "meta.safetensors"
    save_safetensors({"w": dg.ones(1)}, path, metadata={"pickle": payload})
    tensors, meta = load_safetensors(path, return_metadata=True)
    assert meta["pickle"] == payload and not (tmp_path / "pwned").exists()


# --- corrupted and truncated files ---------------------------------------------------------------

def saved_bytes(obj=None):
    buf = io.BytesIO()
    save(obj if obj is not None else {"w": dg.arange(10.0), "b": dg.ones(3, dtype=dg.int64)},
         buf)
    return buf.getvalue()


def load_bytes(data, tmp_path, name="bad.dg"):
    path = tmp_path / name
    path.write_bytes(data)
    return load(path)


def header_of(data):
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n]), n


def with_header(data, header, n_old):
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    return len(head).to_bytes(8, "little") + head + data[8 + n_old:]


@pytest.mark.parametrize("cut", [0, 3, 8, 20, -1, -9])
def test_truncated_files(tmp_path, cut):
    data = saved_bytes()
    cut_data = data[:cut] if cut >= 0 else data[:len(data) + cut]
    with pytest.raises(RuntimeError, match="truncated|bad header length"):
        load_bytes(cut_data, tmp_path)


class OneWayStream(io.RawIOBase):
    """A stream that cannot seek (a pipe or socket), so its size is unknown in advance."""

    def __init__(self, data):
        self._inner = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        return self._inner.readinto(b)


def test_truncated_file_objects():
    data = saved_bytes()
    with pytest.raises(RuntimeError, match=r"truncated: the header describes \d+ bytes of tensor "
                                           r"data but the file holds \d+"):
        load(io.BytesIO(data[:-4]))
    with pytest.raises(RuntimeError, match=r"truncated: tensor '\d' needs \d+ bytes, found"):
        load(io.BufferedReader(OneWayStream(data[:-4])))
    assert list(load(io.BufferedReader(OneWayStream(data)))) == ["w", "b"]


def test_load_from_the_middle_of_a_stream():
    buf = io.BytesIO()
    buf.write(b"preamble")
    save({"w": dg.ones(2)}, buf)
    buf.seek(8)
    assert load(buf)["w"].tolist() == [1.0, 1.0]


def test_flipped_data_byte_fails_checksum(tmp_path):
    data = bytearray(saved_bytes())
    data[-5] ^= 0x10
    with pytest.raises(RuntimeError, match=r"checksum mismatch in the data of tensor \d"):
        load_bytes(bytes(data), tmp_path)


def test_changed_structure_fails_checksum(tmp_path):
    data = saved_bytes({"lr": 0.5, "w": dg.ones(1)})
    header, n = header_of(data)
    header["__metadata__"]["dynagrad.tree"] = header["__metadata__"]["dynagrad.tree"].replace(
        "0x1.0000000000000p-1", "0x1.0000000000000p+9")
    with pytest.raises(RuntimeError, match="checksum mismatch in the structure header"):
        load_bytes(with_header(data, header, n), tmp_path)


def test_bad_magic_and_bad_json(tmp_path):
    data = saved_bytes()
    n = int.from_bytes(data[:8], "little")
    with pytest.raises(RuntimeError, match="bad magic"):
        load_bytes(data[:8] + b"[" + data[9:], tmp_path)
    with pytest.raises(RuntimeError, match="not valid JSON"):
        load_bytes(data[:8] + b"{" + b"x" * (n - 1) + data[8 + n:], tmp_path)
    with pytest.raises(RuntimeError, match="bad header length"):
        load_bytes(b"\xff" * 8 + data[8:], tmp_path)
    with pytest.raises(RuntimeError, match="truncated or empty"):
        load_bytes(b"", tmp_path)


def test_header_inconsistent_with_data(tmp_path):
    data = saved_bytes()
    header, n = header_of(data)
    bad_shape = json.loads(json.dumps(header))
    bad_shape["0"]["shape"] = [11]
    with pytest.raises(RuntimeError, match=r"needs 44 bytes but its data_offsets span 40"):
        load_bytes(with_header(data, bad_shape, n), tmp_path)
    gap = json.loads(json.dumps(header))
    gap["1"]["data_offsets"] = [g + 8 for g in gap["1"]["data_offsets"]]
    with pytest.raises(RuntimeError, match="packed back to back"):
        load_bytes(with_header(data, gap, n), tmp_path)
    unknown = json.loads(json.dumps(header))
    unknown["0"]["dtype"] = "BF16"
    unknown["0"]["data_offsets"] = [0, 20]
    with pytest.raises(RuntimeError, match="dtype 'BF16', which dynagrad cannot hold"):
        load_bytes(with_header(data, unknown, n), tmp_path)
    broken = json.loads(json.dumps(header))
    broken["0"] = {"dtype": "F32"}
    with pytest.raises(RuntimeError, match="bad entry for tensor '0'"):
        load_bytes(with_header(data, broken, n), tmp_path)


def test_trailing_garbage(tmp_path):
    with pytest.raises(RuntimeError, match="unexpected bytes after the tensor data"):
        load_bytes(saved_bytes() + b"junk", tmp_path)


def test_crafted_structure_nodes_are_rejected(tmp_path):
    import zlib
    data = saved_bytes({"w": dg.ones(1)})
    header, n = header_of(data)
    for tree, match in [('{"T":5}', "reference to tensor 5"), ('{"zz":1}', "unknown node type"),
                        ('{"d":[[{"l":[]},1]]}', "corrupted structure"),
                        ('[1,2]', "unexpected node"), ('{"f":"nope"}', "corrupted structure"),
                        ("[" * 100000 + "]" * 100000, "corrupted structure|too deeply")]:
        h = json.loads(json.dumps(header))
        h["__metadata__"]["dynagrad.tree"] = tree
        h["__metadata__"]["dynagrad.tree_crc32"] = str(zlib.crc32(tree.encode()))
        with pytest.raises(RuntimeError, match=match):
            load_bytes(with_header(data, h, n), tmp_path)


def test_unsupported_version(tmp_path):
    data = saved_bytes()
    header, n = header_of(data)
    header["__metadata__"]["dynagrad.version"] = "99"
    with pytest.raises(RuntimeError, match="unsupported format version '99'"):
        load_bytes(with_header(data, header, n), tmp_path)


# --- safetensors ---------------------------------------------------------------------------------

def test_safetensors_layout_by_hand(tmp_path):
    path = tmp_path / "x.safetensors"
    save_safetensors({"a": dg.tensor([1.0, 2.0]), "b": dg.tensor([[7]], dtype=dg.int16)}, path,
                     metadata={"author": "me"})
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    assert (8 + n) % 8 == 0
    header = json.loads(data[8:8 + n])
    assert header["__metadata__"] == {"author": "me"}
    assert header["a"] == {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    assert header["b"] == {"dtype": "I16", "shape": [1, 1], "data_offsets": [8, 10]}
    assert data[8 + n:] == struct.pack("<ff", 1.0, 2.0) + struct.pack("<h", 7)
    out, meta = load_safetensors(path, return_metadata=True)
    assert list(out) == ["a", "b"] and meta == {"author": "me"}
    assert out["b"].dtype is dg.int16 and out["b"].tolist() == [[7]]
    assert load(path)["a"].tolist() == [1.0, 2.0]  # dg.load reads plain safetensors too


def test_safetensors_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="keys must be str"):
        save_safetensors({1: dg.ones(1)}, tmp_path / "a")
    with pytest.raises(TypeError, match="value for key 'a' is a list"):
        save_safetensors({"a": [1]}, tmp_path / "a")
    with pytest.raises(TypeError, match="metadata must map str to str"):
        save_safetensors({"a": dg.ones(1)}, tmp_path / "a", metadata={"k": 1})


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: d.name)
def test_safetensors_parity_with_reference_package(tmp_path, dt):
    st = pytest.importorskip("safetensors.numpy")
    ours_path, ref_path = tmp_path / "ours.safetensors", tmp_path / "ref.safetensors"
    arrays = {"x": random_array(dt, (3, 4), seed=1), "scalar": random_array(dt, (), seed=2),
              "empty": random_array(dt, (0, 2), seed=3)}
    save_safetensors({k: dg.from_numpy(v.copy()) for k, v in arrays.items()}, ours_path,
                     metadata={"k": "v"})
    read_by_ref = st.load_file(str(ours_path))
    for k, v in arrays.items():
        assert read_by_ref[k].dtype == v.dtype and read_by_ref[k].tobytes() == v.tobytes()
    st.save_file(arrays, str(ref_path), metadata={"k": "v"})
    ours, meta = load_safetensors(ref_path, return_metadata=True)
    assert meta == {"k": "v"}
    for k, v in arrays.items():
        assert_bits_equal(ours[k], v)


def test_dg_save_files_are_valid_safetensors(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "ckpt.dg"
    w = dg.randn(2, 3)
    save({"nested": [w, {"b": dg.arange(4)}], "lr": 0.1}, path)
    flat = st.load_file(str(path))
    assert sorted(flat) == ["0", "1"]
    np.testing.assert_array_equal(flat["0"], w.numpy())


def test_torch_reads_safetensors_written_by_us(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    path = tmp_path / "w.safetensors"
    save_safetensors({"w": dg.arange(6.0).view(2, 3), "i": dg.tensor([1, 2])}, path)
    got = st_torch.load_file(str(path))
    assert torch.equal(got["w"], torch.arange(6.0).view(2, 3))
    assert got["i"].dtype == torch.int64
