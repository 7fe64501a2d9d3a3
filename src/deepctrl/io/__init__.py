"""Model files: safetensors weights with a JSON config, written atomically, never pickle.

``file_format`` (atomic writes, the header and its checks, without PyTorch) and
``checkpoint`` (``dc.save``, ``dc.load``, ``dc.read_checkpoint`` for networks). It imports
the core only.
"""
