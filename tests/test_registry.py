"""Meta-test: every op in the registry has an OpInfo record (tests/opinfo.py), and every record is
run by its family's test file, so adding an op without its forward / gradient / parity checks
cannot go unnoticed.
"""
import dynagrad as dg
from dynagrad.ops.registry import REGISTRY
from opinfo import FAMILIES, OPINFOS


def test_every_registered_op_has_a_record_and_every_record_an_op():
    assert set(REGISTRY) == set(OPINFOS), (
        f"ops without a record: {sorted(set(REGISTRY) - set(OPINFOS))}; "
        f"records of no registered op: {sorted(set(OPINFOS) - set(REGISTRY))}")


def test_records_belong_to_a_tested_family_and_aliases_to_their_ops():
    for name, info in OPINFOS.items():
        assert info.name == name and info.family in FAMILIES, name
        if info.alias_of is not None:
            assert REGISTRY[name].fn is REGISTRY[info.alias_of].fn, name


def test_registered_functions_are_exported_and_methods_attached():
    for name, info in REGISTRY.items():
        if info.method:
            assert callable(getattr(dg.Tensor, info.method)), name
        if info.inplace:
            assert callable(getattr(dg.Tensor, info.inplace)), name
    from dynagrad.ops.registry import FUNCTIONS
    for name in FUNCTIONS:
        assert callable(getattr(dg, name)), name
