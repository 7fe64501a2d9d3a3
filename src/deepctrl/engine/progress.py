"""Progress bars that cost nothing when switched off."""

from __future__ import annotations

from typing import Any

_position = 0


def set_bar_position(position: int) -> None:
    """Draw this process's bars on terminal line ``position`` (one line per worker process)."""
    global _position
    _position = position


class _Silent:
    def update(self, n: int = 1) -> None:
        return None

    def set_postfix(self, **kwargs: Any) -> None:
        return None

    def set_postfix_str(self, text: str) -> None:
        return None

    def reset(self) -> None:
        return None

    def close(self) -> None:
        return None


def progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar over ``total`` steps, or a silent stand-in when ``enabled`` is False."""
    if not enabled:
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False, dynamic_ncols=True, position=_position)
