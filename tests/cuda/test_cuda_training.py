"""A whole training run moved with ``model.to("cuda")`` and ``x.cuda()``, nothing else changed:
the losses follow the CPU run step for step, and the caching allocator keeps reserved memory flat
once the first steps have filled its pools (no growth over a run)."""
import numpy as np

import dynagrad as dg
from dynagrad import nn


def _train(device, steps: int, record_memory: bool = False):
    dg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    model.to(device)
    opt = dg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    x = dg.tensor(rng.normal(size=(6, 8)).astype(np.float32)).to(device)
    y = dg.tensor(rng.integers(0, 4, size=6)).to(device)
    losses, reserved, allocated = [], [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if record_memory:
            reserved.append(dg.cuda.memory_reserved())
            allocated.append(dg.cuda.memory_allocated())
    return losses, reserved, allocated


def test_training_on_cuda_follows_the_cpu_run_with_flat_memory(cuda):
    cpu_losses, _, _ = _train("cpu", 8)
    gpu_losses, reserved, allocated = _train(cuda, 8, record_memory=True)
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-5)
    assert gpu_losses[-1] < gpu_losses[0]
    assert reserved[2:] == [reserved[2]] * 6, reserved
    assert allocated[2:] == [allocated[2]] * 6, allocated
    assert dg.cuda.max_memory_allocated() >= allocated[-1] > 0


def test_a_training_step_reads_back_only_the_target_bounds(cuda, monkeypatch):
    """Device-to-host reads stall a GPU: a classification step (forward, backward, SGD) reads
    back just the smallest and largest target, for the range check; the backward re-checks
    nothing it was given already checked (index ranges are remembered per tensor version)."""
    from dynagrad.kernels.cuda.device_array import DeviceArray
    reads = []
    real = DeviceArray.to_host
    monkeypatch.setattr(DeviceArray, "to_host", lambda self: reads.append(self.size) or real(self))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(cuda)
    opt = dg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = dg.randn(6, 8, device=cuda), dg.randint(0, 4, (6,), device=cuda)
    for _ in range(2):
        reads.clear()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert reads == [1, 1], reads
