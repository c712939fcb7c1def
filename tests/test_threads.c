/* Threads: two threads, each with its own context, solve different systems at the same time and
 * get bit-identical answers to the same solves done alone; the current context is thread-local;
 * three threads' cncSolveCSR calls share the host stages' thread pool. CI also runs this one
 * under ThreadSanitizer. */
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

typedef struct {
  const ts_csr* a;
  const double* b;
  double* x;
  int status;         /* first failing status, CNC_OK if none */
  int saw_foreign;    /* the other thread's context was visible here */
  CNCcontext foreign; /* a context made current by another thread */
  pthread_barrier_t* barrier;
} job;

/* A fresh context made current on the calling thread (*st: the first failing status). Fixed
 * backend and thread count, so that results are reproducible bit for bit. */
static CNCcontext new_cpu_context(int* st) {
  CNCcontext c = cncNewContext();
  *st = c ? cncMakeCurrent(c) : CNC_ERR_OUT_OF_MEMORY;
  if (*st == CNC_OK) *st = cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
  if (*st == CNC_OK) *st = cncSolverParameteri(CNC_NB_THREADS, 2);
  if (*st == CNC_OK) *st = cncSolverParameterd(CNC_THRESHOLD, 1e-10);
  return c;
}

/* One full solve in a fresh context on the calling thread. */
static int solve_in_new_context(const ts_csr* a, const double* b, double* x) {
  int st = CNC_OK;
  CNCcontext c = new_cpu_context(&st);
  if (!c) return st;
  if (st == CNC_OK) st = ts_assemble_solve(a, b, 1, x);
  CNCint reason = 0;
  if (st == CNC_OK) st = cncGetIntegerv(CNC_REASON, &reason);
  if (st == CNC_OK && reason != CNC_REASON_CONVERGED) st = CNC_ERR_INTERNAL;
  if (st == CNC_OK && cncGetCurrent() != c) st = CNC_ERR_NO_CONTEXT;
  cncDeleteContext(c);
  return st;
}

static void* run_job(void* arg) {
  job* j = (job*)arg;
  /* A new thread starts with no current context, whatever other threads made current. */
  if (cncGetCurrent() != NULL) j->saw_foreign = 1;
  pthread_barrier_wait(j->barrier);
  j->status = solve_in_new_context(j->a, j->b, j->x);
  if (cncGetCurrent() != NULL) j->saw_foreign = 1; /* deleted: none left */
  return NULL;
}

static void test_concurrent_solves_bit_identical(void** unused) {
  (void)unused;
  ts_csr a1 = ts_poisson_3d(14);
  ts_csr a2 = ts_random_spd(2500, 6, 5);
  double* b1 = random_vector((size_t)a1.n, 1);
  double* b2 = random_vector((size_t)a2.n, 2);
  double* alone1 = (double*)calloc((size_t)a1.n, sizeof(double));
  double* alone2 = (double*)calloc((size_t)a2.n, sizeof(double));
  double* x1 = (double*)calloc((size_t)a1.n, sizeof(double));
  double* x2 = (double*)calloc((size_t)a2.n, sizeof(double));
  assert_int_equal(solve_in_new_context(&a1, b1, alone1), CNC_OK);
  assert_int_equal(solve_in_new_context(&a2, b2, alone2), CNC_OK);
  assert_true(ts_rel_residual(&a1, alone1, b1) < 1e-9);
  assert_true(ts_rel_residual(&a2, alone2, b2) < 1e-9);
  /* The main thread keeps a context current the whole time: the workers must not see it. */
  CNCcontext mine = cncNewContext();
  assert_int_equal(cncMakeCurrent(mine), CNC_OK);
  for (int round = 0; round < 3; ++round) {
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    job j1 = {&a1, b1, x1, -1, 0, mine, &barrier};
    job j2 = {&a2, b2, x2, -1, 0, mine, &barrier};
    pthread_t t1, t2;
    assert_int_equal(pthread_create(&t1, NULL, run_job, &j1), 0);
    assert_int_equal(pthread_create(&t2, NULL, run_job, &j2), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_barrier_destroy(&barrier);
    assert_int_equal(j1.status, CNC_OK);
    assert_int_equal(j2.status, CNC_OK);
    assert_int_equal(j1.saw_foreign, 0);
    assert_int_equal(j2.saw_foreign, 0);
    if (memcmp(x1, alone1, sizeof(double) * (size_t)a1.n) != 0)
      fail_msg("round %d: system 1 differs from its solo solve", round);
    if (memcmp(x2, alone2, sizeof(double) * (size_t)a2.n) != 0)
      fail_msg("round %d: system 2 differs from its solo solve", round);
    /* The workers' MakeCurrent/Delete did not touch this thread's current context. */
    assert_ptr_equal(cncGetCurrent(), mine);
  }
  CNCint st = 0;
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_INITIAL);
  cncDeleteContext(mine);
  free(b1);
  free(b2);
  free(alone1);
  free(alone2);
  free(x1);
  free(x2);
  ts_csr_free(&a1);
  ts_csr_free(&a2);
}

/* Three threads, each with its own context, hand cncSolveCSR systems large enough for the
 * parallel host stages (CSR intake, fingerprints, the kept matrix reused for a second right-hand
 * side) at the same time: they share the process's host thread pool (or start their own threads
 * when it is busy) and must get the bits of the same solves done alone. */
typedef struct {
  int n;
  double shift;
  int64_t* rp;
  CNCuint* ci;
  double *v, *b1, *b2, *x1, *x2;
  int status;
  pthread_barrier_t* barrier;
} csr_job;

static void csr_job_make(csr_job* j, int n, double shift) {
  memset(j, 0, sizeof *j);
  j->n = n, j->shift = shift;
  j->rp = (int64_t*)malloc(sizeof(int64_t) * ((size_t)n + 1));
  j->ci = (CNCuint*)malloc(sizeof(CNCuint) * 3 * (size_t)n);
  j->v = (double*)malloc(sizeof(double) * 3 * (size_t)n);
  j->b1 = random_vector((size_t)n, 11 + (uint64_t)shift);
  j->b2 = random_vector((size_t)n, 12 + (uint64_t)shift);
  j->x1 = (double*)malloc(sizeof(double) * (size_t)n);
  j->x2 = (double*)malloc(sizeof(double) * (size_t)n);
  int64_t k = 0;
  for (int i = 0; i < n; ++i) { /* 1-D Laplacian plus a shift */
    j->rp[i] = k;
    if (i > 0) j->ci[k] = (CNCuint)(i - 1), j->v[k++] = -1;
    j->ci[k] = (CNCuint)i, j->v[k++] = 2 + shift;
    if (i + 1 < n) j->ci[k] = (CNCuint)(i + 1), j->v[k++] = -1;
  }
  j->rp[n] = k;
}

static void csr_job_free(csr_job* j) {
  free(j->rp), free(j->ci), free(j->v), free(j->b1), free(j->b2), free(j->x1), free(j->x2);
}

/* Two cncSolveCSR calls with the same arrays (the second reuses the kept matrix). */
static int csr_job_solve(csr_job* j) {
  int st = CNC_OK;
  CNCcontext c = new_cpu_context(&st);
  if (!c) return st;
  memset(j->x1, 0, sizeof(double) * (size_t)j->n);
  memset(j->x2, 0, sizeof(double) * (size_t)j->n);
  if (st == CNC_OK) st = cncSolveCSR((CNCuint)j->n, j->rp, j->ci, j->v, 0, 1, j->b1, j->x1);
  if (st == CNC_OK) st = cncSolveCSR((CNCuint)j->n, j->rp, j->ci, j->v, 0, 1, j->b2, j->x2);
  cncDeleteContext(c);
  return st;
}

static void* run_csr_job(void* arg) {
  csr_job* j = (csr_job*)arg;
  pthread_barrier_wait(j->barrier);
  j->status = csr_job_solve(j);
  return NULL;
}

static void test_concurrent_csr_solves_share_host_pool(void** unused) {
  (void)unused;
  enum { jobs = 3 };
  const int n = 1 << 19; /* 1.5 M entries: 12 MB of values, several fingerprint pieces */
  csr_job j[jobs];
  double* solo[jobs][2];
  for (int t = 0; t < jobs; ++t) {
    csr_job_make(&j[t], n, 0.25 * (t + 1));
    assert_int_equal(csr_job_solve(&j[t]), CNC_OK);
    solo[t][0] = j[t].x1, solo[t][1] = j[t].x2;
    j[t].x1 = (double*)malloc(sizeof(double) * (size_t)n);
    j[t].x2 = (double*)malloc(sizeof(double) * (size_t)n);
  }
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, jobs);
  pthread_t th[jobs];
  for (int t = 0; t < jobs; ++t) {
    j[t].barrier = &barrier;
    assert_int_equal(pthread_create(&th[t], NULL, run_csr_job, &j[t]), 0);
  }
  for (int t = 0; t < jobs; ++t) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&barrier);
  for (int t = 0; t < jobs; ++t) {
    assert_int_equal(j[t].status, CNC_OK);
    if (memcmp(j[t].x1, solo[t][0], sizeof(double) * (size_t)n) != 0 ||
        memcmp(j[t].x2, solo[t][1], sizeof(double) * (size_t)n) != 0)
      fail_msg("job %d differs from its solo solves", t);
    free(solo[t][0]), free(solo[t][1]);
    csr_job_free(&j[t]);
  }
}

/* Errors are per context: a failing thread does not set the other's sticky error, and
 * CNC_ERR_NO_CONTEXT messages are per thread. */
typedef struct {
  int make_error;
  int error_seen;
  pthread_barrier_t* barrier;
} err_job;

static void* run_err_job(void* arg) {
  err_job* j = (err_job*)arg;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  pthread_barrier_wait(j->barrier);
  if (j->make_error) cncBegin(CNC_ROW); /* CNC_ERR_STATE in this context only */
  pthread_barrier_wait(j->barrier);
  j->error_seen = cncGetError();
  cncDeleteContext(c);
  return NULL;
}

static void test_errors_are_per_context(void** unused) {
  (void)unused;
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  err_job e1 = {1, 99, &barrier}, e2 = {0, 99, &barrier};
  pthread_t t1, t2;
  assert_int_equal(pthread_create(&t1, NULL, run_err_job, &e1), 0);
  assert_int_equal(pthread_create(&t2, NULL, run_err_job, &e2), 0);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  pthread_barrier_destroy(&barrier);
  assert_int_equal(e1.error_seen, CNC_ERR_STATE);
  assert_int_equal(e2.error_seen, CNC_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_solves_bit_identical),
      cmocka_unit_test(test_errors_are_per_context),
      cmocka_unit_test(test_concurrent_csr_solves_share_host_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
