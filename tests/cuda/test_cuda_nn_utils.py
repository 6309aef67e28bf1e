"""nn.utils on CUDA (Numba's simulator here: tiny shapes): packing, a packed LSTM
and the parametrizations against the same calls on the CPU."""
import copy

import numpy as np

import dynagrad as dg
import dynagrad.nn as nn
from dynagrad.nn.utils import parametrizations as P
from dynagrad.nn.utils import rnn as R

RNG = np.random.default_rng(4)


def _np(t):
    return t.detach().cpu().numpy()


def test_packed_lstm_on_cuda_matches_cpu(cuda):
    dg.manual_seed(3)
    cpu_lstm = nn.LSTM(2, 2)
    gpu_lstm = copy.deepcopy(cpu_lstm).to(cuda)
    x = RNG.standard_normal((3, 2, 2)).astype(np.float32)
    results = []
    for lstm, device in ((cpu_lstm, "cpu"), (gpu_lstm, cuda)):
        xt = dg.tensor(x, device=device, requires_grad=True)
        packed = R.pack_padded_sequence(xt, [2, 3], enforce_sorted=False)
        assert packed.sorted_indices.device == xt.device
        assert packed.batch_sizes.device.type == "cpu"
        out, (h, c) = lstm(packed)
        padded, lengths = R.pad_packed_sequence(out, batch_first=True)
        (padded.sum() + h.sum() + c.sum()).backward()
        results.append([padded, h, c, xt.grad, lstm.weight_hh_l0.grad])
        assert lengths.tolist() == [2, 3]
    for a, b in zip(*results):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-4, atol=1e-5)


def test_packed_sequence_to_cuda_and_parametrizations(cuda):
    p = R.pack_sequence([dg.ones(2, 1), dg.ones(1, 1)])
    moved = p.cuda()
    assert moved.is_cuda and moved.batch_sizes.device.type == "cpu"
    assert moved.to("cpu").data.device.type == "cpu"
    dg.manual_seed(5)
    for wrap in (P.weight_norm, P.spectral_norm):
        cpu_m = wrap(nn.Linear(2, 2))
        gpu_m = copy.deepcopy(cpu_m).to(cuda)
        x = RNG.standard_normal((1, 2)).astype(np.float32)
        np.testing.assert_allclose(_np(gpu_m(dg.tensor(x, device=cuda))),
                                   _np(cpu_m(dg.tensor(x))), rtol=1e-4, atol=1e-5)
