"""Physics time steppers: a loop over steps whose body is whole-array NumPy (pair forces by
broadcasting, Laplacians by slices or np.roll, an RK4 stage as a helper function)."""

import numpy as np

from .kernel import Kernel, njit


def nbody(pos, vel, mass, dt, steps):
    """Kick-drift steps of gravitating bodies (G = 1, softened), all pair forces at once."""
    for _ in range(steps):
        d = pos[None, :, :] - pos[:, None, :]                  # d[i, j] = pos[j] - pos[i]
        inv_r3 = ((d ** 2).sum(axis=2) + 0.01) ** -1.5
        acc = (d * (inv_r3 * mass)[:, :, None]).sum(axis=1)
        vel += acc * dt
        pos += vel * dt


@njit
def nbody_loops(pos, vel, mass, dt, steps):
    n = pos.shape[0]
    acc = np.empty(3)
    for _ in range(steps):
        for i in range(n):
            acc[:] = 0.0
            for j in range(n):
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                w = mass[j] * (dx * dx + dy * dy + dz * dz + 0.01) ** -1.5
                acc[0] += dx * w
                acc[1] += dy * w
                acc[2] += dz * w
            for k in range(3):
                vel[i, k] += acc[k] * dt
        for i in range(n):
            for k in range(3):
                pos[i, k] += vel[i, k] * dt


def make_nbody(rng, n, steps):
    return rng.standard_normal((n, 3)), rng.standard_normal((n, 3)) * 0.1, rng.random(n) / n, 0.001, steps


def wave_2d(u, u_prev, c2, steps):
    """Leapfrog steps of the 2-d wave equation with fixed edges (c2 = (c dt / dx) ** 2); the two
    time levels swap roles every step, and the newest is returned."""
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        u_prev[1:-1, 1:-1] = 2 * u[1:-1, 1:-1] - u_prev[1:-1, 1:-1] + c2 * lap
        u, u_prev = u_prev, u
    return u


@njit
def wave_2d_loops(u, u_prev, c2, steps):
    n, m = u.shape
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                lap = u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4 * u[i, j]
                u_prev[i, j] = 2 * u[i, j] - u_prev[i, j] + c2 * lap
        u, u_prev = u_prev, u
    return u


def make_wave(rng, n, steps):
    return rng.random((n, n)), rng.random((n, n)), 0.2, steps


SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0


def lorenz(s):
    x, y, z = s[:, 0], s[:, 1], s[:, 2]
    return np.stack([SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z], axis=1)


def lorenz_rk4(state, dt, steps):
    """Classical Runge-Kutta steps of an ensemble of Lorenz systems (one per row of state)."""
    for _ in range(steps):
        k1 = lorenz(state)
        k2 = lorenz(state + dt / 2 * k1)
        k3 = lorenz(state + dt / 2 * k2)
        k4 = lorenz(state + dt * k3)
        state += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


@njit
def lorenz_loops(x, y, z):
    return SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z


@njit
def lorenz_rk4_loops(state, dt, steps):
    for _ in range(steps):
        for i in range(state.shape[0]):
            x, y, z = state[i, 0], state[i, 1], state[i, 2]
            a1, b1, c1 = lorenz_loops(x, y, z)
            a2, b2, c2 = lorenz_loops(x + dt / 2 * a1, y + dt / 2 * b1, z + dt / 2 * c1)
            a3, b3, c3 = lorenz_loops(x + dt / 2 * a2, y + dt / 2 * b2, z + dt / 2 * c2)
            a4, b4, c4 = lorenz_loops(x + dt * a3, y + dt * b3, z + dt * c3)
            state[i, 0] += dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
            state[i, 1] += dt / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
            state[i, 2] += dt / 6 * (c1 + 2 * c2 + 2 * c3 + c4)


def make_lorenz(rng, n, steps):
    return rng.standard_normal((n, 3)) * 5 + [0, 0, 25], 0.005, steps


def laplacian(Z):
    """The periodic 5-point Laplacian."""
    return np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0) + np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z


def gray_scott(U, V, steps, Du=0.16, Dv=0.08, F=0.035, k=0.065):
    """Euler steps of the Gray-Scott reaction-diffusion system on a periodic grid."""
    for _ in range(steps):
        uvv = U * V * V
        U += Du * laplacian(U) - uvv + F * (1 - U)
        V += Dv * laplacian(V) + uvv - (F + k) * V


@njit
def gray_scott_loops(U, V, steps, Du=0.16, Dv=0.08, F=0.035, k=0.065):
    n, m = U.shape
    dU = np.empty_like(U)
    dV = np.empty_like(V)
    for _ in range(steps):
        for i in range(n):
            for j in range(m):
                u, v = U[i, j], V[i, j]
                lap_u = U[i - 1, j] + U[(i + 1) % n, j] + U[i, j - 1] + U[i, (j + 1) % m] - 4 * u
                lap_v = V[i - 1, j] + V[(i + 1) % n, j] + V[i, j - 1] + V[i, (j + 1) % m] - 4 * v
                uvv = u * v * v
                dU[i, j] = Du * lap_u - uvv + F * (1 - u)
                dV[i, j] = Dv * lap_v + uvv - (F + k) * v
        U += dU
        V += dV


def make_gray_scott(rng, n, steps):
    U = 1 - 0.5 * rng.random((n, n))
    V = 0.25 * rng.random((n, n))
    return U, V, steps


def fpu_force(x, alpha):
    """Forces along a Fermi-Pasta-Ulam-Tsingou chain (alpha model) with both ends held at 0."""
    stretch = np.diff(x, prepend=0.0, append=0.0)
    bond = stretch + alpha * stretch ** 2
    return bond[1:] - bond[:-1]


def fpu_chain(x, v, alpha, dt, steps):
    """Velocity Verlet steps of the chain."""
    a = fpu_force(x, alpha)
    for _ in range(steps):
        v += 0.5 * dt * a
        x += dt * v
        a = fpu_force(x, alpha)
        v += 0.5 * dt * a


@njit
def fpu_force_loops(x, alpha, out):
    n = x.shape[0]
    for i in range(n):
        left = x[i] - (x[i - 1] if i > 0 else 0.0)
        right = (x[i + 1] if i < n - 1 else 0.0) - x[i]
        out[i] = (right + alpha * right ** 2) - (left + alpha * left ** 2)


@njit
def fpu_chain_loops(x, v, alpha, dt, steps):
    a = np.empty_like(x)
    fpu_force_loops(x, alpha, a)
    for _ in range(steps):
        for i in range(x.shape[0]):
            v[i] += 0.5 * dt * a[i]
            x[i] += dt * v[i]
        fpu_force_loops(x, alpha, a)
        for i in range(x.shape[0]):
            v[i] += 0.5 * dt * a[i]


def make_fpu(rng, n, steps):
    """The chain's lowest mode, perturbed."""
    x = np.sin(np.pi * np.arange(1, n + 1) / (n + 1)) + 0.01 * rng.standard_normal(n)
    return x, 0.01 * rng.standard_normal(n), 0.25, 0.05, steps


def ising(spins, beta, draws):
    """Metropolis sweeps of the 2-d Ising model on a periodic lattice, one colour of the checkerboard
    at a time; draws[t, c] are the uniform numbers of sweep t, colour c."""
    i, j = np.indices(spins.shape)
    black = (i + j) % 2 == 0
    for t in range(draws.shape[0]):
        for c, colour in enumerate((black, ~black)):
            neighbours = (np.roll(spins, 1, axis=0) + np.roll(spins, -1, axis=0)
                          + np.roll(spins, 1, axis=1) + np.roll(spins, -1, axis=1))
            flip = colour & (draws[t, c] < np.exp(-2.0 * beta * spins * neighbours))
            spins[flip] *= -1


@njit
def ising_loops(spins, beta, draws):
    n, m = spins.shape
    for t in range(draws.shape[0]):
        for c in range(2):
            for i in range(n):
                for j in range(m):
                    if (i + j) % 2 != c:
                        continue
                    neighbours = spins[i - 1, j] + spins[(i + 1) % n, j] + spins[i, j - 1] + spins[i, (j + 1) % m]
                    if draws[t, c, i, j] < np.exp(-2.0 * beta * spins[i, j] * neighbours):
                        spins[i, j] = -spins[i, j]


def make_ising(rng, n, sweeps):
    return rng.choice(np.array([-1, 1], dtype=np.int8), (n, n)), 0.4, rng.random((sweeps, 2, n, n))


KERNELS = [
    Kernel("fpu-chain", fpu_chain, fpu_chain_loops, make_fpu, {"tiny": (6, 3), "small": (64, 200), "large": (100_000, 100)}),
    Kernel("gray-scott", gray_scott, gray_scott_loops, make_gray_scott,
           {"tiny": (5, 2), "small": (64, 20), "large": (512, 20)}),
    Kernel("ising", ising, ising_loops, make_ising, {"tiny": (4, 2), "small": (32, 20), "large": (384, 20)}),
    Kernel("lorenz-rk4", lorenz_rk4, lorenz_rk4_loops, make_lorenz,
           {"tiny": (3, 3), "small": (32, 100), "large": (10_000, 200)}),
    Kernel("nbody", nbody, nbody_loops, make_nbody, {"tiny": (5, 2), "small": (64, 10), "large": (500, 10)}),
    Kernel("wave-2d", wave_2d, wave_2d_loops, make_wave, {"tiny": (6, 3), "small": (64, 50), "large": (500, 50)}),
]
