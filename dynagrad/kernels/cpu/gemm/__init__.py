"""Matrix products on the CPU: ``products`` routes each product to BLAS or to the register tiles
(``tiles``, driven by ``matmul`` for single products, ``batched`` for batches, ``conv`` for
convolutions) by the rules it states."""
