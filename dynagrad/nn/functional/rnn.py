"""Recurrent cells: the registered ops of ``dynagrad.ops.nn.rnn`` re-exported
(torch.nn.functional's names and signatures).
"""
from ...ops.nn.rnn import (gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell)  # noqa: F401

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"]
