"""Every workload of the suite, in the order it runs: adding one is adding one entry."""
from __future__ import annotations

from .harness import Probe, Timed
from .workloads import models, ops, processes

M = 1 << 20

WORKLOADS = [
    *(Timed(f"overhead {op}{' (grad)' if grad else ''} 32x32", "overhead", ops.overhead(op, grad))
      for op in ops.SMALL_OPS for grad in (False, True)),
    Timed("overhead (a*b).sum() fwd+bwd 32x32", "overhead", ops.round_trip),
    *(Timed(f"elementwise {op} {n // M}M", "elementwise", ops.elementwise(op, n))
      for n in (M, 16 * M) for op in ops.ELEMENTWISE),
    *(Timed(f"in-place {op} 1M", "elementwise", ops.inplace(op, M)) for op in ops.INPLACE),
    Timed("sum 16M", "reduction", ops.sum_all(16 * M)),
    Timed("softmax (4096,1024)", "reduction", ops.softmax(4096, 1024)),
    Timed("cross_entropy (4096,1000) fwd+bwd", "reduction", ops.cross_entropy(4096, 1000)),
    Timed("mse_loss (4096,512) fwd+bwd", "reduction", ops.mse_loss(4096, 512)),
    Timed("MLP b128 SGD-momentum step", "model",
          models.classifier_step(models.mlp_model, (784,), 128, models.sgd_momentum,
                                 numpy_twin=True)),
    Timed("MLP b1024 SGD-momentum step", "model",
          models.classifier_step(models.mlp_model, (784,), 1024, models.sgd_momentum,
                                 numpy_twin=True)),
    Timed("LeNet-5 b64 Adam step", "model",
          models.classifier_step(models.lenet5, (1, 28, 28), 64, models.adam)),
    Timed("MNIST CNN b64 Adadelta step", "model",
          models.classifier_step(models.mnist_cnn, (1, 28, 28), 64, models.adadelta,
                                 loss="NLLLoss")),
    Timed("LSTM LM step T35 B20 H200 V10k", "model", models.lstm_lm_step()),
    Timed("Transformer layer fwd+bwd (16,128,256)", "model", models.transformer_fwd_bwd()),
    Timed("Adam step 269k params", "model", models.adam_step),
    Probe("peak memory MLP b128, build + steps", "memory", processes.peak_memory("run"), "MiB"),
    Probe("peak memory MLP b128, training steps", "memory", processes.peak_memory("steps"), "MiB"),
    Probe("start-up: import", "startup", processes.import_time),
    Probe("start-up: first MLP step, empty cache", "startup", processes.first_step("cold")),
    Probe("start-up: first MLP step, warm cache", "startup", processes.first_step("warm")),
]
