"""How durations read everywhere people see them: the dashboard, the admin, tool results, timelines."""

from __future__ import annotations


def duration(seconds: float, *, tenths: bool = False) -> str:
    """'12s' (or '1.2s' with tenths), '3m 05s', '2h 03m': short, and the same in every place."""
    if seconds < 60:
        return f"{seconds:.1f}s" if tenths else f"{int(seconds)}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s"
