/* One context used from several threads at once: each call runs alone or, meeting another
 * thread's call, is refused with CNC_ERR_STATE (its message on that thread); nothing is corrupted,
 * threads may take turns, and concurrent getters all succeed. CI runs this one under
 * ThreadSanitizer, which also proves that the calls that ran never overlapped. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h> /* after the headers it needs */

#include "cnc.h"
#include "test_support.h"

enum { intruders = 3 };

typedef struct {
  CNCcontext ctx;
  pthread_barrier_t* start;  /* all threads ready; the owner is assembling */
  pthread_barrier_t* done;   /* the intruders finished; the owner may end the system */
  int calls, refused, other; /* other: statuses neither CNC_OK nor CNC_ERR_STATE */
  int message_ok;            /* a refusal's message says why */
} intruder;

/* Tries, while another thread assembles the context, every kind of call that leaves the
 * assembled system as it is when it runs (zeros added to present entries, getters, calls the
 * state refuses): the owner's solve must come out as alone. */
static void* intrude(void* arg) {
  intruder* t = (intruder*)arg;
  cncMakeCurrent(t->ctx);
  pthread_barrier_wait(t->start);
  for (int round = 0; round < 2000; ++round) {
    CNCint v = 0;
    double d = 0;
    const CNCuint i = (CNCuint)(round % 500);
    const CNCstatus s[] = {cncAddIJCoefficient(i, i, 0.0),
                           cncAddIRightHandSide(i, 0.0),
                           cncCoefficient(0, 1.0),
                           cncGetVariable(i, &d),
                           cncGetIntegerv(CNC_STATE, &v),
                           cncSolverParameterd(CNC_THRESHOLD, 1e-10),
                           cncLockVariable(2),
                           cncEnd(CNC_ROW),
                           cncSolve()};
    for (size_t k = 0; k < sizeof s / sizeof s[0]; ++k) {
      ++t->calls;
      if (s[k] == CNC_ERR_STATE) {
        ++t->refused;
        const char* m = cncGetLastErrorMessage();
        if (strstr(m, "another thread") != NULL || strstr(m, "not allowed in state") != NULL)
          ++t->message_ok;
      } else if (s[k] != CNC_OK) {
        ++t->other;
      }
    }
  }
  pthread_barrier_wait(t->done);
  return NULL;
}

/* Retries a call refused because another thread's call was running. */
#define OWNER(call)                           \
  do {                                        \
    CNCstatus st_;                            \
    while ((st_ = (call)) == CNC_ERR_STATE) { \
    }                                         \
    assert_int_equal(st_, CNC_OK);            \
  } while (0)

/* The main thread assembles a Laplacian while three threads call into its context: no call
 * fails but for a clash (or the state), and the solve is the one done alone, to the bit. */
static void test_intruders_refused_while_assembling(void** state) {
  (void)state;
  const int32_t m = 24;
  ts_csr a = ts_laplacian_2d(m, m);
  double* b = malloc(sizeof(double) * (size_t)a.n);
  double* x_alone = calloc((size_t)a.n, sizeof(double));
  double* x = calloc((size_t)a.n, sizeof(double));
  assert_non_null(b);
  assert_non_null(x_alone);
  assert_non_null(x);
  for (int32_t i = 0; i < a.n; ++i) b[i] = 1.0 + (double)(i % 7);

  CNCcontext alone = cncNewContext();
  assert_int_equal(cncMakeCurrent(alone), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(ts_assemble_solve(&a, b, 1, x_alone), CNC_OK);
  cncDeleteContext(alone);

  CNCcontext ctx = cncNewContext();
  assert_int_equal(cncMakeCurrent(ctx), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, a.n), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);

  pthread_barrier_t start, done;
  pthread_barrier_init(&start, NULL, intruders + 1);
  pthread_barrier_init(&done, NULL, intruders + 1);
  intruder t[intruders];
  pthread_t th[intruders];
  for (int k = 0; k < intruders; ++k) {
    memset(&t[k], 0, sizeof t[k]);
    t[k].ctx = ctx, t[k].start = &start, t[k].done = &done;
    assert_int_equal(pthread_create(&th[k], NULL, intrude, &t[k]), 0);
  }
  pthread_barrier_wait(&start);
  /* The owner's entries go in while the intruders try theirs. */
  for (int32_t i = 0; i < a.n; ++i) {
    for (int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
      OWNER(cncAddIJCoefficient((CNCuint)i, (CNCuint)a.col[e], a.val[e]));
    OWNER(cncAddIRightHandSide((CNCuint)i, b[i]));
  }
  pthread_barrier_wait(&done);
  for (int k = 0; k < intruders; ++k) {
    pthread_join(th[k], NULL);
    assert_int_equal(t[k].other, 0);
    assert_int_equal(t[k].message_ok, t[k].refused);
  }
  pthread_barrier_destroy(&start);
  pthread_barrier_destroy(&done);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(ts_read_x(a.n, 1, x), CNC_OK);
  assert_memory_equal(x, x_alone, sizeof(double) * (size_t)a.n);
  cncDeleteContext(ctx);
  free(b);
  free(x);
  free(x_alone);
  ts_csr_free(&a);
}

typedef struct {
  CNCcontext ctx;
  pthread_barrier_t* start;
  int ok, refused, other;
  int solves;
} racer;

/* Solves and parameter changes from several threads at once on one solved context: each call
 * either runs alone (CNC_OK) or is refused (CNC_ERR_STATE); nothing else. */
static void* race(void* arg) {
  racer* r = (racer*)arg;
  cncMakeCurrent(r->ctx);
  pthread_barrier_wait(r->start);
  for (int round = 0; round < 200; ++round) {
    const CNCstatus s[] = {cncSolve(), cncSolverParameterd(CNC_THRESHOLD, 1e-8),
                           cncSetVariable(0, 0.0)};
    for (size_t k = 0; k < sizeof s / sizeof s[0]; ++k) {
      if (s[k] == CNC_OK)
        ++r->ok;
      else if (s[k] == CNC_ERR_STATE)
        ++r->refused;
      else
        ++r->other;
    }
    if (s[0] == CNC_OK) ++r->solves;
  }
  return NULL;
}

static void test_concurrent_writers_serialised(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(12, 12);
  double* b = malloc(sizeof(double) * (size_t)a.n);
  double* x = calloc((size_t)a.n, sizeof(double));
  assert_non_null(b);
  assert_non_null(x);
  for (int32_t i = 0; i < a.n; ++i) b[i] = 1.0;
  CNCcontext ctx = cncNewContext();
  assert_int_equal(cncMakeCurrent(ctx), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_THREADS, 1), CNC_OK);
  assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);

  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, intruders);
  racer r[intruders];
  pthread_t th[intruders];
  for (int k = 0; k < intruders; ++k) {
    memset(&r[k], 0, sizeof r[k]);
    r[k].ctx = ctx, r[k].start = &start;
    assert_int_equal(pthread_create(&th[k], NULL, race, &r[k]), 0);
  }
  int solves = 0;
  for (int k = 0; k < intruders; ++k) {
    pthread_join(th[k], NULL);
    assert_int_equal(r[k].other, 0);
    solves += r[k].solves;
  }
  pthread_barrier_destroy(&start);
  assert_true(solves > 0);
  /* Still usable and right: a last solve from this thread. */
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(ts_read_x(a.n, 1, x), CNC_OK);
  assert_true(ts_rel_residual(&a, x, b) < 1e-9);
  cncDeleteContext(ctx);
  free(b);
  free(x);
  ts_csr_free(&a);
}

typedef struct {
  CNCcontext ctx;
  pthread_barrier_t* start;
  int failures;
  double sum;
} reader;

static void* read_all(void* arg) {
  reader* r = (reader*)arg;
  cncMakeCurrent(r->ctx);
  pthread_barrier_wait(r->start);
  CNCint n = 0;
  for (int round = 0; round < 20; ++round) {
    if (cncGetIntegerv(CNC_NB_VARIABLES, &n) != CNC_OK) ++r->failures;
    for (CNCint i = 0; i < n; ++i) {
      double v = 0;
      if (cncGetVariable((CNCuint)i, &v) != CNC_OK) ++r->failures;
      r->sum += v;
    }
  }
  return NULL;
}

/* Getters from several threads at once, with no writer: none is refused. */
static void test_concurrent_readers_all_succeed(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(16, 16);
  double* b = malloc(sizeof(double) * (size_t)a.n);
  double* x = calloc((size_t)a.n, sizeof(double));
  assert_non_null(b);
  assert_non_null(x);
  for (int32_t i = 0; i < a.n; ++i) b[i] = 1.0;
  CNCcontext ctx = cncNewContext();
  assert_int_equal(cncMakeCurrent(ctx), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
  double expected = 0;
  for (int32_t i = 0; i < a.n; ++i) expected += x[i];

  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, intruders);
  reader r[intruders];
  pthread_t th[intruders];
  for (int k = 0; k < intruders; ++k) {
    memset(&r[k], 0, sizeof r[k]);
    r[k].ctx = ctx, r[k].start = &start;
    assert_int_equal(pthread_create(&th[k], NULL, read_all, &r[k]), 0);
  }
  for (int k = 0; k < intruders; ++k) {
    pthread_join(th[k], NULL);
    assert_int_equal(r[k].failures, 0);
    assert_true(fabs(r[k].sum - 20 * expected) <= 1e-9 * fabs(20 * expected));
  }
  pthread_barrier_destroy(&start);
  cncDeleteContext(ctx);
  free(b);
  free(x);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_intruders_refused_while_assembling),
      cmocka_unit_test(test_concurrent_writers_serialised),
      cmocka_unit_test(test_concurrent_readers_all_succeed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
