"""The CUDA target: ``backend`` implements ``kernels.backend``'s contract on ``DeviceArray`` s;
``runner`` launches kernels generated from ``templates`` (``numba.cuda.jit``), ``runtime`` loads
numba-cuda and tracks devices, ``memory`` is the caching allocator. Nothing here starts CUDA at
import."""
