"""The generated kernels of the nn ops with hot forward and backward passes on the CPU:
convolution's im2col/col2im and pooling (``conv``), batch/layer/group norm (``norm``), the LSTM
and GRU cells (``rnn``), softmax and cross-entropy rows (``softmax``)."""
