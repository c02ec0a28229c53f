/* The version, status and build-report calls of the public C ABI. The build
 * report is checked with a small JSON syntax checker written here, so the test
 * needs nothing but the C library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <distribute/c_api.h>

/* ---- A minimal JSON reader ---------------------------------------------------
 * Checks RFC 8259 syntax and, for the outermost object, remembers where the
 * value of one wanted key starts and ends. */

typedef struct {
  const char* text;
  size_t pos;
  const char* wanted_key;    /* a top-level key to locate, or NULL */
  const char* found_value;   /* where its value starts */
  size_t found_length;
} json_reader;

static int read_value(json_reader* r, int depth);

static void skip_space(json_reader* r) {
  while (strchr(" \t\r\n", r->text[r->pos]) != NULL && r->text[r->pos] != '\0') r->pos++;
}

/* Reads a string; on success `start` and `length` give its contents, escapes kept. */
static int read_string(json_reader* r, const char** start, size_t* length) {
  if (r->text[r->pos] != '"') return 0;
  r->pos++;
  *start = r->text + r->pos;
  for (;;) {
    const unsigned char c = (unsigned char)r->text[r->pos];
    if (c == '\0' || c < 0x20) return 0;
    if (c == '"') break;
    if (c == '\\') {
      const char escaped = r->text[r->pos + 1];
      if (escaped == 'u') {
        int i;
        for (i = 2; i < 6; i++) {
          if (strchr("0123456789abcdefABCDEF", r->text[r->pos + i]) == NULL || r->text[r->pos + i] == '\0') return 0;
        }
        r->pos += 6;
        continue;
      }
      if (escaped == '\0' || strchr("\"\\/bfnrt", escaped) == NULL) return 0;
      r->pos += 2;
      continue;
    }
    r->pos++;
  }
  *length = (size_t)(r->text + r->pos - *start);
  r->pos++;
  return 1;
}

static int read_digits(json_reader* r) {
  const size_t begin = r->pos;
  while (r->text[r->pos] >= '0' && r->text[r->pos] <= '9') r->pos++;
  return r->pos > begin;
}

static int read_number(json_reader* r) {
  if (r->text[r->pos] == '-') r->pos++;
  if (r->text[r->pos] == '0') {
    r->pos++;
  } else if (!read_digits(r)) {
    return 0;
  }
  if (r->text[r->pos] == '.') {
    r->pos++;
    if (!read_digits(r)) return 0;
  }
  if (r->text[r->pos] == 'e' || r->text[r->pos] == 'E') {
    r->pos++;
    if (r->text[r->pos] == '+' || r->text[r->pos] == '-') r->pos++;
    if (!read_digits(r)) return 0;
  }
  return 1;
}

static int read_literal(json_reader* r, const char* word) {
  const size_t n = strlen(word);
  if (strncmp(r->text + r->pos, word, n) != 0) return 0;
  r->pos += n;
  return 1;
}

static int read_object(json_reader* r, int depth) {
  r->pos++; /* '{' */
  skip_space(r);
  if (r->text[r->pos] == '}') {
    r->pos++;
    return 1;
  }
  for (;;) {
    const char* key;
    size_t key_length;
    const char* value_start;
    skip_space(r);
    if (!read_string(r, &key, &key_length)) return 0;
    skip_space(r);
    if (r->text[r->pos] != ':') return 0;
    r->pos++;
    skip_space(r);
    value_start = r->text + r->pos;
    if (!read_value(r, depth + 1)) return 0;
    if (depth == 0 && r->wanted_key != NULL && strlen(r->wanted_key) == key_length &&
        strncmp(r->wanted_key, key, key_length) == 0) {
      r->found_value = value_start;
      r->found_length = (size_t)(r->text + r->pos - value_start);
    }
    skip_space(r);
    if (r->text[r->pos] == ',') {
      r->pos++;
      continue;
    }
    if (r->text[r->pos] != '}') return 0;
    r->pos++;
    return 1;
  }
}

static int read_array(json_reader* r, int depth) {
  r->pos++; /* '[' */
  skip_space(r);
  if (r->text[r->pos] == ']') {
    r->pos++;
    return 1;
  }
  for (;;) {
    skip_space(r);
    if (!read_value(r, depth + 1)) return 0;
    skip_space(r);
    if (r->text[r->pos] == ',') {
      r->pos++;
      continue;
    }
    if (r->text[r->pos] != ']') return 0;
    r->pos++;
    return 1;
  }
}

static int read_value(json_reader* r, int depth) {
  const char* ignored;
  size_t ignored_length;
  skip_space(r);
  switch (r->text[r->pos]) {
    case '{': return read_object(r, depth);
    case '[': return read_array(r, depth);
    case '"': return read_string(r, &ignored, &ignored_length);
    case 't': return read_literal(r, "true");
    case 'f': return read_literal(r, "false");
    case 'n': return read_literal(r, "null");
    default: return read_number(r);
  }
}

/* 1 when `text` is one JSON object and nothing else. */
static int is_json_object(const char* text) {
  json_reader r = {0};
  r.text = text;
  skip_space(&r);
  if (text[r.pos] != '{' || !read_value(&r, 0)) return 0;
  skip_space(&r);
  return text[r.pos] == '\0';
}

/* The raw text of a top-level member's value, copied into `out`; 0 if absent. */
static int top_level_value(const char* text, const char* key, char* out, size_t out_size) {
  json_reader r = {0};
  r.text = text;
  r.wanted_key = key;
  skip_space(&r);
  if (text[r.pos] != '{' || !read_value(&r, 0) || r.found_value == NULL) return 0;
  if (r.found_length >= out_size) return 0;
  memcpy(out, r.found_value, r.found_length);
  out[r.found_length] = '\0';
  return 1;
}

/* ---- Tests ------------------------------------------------------------------ */

static void test_json_reader_itself(void** state) {
  char value[64];
  (void)state;
  assert_true(is_json_object("{\"a\": [1, -2.5e3, true, null, \"x\\\"y\"], \"b\": {\"c\": {}}}"));
  assert_false(is_json_object("{\"a\": 1,}"));
  assert_false(is_json_object("{\"a\": 01}"));
  assert_false(is_json_object("{\"a\": \"unterminated}"));
  assert_false(is_json_object("{\"a\": 1} extra"));
  assert_false(is_json_object("[1]"));
  assert_true(top_level_value("{\"a\": {\"b\": 1}, \"b\": [2]}", "b", value, sizeof value));
  assert_string_equal(value, "[2]");
  assert_false(top_level_value("{\"a\": {\"b\": 1}}", "b", value, sizeof value));
}

static void test_version_matches_the_header(void** state) {
  char expected[32];
  (void)state;
  assert_int_equal(dist_version(), DIST_VERSION_HEX);
  assert_int_equal(dist_version() >> 16, DIST_VERSION_MAJOR);
  assert_int_equal((dist_version() >> 8) & 0xff, DIST_VERSION_MINOR);
  assert_int_equal(dist_version() & 0xff, DIST_VERSION_PATCH);
  snprintf(expected, sizeof expected, "%d.%d.%d", DIST_VERSION_MAJOR, DIST_VERSION_MINOR, DIST_VERSION_PATCH);
  assert_string_equal(dist_version_string(), expected);
}

static void test_status_strings(void** state) {
  (void)state;
  assert_string_equal(dist_status_string(DIST_OK), "DIST_OK");
  assert_string_equal(dist_status_string(DIST_ERR_INVALID_ARGUMENT), "DIST_ERR_INVALID_ARGUMENT");
  assert_string_equal(dist_status_string(DIST_ERR_UNSUPPORTED), "DIST_ERR_UNSUPPORTED");
  assert_string_equal(dist_status_string(DIST_ERR_NO_MEMORY), "DIST_ERR_NO_MEMORY");
  assert_string_equal(dist_status_string(DIST_ERR_SYSTEM), "DIST_ERR_SYSTEM");
  assert_string_equal(dist_status_string(DIST_ERR_INTERNAL), "DIST_ERR_INTERNAL");
  assert_string_equal(dist_status_string(1), "DIST_ERR_UNKNOWN");
  assert_string_equal(dist_status_string(-3), "DIST_ERR_UNKNOWN");
  assert_string_equal(dist_status_string(-12345), "DIST_ERR_UNKNOWN");
  assert_string_equal(dist_status_string(INT32_MIN), "DIST_ERR_UNKNOWN");
}

static char* fetch_build_info(void) {
  char* json = NULL;
  assert_int_equal(dist_build_info(&json), DIST_OK);
  assert_non_null(json);
  return json;
}

static void test_build_info_is_a_json_object_with_every_key(void** state) {
  static const char* const keys[] = {"version", "abi_version", "features", "compiler", "build_type",
                                     "sanitizers", "ucx", "hwloc", "cuda_runtime", "nccl"};
  char* json = fetch_build_info();
  char value[256];
  char expected[64];
  size_t i;
  (void)state;
  assert_true(is_json_object(json));
  for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    if (!top_level_value(json, keys[i], value, sizeof value)) fail_msg("no top-level key \"%s\" in %s", keys[i], json);
  }
  snprintf(expected, sizeof expected, "\"%s\"", dist_version_string());
  assert_true(top_level_value(json, "version", value, sizeof value));
  assert_string_equal(value, expected);
  snprintf(expected, sizeof expected, "%d", DIST_ABI_VERSION);
  assert_true(top_level_value(json, "abi_version", value, sizeof value));
  assert_string_equal(value, expected);
  assert_true(top_level_value(json, "sanitizers", value, sizeof value));
  assert_int_equal(value[0], '[');
  assert_true(top_level_value(json, "compiler", value, sizeof value));
  assert_true(strlen(value) > 2 && value[0] == '"');
  assert_true(top_level_value(json, "build_type", value, sizeof value));
  assert_true(strcmp(value, "\"debug\"") == 0 || strcmp(value, "\"release\"") == 0 ||
              strcmp(value, "\"minsizerel\"") == 0 || strcmp(value, "\"optimized-with-assertions\"") == 0);
  dist_string_free(json);
}

/* A version string: digits and dots, starting and ending with a digit. */
static int is_dotted_version(const char* quoted) {
  size_t n = strlen(quoted), i;
  if (n < 3 || quoted[0] != '"' || quoted[n - 1] != '"') return 0;
  if (quoted[1] < '0' || quoted[1] > '9' || quoted[n - 2] < '0' || quoted[n - 2] > '9') return 0;
  for (i = 1; i < n - 1; i++) {
    if ((quoted[i] < '0' || quoted[i] > '9') && quoted[i] != '.') return 0;
  }
  return 1;
}

static void test_features_agree_with_the_feature_bits(void** state) {
  static const struct {
    const char* name;
    dist_features_t bit;
    const char* component; /* the top-level version key of that component */
  } features[] = {{"ucx", DIST_FEATURE_UCX, "ucx"},
                  {"hwloc", DIST_FEATURE_HWLOC, "hwloc"},
                  {"cuda", DIST_FEATURE_CUDA, "cuda_runtime"},
                  {"nccl", DIST_FEATURE_NCCL, "nccl"}};
  const dist_features_t built = dist_build_features();
  char* json = fetch_build_info();
  char list[256], quoted[32], version[64];
  size_t i, listed = 0, commas = 0;
  (void)state;
  /* UCX is the transport between processes: always built in. */
  assert_true(built & DIST_FEATURE_UCX);
  assert_true(top_level_value(json, "features", list, sizeof list));
  for (i = 0; i < sizeof features / sizeof features[0]; i++) {
    const int is_built = (built & features[i].bit) != 0;
    snprintf(quoted, sizeof quoted, "\"%s\"", features[i].name);
    assert_int_equal(strstr(list, quoted) != NULL, is_built);
    listed += (size_t)is_built;
    assert_true(top_level_value(json, features[i].component, version, sizeof version));
    if (is_built) {
      if (strcmp(features[i].component, "cuda_runtime") == 0 && strcmp(version, "null") == 0) continue;
      if (!is_dotted_version(version)) fail_msg("%s: %s is not a version", features[i].component, version);
    } else {
      assert_string_equal(version, "null");
    }
  }
  /* No names other than those four. */
  for (i = 0; list[i] != '\0'; i++) commas += list[i] == ',';
  assert_int_equal(commas + 1, listed);
  dist_string_free(json);
}

static void test_build_info_null_output(void** state) {
  (void)state;
  assert_int_equal(dist_build_info(NULL), DIST_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(dist_last_error(), "dist_build_info"));
  assert_non_null(strstr(dist_last_error(), "json"));
  assert_non_null(strstr(dist_last_error(), "NULL"));
}

static void test_string_free_null_is_a_no_op(void** state) {
  (void)state;
  dist_string_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_reader_itself),
      cmocka_unit_test(test_version_matches_the_header),
      cmocka_unit_test(test_status_strings),
      cmocka_unit_test(test_build_info_is_a_json_object_with_every_key),
      cmocka_unit_test(test_features_agree_with_the_feature_bits),
      cmocka_unit_test(test_build_info_null_output),
      cmocka_unit_test(test_string_free_null_is_a_no_op),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
