from torch.nn.modules.sparse import NoSuchLayer  # noqa: F401
