"""The smallest detectable difference the tables and the ledger print: solving the paired t-test's power
equation (autonorm.analysis.stats) for d_z, against the same equation with scipy.stats' distribution
objects in the integrand (what the module did before 5e4e6ca), interleaved.

    python benchmarks/ledger_stats.py            # every (n, alpha) the page's studies meet, 3 repeats

Each repeat clears the module's cache of roots, so both sides solve every root. Prints the median CPU
time of each side, their ratio, and the largest relative difference between the two sets of roots (the
faster integrand is the same function: it must agree to float rounding).
"""

from __future__ import annotations

import math

import _common as C
from scipy import integrate, optimize
from scipy import stats as sps

from autonorm.analysis import stats

#: seeds per comparison (2 to 10) and the Holm levels a family of up to 6 tests reaches at 0.05
GRID = [(n, 0.05 / k) for n in (2, 3, 4, 5, 8, 10) for k in (1, 2, 3, 4, 6)]


def _power_by_distributions(n: int, dz: float, alpha: float) -> float:
    df = n - 1
    crit = sps.t.ppf(1 - alpha / 2, df)
    nc = abs(dz) * math.sqrt(n)

    def integrand(v: float) -> float:
        s = crit * math.sqrt(v / df)
        return sps.chi2.pdf(v, df) * (sps.norm.cdf(nc - s) + sps.norm.cdf(-nc - s))

    return min(max(integrate.quad(integrand, 0.0, math.inf, limit=200)[0], 0.0), 1.0)


def _dz_by_distributions(n: int, alpha: float, power: float = 0.8) -> float:
    hi = 1.0
    while _power_by_distributions(n, hi, alpha) < power:
        hi *= 2.0
    return optimize.brentq(lambda dz: _power_by_distributions(n, dz, alpha) - power, 0.0, hi,
                           xtol=1e-10, rtol=1e-12)


def main() -> None:
    p = C.base_parser(__doc__.splitlines()[0])
    args = p.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    roots: dict[str, list[float]] = {}

    def module() -> None:
        stats._detectable_dz.cache_clear()
        roots["module"] = [stats._detectable_dz(n, a, 0.8) for n, a in GRID]

    def distributions() -> None:
        roots["distributions"] = [_dz_by_distributions(n, a) for n, a in GRID]

    t = C.interleaved({"module (scipy.special)": module, "scipy.stats objects": distributions}, repeats, 0)
    print(C.machine_line())
    rows = [[n, f"{C.med(t.cpu[n]):.2f} s", C.spread(t.cpu[n])] for n in t]
    print(C.table(rows, ["integrand", f"{len(GRID)} roots, CPU (median)", "spread"]))
    ratio = C.med(t.cpu["scipy.stats objects"]) / C.med(t.cpu["module (scipy.special)"])
    worst = max(abs(a / b - 1) for a, b in zip(roots["module"], roots["distributions"]))
    print(f"scipy.stats / module: {ratio:.1f}x; largest relative difference of a root: {worst:.1e}")


if __name__ == "__main__":
    main()
