"""Across runs: statistics over repetitions (Student's t quantile, confidence intervals), plus
Jain's fairness index. Knows nothing of scenarios or results: numbers in, numbers out.
(Per run: `quicksim.metrics`; per phase of one run: `quicksim.analysis`.)

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

__all__ = ["jain", "mean_ci", "summarize", "t_cdf", "t_quantile"]

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
    """n, mean, std (sample, ddof=1), sem and the two-sided Student t interval of the mean.

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
    low, high = mean - half, mean + half
    if bounds[0] is not None:
        low = max(low, bounds[0])
    if bounds[1] is not None:
        high = min(high, bounds[1])
    return {"n": n, "mean": mean, "std": std, "sem": sem, "ci_low": low, "ci_high": high}


FEW = 5
"""Below this many values a t interval is wide and depends on the values being normal: the
sweep summary warns."""


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
) -> pd.DataFrame:
    """Aggregate a table of runs: one row per group of `by` and metric (tidy, long form).

    Columns: *by, metric, n, mean, std, sem, ci_low, ci_high (interval at `level`, clipped to
    `bounds(metric)`, e.g. `quicksim.metrics.bounds`).
    """
    import pandas as pd

    columns = [*by, "metric", "n", "mean", "std", "sem", "ci_low", "ci_high"]
    if runs.empty or not metrics:
        return pd.DataFrame(
            {c: pd.Series(dtype=float if c not in (*by, "metric") else object) for c in columns}
        )
    rows: list[dict[str, Any]] = []
    groups = runs.groupby(list(by), sort=False, dropna=False) if by else [((), runs)]
    for key, group in groups:
        key_values = key if isinstance(key, tuple) else (key,)
        for metric in metrics:
            values = group.get(metric, [])
            limits = bounds(metric) if bounds is not None else (None, None)
            rows.append(
                {**dict(zip(by, key_values, strict=True)), "metric": metric, **mean_ci(values, level, limits)}
            )
    out = pd.DataFrame(rows, columns=columns)
    out["n"] = out["n"].astype("int64")
    return out
