# xoshiro256** pseudo-random generator (Blackman and Vigna), usable without
# the GIL.  State is seeded from a NumPy random state at set-up so that a
# given ``random_state`` always reproduces the same iterates.
from libc.stdint cimport uint64_t

cdef struct RNG:
    uint64_t s0
    uint64_t s1
    uint64_t s2
    uint64_t s3


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t rng_next(RNG* r) noexcept nogil:
    cdef uint64_t result = _rotl(r.s1 * 5, 7) * 9
    cdef uint64_t t = r.s1 << 17
    r.s2 ^= r.s0
    r.s3 ^= r.s1
    r.s1 ^= r.s2
    r.s0 ^= r.s3
    r.s2 ^= t
    r.s3 = _rotl(r.s3, 45)
    return result


cdef inline double rng_uniform(RNG* r) noexcept nogil:
    """Uniform double in [0, 1)."""
    return <double>(rng_next(r) >> 11) * (1.0 / 9007199254740992.0)


cdef inline Py_ssize_t rng_below(RNG* r, Py_ssize_t n) noexcept nogil:
    """Uniform integer in [0, n), unbiased (rejection of the short range)."""
    cdef uint64_t bound = <uint64_t>n
    cdef uint64_t threshold = (<uint64_t>0 - bound) % bound
    cdef uint64_t x = rng_next(r)
    while x < threshold:
        x = rng_next(r)
    return <Py_ssize_t>(x % bound)


cdef inline void rng_seed(RNG* r, uint64_t a, uint64_t b) noexcept nogil:
    """Seed the four words with splitmix64 from two 64-bit integers."""
    cdef uint64_t z
    cdef uint64_t st = a ^ (b * 0x9E3779B97F4A7C15ULL)
    cdef uint64_t* words[4]
    words[0] = &r.s0
    words[1] = &r.s1
    words[2] = &r.s2
    words[3] = &r.s3
    cdef int k
    for k in range(4):
        st += 0x9E3779B97F4A7C15ULL
        z = st
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
        words[k][0] = z ^ (z >> 31)
