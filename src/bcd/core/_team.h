/* A team of threads that stays together for many short parallel steps.
 *
 * An OpenMP parallel region costs a wake-up of its threads, which sleep in
 * the kernel between regions unless told to spin (OMP_WAIT_POLICY).  The
 * greedy block rule makes hundreds of steps of a few microseconds per
 * block, each a small parallel evaluation; with one region per step, the
 * wake-ups would take as long as the work.  Here one parallel region
 * encloses all the steps of a block: thread 0 (the leader) posts each step
 * and the other threads (the workers) wait for it; within a step, all the
 * threads take their share of each phase and meet at barriers.
 *
 * Nothing is shared that every thread writes: each thread knows its
 * share of a phase's items from its number.  The post is one word that
 * only the leader writes.  The barrier is a dissemination barrier: in
 * round r, thread t announces its arrival in a flag of its own and waits
 * for that of thread t - 2^r, so ceil(log2 n) rounds see every arrival,
 * and each flag lives on a cache line of its own thread.  The flags hold
 * the number of the barrier episode (they only grow), so they are never
 * reset.  Waiting threads spin briefly, then yield the processor, so an
 * oversubscribed machine still makes progress; the leader counts the
 * barriers at which it waited more than BCD_TEAM_STALL_US microseconds
 * (``stalls``: a thread that had lost its core, not an uneven share of a
 * step, which costs tens of microseconds), so that its caller can tell
 * that the team does not run at once (more threads than free cores) and
 * work alone instead.
 *
 * Protocol, for every thread t of n (t = 0 is the leader):
 *     bcd_team_init(team, n, flags) once, before the region (flags: room
 *     for bcd_team_flag_words(n) longs, zeroed);
 *     leader: set up a step, bcd_team_post(team, step), do the step;
 *     worker: while ((step = bcd_team_wait(team, step)) >= 0) do the step;
 *     a step's phases are separated by bcd_team_barrier(team, t, &epoch);
 *     the leader can also publish a value within a step for the others to
 *     await (bcd_team_publish, bcd_team_await);
 *     leader, once all steps are done: bcd_team_stop(team).
 */
#ifndef BCD_TEAM_H
#define BCD_TEAM_H

#include <stddef.h>
#if defined(_WIN32)
#include <windows.h>
#define BCD_YIELD() SwitchToThread()
static inline double bcd_team_now_us(void) { return 1e3 * (double)GetTickCount64(); }
#else
#include <sched.h>
#include <time.h>
#define BCD_YIELD() sched_yield()
static inline double bcd_team_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}
#endif

#if !defined(__GNUC__) && !defined(__clang__)
#error "bcd's thread team needs the __atomic builtins of GCC or Clang"
#endif

#if defined(__x86_64__) || defined(__i386__)
#define BCD_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define BCD_PAUSE() __asm__ __volatile__("yield")
#else
#define BCD_PAUSE() ((void)0)
#endif

/* spins before a waiting thread starts yielding the processor */
#define BCD_TEAM_SPINS 4096
/* a wait at a barrier longer than this (microseconds) is a stall */
#define BCD_TEAM_STALL_US 1000.0
/* longs per thread in the flags: a 128-byte line (two 64-byte lines, as
   adjacent-line prefetchers pair them), one word per barrier round */
#define BCD_TEAM_LINE 16

typedef struct {
    long post;          /* the open step (1, 2, ...), -1 once the team stops */
    char pad[128 - sizeof(long)];
    long ready;         /* a value the leader publishes within a step */
    char pad2[128 - sizeof(long)];
    long stalls;        /* barriers at which the leader waited over BCD_TEAM_STALL_US */
    long n;             /* threads */
    long rounds;        /* ceil(log2 n) */
    long *flags;        /* thread t's flag of round r: flags[t * BCD_TEAM_LINE + r] */
} bcd_team;

static inline long bcd_team_flag_words(long n) {
    return (n + 1) * BCD_TEAM_LINE;     /* + 1: room to align to a line */
}

static inline void bcd_team_relax(unsigned *spins) {
    if (*spins < BCD_TEAM_SPINS) {
        ++*spins;
        BCD_PAUSE();
    } else {
        BCD_YIELD();
    }
}

/* Before the region: ``flags`` as bcd_team_flag_words(n) zeroed longs. */
static inline void bcd_team_init(bcd_team *t, long n, long *flags) {
    long r = 0;
    while ((1L << r) < n)
        r++;
    t->post = 0;
    t->ready = 0;
    t->stalls = 0;
    t->n = n;
    t->rounds = r;
    /* the flags of thread 0 start on a 128-byte boundary */
    t->flags = (long *)(((size_t)flags + 127) & ~(size_t)127);
}

/* Leader: open step ``step`` (greater than any before); its inputs must be
   in place before. */
static inline void bcd_team_post(bcd_team *t, long step) {
    __atomic_store_n(&t->post, step, __ATOMIC_RELEASE);
}

/* Leader: publish ``value`` (e.g. the step's number once an input that
   the others need late in the step is ready). */
static inline void bcd_team_publish(bcd_team *t, long value) {
    __atomic_store_n(&t->ready, value, __ATOMIC_RELEASE);
}

/* Wait until the leader has published at least ``value``. */
static inline void bcd_team_await(bcd_team *t, long value) {
    unsigned spins = 0;
    while (__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE) < value)
        bcd_team_relax(&spins);
}

/* Leader, with no step open: release the workers for good. */
static inline void bcd_team_stop(bcd_team *t) {
    __atomic_store_n(&t->post, -1, __ATOMIC_RELEASE);
}

/* Worker: wait for a step other than ``seen``; returns it, or -1 when the
   team stops. */
static inline long bcd_team_wait(bcd_team *t, long seen) {
    unsigned spins = 0;
    long s;
    for (;;) {
        s = __atomic_load_n(&t->post, __ATOMIC_ACQUIRE);
        if (s != seen)
            return s;
        bcd_team_relax(&spins);
    }
}

/* Every thread: return once all ``n`` threads have called it for the same
   episode; what each wrote before is then visible to all.  ``epoch``: the
   thread's own count of its barriers, starting at 0. */
static inline void bcd_team_barrier(bcd_team *t, long me, long *epoch) {
    long r, from, e = ++*epoch;
    unsigned spins;
    double since = 0.0;
    for (r = 0; r < t->rounds; r++) {
        __atomic_store_n(&t->flags[me * BCD_TEAM_LINE + r], e, __ATOMIC_RELEASE);
        from = me - (1L << r);
        if (from < 0)
            from += t->n;
        spins = 0;
        while (__atomic_load_n(&t->flags[from * BCD_TEAM_LINE + r], __ATOMIC_ACQUIRE) < e) {
            bcd_team_relax(&spins);
            /* the leader times its long waits (the clock is read only once
               spinning gave up) */
            if (me == 0 && spins == BCD_TEAM_SPINS && since == 0.0)
                since = bcd_team_now_us();
        }
    }
    if (since != 0.0 && bcd_team_now_us() - since > BCD_TEAM_STALL_US)
        t->stalls++;            /* only the leader writes it */
}

#endif
