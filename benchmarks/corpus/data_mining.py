"""Data mining: PolyBench's correlation and covariance matrices, and Lloyd's k-means iterations."""

import numpy as np

from .kernel import Kernel, njit


def correlation(data):
    """Pearson correlation of the columns of data (rows are observations); data is standardised
    in place. A column of standard deviation under 0.1 is divided by 1 instead."""
    n = data.shape[0]
    mean = data.mean(axis=0)
    stddev = np.sqrt(((data - mean) ** 2).mean(axis=0))
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(n) * stddev
    corr = data.T @ data
    np.fill_diagonal(corr, 1.0)
    return corr


@njit
def correlation_loops(data):
    n, m = data.shape
    mean = np.zeros(m)
    stddev = np.zeros(m)
    for j in range(m):
        for i in range(n):
            mean[j] += data[i, j]
        mean[j] /= n
        for i in range(n):
            stddev[j] += (data[i, j] - mean[j]) ** 2
        stddev[j] = np.sqrt(stddev[j] / n)
        if stddev[j] <= 0.1:
            stddev[j] = 1.0
    for i in range(n):
        for j in range(m):
            data[i, j] = (data[i, j] - mean[j]) / (np.sqrt(n) * stddev[j])
    corr = np.empty((m, m))
    for i in range(m):
        corr[i, i] = 1.0
        for j in range(i + 1, m):
            s = 0.0
            for k in range(n):
                s += data[k, i] * data[k, j]
            corr[i, j] = s
            corr[j, i] = s
    return corr


def make_data(rng, n, m):
    data = rng.random((n, m))
    data[:, ::7] *= 0.2      # every seventh column too flat: its deviation is replaced by 1
    return (data,)


def covariance(data):
    """Sample covariance of the columns of data, centred in place."""
    data -= data.mean(axis=0)
    return data.T @ data / (data.shape[0] - 1)


@njit
def covariance_loops(data):
    n, m = data.shape
    for j in range(m):
        mean = 0.0
        for i in range(n):
            mean += data[i, j]
        mean /= n
        for i in range(n):
            data[i, j] -= mean
    cov = np.empty((m, m))
    for i in range(m):
        for j in range(i, m):
            s = 0.0
            for k in range(n):
                s += data[k, i] * data[k, j]
            cov[i, j] = s / (n - 1)
            cov[j, i] = cov[i, j]
    return cov


def kmeans(X, centres, iterations):
    """Lloyd's iterations: each point to its nearest centre, each centre to the mean of its points."""
    for _ in range(iterations):
        labels = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
        for c in range(centres.shape[0]):
            centres[c] = X[labels == c].mean(axis=0)
    return labels


@njit
def kmeans_loops(X, centres, iterations):
    n, d = X.shape
    k = centres.shape[0]
    labels = np.empty(n, np.int64)
    for _ in range(iterations):
        for i in range(n):
            best, arg = np.inf, 0
            for c in range(k):
                dist = 0.0
                for j in range(d):
                    t = X[i, j] - centres[c, j]
                    dist += t * t
                if dist < best:
                    best, arg = dist, c
            labels[i] = arg
        sums = np.zeros((k, d))
        counts = np.zeros(k)
        for i in range(n):
            counts[labels[i]] += 1
            sums[labels[i]] += X[i]
        for c in range(k):
            centres[c] = sums[c] / counts[c]
    return labels


def make_kmeans(rng, n, d, k, iterations):
    X = rng.standard_normal((n, d)) + rng.integers(0, 4, (n, 1))   # four loose blobs along the diagonal
    return X, X[:k].copy(), iterations


KERNELS = [
    Kernel("correlation", correlation, correlation_loops, make_data,
           {"tiny": (7, 8), "small": (100, 80), "large": (1400, 1200)}),
    Kernel("covariance", covariance, covariance_loops, make_data,
           {"tiny": (7, 8), "small": (100, 80), "large": (1400, 1200)}),
    Kernel("kmeans", kmeans, kmeans_loops, make_kmeans,
           {"tiny": (20, 3, 3, 2), "small": (2000, 8, 8, 10), "large": (10000, 8, 16, 10)}),
]
