"""Training-step workloads: MLP, LeNet-5, the MNIST CNN, an LSTM language model, a Transformer
encoder layer and a bare Adam step.

Every model is written once against the ``nn`` namespace it is given (dynagrad's and PyTorch's
match), built with dynagrad's seeded initialisation and copied into the PyTorch twin through
``state_dict``; before timing, both must compute the same forward output.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

import dynagrad as dg

from .common import as_tensors, check_close, copy_weights, labels, namespaces, randn, torch
from .numpy_mlp import NumpyMLP


def mlp_model(nn):
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def lenet5(nn):
    """The classic LeNet-5 on 1x28x28 inputs (ReLU and max-pooling, as commonly written today)."""
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def mnist_cnn(nn):
    """pytorch/examples' mnist/main.py ``Net``, as a Sequential (same layers, same order)."""
    return nn.Sequential(nn.Conv2d(1, 32, 3, 1), nn.ReLU(), nn.Conv2d(32, 64, 3, 1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(), nn.Linear(9216, 128),
                         nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10), nn.LogSoftmax(dim=1))


def lstm_lm(nn, vocab: int = 10000, emb: int = 200, hidden: int = 200, layers: int = 2):
    """pytorch/examples' word_language_model ``RNNModel`` (LSTM, untied, dropout 0)."""
    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(vocab, emb)
            self.rnn = nn.LSTM(emb, hidden, layers)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, tokens, state):
            out, state = self.rnn(self.encoder(tokens), state)
            return self.decoder(out).view(-1, vocab), state
    return RNNModel()


def transformer_layer(nn):
    return nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, batch_first=True)


def _twins(make: Callable) -> dict:
    """``{framework: model}``: dynagrad's seeded init, copied into PyTorch's twin."""
    dg.manual_seed(0)
    models = {"dynagrad": make(dg.nn)}
    if torch is not None:
        models["torch"] = make(torch.nn)
        copy_weights(models["dynagrad"], models["torch"])
    return models


def _check_same_forward(name: str, models: dict, inputs: dict, forward=lambda m, *x: m(*x)):
    """Both frameworks' eval-mode outputs must agree before their timings are compared."""
    if "torch" not in models:
        return
    outs = {}
    for fw, model in models.items():
        model.eval()
        with namespaces()[fw][0].no_grad():
            outs[fw] = forward(model, *inputs[fw])
        model.train()
    check_close(name, outs["dynagrad"], outs["torch"])


def classifier_step(make: Callable, in_shape: tuple, batch: int, make_opt: Callable,
                    loss: str = "CrossEntropyLoss", numpy_twin: bool = False):
    """One optimiser step of a 10-class classifier on a random batch."""
    def build(cfg) -> dict:
        models = _twins(make)
        x, y = randn(batch, *in_shape), labels(batch, 10)
        inputs = {fw: as_tensors(fw, x, y) for fw in models}
        _check_same_forward(make.__name__, models, {fw: t[:1] for fw, t in inputs.items()})
        fns = {}
        for fw, model in models.items():
            mod, nn = namespaces()[fw]
            opt, loss_fn = make_opt(mod.optim, model.parameters()), getattr(nn, loss)()
            tx, ty = inputs[fw]

            def step(model=model, opt=opt, loss_fn=loss_fn, tx=tx, ty=ty):
                opt.zero_grad()
                out = loss_fn(model(tx), ty)
                out.backward()
                opt.step()
                return out
            fns[fw] = step
        if numpy_twin:
            layers = [(m.weight.detach().numpy(), m.bias.detach().numpy())
                      for m in models["dynagrad"] if hasattr(m, "weight")]
            net = NumpyMLP(layers, lr=0.01, momentum=0.9)
            fns["numpy"] = lambda: net.step(x, y)
        dropout = any("Dropout" in type(m).__name__ for m in models["dynagrad"].modules())
        if "torch" in fns and not dropout:  # same weights, same batch: same first loss
            first = {fw: fn() for fw, fn in fns.items()}
            for fw in set(first) - {"torch"}:
                check_close(f"{make.__name__} first loss ({fw})", first[fw], first["torch"])
        return fns
    return build


def sgd_momentum(optim, params):
    return optim.SGD(params, lr=0.01, momentum=0.9)


def adam(optim, params):
    return optim.Adam(params, lr=1e-3)


def adadelta(optim, params):
    return optim.Adadelta(params, lr=1.0)


def lstm_lm_step(seq: int = 35, batch: int = 20, vocab: int = 10000):
    """word_language_model's training step: detach the carried state, forward, cross-entropy,
    backward, ``clip_grad_norm_(0.25)``, SGD (lr 20)."""
    def build(cfg) -> dict:
        models = _twins(lambda nn: lstm_lm(nn, vocab))
        tokens, targets = labels(seq * batch, vocab, seed=2), labels(seq * batch, vocab, seed=3)
        h0 = np.zeros((2, batch, 200), np.float32)
        inputs = {fw: as_tensors(fw, tokens.reshape(seq, batch), targets, h0) for fw in models}
        _check_same_forward("lstm_lm", models,
                            {fw: (t[0], (t[2], t[2])) for fw, t in inputs.items()},
                            forward=lambda m, tok, st: m(tok, st)[0])
        fns = {}
        for fw, model in models.items():
            mod, nn = namespaces()[fw]
            tok, tgt, h = inputs[fw]
            opt, loss_fn, params = mod.optim.SGD(model.parameters(), lr=20.0), \
                nn.CrossEntropyLoss(), list(model.parameters())
            carried = {"state": (h, h)}

            def step(model=model, opt=opt, loss_fn=loss_fn, params=params, tok=tok, tgt=tgt,
                     carried=carried, clip=nn.utils.clip_grad_norm_):
                state = tuple(s.detach() for s in carried["state"])
                opt.zero_grad()
                out, carried["state"] = model(tok, state)
                loss = loss_fn(out, tgt)
                loss.backward()
                clip(params, 0.25)
                opt.step()
                return loss
            fns[fw] = step
        if "torch" in fns:
            check_close("lstm_lm first loss", fns["dynagrad"](), fns["torch"]())
        return fns
    return build


def transformer_fwd_bwd(batch: int = 16, seq: int = 128, d: int = 256):
    """Forward and backward (of ``out.sum()``) through one encoder layer; gradients reset each call."""
    def build(cfg) -> dict:
        models = _twins(transformer_layer)
        x = randn(batch, seq, d)
        inputs = {fw: as_tensors(fw, x) for fw in models}
        _check_same_forward("transformer_layer", models, inputs)
        fns = {}
        for fw, layer in models.items():
            tx, = inputs[fw]

            def step(layer=layer, tx=tx):
                layer.zero_grad()
                layer(tx).sum().backward()
            fns[fw] = step
        return fns
    return build


ADAM_SHAPES = [(256, 784), (256,), (256, 256), (256,), (10, 256), (10,)]  # 269,322 parameters


def adam_step(cfg) -> dict:
    """``Adam.step()`` alone over the MLP's six parameter tensors, gradients fixed."""
    fns = {}
    for fw, (mod, nn) in namespaces().items():
        params = []
        for i, shape in enumerate(ADAM_SHAPES):
            p = nn.Parameter(as_tensors(fw, randn(*shape, seed=i))[0])
            p.grad = as_tensors(fw, randn(*shape, seed=100 + i))[0]
            params.append(p)
        fns[fw] = mod.optim.Adam(params, lr=1e-3).step
    return fns
