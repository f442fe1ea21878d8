/* test_chaos.c: see test_chaos.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_chaos.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)


unsigned crnd(chaos *c, unsigned n) { return n ? (unsigned)(nrand48(c->rs) % n) : 0; }

void chaos_scan(chaos *c)
{
    int n = tn_nlines(), latest = tn_sessions() - 1;
    if (latest != c->sess && latest >= 0) c->sess = latest, c->nslots = 0; /* a new session: its slots */
    if (c->sess < 0) return;
    for (; c->scanned < n; c->scanned++) {
        tn_line l = tn_get(c->scanned);
        unsigned slot;
        if (l.sess != c->sess || sscanf(l.text, "STREAM %u", &slot) != 1 || slot >= 16) continue;
        int known = 0;
        for (int i = 0; i < c->nslots; i++) known |= c->slot[i] == (int)slot;
        if (!known && c->nslots < 16) c->closed_at[c->nslots] = 0, c->slot[c->nslots++] = (int)slot;
    }
}

void gate_line(int sess, int slot)
{
    char g[32];
    snprintf(g, sizeof g, "GATE %d", slot);
    tn_send(sess, g);
}

/* hold: a slot is held while one registered before it has work in flight or waiting, and let go
 * (GATE) when none has; to the end of the run, as a priority policy would. lv3: as a node that
 * interrupts processes (HIP), a SUSPEND line with each hold and a RESUME with each release. */
void chaos_hold(chaos *c)
{
    chaos_scan(c);
    int busy_above = 0;
    for (int k = 0; k < c->nslots; k++) {
        xq_slot *o = tn_slot(c->sess, (unsigned)c->slot[k]);
        if (!o) continue;
        unsigned want = busy_above ? 1u : 0u;
        if (LD(&o->gate) != want) {
            __atomic_store_n(&o->gate, want, __ATOMIC_SEQ_CST);
            if (c->lv3) {
                char l[32];
                snprintf(l, sizeof l, "%s %d", want ? "SUSPEND" : "RESUME", c->slot[k]);
                tn_send(c->sess, l);
            }
            if (!want) gate_line(c->sess, c->slot[k]);
        }
        busy_above |= LD(&o->in_flight) > 0 || LD(&o->pending) > 0;
    }
}


void chaos_clear(chaos *c)
{
    chaos_scan(c);
    for (int i = 0; i < c->nslots; i++) {
        xq_slot *s = tn_slot(c->sess, (unsigned)c->slot[i]);
        if (!s) continue;
        __atomic_store_n(&s->threshold, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->batch, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->window_us, 0, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&s->config_seq, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->horizon_ns, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->guard_until_ns, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->reserve_sms, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->part, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        c->closed_at[i] = 0;
        gate_line(c->sess, c->slot[i]);
    }
}

/* The slots' state, for a run that did not end: gate, in flight, pending, launched / completed. */
const char *slots_text(chaos *c)
{
    static char b[1024];
    size_t n = 0;
    b[0] = 0;
    for (int k = 0; k < c->nslots && n < sizeof b - 80; k++) {
        xq_slot *o = tn_slot(c->sess, (unsigned)c->slot[k]);
        if (o)
            n += (size_t)snprintf(b + n, sizeof b - n, "%s%d: gate %u, in flight %u, pending %u, %lu/%lu", k ? "; " : "", c->slot[k],
                                  LD(&o->gate), LD(&o->in_flight), LD(&o->pending), (unsigned long)LD(&o->launched),
                                  (unsigned long)LD(&o->completed));
    }
    return b;
}

/* One decision changed on one of the latest session's slots (see test_chaos.h). */
void chaos_step(chaos *c)
{
    chaos_scan(c);
    if (!c->nslots) return;
    int i = (int)crnd(c, (unsigned)c->nslots);
    xq_slot *s = tn_slot(c->sess, (unsigned)c->slot[i]);
    if (!s) return;
    double now = tn_now();
    for (int k = 0; k < c->nslots; k++) /* a gate closed for 20 ms is opened */
        if (c->closed_at[k] > 0 && now - c->closed_at[k] > 0.020) {
            xq_slot *o = tn_slot(c->sess, (unsigned)c->slot[k]);
            if (o) __atomic_store_n(&o->gate, 0, __ATOMIC_SEQ_CST), gate_line(c->sess, c->slot[k]);
            c->closed_at[k] = 0;
        }
    unsigned what = crnd(c, 100);
    int wake = 0;
    if (c->hold) { /* the gates follow the rule alone; the rest is drawn as in any run */
        chaos_hold(c);
        what = 30 + crnd(c, 70);
    }
    if (what < 30) {
        int close = c->closed_at[i] == 0;
        __atomic_store_n(&s->gate, close ? 1u : 0u, __ATOMIC_SEQ_CST);
        c->closed_at[i] = close ? now : 0;
        wake = !close;
    } else if (what < 50) {
        static const unsigned thr[] = {0, 1, 2, 3, 8};
        unsigned t = thr[crnd(c, 5)], old = LD(&s->threshold);
        __atomic_store_n(&s->threshold, t, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->batch, t > 1 ? crnd(c, 2) : 0, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&s->config_seq, 1, __ATOMIC_SEQ_CST);
        wake = t == 0 || (old && t > old);
    } else if (what < 60) {
        static const unsigned win[] = {0, 100, 500, 2000};
        unsigned w = win[crnd(c, 4)], old = LD(&s->window_us);
        __atomic_store_n(&s->window_us, w, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&s->config_seq, 1, __ATOMIC_SEQ_CST);
        wake = old && (w == 0 || w > old);
    } else if (what < 70) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec, hz = ns + crnd(c, 3000) * 1000ull;
        int clear = crnd(c, 3) == 0;
        __atomic_store_n(&s->horizon_ns, clear ? 0 : hz, __ATOMIC_SEQ_CST); /* the horizon first, as the node */
        __atomic_store_n(&s->guard_until_ns, clear ? 0 : hz + crnd(c, 3000) * 1000ull, __ATOMIC_SEQ_CST);
    } else if (what < 85) {
        static const unsigned res[] = {0, 36, 64, 124};
        __atomic_store_n(&s->reserve_sms, res[crnd(c, 4)], __ATOMIC_SEQ_CST);
    } else {
        unsigned k = crnd(c, 5), part = 0;
        if (k == 1) part = 0u << 16 | 2;
        else if (k == 2) part = 1u << 16 | 2;
        else if (k == 3) part = crnd(c, 3) << 16 | 3;
        else if (k == 4) {
            unsigned w = 1 + crnd(c, 8), o = crnd(c, 16 - w + 1);
            part = 1u << 31 | o << 16 | w;
        }
        __atomic_store_n(&s->part, part, __ATOMIC_SEQ_CST);
    }
    if (wake) gate_line(c->sess, c->slot[i]);
    c->changes++;
}
