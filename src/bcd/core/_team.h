/* A team of threads that stays together for many short parallel steps.
 *
 * An OpenMP parallel region costs a wake-up of its threads, which sleep in
 * the kernel between regions unless told to spin (OMP_WAIT_POLICY).  The
 * greedy block rule makes hundreds of steps of a few tens of microseconds
 * per block, each a small parallel evaluation between serial solves; with
 * one region per step, the wake-ups take as long as the work.  Here one
 * parallel region encloses all the steps: thread 0 (the leader) posts each
 * step, the other threads (the workers) wait for it by spinning, and all
 * of them take the step's items from a shared counter.  Waiting threads
 * spin briefly, then yield the processor, so an oversubscribed machine
 * still makes progress.
 *
 * Protocol, for the leader:
 *     s = bcd_team_post(t, n_items);
 *     ... take items with bcd_team_take, mark them with bcd_team_done ...
 *     bcd_team_finish(t);         (all items done, no worker inside)
 *     ... and bcd_team_stop(t) once, at the end ...
 * and for a worker:
 *     while ((step = bcd_team_join(t, step)) >= 0) {
 *         ... take items with bcd_team_take, mark them with bcd_team_done ...
 *         bcd_team_leave(t);
 *     }
 */
#ifndef BCD_TEAM_H
#define BCD_TEAM_H

#include <stddef.h>
#if defined(_WIN32)
#include <windows.h>
#define BCD_YIELD() SwitchToThread()
#else
#include <sched.h>
#define BCD_YIELD() sched_yield()
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

typedef struct {
    long state;         /* 2s - 1 while step s is open, 2s once it is closed,
                           -1 when the team stops */
    long n_items;       /* items of the open step */
    long next;          /* items handed out */
    long done;          /* items finished */
    long active;        /* workers inside a step */
    long flag;          /* a value the leader publishes within a step */
} bcd_team;

#define BCD_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define BCD_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define BCD_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)

static inline void bcd_team_init(bcd_team *t) {
    t->state = 0;
    t->n_items = 0;
    t->next = 0;
    t->done = 0;
    t->active = 0;
    t->flag = 0;
}

static inline void bcd_team_relax(unsigned *spins) {
    if (*spins < BCD_TEAM_SPINS) {
        ++*spins;
        BCD_PAUSE();
    } else {
        BCD_YIELD();
    }
}

/* Leader: open a new step with items 0 .. n_items - 1; returns its number
 * (1, 2, ...).  The step's inputs must be in place before. */
static inline long bcd_team_post(bcd_team *t, long n_items) {
    long s = BCD_LOAD(&t->state) / 2 + 1;
    BCD_STORE(&t->n_items, n_items);
    BCD_STORE(&t->next, 0);
    BCD_STORE(&t->done, 0);
    BCD_STORE(&t->state, 2 * s - 1);
    return s;
}

/* Leader: publish a value within the step (e.g. the step's number once an
 * input the items need at their end is ready). */
static inline void bcd_team_publish(bcd_team *t, long value) {
    BCD_STORE(&t->flag, value);
}

/* Wait until the leader has published at least ``value``. */
static inline void bcd_team_await(bcd_team *t, long value) {
    unsigned spins = 0;
    while (BCD_LOAD(&t->flag) < value)
        bcd_team_relax(&spins);
}

/* The next item of the open step, or -1 when none is left. */
static inline long bcd_team_take(bcd_team *t) {
    long i, n = BCD_LOAD(&t->n_items);
    if (BCD_LOAD(&t->next) >= n)
        return -1;
    i = BCD_ADD(&t->next, 1);
    return i < n ? i : -1;
}

/* ``n`` items taken by this thread are finished. */
static inline void bcd_team_done(bcd_team *t, long n) {
    BCD_ADD(&t->done, n);
}

/* Leader: wait until every item of the step is done, close the step and
 * wait until no worker is inside it; the step's outputs are then complete
 * and its inputs free to change. */
static inline void bcd_team_finish(bcd_team *t) {
    unsigned spins = 0;
    long n = BCD_LOAD(&t->n_items);
    while (BCD_LOAD(&t->done) < n)
        bcd_team_relax(&spins);
    BCD_STORE(&t->state, BCD_LOAD(&t->state) + 1);
    while (BCD_LOAD(&t->active) > 0)
        bcd_team_relax(&spins);
}

/* Leader, with no step open: release the workers for good. */
static inline void bcd_team_stop(bcd_team *t) {
    BCD_STORE(&t->state, -1);
}

/* Worker: wait for a step other than ``seen`` to open and enter it; returns
 * the step, or -1 when the team stops. */
static inline long bcd_team_join(bcd_team *t, long seen) {
    unsigned spins = 0;
    long st;
    for (;;) {
        st = BCD_LOAD(&t->state);
        if (st < 0)
            return -1;
        if (st % 2 == 1 && (st + 1) / 2 != seen) {
            BCD_ADD(&t->active, 1);
            /* announced, then checked: a step the leader closed meanwhile
             * is not entered (the leader waits for announced workers) */
            if (BCD_LOAD(&t->state) == st)
                return (st + 1) / 2;
            BCD_ADD(&t->active, -1);
            continue;
        }
        bcd_team_relax(&spins);
    }
}

static inline void bcd_team_leave(bcd_team *t) {
    BCD_ADD(&t->active, -1);
}

#endif
