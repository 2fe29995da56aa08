"""Corpus: stencils. Heat, wave, Jacobi and Gauss-Seidel sweeps with in-place slice updates and loops
over time steps (a constant trip count: unrolled into one graph)."""

import numpy as np
import pytest

from conftest import rand
from harness import Case, check, params


def n1(call):
    return 24 if call != 1 else 31


def n2(call):
    return (12, 10) if call != 1 else (9, 15)


# -- 1-D ------------------------------------------------------------------------------------
def heat_1d(u, alpha, steps):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def heat_1d_inplace_add(u, steps):
    """The update as an augmented assignment on a view: NumPy evaluates the right side first."""
    for _ in range(steps):
        u[1:-1] += 0.2 * (u[2:] - 2 * u[1:-1] + u[:-2])
    u[0] = 0.0
    u[-1] = 0.0


def wave_leapfrog(u_prev, u, c, steps):
    c2 = c * c
    for _ in range(steps):
        u_next = np.zeros_like(u)
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u = u, u_next
    return u, u_prev


def red_black_gauss_seidel(u, f, h, sweeps):
    """Odd points from the old even points, then even points from the new odd ones (strided views)."""
    for _ in range(sweeps):
        u[1:-1:2] = 0.5 * (u[0:-2:2] + u[2::2] - h * h * f[1:-1:2])
        u[2:-1:2] = 0.5 * (u[1:-2:2] + u[3::2] - h * h * f[2:-1:2])
    return np.abs(u[1:-1] - 0.5 * (u[:-2] + u[2:])).max()


def upwind_advection(q, vel, dt, dx, steps):
    """Periodic boundary through ghost cells q[0] and q[-1], refreshed every step."""
    cfl = vel * dt / dx
    for t in range(steps):
        q[0] = q[-2]
        q[-1] = q[1]
        q[1:-1] -= cfl * (q[1:-1] - q[:-2])
    return q.sum() * dx


def burgers_step_history(u, nu, dt, steps):
    """Keeps every step in a preallocated history: history[t] = u copies the row."""
    history = np.empty((steps + 1, u.shape[0]))
    history[0] = u
    for t in range(steps):
        un = u * 1.0
        u[1:-1] = un[1:-1] - un[1:-1] * dt * (un[1:-1] - un[:-2]) + nu * dt * (un[2:] - 2 * un[1:-1] + un[:-2])
        history[t + 1] = u
    return history


def lotka_volterra_euler(state, params_, dt, steps):
    a, b, c, d = params_
    traj = np.empty((steps, 2))
    for t in range(steps):
        prey, pred = state[0], state[1]
        dprey = a * prey - b * prey * pred
        dpred = d * prey * pred - c * pred
        state[0] += dt * dprey
        state[1] += dt * dpred
        traj[t] = state
    return traj


# -- 2-D ------------------------------------------------------------------------------------
def heat_2d(u, dt, steps):
    for _ in range(steps):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] += dt * lap


def laplacian_5pt(u, h):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]) / (h * h)
    return lap


def jacobi_poisson(u, f, iters):
    for _ in range(iters):
        new = np.empty_like(u)
        new[0, :] = u[0, :]
        new[-1, :] = u[-1, :]
        new[:, 0] = u[:, 0]
        new[:, -1] = u[:, -1]
        new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - f[1:-1, 1:-1])
        u = new
    residual = f[1:-1, 1:-1] - (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    return u, np.sqrt((residual ** 2).mean())


def jacobi_with_copy(u, iters):
    """The textbook loop with `un = u.copy()`: the copy keeps the old values while u is updated."""
    for _ in range(iters):
        un = u.copy()
        u[1:-1, 1:-1] = 0.25 * (un[:-2, 1:-1] + un[2:, 1:-1] + un[1:-1, :-2] + un[1:-1, 2:])
    return u


def conv3x3_valid(x, w):
    h, wd = x.shape
    out = np.zeros((h - 2, wd - 2), dtype=x.dtype)
    for i in range(3):
        for j in range(3):
            out += w[i, j] * x[i:i + h - 2, j:j + wd - 2]
    return out


def game_of_life(grid, steps):
    """Integer neighbour counts through a zero-padded frame, a boolean rule, astype back to int."""
    for _ in range(steps):
        h, w = grid.shape
        pad = np.zeros((h + 2, w + 2), dtype=grid.dtype)
        pad[1:-1, 1:-1] = grid
        nb = (pad[:-2, :-2] + pad[:-2, 1:-1] + pad[:-2, 2:] + pad[1:-1, :-2] + pad[1:-1, 2:]
              + pad[2:, :-2] + pad[2:, 1:-1] + pad[2:, 2:])
        grid = ((nb == 3) | ((grid == 1) & (nb == 2))).astype(grid.dtype)
    return grid


def sobel_magnitude(img):
    gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2])
    gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:])
    mag = np.hypot(gx, gy)
    img[1:-1, 1:-1] = mag / mag.max()      # normalised edges written back into the image
    return mag.mean(), np.arctan2(gy, gx)


def diffusion_float32(u, k, steps):
    """float32 state with a Python float coefficient: NEP 50 keeps float32."""
    for _ in range(steps):
        u[:, 1:-1] += k * (u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2])
        u[1:-1, :] += k * (u[2:, :] - 2 * u[1:-1, :] + u[:-2, :])
    return u.dtype.itemsize, u.mean(axis=0)


CASES = [
    Case(heat_1d, lambda rng, c: (rand(rng, (n1(c),)), 0.2, 5), 1, 0),
    Case(heat_1d_inplace_add, lambda rng, c: (rand(rng, (n1(c),)), 4), 1, 0),
    Case(wave_leapfrog, lambda rng, c: (rand(rng, (n1(c),)), rand(rng, (n1(c),)), 0.5, 6), 1, 0),
    Case(red_black_gauss_seidel, lambda rng, c: (rand(rng, (n1(c),)), rand(rng, (n1(c),)), 0.1, 3), 1, 0),
    Case(upwind_advection, lambda rng, c: (rand(rng, (n1(c),)), 1.0, 0.05, 0.1, 4), 1, 0),
    Case(burgers_step_history, lambda rng, c: (rand(rng, (n1(c),)), 0.07, 0.01, 5), 1, 0),
    Case(lotka_volterra_euler, lambda rng, c: (np.abs(rand(rng, (2,))) + 1, (1.1, 0.4, 0.4, 0.1), 0.01 * (c + 1), 8), 1, 0),
    Case(heat_2d, lambda rng, c: (rand(rng, n2(c)), 0.1, 3), 1, 0),
    Case(laplacian_5pt, lambda rng, c: (rand(rng, n2(c)), 0.5), 1, 0),
    Case(jacobi_poisson, lambda rng, c: (rand(rng, n2(c)), rand(rng, n2(c)), 4), 1, 0),
    # ndarray.copy is not in the op table: one break at its call, and one at each return to the
    # top of the loop (the resume function runs the rest of the range natively); entries of a resume
    # function are reused once both layouts ("un" unbound, then bound) are compiled: the update is
    # traced twice (2 graphs), breaks: copy, for, copy, for (as with np.copy(u), which gives 2, 4)
    Case(jacobi_with_copy, lambda rng, c: (rand(rng, n2(c)), 3), 1, 0),
    Case(conv3x3_valid, lambda rng, c: (rand(rng, n2(c)), rand(rng, (3, 3))), 1, 0),
    Case(game_of_life, lambda rng, c: (np.asarray(rng.random(n2(c)) < 0.4, dtype=np.int64), 3), 1, 0),
    Case(sobel_magnitude, lambda rng, c: (rand(rng, n2(c)),), 1, 0),
    Case(diffusion_float32, lambda rng, c: (rand(rng, n2(c), np.float32), 0.1, 3), 1, 0),
]


@pytest.mark.parametrize("case", params(CASES))
def test_stencil(case, rng):
    check(case, rng)
