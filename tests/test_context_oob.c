/* dist_context_create_oob: contexts built through an all-gather the caller
 * provides. Two ranks on two threads of this process (an exchange in shared
 * memory), three processes (an exchange through files), exchanges that fail,
 * misplace parts or never complete, ranks that disagree (size, token), bad
 * arguments, and after each bootstrap a real all-reduce checked against values
 * computed here. Ranks advertise 127.0.0.1 (DIST_ADDRESS). */
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "multiprocess/launch.h"
#include "test_support.h"

static const char* kToken = "oob-test-token-0123456789";
enum { kElements = 1000, kMaxParts = 4, kMaxRecord = 4096 };

/* ---- An all-gather in shared memory, for ranks on threads of this process ---- */

struct shared_exchange {
  pthread_mutex_t lock;
  int participants;        /* parts that complete an all-gather */
  int rounds_started[kMaxParts];
  unsigned char parts[kMaxParts][kMaxParts * kMaxRecord]; /* by round */
  int32_t start_result;    /* nonzero: allgather fails with it */
  int32_t test_result;     /* negative: test fails with it */
  int never_complete;
  int requests;            /* started with a request */
  int frees;
};

struct thread_rank {
  struct shared_exchange* shared;
  int rank;
  int round; /* this rank's next all-gather */
};

struct pending {
  struct thread_rank* owner;
  int round;
  void* recv;
  size_t bytes;
};

static int32_t shared_allgather(void* user_data, const void* send, void* recv, size_t bytes, void** request) {
  struct thread_rank* me = user_data;
  struct shared_exchange* shared = me->shared;
  if (shared->start_result != 0) return shared->start_result;
  assert_true(bytes <= kMaxRecord);
  assert_true(me->round < kMaxParts);
  pthread_mutex_lock(&shared->lock);
  memcpy(shared->parts[me->round] + (size_t)me->rank * bytes, send, bytes);
  shared->rounds_started[me->round]++;
  shared->requests++;
  pthread_mutex_unlock(&shared->lock);
  struct pending* p = malloc(sizeof *p);
  *p = (struct pending){me, me->round++, recv, bytes};
  *request = p;
  return 0;
}

static int32_t shared_test(void* user_data, void* request) {
  struct thread_rank* me = user_data;
  struct shared_exchange* shared = me->shared;
  struct pending* p = request;
  if (shared->test_result < 0) return shared->test_result;
  pthread_mutex_lock(&shared->lock);
  int done = !shared->never_complete && shared->rounds_started[p->round] == shared->participants;
  if (done) memcpy(p->recv, shared->parts[p->round], (size_t)shared->participants * p->bytes);
  pthread_mutex_unlock(&shared->lock);
  return done ? 0 : 1;
}

static void shared_free(void* user_data, void* request) {
  struct thread_rank* me = user_data;
  pthread_mutex_lock(&me->shared->lock);
  me->shared->frees++;
  pthread_mutex_unlock(&me->shared->lock);
  free(request);
}

static struct shared_exchange* new_exchange(int participants) {
  struct shared_exchange* shared = calloc(1, sizeof *shared);
  pthread_mutex_init(&shared->lock, NULL);
  shared->participants = participants;
  return shared;
}

static void delete_exchange(struct shared_exchange* shared) {
  pthread_mutex_destroy(&shared->lock);
  free(shared);
}

static dist_oob_t oob_for(struct thread_rank* me, int32_t size) {
  dist_oob_t oob = {0, me->rank, size, shared_allgather, shared_test, shared_free, me};
  return oob;
}

static dist_context_options_t options_with(const char* token, int64_t connect_timeout_ms) {
  dist_context_options_t options = DIST_CONTEXT_OPTIONS_INIT;
  options.field_mask = DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS | (token ? DIST_CONTEXT_OPT_TOKEN : 0);
  options.token = token;
  options.connect_timeout_ms = connect_timeout_ms;
  return options;
}

/* Every rank gives rank * 1000 + i (i64); the sum over ranks is checked here. */
static int all_reduce_checks(dist_context_t* context, int rank, int size, char* why, size_t why_bytes) {
  dist_comm_t* world = NULL;
  if (dist_comm_world(context, &world) != DIST_OK) {
    snprintf(why, why_bytes, "dist_comm_world: %s", dist_last_error());
    return 0;
  }
  int64_t values[kElements];
  for (int i = 0; i < kElements; ++i) values[i] = (int64_t)rank * 1000 + i;
  dist_buffer_t buffer = {values, kElements, DIST_DTYPE_I64, DIST_MEMORY_HOST, NULL};
  if (dist_all_reduce(world, &buffer, &buffer, DIST_OP_SUM, NULL) != DIST_OK) {
    snprintf(why, why_bytes, "dist_all_reduce: %s", dist_last_error());
    return 0;
  }
  for (int i = 0; i < kElements; ++i) {
    int64_t expected = 0;
    for (int r = 0; r < size; ++r) expected += (int64_t)r * 1000 + i;
    if (values[i] != expected) {
      snprintf(why, why_bytes, "element %d is %lld, expected %lld", i, (long long)values[i], (long long)expected);
      return 0;
    }
  }
  return 1;
}

/* ---- Ranks on threads ---- */

struct thread_run {
  struct thread_rank rank;
  int32_t size;              /* what this rank says */
  const char* token;
  int64_t connect_timeout_ms;
  dist_status_t status;
  char error[1024];
  int reduced;               /* the all-reduce matched the reference */
  char why[256];
};

static void* run_thread_rank(void* argument) {
  struct thread_run* run = argument;
  dist_oob_t oob = oob_for(&run->rank, run->size);
  dist_context_options_t options = options_with(run->token, run->connect_timeout_ms);
  dist_context_t* context = NULL;
  run->status = dist_context_create_oob(&oob, &options, &context);
  if (run->status != DIST_OK) {
    snprintf(run->error, sizeof run->error, "%s", dist_last_error());
    return NULL;
  }
  int32_t rank = -1, size = -1;
  dist_context_rank(context, &rank);
  dist_context_size(context, &size);
  if (rank != run->rank.rank || size != run->size) {
    snprintf(run->why, sizeof run->why, "context says rank %d of %d", rank, size);
  } else {
    run->reduced = all_reduce_checks(context, rank, size, run->why, sizeof run->why);
  }
  dist_context_destroy(context);
  return NULL;
}

/* Runs ranks 0..n-1 on threads; sizes[r] and tokens[r] are what rank r says. */
static void run_threads(struct shared_exchange* shared, struct thread_run* runs, int n, const int32_t* sizes,
                        const char* const* tokens) {
  pthread_t threads[kMaxParts];
  for (int r = 0; r < n; ++r) {
    runs[r] = (struct thread_run){.rank = {shared, r, 0}, .size = sizes[r], .token = tokens[r],
                                  .connect_timeout_ms = 30000};
    assert_int_equal(pthread_create(&threads[r], NULL, run_thread_rank, &runs[r]), 0);
  }
  for (int r = 0; r < n; ++r) pthread_join(threads[r], NULL);
}

static void test_two_threads_of_one_process(void** state) {
  (void)state;
  struct shared_exchange* shared = new_exchange(2);
  struct thread_run runs[2];
  const int32_t sizes[] = {2, 2};
  const char* tokens[] = {kToken, kToken};
  run_threads(shared, runs, 2, sizes, tokens);
  for (int r = 0; r < 2; ++r) {
    if (runs[r].status != DIST_OK) fail_msg("rank %d: %s", r, runs[r].error);
    if (!runs[r].reduced) fail_msg("rank %d: all-reduce: %s", r, runs[r].why);
  }
  /* Every request the library started was freed. */
  assert_true(shared->requests >= 2);
  assert_int_equal(shared->frees, shared->requests);
  delete_exchange(shared);
}

static void expect_both(const struct thread_run* runs, dist_status_t status, const char* needle) {
  for (int r = 0; r < 2; ++r) {
    if (runs[r].status != status || strstr(runs[r].error, needle) == NULL) {
      fail_msg("rank %d returned %s (%s), expected %s naming \"%s\"", r, dist_status_string(runs[r].status),
               runs[r].error, dist_status_string(status), needle);
    }
  }
}

static void test_ranks_that_disagree(void** state) {
  (void)state;
  struct thread_run runs[2];
  { /* on the size: rank 1 thinks there are three tasks */
    struct shared_exchange* shared = new_exchange(2);
    const int32_t sizes[] = {2, 3};
    const char* tokens[] = {kToken, kToken};
    run_threads(shared, runs, 2, sizes, tokens);
    expect_both(runs, DIST_ERR_MISMATCH, "tasks");
    assert_non_null(strstr(runs[0].error, "rank 1 says the job has 3 tasks"));
    delete_exchange(shared);
  }
  { /* on the token */
    struct shared_exchange* shared = new_exchange(2);
    const int32_t sizes[] = {2, 2};
    const char* tokens[] = {kToken, "another-token-9876543210"};
    run_threads(shared, runs, 2, sizes, tokens);
    expect_both(runs, DIST_ERR_AUTH, "different cluster token");
    assert_non_null(strstr(runs[0].error, "rank 1 has a different cluster token"));
    delete_exchange(shared);
  }
  { /* no token anywhere: refused as dist_context_create refuses */
    struct shared_exchange* shared = new_exchange(2);
    const int32_t sizes[] = {2, 2};
    const char* tokens[] = {NULL, NULL};
    run_threads(shared, runs, 2, sizes, tokens);
    expect_both(runs, DIST_ERR_AUTH, "no cluster token");
    delete_exchange(shared);
  }
  { /* one rank without a token */
    struct shared_exchange* shared = new_exchange(2);
    const int32_t sizes[] = {2, 2};
    const char* tokens[] = {kToken, NULL};
    run_threads(shared, runs, 2, sizes, tokens);
    expect_both(runs, DIST_ERR_AUTH, "token");
    assert_non_null(strstr(runs[0].error, "rank 1 has no cluster token"));
    delete_exchange(shared);
  }
}

/* ---- Exchanges that fail ---- */

static double seconds_since(const struct timespec* start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Rank 0 of 2 alone, with the exchange set up to fail as `shared` says. */
static dist_status_t create_alone(struct shared_exchange* shared, int64_t connect_timeout_ms) {
  struct thread_rank me = {shared, 0, 0};
  dist_oob_t oob = oob_for(&me, 2);
  dist_context_options_t options = options_with(kToken, connect_timeout_ms);
  dist_context_t* context = (dist_context_t*)&me; /* must stay untouched */
  dist_status_t status = dist_context_create_oob(&oob, &options, &context);
  assert_ptr_equal(context, (dist_context_t*)&me);
  return status;
}

static void test_failing_exchanges(void** state) {
  (void)state;
  struct shared_exchange* shared = new_exchange(2);
  shared->start_result = 7;
  assert_dist_error(create_alone(shared, 5000), DIST_ERR_PEER_FAILED, "caller's exchange failed",
                    "allgather returned 7");
  assert_int_equal(shared->frees, 0); /* nothing was started */
  delete_exchange(shared);

  shared = new_exchange(2);
  shared->test_result = -3;
  assert_dist_error(create_alone(shared, 5000), DIST_ERR_PEER_FAILED, "caller's exchange failed",
                    "test returned -3");
  assert_int_equal(shared->frees, 1);
  delete_exchange(shared);
}

static void test_exchange_that_never_completes(void** state) {
  (void)state;
  struct shared_exchange* shared = new_exchange(2);
  shared->never_complete = 1;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  assert_dist_error(create_alone(shared, 1500), DIST_ERR_TIMEOUT, "did not complete", "1.5 s");
  const double took = seconds_since(&start);
  if (took > 1.5 + 2.0) fail_msg("gave up after %.1f s, deadline 1.5 s", took);
  assert_int_equal(shared->frees, 1); /* the request in progress was freed */
  delete_exchange(shared);
}

/* An all-gather that puts rank 0's part everywhere. */
static int32_t misplacing_allgather(void* user_data, const void* send, void* recv, size_t bytes, void** request) {
  (void)user_data;
  memcpy(recv, send, bytes);
  memcpy((unsigned char*)recv + bytes, send, bytes);
  *request = NULL; /* complete at once */
  return 0;
}

static void test_exchange_that_misplaces_parts(void** state) {
  (void)state;
  dist_oob_t oob = {0, 0, 2, misplacing_allgather, shared_test, NULL, NULL};
  dist_context_options_t options = options_with(kToken, 5000);
  dist_context_t* context = NULL;
  assert_dist_error(dist_context_create_oob(&oob, &options, &context), DIST_ERR_MISMATCH,
                    "rank 1's place in the exchange holds rank 0's part");
  assert_null(context);
}

/* ---- Bad arguments ---- */

static void test_bad_arguments(void** state) {
  (void)state;
  struct shared_exchange* shared = new_exchange(1);
  struct thread_rank me = {shared, 0, 0};
  dist_context_t* context = NULL;
  dist_oob_t good = oob_for(&me, 1);
  assert_dist_error(dist_context_create_oob(NULL, NULL, &context), DIST_ERR_INVALID_ARGUMENT, "oob is NULL");
  assert_dist_error(dist_context_create_oob(&good, NULL, NULL), DIST_ERR_INVALID_ARGUMENT, "context is NULL");
  dist_oob_t oob = good;
  oob.allgather = NULL;
  assert_dist_error(dist_context_create_oob(&oob, NULL, &context), DIST_ERR_INVALID_ARGUMENT, "oob.allgather");
  oob = good;
  oob.test = NULL;
  assert_dist_error(dist_context_create_oob(&oob, NULL, &context), DIST_ERR_INVALID_ARGUMENT, "oob.test");
  oob = good;
  oob.size = 0;
  assert_dist_error(dist_context_create_oob(&oob, NULL, &context), DIST_ERR_INVALID_ARGUMENT, "oob.size 0");
  oob = good;
  oob.rank = -1;
  assert_dist_error(dist_context_create_oob(&oob, NULL, &context), DIST_ERR_INVALID_ARGUMENT, "oob.rank -1");
  oob = good;
  oob.rank = 1;
  assert_dist_error(dist_context_create_oob(&oob, NULL, &context), DIST_ERR_INVALID_ARGUMENT, "oob.rank 1",
                    "oob.size 1");
  dist_context_options_t options = options_with(kToken, -5);
  assert_dist_error(dist_context_create_oob(&good, &options, &context), DIST_ERR_INVALID_ARGUMENT,
                    "connect_timeout_ms");
  assert_null(context);
  assert_int_equal(shared->requests, 0); /* no bad call reached the exchange */
  delete_exchange(shared);
}

static void test_one_task(void** state) {
  (void)state;
  struct shared_exchange* shared = new_exchange(1);
  struct thread_run runs[1];
  const int32_t sizes[] = {1};
  const char* tokens[] = {NULL}; /* one task needs no token */
  run_threads(shared, runs, 1, sizes, tokens);
  if (runs[0].status != DIST_OK) fail_msg("%s", runs[0].error);
  if (!runs[0].reduced) fail_msg("all-reduce: %s", runs[0].why);
  delete_exchange(shared);
}

/* ---- Ranks in processes, exchanging through files ---- */

struct file_exchange {
  const char* directory;
  int rank, size, round;
};

struct file_request {
  int round;
  void* recv;
  size_t bytes;
};

static void part_path(char* path, size_t bytes, const char* directory, int round, int rank) {
  snprintf(path, bytes, "%s/round%d-rank%d", directory, round, rank);
}

static int32_t file_allgather(void* user_data, const void* send, void* recv, size_t bytes, void** request) {
  struct file_exchange* me = user_data;
  char path[512], temporary[600];
  part_path(path, sizeof path, me->directory, me->round, me->rank);
  snprintf(temporary, sizeof temporary, "%s.tmp", path);
  FILE* f = fopen(temporary, "wb");
  if (f == NULL) return 1;
  int written = fwrite(send, 1, bytes, f) == bytes;
  if (fclose(f) != 0 || !written || rename(temporary, path) != 0) return 2; /* whole parts only */
  struct file_request* r = malloc(sizeof *r);
  *r = (struct file_request){me->round++, recv, bytes};
  *request = r;
  return 0;
}

static int32_t file_test(void* user_data, void* request) {
  struct file_exchange* me = user_data;
  struct file_request* r = request;
  for (int k = 0; k < me->size; ++k) {
    char path[512];
    part_path(path, sizeof path, me->directory, r->round, k);
    FILE* f = fopen(path, "rb");
    if (f == NULL) return 1;
    size_t got = fread((unsigned char*)r->recv + (size_t)k * r->bytes, 1, r->bytes, f);
    fclose(f);
    if (got != r->bytes) return -1;
  }
  return 0;
}

static void file_free(void* user_data, void* request) {
  (void)user_data;
  free(request);
}

/* One rank of the process test: oob-child RANK SIZE DIRECTORY. */
static int run_child(int rank, int size, const char* directory) {
  struct file_exchange me = {directory, rank, size, 0};
  dist_oob_t oob = {0, rank, size, file_allgather, file_test, file_free, &me};
  dist_context_options_t options = options_with(NULL, 60000); /* token: DIST_CLUSTER_TOKEN */
  dist_context_t* context = NULL;
  if (dist_context_create_oob(&oob, &options, &context) != DIST_OK) {
    fprintf(stderr, "rank %d: dist_context_create_oob: %s\n", rank, dist_last_error());
    return 1;
  }
  char why[256] = "";
  int ok = all_reduce_checks(context, rank, size, why, sizeof why);
  if (!ok) fprintf(stderr, "rank %d: %s\n", rank, why);
  dist_context_destroy(context);
  return ok ? 0 : 1;
}

static void remove_directory(const char* directory) {
  DIR* dir = opendir(directory);
  if (dir == NULL) return;
  for (struct dirent* entry; (entry = readdir(dir)) != NULL;) {
    if (entry->d_name[0] == '.') continue;
    char path[600];
    snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
    unlink(path);
  }
  closedir(dir);
  rmdir(directory);
}

static void test_three_processes_through_files(void** state) {
  (void)state;
  char directory[] = "/tmp/dist-oob-XXXXXX";
  assert_non_null(mkdtemp(directory));
  struct launch launch;
  launch_prepare(&launch, 3);
  char rank_text[3][8];
  for (int r = 0; r < 3; ++r) {
    snprintf(rank_text[r], sizeof rank_text[r], "%d", r);
    const char* args[] = {"/proc/self/exe", "oob-child", rank_text[r], "3", directory, NULL};
    launch_rank(&launch, r, kToken, NULL, args);
  }
  const int finished = launch_wait(&launch, 90) == 0;
  remove_directory(directory);
  for (int r = 0; r < 3; ++r) {
    if (!finished || launch.exit_codes[r] != 0) {
      fail_msg("rank %d exited %d%s:\n%s", r, launch.exit_codes[r], finished ? "" : " (killed at 90 s)",
               launch_output(&launch, r));
    }
  }
}

int main(int argc, char** argv) {
  setenv("DIST_ADDRESS", "127.0.0.1", 1);
  if (argc == 5 && strcmp(argv[1], "oob-child") == 0) return run_child(atoi(argv[2]), atoi(argv[3]), argv[4]);
  unsetenv("DIST_CLUSTER_TOKEN");
  unsetenv("DIST_CLUSTER_TOKEN_FILE");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_one_task),
      cmocka_unit_test(test_two_threads_of_one_process),
      cmocka_unit_test(test_ranks_that_disagree),
      cmocka_unit_test(test_failing_exchanges),
      cmocka_unit_test(test_exchange_that_never_completes),
      cmocka_unit_test(test_exchange_that_misplaces_parts),
      cmocka_unit_test(test_three_processes_through_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
