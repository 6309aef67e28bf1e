"""The examples train end to end (shortened runs, real accuracy thresholds)."""
import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str):
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))


def test_autograd_mlp_separates_the_spirals():
    assert load("autograd_mlp").main(epochs=200) > 0.9


def test_digits_cnn_learns():
    pytest.importorskip("sklearn")
    assert load("train_digits_cnn").main(epochs=4) > 0.9


def test_digits_mlp_learns():
    pytest.importorskip("sklearn")
    assert load("train_digits_mlp").main(epochs=5) > 0.9


def test_lstm_fits_a_sine_wave():
    assert load("train_lstm_sine").main(epochs=40) < 0.02
