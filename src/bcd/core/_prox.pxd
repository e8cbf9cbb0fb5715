# Proximal operators shared by the compiled path solvers.

cdef inline double soft(double z, double t) noexcept nogil:
    """The soft-thresholding of z at t >= 0: the proximal operator of
    t |.| (sign(z) max(|z| - t, 0))."""
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0
