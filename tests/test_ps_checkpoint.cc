// Checkpoints (src/ps/checkpoint_*): round trip of values, slots and counters;
// re-sharding a checkpoint written by 2 servers onto 3; and refusal of a
// corrupt, truncated, missing or mismatching checkpoint with a clear message.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "internal_test_support.h"
#include "base/atomic_file.h"
#include "ps/checkpoint_manifest.h"
#include "ps/checkpoint_reader.h"
#include "ps/checkpoint_shard_file.h"
#include "ps/shard_store.h"

namespace {

using dist::DType;
using dist::Status;
using namespace dist;
using namespace dist::ps;

std::string temp_root() {
  char pattern[] = "/tmp/dist-ckpt-test-XXXXXX";
  const char* made = mkdtemp(pattern);
  assert_non_null(made);
  return made;
}

void remove_tree(const std::string& path) {
  std::string command = "rm -rf '" + path + "'";
  assert_int_equal(std::system(command.c_str()), 0);
}

VariableSpec table_spec(uint64_t offset, uint64_t rows) {
  VariableSpec spec;
  spec.name = "table";
  spec.dtype = DType::F32;
  spec.shape = {10, 3};
  spec.row_offset = offset;
  spec.rows = rows;
  spec.optimizer = dist::OptimizerConfig{dist::OptimizerKind::kAdagrad};
  return spec;
}

VariableSpec bias_spec() {
  VariableSpec spec;
  spec.name = "bias";
  spec.dtype = DType::I64;
  spec.shape = {2};
  spec.rows = 2;
  return spec;
}

// The value of table element (row, column) in the test's checkpoint.
float table_value(uint64_t row, int column) { return (float)(row * 10 + (uint64_t)column) + 0.5f; }

// Two "servers" holding the table's rows 0-4 and 5-9 (plus the bias on the
// first), each trained one Adagrad step; returns the checkpoint directory.
std::string write_two_server_checkpoint(const std::string& root) {
  ShardStore servers[2];
  for (int s = 0; s < 2; ++s) {
    VariableSpec spec = table_spec((uint64_t)s * 5, 5);
    std::vector<float> values;
    for (uint64_t r = spec.row_offset; r < spec.row_offset + 5; ++r) {
      for (int c = 0; c < 3; ++c) values.push_back(table_value(r, c));
    }
    auto created = servers[s].create(100 + (uint64_t)s, spec, values.data());
    // One step of gradient 0 moves no value but bumps version, step and slots stay.
    std::vector<float> zero(15, 0.0f);
    created.variable->apply_gradient(zero.data(), -1, 0);
  }
  const int64_t bias[2] = {-7, 9};
  servers[0].create(200, bias_spec(), bias);
  const std::string directory = root + "/" + checkpoint_directory_name(42);
  make_directories(directory);
  CheckpointManifest manifest;
  manifest.step = 42;
  for (int s = 0; s < 2; ++s) {
    std::vector<ShardState> states;
    for (const auto& entry : servers[s].entries()) states.push_back(entry.variable->snapshot());
    manifest.shards.push_back(write_shard_file(directory, s, 2, states));
  }
  write_manifest(directory, manifest);
  write_latest(root, checkpoint_directory_name(42));
  return directory;
}

void test_round_trip_and_atomic_files(void** state) {
  (void)state;
  const std::string root = temp_root();
  const std::string directory = write_two_server_checkpoint(root);
  // Nothing but the final files: temporary names were renamed away.
  DIR* dir = opendir(directory.c_str());
  int files = 0;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    assert_true(name.find(".tmp") == std::string::npos);
    ++files;
  }
  closedir(dir);
  assert_int_equal(files, 3);

  auto reader = CheckpointReader::open_latest(root);
  assert_non_null(reader.get());
  assert_int_equal(reader->step(), 42);
  assert_int_equal(reader->num_entries(), 3);
  auto bias = reader->load(bias_spec());
  assert_true(bias.has_value());
  const int64_t* b = reinterpret_cast<const int64_t*>(bias->values.data());
  assert_int_equal(b[0], -7);
  assert_int_equal(b[1], 9);
  auto table = reader->load(table_spec(5, 5));
  assert_true(table.has_value());
  assert_int_equal(table->version, 1);
  assert_int_equal(table->optimizer_step, 1);
  assert_int_equal(table->slots.size(), 1);
  const float* acc = reinterpret_cast<const float*>(table->slots[0].data());
  assert_true(acc[0] == 0.1f);  // Adagrad's initial accumulator, saved
  VariableSpec other = bias_spec();
  other.name = "absent";
  assert_false(reader->load(other).has_value());
  remove_tree(root);
}

void test_reshard_two_to_three(void** state) {
  (void)state;
  const std::string root = temp_root();
  write_two_server_checkpoint(root);
  auto reader = CheckpointReader::open_latest(root);
  // Three servers now: rows 0-3, 4-6, 7-9 (the middle one spans both files).
  const uint64_t offsets[3] = {0, 4, 7}, rows[3] = {4, 3, 3};
  for (int s = 0; s < 3; ++s) {
    ShardStore store;
    store.restore_from(reader);
    auto created = store.create(1000 + (uint64_t)s, table_spec(offsets[s], rows[s]), nullptr);
    assert_int_equal((int)created.outcome, (int)CreateOutcome::kRestored);
    std::vector<float> got(rows[s] * 3);
    created.variable->read(got.data());
    for (uint64_t r = 0; r < rows[s]; ++r) {
      for (int c = 0; c < 3; ++c) {
        if (got[r * 3 + (uint64_t)c] != table_value(offsets[s] + r, c)) {
          fail_msg("server %d row %llu col %d: %g", s, (unsigned long long)(offsets[s] + r), c, got[r * 3 + (uint64_t)c]);
        }
      }
    }
  }
  // restore_from also overwrites shards already held.
  ShardStore store;
  std::vector<int64_t> junk = {1, 1};
  auto held = store.create(5, bias_spec(), junk.data());
  assert_int_equal(store.restore_from(reader), 1);
  std::vector<int64_t> got(2);
  held.variable->read(got.data());
  assert_int_equal(got[0], -7);
  remove_tree(root);
}

template <typename Call>
void expect_refused(const char* what, Status status, const std::string& needle, Call call) {
  try {
    call();
  } catch (const dist::Error& e) {
    if (e.status() != status) fail_msg("%s: status %d (%s)", what, (int)e.status(), e.what());
    if (std::string(e.what()).find(needle) == std::string::npos) {
      fail_msg("%s: message \"%s\" lacks \"%s\"", what, e.what(), needle.c_str());
    }
    return;
  }
  fail_msg("%s: accepted", what);
}

void test_corrupt_and_truncated_refused(void** state) {
  (void)state;
  const std::string root = temp_root();
  const std::string directory = write_two_server_checkpoint(root);
  const std::string shard = directory + "/" + shard_file_name(1, 2);
  const std::string original = read_small_file(shard, 1 << 20);

  // One flipped bit in a value.
  std::string flipped = original;
  flipped[flipped.size() - 20] ^= 0x01;
  write_file_atomically(shard, flipped);
  expect_refused("corrupt", Status::kInvalidArgument, "is corrupt", [&] { CheckpointReader r(directory); });

  // Cut short.
  write_file_atomically(shard, original.substr(0, original.size() - 9));
  expect_refused("truncated", Status::kInvalidArgument, "is truncated", [&] { CheckpointReader r(directory); });

  // Missing.
  unlink(shard.c_str());
  expect_refused("missing", Status::kSystem, "cannot open", [&] { CheckpointReader r(directory); });

  // A garbled manifest.
  write_file_atomically(shard, original);
  CheckpointReader fine(directory);
  const std::string manifest = read_small_file(directory + "/manifest.json", 1 << 20);
  write_file_atomically(directory + "/manifest.json", manifest.substr(0, manifest.size() / 2));
  expect_refused("garbled manifest", Status::kInvalidArgument, "manifest", [&] { CheckpointReader r(directory); });
  std::string escaping = manifest;
  escaping.replace(escaping.find("shard-00000"), 11, "../../etc/x");
  write_file_atomically(directory + "/manifest.json", escaping);
  expect_refused("path in manifest", Status::kInvalidArgument, "not a plain file name", [&] { CheckpointReader r(directory); });
  write_file_atomically(directory + "/manifest.json", manifest);

  // A shard file whose own structure lies (a consistent digest of garbage).
  std::string lying = original;
  lying[12] = 0x7f;  // entry count
  write_file_atomically(shard, lying);
  CheckpointManifest m = read_manifest(directory);
  uint64_t bytes = 0;
  m.shards[1].sha256 = sha256_of_file(shard, &bytes);
  write_manifest(directory, m);
  expect_refused("lying entry count", Status::kInvalidArgument, "", [&] { CheckpointReader r(directory); });

  // Restoring a variable of another shape is a mismatch, not a silent load.
  write_file_atomically(shard, original);
  m.shards[1].sha256 = sha256_of_file(shard, &bytes);
  write_manifest(directory, m);
  CheckpointReader reader(directory);
  VariableSpec wrong = table_spec(0, 4);
  wrong.shape = {10, 4};
  expect_refused("other shape", Status::kMismatch, "holds 'table' as f32 [10,3]", [&] { reader.load(wrong); });
  remove_tree(root);
}

void test_no_checkpoint_yet(void** state) {
  (void)state;
  const std::string root = temp_root();
  assert_null(CheckpointReader::open_latest(root).get());
  write_file_atomically(root + "/LATEST", "../escape\n");
  expect_refused("LATEST escaping", Status::kInvalidArgument, "does not name", [&] { CheckpointReader::open_latest(root); });
  remove_tree(root);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_and_atomic_files), cmocka_unit_test(test_reshard_two_to_three),
      cmocka_unit_test(test_corrupt_and_truncated_refused), cmocka_unit_test(test_no_checkpoint_yet),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
