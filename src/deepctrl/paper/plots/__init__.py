"""Matplotlib figures of the reproductions (needs the ``plot`` extra)."""
