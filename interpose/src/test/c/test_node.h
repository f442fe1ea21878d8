/*
 * A minimal XQ node for the interposer's tests: the Unix socket server and the shared memory of
 * docs/processes.md, run on a thread of the test process and scripted by the test. It records
 * every line it receives (and "+EOF" when a session ends), answers HELLO/STREAM like the real
 * node, keeps the device lag WAKE lines tell (WAKE <slot> [<lag us>]), and lets the test set a slot's gate and limits and send lines.
 */
#ifndef XQ_TEST_NODE_H
#define XQ_TEST_NODE_H

#include "xq_shm.h"

typedef struct tn_line {
    double t;  /* seconds, CLOCK_MONOTONIC */
    int sess;  /* session index, in the order of connection */
    char text[XQ_MAX_LINE + 8];
} tn_line;

int tn_start(const char *sock_path, unsigned slots); /* 0 on success */
void tn_kill(void);                                  /* as if the node died: every session ends */
/* The node writes CLOCK_MONOTONIC ns into each live session's header every 100 ms (on at
 * tn_start); 0: it writes none, as an older node. */
void tn_heartbeat(int on);
/* 1: as if the node were stopped (SIGSTOP): no heartbeat, nothing read, accepted or answered, every
 * socket left open; 0: it runs on (what came meanwhile is read then). */
void tn_freeze(int on);
/* the queue configuration the node writes into every slot (at HELLO and at STREAM) */
void tn_defaults(unsigned gate, unsigned threshold, unsigned batch, unsigned window_us);
/* words the node's OK line carries after the slot size ("lv3": it will ask for interrupts); "" none */
/* the answer to SPACE questions (default "SPACE none off"); how many were asked, and the last one */
void tn_space(const char *answer);
int tn_space_asks(char *last, size_t cap);
void tn_ok_options(const char *options);
/* a HELLO naming this capability is refused (ERR ... is not known), as by an older node; "" none */
void tn_refuse_capability(const char *cap);
int tn_nlines(void);
tn_line tn_get(int i);
/* first line index >= from whose text starts with prefix (session sess, or any if < 0),
 * waiting up to timeout_s; -1 if none */
int tn_find(int from, int sess, const char *prefix, double timeout_s);
int tn_count(int sess, const char *prefix);
/* The device lag (us) the last WAKE line of a slot told (WAKE <slot> <lag>), -1 if none did; *max
 * (if given): the largest told, -1 if none */
long long tn_wake_lag(int sess, unsigned slot, long long *max);
int tn_sessions(void);
int tn_peer_pid(int sess);
xq_slot *tn_slot(int sess, unsigned slot);
void tn_send(int sess, const char *line); /* '\n' is added */
double tn_now(void);
/* Another user's listener on path (root only): the socket is bound here and listened on by a
 * child that became uid first, so the kernel names uid as the peer of whoever connects. It
 * answers nothing and copies what it is told into the file log. The child's pid (kill it), or -1. */
int tn_foreign_listener(const char *path, unsigned uid, const char *log);

#endif
