/* test_chaos.h: a test node's decisions made at random or as a priority policy holds, on a program's
 * slots (the random programs of test_cuda_fuzz.c and test_hip_fuzz.c). */
#ifndef XQ_TEST_CHAOS_H
#define XQ_TEST_CHAOS_H

#include "test_node.h"

/* A node that changes its mind all the time. Every 0.2-2 ms it writes one decision into one of the
 * latest session's slots, the way the node writes them (limits, then config_seq, then the gate; a
 * GATE line when the gate opened or a limit grew): the gate closed or opened (never closed for
 * more than 20 ms), a threshold and batch, a window, an arrival guard, a narrowing reserve, a part
 * among best-effort processes. In a third of the runs (hold) the gates follow a priority policy's
 * rule instead: a stream is held, as long as it takes, while one registered before it has work in
 * flight or waiting (the node only sees what the interposer tells it: a completion it is never
 * told of holds the streams below for good). Until `until` (tn_now()); then every slot is opened
 * and cleared, and in a hold run the rule alone goes on to the end. */
typedef struct chaos {
    unsigned short rs[3];
    int scanned;          /* tn lines read so far */
    int sess;             /* the session whose slots are changed (the latest) */
    int slot[16], nslots; /* its registered slots */
    double closed_at[16];
    unsigned changes;
    int hold; /* as a priority policy: a slot is held while one registered before it has work in flight or waiting */
    int lv3;  /* holds and releases told by SUSPEND and RESUME lines too (a HIP process's Lv3) */
} chaos;

unsigned crnd(chaos *c, unsigned n);
void chaos_scan(chaos *c);                  /* the latest session's slots, as they register */
void gate_line(int sess, int slot);
void chaos_hold(chaos *c);
void chaos_step(chaos *c);                  /* one decision changed at random (or, hold, the rule) */
void chaos_clear(chaos *c);                 /* every limit cleared, every gate opened */
const char *slots_text(chaos *c);

#endif
