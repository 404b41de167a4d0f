"""Hand-written autograd kernels of the norms: DyT and the DyT/LayerNorm mix in few passes.

Why a module of their own: ``norms.py`` says what each norm computes (its straightforward form
is the formula of docs/method.md section 1); this module computes the same in fewer passes over
the activations, with a hand-written backward, and is what makes AutoNorm affordable on a CPU.
``tests/test_benchmark_equivalence.py`` checks outputs and gradients against the straightforward
forms; ``fast_paths(False)`` switches every norm back to them (benchmarks compare both).
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

# The straightforward forms (``weight * tanh(alpha * x) + bias`` and
# ``w_DyT * DyT(x) + w_LN * LN(x)`` through autograd) cost several full passes
# over the activations each way, and ``torch.tanh`` on CPU measured about six times
# slower than ``torch.sigmoid`` when these were written (2026-11-29; on the box of
# 2026-11-30 it was 0.37 ms against 0.51 ms: benchmarks/LOG.md). The sigmoid form
# stays either way: changing it would change every output's bits. The functions below
# compute the same math with fewer passes and a hand-written backward:
#   tanh(z) = 2 * sigmoid(2 z) - 1,  so  g * tanh(a x) + b = (2 g) * s + (b - g),  s = sigmoid(2 a x)
#   d tanh(z) / dz = 1 - tanh(z)^2 = 4 s (1 - s)
# They consume no random numbers (the selector's Gumbel noise is drawn before,
# exactly as before) and differ from the straightforward forms only by float
# rounding; tests/test_benchmark_equivalence.py checks outputs and gradients.


FAST_PATHS = True  # False: every norm runs its straightforward autograd form (benchmarks compare both)


@contextlib.contextmanager
def fast_paths(enabled: bool):
    """Temporarily switch the fast paths on or off (for benchmarks and equivalence tests)."""
    global FAST_PATHS
    old, FAST_PATHS = FAST_PATHS, bool(enabled)
    try:
        yield
    finally:
        FAST_PATHS = old


def use_fast_paths() -> bool:
    # Under torch.compile the straightforward forms are traced instead: the compiler fuses their
    # elementwise ops itself, and the hand-written backward would only get in its way.
    return FAST_PATHS and not torch.compiler.is_compiling()


def _sample_shape(w_col: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A per-sample (B,) column broadcast over every dim of x but the batch."""
    return w_col.reshape((x.shape[0],) + (1,) * (x.dim() - 1))


def _token_sum(z: torch.Tensor) -> torch.Tensor:
    """(B, ..., d) -> (B, d): sum over every dim between batch and features."""
    return z.sum(tuple(range(1, z.dim() - 1))) if z.dim() > 2 else z


def _feature_sum(z: torch.Tensor) -> torch.Tensor:
    """(..., d) -> (d,): sum over every dim but the features."""
    return z.reshape(-1, z.shape[-1]).sum(0)


class _DyTFunction(torch.autograd.Function):
    """y = weight * tanh(alpha * x) + bias, computed as (2 weight) * s + (bias - weight)."""

    @staticmethod
    def forward(ctx, x, alpha, weight, bias):
        s = _sigmoid_2ax(x, alpha)
        ctx.save_for_backward(x, alpha, weight, s)
        return torch.addcmul(bias - weight, 2.0 * weight, s)

    @staticmethod
    def backward(ctx, gy):
        x, alpha, weight, s = ctx.saved_tensors
        need_x, need_a, need_w, need_b = ctx.needs_input_grad
        gx = g_a = g_w = g_b = None
        buf = torch.mul(gy, s)  # the one full-size scratch buffer, reused below
        if need_w or need_b:
            g_b = _feature_sum(gy)
            g_w = 2.0 * _feature_sum(buf) - g_b  # sum of gy * tanh(alpha x)
        if need_x or need_a:
            gz = _tanh_grad(gy, 4.0 * weight, s, out=buf)  # dL/d(alpha x)
            if need_a:
                g_a = torch.dot(gz.reshape(-1), x.reshape(-1)).reshape(alpha.shape)
            if need_x:
                gx = gz.mul_(alpha)
        return gx, g_a, (g_w if need_w else None), (g_b if need_b else None)


def _sigmoid_2ax(x: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """s = sigmoid(2 alpha x), so tanh(alpha x) = 2 s - 1 (one new buffer)."""
    return torch.mul(x, 2.0 * alpha).sigmoid_()


def _layer_norm0(x: torch.Tensor, eps: float):
    """(xhat, mean, rstd) of LayerNorm without affine. Passing weight 1 and bias 0 gives the
    same xhat bit for bit and takes torch's vectorised CPU kernel (the weightless one is ~2x slower)."""
    d = x.shape[-1]
    return torch.native_layer_norm(x, (d,), x.new_ones(d), x.new_zeros(d), eps)


def _tanh_grad(gy: torch.Tensor, scale: torch.Tensor, s: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """dL/dz of y = (scale / 4) * tanh(z) given s = sigmoid(2 z): gy * scale * s * (1 - s), into ``out``."""
    torch.mul(gy, scale, out=out)
    return torch.ops.aten.sigmoid_backward.grad_input(out, s, grad_input=out)


def dyt_forward(x: torch.Tensor, alpha: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """DyT(x) = weight * tanh(alpha * x) + bias (the fast path of ``DyT.forward``)."""
    if torch.is_grad_enabled() and (x.requires_grad or alpha.requires_grad or weight.requires_grad
                                    or bias.requires_grad):
        return _DyTFunction.apply(x, alpha, weight, bias)
    return torch.addcmul(bias - weight, 2.0 * weight, _sigmoid_2ax(x, alpha))


class _DyTLNMixFunction(torch.autograd.Function):
    """y = w_DyT * (gd * tanh(alpha x) + bd) + w_LN * (gl * xhat + bl), w per sample (B, 2).

    With A = w_DyT gd, C = w_LN gl (per sample and feature), s = sigmoid(2 alpha x) and
    xhat = (x - mean) * rstd:  y = (2A) * s + C * xhat + (w_DyT (bd - gd) + w_LN bl).
    """

    @staticmethod
    def forward(ctx, x, w, alpha, gd, bd, gl, bl, eps):
        s = _sigmoid_2ax(x, alpha)
        xhat, mean, rstd = _layer_norm0(x, eps)
        y = _mix(x, w, gd, bd, gl, bl, s, xhat)
        ctx.save_for_backward(x, w, alpha, gd, bd, gl, bl, s, xhat, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, gy):
        x, w, alpha, gd, bd, gl, bl, s, xhat, mean, rstd = ctx.saved_tensors
        need_x, need_w, need_a, need_gd, need_bd, need_gl, need_bl, _ = ctx.needs_input_grad
        wd, wl = _sample_shape(w[:, 0], x), _sample_shape(w[:, 1], x)
        gw = g_a = g_gd = g_bd = g_gl = g_bl = gx = None
        buf = torch.empty_like(gy, memory_format=torch.contiguous_format)  # one scratch buffer, reused
        if need_w or need_gd or need_bd or need_gl or need_bl:
            wd2, wl2 = w[:, 0:1], w[:, 1:2]  # (B, 1)
            g_bias = _token_sum(gy)  # (B, d): dL/d(per-sample bias)
            g_t = 2.0 * _token_sum(torch.mul(gy, s, out=buf)) - g_bias  # token-sum of gy * tanh(alpha x)
            g_xh = _token_sum(torch.mul(gy, xhat, out=buf))
            if need_w:
                gw = torch.stack([(g_t * gd + g_bias * bd).sum(-1), (g_xh * gl + g_bias * bl).sum(-1)], dim=-1)
            g_gd = (g_t * wd2).sum(0) if need_gd else None
            g_bd = (g_bias * wd2).sum(0) if need_bd else None
            g_gl = (g_xh * wl2).sum(0) if need_gl else None
            g_bl = (g_bias * wl2).sum(0) if need_bl else None
        if need_x:
            gx = torch.ops.aten.native_layer_norm_backward(torch.mul(gy, wl * gl, out=buf), x, (x.shape[-1],),
                                                           mean, rstd, None, None, [True, False, False])[0]
        if need_x or need_a:
            gz = _tanh_grad(gy, 4.0 * (wd * gd), s, out=buf)  # dL/d(alpha x)
            if need_a:
                g_a = torch.dot(gz.reshape(-1), x.reshape(-1)).reshape(alpha.shape)
            if need_x:
                gx.addcmul_(gz, alpha)
        return gx, gw, g_a, g_gd, g_bd, g_gl, g_bl, None


def _mix(x, w, gd, bd, gl, bl, s, xhat, out=None):
    wd, wl = _sample_shape(w[:, 0], x), _sample_shape(w[:, 1], x)
    y = torch.addcmul(wd * (bd - gd) + wl * bl, 2.0 * (wd * gd), s, out=out)
    return y.addcmul_(wl * gl, xhat)


def dyt_ln_mix(x: torch.Tensor, w: torch.Tensor, dyt: nn.Module, ln: nn.LayerNorm) -> torch.Tensor:
    """``w[:, 0] * dyt(x) + w[:, 1] * ln(x)`` with per-sample weights w (B, 2), in few passes."""
    args = (x, w, dyt.alpha, dyt.weight, dyt.bias, ln.weight, ln.bias)
    if torch.is_grad_enabled() and any(a.requires_grad for a in args):
        return _DyTLNMixFunction.apply(*args, ln.eps)
    # No autograd: the same arithmetic as _mix, element for element, written into s's buffer
    # instead of a third full-size tensor (evaluation allocates what a LayerNorm does, plus two).
    s = _sigmoid_2ax(x, dyt.alpha)
    xhat = _layer_norm0(x, ln.eps)[0]
    return _mix(x, w, dyt.weight, dyt.bias, ln.weight, ln.bias, s, xhat, out=s)
