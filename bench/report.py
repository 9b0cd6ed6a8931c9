"""Figures out of samples: percentiles, the JSON and markdown a run writes, and its latency plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary_ms(seconds: list[float]) -> dict[str, float | int]:
    """p50/p95/p99/max in milliseconds, and how many samples they come from."""
    if not seconds:
        return {"n": 0}
    return {
        "n": len(seconds),
        "p50_ms": round(percentile(seconds, 0.50) * 1000, 2),
        "p95_ms": round(percentile(seconds, 0.95) * 1000, 2),
        "p99_ms": round(percentile(seconds, 0.99) * 1000, 2),
        "max_ms": round(max(seconds) * 1000, 2),
    }


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no rows)\n"
    columns = list(dict.fromkeys(key for row in rows for key in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(column, "")) for column in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def write(name: str, result: dict[str, Any], markdown: str, out: Path = RESULTS) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"{name}.json", out / f"{name}.md"
    json_path.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n")
    md_path.write_text(markdown)
    return [json_path, md_path]


def plot_cdf(series: dict[str, list[float]], title: str, path: Path) -> Path:
    """Cumulative distribution of latencies (ms), one line per series, log-scaled x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=110)
    for label, seconds in series.items():
        if not seconds:
            continue
        ordered = sorted(s * 1000 for s in seconds)
        fractions = [(i + 1) / len(ordered) for i in range(len(ordered))]
        axes.step(ordered, fractions, where="post", label=f"{label} (n={len(ordered)})")
    axes.set_xscale("log")
    axes.set_xlabel("milliseconds (log scale)")
    axes.set_ylabel("fraction of calls")
    axes.set_ylim(0, 1.01)
    axes.grid(True, which="both", alpha=0.3)
    for q in (0.5, 0.99):
        axes.axhline(q, color="grey", linewidth=0.6, linestyle=":")
    axes.set_title(title)
    axes.legend(fontsize="small", loc="lower right")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path
