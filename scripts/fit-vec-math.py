#!/usr/bin/env python3
# Derives the polynomial coefficients of src/ggml-cpu/vec-math.h (needs mpmath).
#
# Each function is fitted with mpmath.chebyfit (a near-minimax Chebyshev fit),
# the coefficients are rounded to binary32, and the relative error of the
# rounded polynomial is measured against the exact function on a dense grid.
# Run it to reproduce the constants; it prints them as C initialisers,
# lowest degree first.

import struct
import mpmath as mp

mp.mp.dps = 40


def f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]


def fit(name, f, a, b, deg, samples=4000):
    poly = mp.chebyfit(f, [a, b], deg + 1)  # highest degree first
    coefs = [f32(p) for p in poly]
    worst = mp.mpf(0)
    for i in range(samples + 1):
        x = mp.mpf(a) + (mp.mpf(b) - a) * i / samples
        v = mp.mpf(0)
        for c in coefs:
            v = v * x + mp.mpf(c)
        fx = f(x)
        worst = max(worst, abs(v - fx) / abs(fx))
    lowest_first = list(reversed(coefs))
    print(f'// {name}: degree {deg} on [{float(a):.6g}, {float(b):.6g}], '
          f'max relative error {mp.nstr(worst, 3)} ({mp.nstr(worst / 2**-23, 3)} ulp)')
    print('{ ' + ', '.join(f'{c:.9g}f' for c in lowest_first) + ' }')
    return coefs


half_ln2 = mp.log(2) / 2

# expm1(r) = r + r^2 q(r) on the reduced range |r| <= ln2/2; exp(r) = 1 + expm1(r)
fit('q(r) = (e^r - 1 - r) / r^2', lambda r: (mp.expm1(r) - r) / r**2 if r != 0 else mp.mpf(1) / 2,
    -half_ln2, half_ln2, 5)

# erf(z) = z P(z^2) for |z| < 0.5
fit('P(s) = erf(sqrt(s)) / sqrt(s)', lambda s: mp.erf(mp.sqrt(s)) / mp.sqrt(s) if s != 0 else 2 / mp.sqrt(mp.pi),
    0, mp.mpf(1) / 4, 4)

# erfc(z) = exp(-z^2) R(t) with t = 1/(1+z/2), for 0.5 <= z <= 10.5 (beyond, exp(-z^2)
# underflows); this variable keeps the coefficients small, so rounding them costs little
fit('R(t) = erfc(z) exp(z^2), z = 2/t - 2', lambda t: mp.erfc(2 / t - 2) * mp.exp((2 / t - 2)**2),
    1 / mp.mpf(6.25), 1 / mp.mpf(1.25), 9)

ln2_hi = f32(mp.log(2))
ln2_lo = f32(mp.log(2) - ln2_hi)
print(f'// ln2 = {ln2_hi:.9g}f + {ln2_lo:.9g}f')
