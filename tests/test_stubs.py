"""``dynagrad/tensor.pyi`` (Tensor's whole API for readers and IDEs) matches the registry."""
from pathlib import Path

import dynagrad as dg
from dynagrad.ops.registry import METHODS, REGISTRY
from dynagrad.ops.stubs import PATH, tensor_stub


def test_the_committed_stub_is_up_to_date():
    assert PATH.read_text() == tensor_stub(), (
        "dynagrad/tensor.pyi is out of date: run python -m dynagrad.ops.stubs")


def test_every_registered_method_is_in_the_stub():
    stub = Path(PATH).read_text()
    for name, info in REGISTRY.items():
        for method in (info.method, info.inplace):
            if method:
                assert f"    def {method}(self" in stub, method
    assert set(METHODS) <= set(vars(dg.Tensor))


def test_every_tensor_method_is_attached_by_the_registry_or_defined_by_the_class():
    # no module sets a Tensor attribute behind the registry's back: each one not in the class
    # body came through ``register`` or ``tensor_method``
    source = (Path(dg.__file__).parent / "tensor.py").read_text()
    for name in vars(dg.Tensor):
        if name.startswith("__") or name in METHODS:
            continue
        assert f"def {name}(" in source or f"{name} =" in source or f"{name}," in source, name
