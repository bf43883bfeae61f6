"""Across runs: statistics over repetitions (Student's t quantile, confidence intervals), plus
Jain's fairness index. Knows nothing of scenarios or results: numbers in, numbers out.
(Per run: `quicksim.metrics`; per phase of one run: `quicksim.analysis`.)

`interval` picks the method by what the quantity is (`METHODS` says each in a line): Student's
t for an unbounded mean; for a mean bounded on either side, the expanded percentile bootstrap
(seeded, deterministic), which never leaves the range of the values and so never the metric's
range, or with fewer than `FEW` values the t interval clipped to that range (a bootstrap cannot
be wider than the values' spread, far too narrow for n = 2..4); Wilson's score interval for a
proportion of 0/1 outcomes. Repetitions whose values are bit-identical get no interval at all
(method "identical"): zero spread says the runs did not vary, not that the mean is exact.
Every interval contains its mean.

scipy is not a dependency, so the t distribution is implemented here: the CDF through the
regularized incomplete beta function (continued fraction, Numerical Recipes 3rd ed. section
6.4), the quantile by Newton's method on that CDF from a Cornish-Fisher starting point. Both
are accurate to ~1e-12, far below what a 95 % interval needs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FEW",
    "METHODS",
    "bootstrap_ci",
    "interval",
    "jain",
    "mean_ci",
    "summarize",
    "t_cdf",
    "t_quantile",
    "wilson",
]

_EPS = 1e-15
_TINY = 1e-300


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz; NR3 `betacf`)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (a={a}, b={b}, x={x})")


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta I_x(a, b); `y` = 1 - x, passed in exactly by the caller
    (computing 1 - x here loses digits when x is near 1, i.e. for large df)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    front = math.exp(ln_front)
    # The fraction converges fast only below the mean; use the symmetry I_x(a,b) = 1 - I_{1-x}(b,a).
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom (df > 0, need not be an integer)."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def _t_pdf(t: float, df: float) -> float:
    ln = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(ln - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The `p` quantile of Student's t with `df` degrees of freedom: t_quantile(0.975, 4) = 2.7764."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), not {p}")
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df == 1:  # Cauchy
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    # Cornish-Fisher expansion around the normal quantile (Abramowitz & Stegun 26.7.5) ...
    z = statistics.NormalDist().inv_cdf(p)
    z2 = z * z
    t = (
        z
        + z * (z2 + 1) / (4 * df)
        + z * ((5 * z2 + 16) * z2 + 3) / (96 * df**2)
        + z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * df**3)
    )
    if df > 1e5:
        # The next term is O(df^-4) < 1e-19 here, while lgamma differences of huge arguments
        # in the CDF would cost ~1e-10: the expansion is the more accurate value.
        return t
    # ... then Newton on the exact CDF; the CDF is convex above the median, so it converges.
    for _ in range(100):
        step = (t_cdf(t, df) - p) / _t_pdf(t, df)
        t -= step
        if abs(step) <= 1e-13 * max(1.0, abs(t)):
            break
    return t


def mean_ci(
    values: Iterable[float],
    level: float = 0.95,
    bounds: tuple[float | None, float | None] = (None, None),
) -> dict[str, float]:
    """n, mean, std (sample, ddof=1), sem and the two-sided Student t interval of the mean
    (`interval` chooses among methods; this is the t one, used per time bin of a series).

    NaN values (failed runs, undefined metrics) are left out; with n < 2 the spread is NaN.
    `bounds` = (lowest, highest) is the range the quantity can take: the interval is clipped to
    it (the mean of a rate is never negative, whatever t * sem says with n = 2). With few values
    (n < 5, `FEW`) the interval also rests on the normality of the values: callers say so.
    """
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    nan = math.nan
    if n == 0:
        return {"n": 0, "mean": nan, "std": nan, "sem": nan, "ci_low": nan, "ci_high": nan}
    mean = math.fsum(xs) / n
    if n < 2:
        return {"n": 1, "mean": mean, "std": nan, "sem": nan, "ci_low": nan, "ci_high": nan}
    std = statistics.stdev(xs)
    sem = std / math.sqrt(n)
    half = t_quantile(0.5 + level / 2.0, n - 1) * sem
    low, high = _clip(mean - half, mean + half, mean, bounds)
    return {"n": n, "mean": mean, "std": std, "sem": sem, "ci_low": low, "ci_high": high}


def _clip(
    low: float, high: float, mean: float, bounds: tuple[float | None, float | None]
) -> tuple[float, float]:
    """[low, high] clipped to `bounds`, but never so far that it loses `mean` (a mean outside the
    declared range means the declaration is wrong; the interval still holds its estimate)."""
    if bounds[0] is not None:
        low = max(low, bounds[0])
    if bounds[1] is not None:
        high = min(high, bounds[1])
    return float(min(low, mean)), float(max(high, mean))


FEW = 5
"""Below this many values a t interval is wide and depends on the values being normal, and a
bootstrap one too narrow: the sweep summary warns, and bounded metrics use the clipped t."""

METHODS = {
    "t": "Student's t interval of the mean (unbounded metric)",
    "t-clipped": "Student's t interval clipped to the metric's range (bounded metric, fewer than "
    f"{FEW} values)",
    "bootstrap": "expanded percentile bootstrap of the mean (Hesterberg 2015), 10000 resamples, "
    "fixed seed: inside the metric's range (bounded metric)",
    "wilson": "Wilson score interval of a proportion (0/1 outcomes per run)",
    "identical": "every value bit-identical: no interval (the repetitions did not vary)",
    "none": "fewer than 2 values: no interval",
}
"""Each interval method's one-line statement, as `summarize`'s `method` column names it."""

BOOTSTRAP_RESAMPLES = 10_000
_BOOTSTRAP_SEED = 0x9E3779B97F4A7C15


def interval(
    values: Iterable[float],
    level: float = 0.95,
    bounds: tuple[float | None, float | None] = (None, None),
    kind: str = "mean",
) -> dict[str, Any]:
    """n, mean, std, sem, the interval at `level` and the method that made it (`METHODS`), and
    whether all values were bit-identical (`identical`).

    `kind` is "mean" (a quantity averaged over runs) or "proportion" (each run's value is a 0/1
    outcome; Wilson's interval, the others when a value is neither 0 nor 1). NaN values (failed
    runs, undefined metrics) are left out.
    """
    xs = sorted(float(v) for v in values if v is not None and not math.isnan(float(v)))
    n = len(xs)
    stats = mean_ci(xs, level)
    out: dict[str, Any] = {**stats, "method": "none", "identical": False}
    if n < 2:
        return out
    mean = stats["mean"]
    out["identical"] = len({x.hex() for x in xs}) == 1
    if kind == "proportion" and all(x in (0.0, 1.0) for x in xs):
        # Wilson's width depends on n, not on the spread: 10 of 10 still bounds the proportion.
        low, high = wilson(round(math.fsum(xs)), n, level)
        out.update(ci_low=min(low, mean), ci_high=max(high, mean), method="wilson")
        return out
    if out["identical"]:
        nan = math.nan
        out.update(std=nan, sem=nan, ci_low=nan, ci_high=nan, method="identical")
        return out
    if bounds == (None, None):
        out["method"] = "t"
        return out
    if n < FEW:
        low, high = _clip(stats["ci_low"], stats["ci_high"], mean, bounds)
        out.update(ci_low=low, ci_high=high, method="t-clipped")
        return out
    low, high = bootstrap_ci(xs, level)
    low, high = _clip(low, high, mean, bounds)
    out.update(ci_low=low, ci_high=high, method="bootstrap")
    return out


def wilson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval of a proportion (successes of n trials); always inside [0, 1]."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"wilson: need 0 <= successes <= n and n >= 1, not {successes} of {n}")
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The expanded percentile bootstrap interval of the mean (Hesterberg, "What Teachers Should
    Know About the Bootstrap", 2015, section 5.2): the percentiles of `BOOTSTRAP_RESAMPLES`
    resampled means at alpha' / 2 and 1 - alpha' / 2, alpha' = 2 Phi(-sqrt(n / (n - 1)) t_{n-1}),
    which widens the plain percentile interval to the t interval's width for small n.

    Resamples are drawn by SplitMix64 from a fixed seed over the sorted values: the same values
    give the same interval on every machine and numpy version. It lies within [min, max] of the
    values, so within any range they respect.
    """
    import numpy as np

    xs = np.sort(np.asarray(values, dtype=float))
    n = len(xs)
    if n < 2:
        return math.nan, math.nan
    t = t_quantile(0.5 + level / 2.0, n - 1)
    alpha = 2.0 * statistics.NormalDist().cdf(-math.sqrt(n / (n - 1)) * t)
    means = np.empty(BOOTSTRAP_RESAMPLES)
    chunk = max(1, 1_000_000 // n)
    for first in range(0, BOOTSTRAP_RESAMPLES, chunk):
        count = min(chunk, BOOTSTRAP_RESAMPLES - first)
        counter = np.arange(first * n, (first + count) * n, dtype=np.uint64)
        index = (_splitmix64(counter) % np.uint64(n)).astype(np.int64).reshape(count, n)
        means[first : first + count] = xs[index].mean(axis=1)
    low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def _splitmix64(counter: Any) -> Any:
    """SplitMix64 (Steele, Lea, Flood 2014) of seed + counter: a pinned, vectorised generator."""
    import numpy as np

    with np.errstate(over="ignore"):
        z = counter * np.uint64(_BOOTSTRAP_SEED) + np.uint64(_BOOTSTRAP_SEED)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def jain(values: Iterable[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one takes all.

    NaN for no values or all zeros (fairness of nothing is undefined).
    """
    xs = [float(v) for v in values]
    square_sum = math.fsum(x * x for x in xs)
    if not xs or square_sum == 0.0:
        return math.nan
    return math.fsum(xs) ** 2 / (len(xs) * square_sum)


def summarize(
    runs: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    level: float = 0.95,
    bounds: Callable[[str], tuple[float | None, float | None]] | None = None,
    kinds: Callable[[str], str] | None = None,
) -> pd.DataFrame:
    """Aggregate a table of runs: one row per group of `by` and metric (tidy, long form).

    Columns: *by, metric, n, mean, std, sem, ci_low, ci_high (interval at `level` by `interval`,
    inside `bounds(metric)`, e.g. `quicksim.metrics.bounds`), method (a key of `METHODS`) and
    identical (every value of the group bit-identical). `kinds(metric)` is "mean" or
    "proportion" (`quicksim.metrics.kind`).
    """
    import pandas as pd

    columns = [*by, "metric", "n", "mean", "std", "sem", "ci_low", "ci_high", "method", "identical"]
    text = (*by, "metric", "method")
    if runs.empty or not metrics:
        return pd.DataFrame(
            {
                c: pd.Series(dtype=object if c in text else bool if c == "identical" else float)
                for c in columns
            }
        )
    rows: list[dict[str, Any]] = []
    groups = runs.groupby(list(by), sort=False, dropna=False) if by else [((), runs)]
    for key, group in groups:
        key_values = key if isinstance(key, tuple) else (key,)
        for metric in metrics:
            values = group.get(metric, [])
            limits = bounds(metric) if bounds is not None else (None, None)
            kind = kinds(metric) if kinds is not None else "mean"
            rows.append(
                {
                    **dict(zip(by, key_values, strict=True)),
                    "metric": metric,
                    **interval(values, level, limits, kind),
                }
            )
    out = pd.DataFrame(rows, columns=columns)
    out["n"] = out["n"].astype("int64")
    out["identical"] = out["identical"].astype(bool)
    return out
