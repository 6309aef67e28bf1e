"""The compiled Philox kernel draws NumPy's numbers bit for bit, and leaves NumPy's state."""
import numpy as np
import pytest

import dynagrad as dg
from dynagrad.kernels.cpu import philox


def _twins(seed: int, before: tuple):
    """Two NumPy Philox generators in the same state, after the draws ``before``."""
    gens = [np.random.Generator(np.random.Philox(key=seed)) for _ in range(2)]
    for n, dtype in before:
        for g in gens:
            g.random(n, dtype)
    return gens


# draws before: none; an odd float32 count (a kept high half); a partly used buffer of words;
# float64 after float32 (the kept half stays kept)
BEFORE = [(), ((1, np.float32),), ((3, np.float32),), ((5, np.float64),),
          ((7, np.float32), (2, np.float64))]


@pytest.mark.parametrize("before", BEFORE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 33, 1 << 17, (1 << 17) + 3])
def test_same_numbers_and_state_as_numpy(before, dtype, n):
    ours, numpys = _twins(12345, before)
    np.testing.assert_array_equal(philox.uniform(ours, n, dtype), numpys.random(n, dtype))
    assert str(ours.bit_generator.state) == str(numpys.bit_generator.state)
    np.testing.assert_array_equal(ours.random(5, np.float32), numpys.random(5, np.float32))


def test_counter_carries_into_its_second_word():
    ours, numpys = _twins(1, ())
    state = ours.bit_generator.state
    state["state"]["counter"][0] = np.uint64(2 ** 64 - 3)
    state["buffer_pos"] = 4
    ours.bit_generator.state = numpys.bit_generator.state = state
    np.testing.assert_array_equal(philox.uniform(ours, 1000, np.float32),
                                  numpys.random(1000, np.float32))
    assert str(ours.bit_generator.state) == str(numpys.bit_generator.state)


def test_large_dropout_masks_draw_the_seeded_stream():
    dg.manual_seed(7)
    big, small = dg.rand(300, 1000), dg.rand(5)
    mask = dg.nn.functional.dropout(dg.ones(400, 400), p=0.25)  # (the kernel's draw)
    after = dg.rand(3, dtype=dg.float64)
    numpys = np.random.Generator(np.random.Philox(key=7))
    np.testing.assert_array_equal(big.numpy(), numpys.random((300, 1000), np.float32))
    np.testing.assert_array_equal(small.numpy(), numpys.random(5, np.float32))
    keep = numpys.random((400, 400), np.float32) < 0.75
    np.testing.assert_array_equal(mask.numpy(), keep * np.float32(1 / 0.75))
    np.testing.assert_array_equal(after.numpy(), numpys.random(3))
