// Parameter-server shards (src/ps): every update op and every optimizer
// against references computed here from the formulas, synchronous rounds with
// staleness, sparse rows, and refusal of bad input without side effects.
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "base/half.h"
#include "internal_test_support.h"
#include "ps/shard_store.h"
#include "ps/shard_variable.h"

namespace {

using dist::DType;
using dist::OptimizerConfig;
using dist::OptimizerKind;
using dist::Status;
using namespace dist::ps;

// Without a kind: no optimizer.
VariableSpec make_spec(const char* name, DType dtype, std::vector<int64_t> shape,
                       std::optional<OptimizerKind> kind = std::nullopt) {
  VariableSpec spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  spec.rows = spec.total_rows();
  if (kind) spec.optimizer = OptimizerConfig{*kind};
  return spec;
}

template <typename T>
std::vector<T> read_all(const ShardVariable& v) {
  std::vector<T> out(v.spec().elements());
  v.read(out.data());
  return out;
}

template <typename Call>
Status status_of(Call call) {
  try {
    call();
  } catch (const dist::Error& e) {
    return e.status();
  }
  return Status::kOk;
}

void test_assign_ops_integers_wrap(void** state) {
  (void)state;
  ShardVariable v(make_spec("counts", DType::I32, {4}), nullptr);
  std::vector<int32_t> zero = read_all<int32_t>(v);
  for (int32_t x : zero) assert_int_equal(x, 0);
  const int32_t a[4] = {1, -2, INT32_MAX, 7};
  assert_int_equal(v.assign(a), 1);
  const int32_t b[4] = {10, 20, 1, -7};
  assert_int_equal(v.assign_add(b), 2);
  std::vector<int32_t> got = read_all<int32_t>(v);
  assert_int_equal(got[0], 11);
  assert_int_equal(got[1], 18);
  assert_int_equal(got[2], INT32_MIN);  // wraps
  assert_int_equal(got[3], 0);
  assert_int_equal(v.assign_sub(b), 3);
  got = read_all<int32_t>(v);
  for (int i = 0; i < 4; ++i) assert_int_equal(got[i], a[i]);

  ShardVariable u(make_spec("bytes", DType::U8, {2}), nullptr);
  const uint8_t one[2] = {1, 200};
  u.assign_sub(one);
  std::vector<uint8_t> bytes = read_all<uint8_t>(u);
  assert_int_equal(bytes[0], 255);
  assert_int_equal(bytes[1], 56);
}

// assign_exchange: the buffer's bytes become the values, the old values come
// back in the buffer, and a buffer of the wrong size changes nothing.
void test_assign_exchange(void** state) {
  (void)state;
  const int32_t first[3] = {5, -6, 7};
  ShardVariable v(make_spec("swapped", DType::I32, {3}), first);
  std::vector<uint8_t> buffer(12);
  const int32_t next[3] = {100, 200, -300};
  std::memcpy(buffer.data(), next, 12);
  assert_int_equal(v.assign_exchange(buffer), 1);
  std::vector<int32_t> got = read_all<int32_t>(v);
  for (int i = 0; i < 3; ++i) assert_int_equal(got[i], next[i]);
  assert_int_equal(buffer.size(), 12);
  int32_t old[3];
  std::memcpy(old, buffer.data(), 12);
  for (int i = 0; i < 3; ++i) assert_int_equal(old[i], first[i]);

  std::vector<uint8_t> wrong(11, 0xFF);
  assert_int_equal(static_cast<int>(status_of([&] { v.assign_exchange(wrong); })),
                   static_cast<int>(Status::kInvalidArgument));
  assert_int_equal(wrong.size(), 11);
  assert_int_equal(v.version(), 1);
  got = read_all<int32_t>(v);
  for (int i = 0; i < 3; ++i) assert_int_equal(got[i], next[i]);
}

// share(): the values without a copy, unchanged while held, whatever the
// shard does meanwhile (copy-on-write); the shard's own values move on.
void test_shared_values_stay_while_held(void** state) {
  (void)state;
  const int64_t first[4] = {1, 2, 3, 4};
  ShardVariable v(make_spec("held", DType::I64, {4}), first);
  uint64_t version = 99;
  auto held = v.share(&version);
  assert_int_equal(version, 0);
  assert_int_equal(held->size(), 32);
  const int64_t ten[4] = {10, 10, 10, 10};
  v.assign_add(ten);
  std::vector<uint8_t> buffer(32);
  const int64_t next[4] = {-1, -2, -3, -4};
  std::memcpy(buffer.data(), next, 32);
  auto held_too = v.share(&version);
  assert_int_equal(version, 1);
  assert_int_equal(v.assign_exchange(buffer), 2);
  assert_true(buffer.empty());  // the shared values stayed with their holders
  int64_t seen[4];
  std::memcpy(seen, held->data(), 32);
  for (int i = 0; i < 4; ++i) assert_int_equal(seen[i], first[i]);
  std::memcpy(seen, held_too->data(), 32);
  for (int i = 0; i < 4; ++i) assert_int_equal(seen[i], first[i] + 10);
  std::vector<int64_t> now = read_all<int64_t>(v);
  for (int i = 0; i < 4; ++i) assert_int_equal(now[i], next[i]);
  // A pull that has ended holds nothing back: the next exchange swaps in
  // place again, and the caller gets the previous values.
  auto ended = v.share(&version);
  ended.reset();
  const int64_t last[4] = {7, 7, 7, 7};
  buffer.assign(32, 0);
  std::memcpy(buffer.data(), last, 32);
  assert_int_equal(v.assign_exchange(buffer), 3);
  assert_int_equal(buffer.size(), 32);
  std::memcpy(seen, buffer.data(), 32);
  for (int i = 0; i < 4; ++i) assert_int_equal(seen[i], next[i]);
  // Waiting for a version that never comes ends at the deadline.
  assert_int_equal(static_cast<int>(status_of([&] {
                     v.share(&version, 5, ShardVariable::Clock::now() + std::chrono::milliseconds(20));
                   })),
                   static_cast<int>(Status::kTimeout));
}

void test_assign_ops_floats(void** state) {
  (void)state;
  const double init[3] = {1.5, -2.25, 0.0};
  ShardVariable d(make_spec("d", DType::F64, {3}), init);
  const double delta[3] = {0.25, 0.25, -1.0};
  d.assign_add(delta);
  d.assign_sub(delta);
  d.assign_sub(delta);
  std::vector<double> got = read_all<double>(d);
  for (int i = 0; i < 3; ++i) assert_true(got[i] == init[i] - delta[i]);

  uint16_t h[2] = {dist::f32_to_f16(1.0f), dist::f32_to_f16(-3.0f)};
  ShardVariable f16(make_spec("h", DType::F16, {2}), h);
  uint16_t step[2] = {dist::f32_to_f16(0.5f), dist::f32_to_f16(0.5f)};
  f16.assign_sub(step);
  std::vector<uint16_t> halves = read_all<uint16_t>(f16);
  assert_true(dist::f16_to_f32(halves[0]) == 0.5f);
  assert_true(dist::f16_to_f32(halves[1]) == -3.5f);
  uint16_t b[1] = {dist::f32_to_bf16(2.0f)};
  ShardVariable bf(make_spec("b", DType::BF16, {}), b);
  bf.assign_add(b);
  assert_true(dist::bf16_to_f32(read_all<uint16_t>(bf)[0]) == 4.0f);
}

// Reference optimizers, written from the formulas in double.
struct Reference {
  OptimizerConfig c;
  std::vector<double> w, s0, s1;
  int64_t t = 0;
  void step(const std::vector<double>& g) {
    ++t;
    for (size_t i = 0; i < w.size(); ++i) {
      switch (c.kind) {
        case OptimizerKind::kSgd: w[i] -= c.learning_rate * g[i]; break;
        case OptimizerKind::kMomentum:
          s0[i] = c.momentum * s0[i] - c.learning_rate * g[i];
          w[i] += c.nesterov ? c.momentum * s0[i] - c.learning_rate * g[i] : s0[i];
          break;
        case OptimizerKind::kAdagrad:
          s0[i] += g[i] * g[i];
          w[i] -= c.learning_rate * g[i] / (std::sqrt(s0[i]) + c.epsilon);
          break;
        case OptimizerKind::kAdam: {
          s0[i] = c.beta_1 * s0[i] + (1 - c.beta_1) * g[i];
          s1[i] = c.beta_2 * s1[i] + (1 - c.beta_2) * g[i] * g[i];
          double m_hat = s0[i] / (1 - std::pow(c.beta_1, (double)t));
          double v_hat = s1[i] / (1 - std::pow(c.beta_2, (double)t));
          // Keras folds the correction into the step: epsilon is scaled by sqrt(1-b2^t).
          w[i] -= c.learning_rate * m_hat / (std::sqrt(v_hat) + c.epsilon / std::sqrt(1 - std::pow(c.beta_2, (double)t)));
          break;
        }
      }
    }
  }
};

void check_optimizer(OptimizerConfig config, DType dtype, double tolerance) {
  const size_t n = 5;
  VariableSpec spec = make_spec("w", dtype, {(int64_t)n}, config.kind);
  spec.optimizer = config;
  Reference ref{config, {0.5, -1.0, 2.0, 0.0, 3.0}, std::vector<double>(n, config.kind == OptimizerKind::kAdagrad ? config.initial_accumulator_value : 0.0), std::vector<double>(n, 0.0)};
  std::vector<float> wf(ref.w.begin(), ref.w.end());
  ShardVariable v(spec, dtype == DType::F32 ? static_cast<const void*>(wf.data()) : static_cast<const void*>(ref.w.data()));
  for (int s = 0; s < 4; ++s) {
    std::vector<double> g = {0.1 * (s + 1), -0.3, 1.5 - s, 0.0, -2.0 + 0.25 * s};
    std::vector<float> gf(g.begin(), g.end());
    auto outcome = v.apply_gradient(dtype == DType::F32 ? static_cast<const void*>(gf.data()) : static_cast<const void*>(g.data()), -1, 0);
    assert_true(outcome.accepted && outcome.applied);
    assert_int_equal(outcome.version, s + 1);
    ref.step(g);
  }
  for (size_t i = 0; i < n; ++i) {
    double got = dtype == DType::F32 ? (double)read_all<float>(v)[i] : read_all<double>(v)[i];
    if (std::fabs(got - ref.w[i]) > tolerance * (1 + std::fabs(ref.w[i]))) {
      fail_msg("%s element %zu: got %.12g, reference %.12g", dist::optimizer_name(config.kind), i, got, ref.w[i]);
    }
  }
}

void test_optimizers_match_references(void** state) {
  (void)state;
  for (DType dtype : {DType::F64, DType::F32}) {
    const double tol = dtype == DType::F64 ? 1e-12 : 1e-5;
    OptimizerConfig c;
    c.kind = OptimizerKind::kSgd;
    c.learning_rate = 0.1;
    check_optimizer(c, dtype, tol);
    c.kind = OptimizerKind::kMomentum;
    c.momentum = 0.8;
    check_optimizer(c, dtype, tol);
    c.nesterov = true;
    check_optimizer(c, dtype, tol);
    c = OptimizerConfig{};
    c.kind = OptimizerKind::kAdagrad;
    c.learning_rate = 0.05;
    c.initial_accumulator_value = 0.2;
    check_optimizer(c, dtype, tol);
    c = OptimizerConfig{};
    c.kind = OptimizerKind::kAdam;
    c.learning_rate = 0.01;
    c.beta_1 = 0.8;
    c.beta_2 = 0.95;
    c.epsilon = 1e-3;
    check_optimizer(c, dtype, tol);
  }
}

void test_sync_rounds_and_staleness(void** state) {
  (void)state;
  VariableSpec spec = make_spec("w", DType::F64, {2}, OptimizerKind::kSgd);
  spec.optimizer->learning_rate = 1.0;
  spec.sync.replicas_to_aggregate = 2;
  spec.sync.max_staleness = 0;
  ShardVariable v(spec, nullptr);
  const double g0[2] = {1.0, 2.0}, g1[2] = {3.0, -4.0}, g2[2] = {100.0, 100.0};
  auto first = v.apply_gradient(g0, 0, 0);
  assert_true(first.accepted);
  assert_false(first.applied);
  assert_int_equal(first.version, 0);
  // The same worker again in the same round is dropped.
  auto again = v.apply_gradient(g2, 0, 0);
  assert_false(again.accepted);
  auto second = v.apply_gradient(g1, 1, 0);
  assert_true(second.accepted && second.applied);
  assert_int_equal(second.version, 1);
  std::vector<double> w = read_all<double>(v);
  assert_true(w[0] == -2.0);  // -(1+3)/2
  assert_true(w[1] == 1.0);   // -(2-4)/2
  // Computed from version 0, now at 1 with max_staleness 0: stale, dropped.
  auto stale = v.apply_gradient(g2, 0, 0);
  assert_false(stale.accepted);
  assert_true(read_all<double>(v)[0] == -2.0);

  // With a bound of 1, a gradient one version behind still counts.
  VariableSpec lenient = spec;
  lenient.sync.max_staleness = 1;
  lenient.sync.replicas_to_aggregate = 1;
  ShardVariable u(lenient, nullptr);
  assert_true(u.apply_gradient(g0, 0, 0).applied);
  assert_true(u.apply_gradient(g0, 0, 0).applied);   // 1 behind: accepted
  assert_false(u.apply_gradient(g0, 0, 0).accepted); // 2 behind: dropped
  assert_true(read_all<double>(u)[0] == -2.0);

  // A synchronous reader waits for the round; a missing round times out.
  std::vector<double> out(2);
  auto deadline = ShardVariable::Clock::now() + std::chrono::milliseconds(50);
  assert_int_equal((int)status_of([&] { v.read(out.data(), 2, deadline); }), (int)Status::kTimeout);
  assert_int_equal(v.read(out.data(), 1, deadline), 1);
}

void test_sparse_rows(void** state) {
  (void)state;
  // 4 rows of 2 f32.
  const float init[8] = {0, 1, 10, 11, 20, 21, 30, 31};
  VariableSpec spec = make_spec("emb", DType::F32, {4, 2}, OptimizerKind::kSgd);
  spec.optimizer->learning_rate = 0.5;
  ShardVariable v(spec, init);
  const int64_t pick[3] = {3, 0, 3};
  float rows[6];
  v.read_rows(pick, 3, rows);
  const float expect[6] = {30, 31, 0, 1, 30, 31};
  for (int i = 0; i < 6; ++i) assert_true(rows[i] == expect[i]);

  const int64_t add_at[3] = {1, 1, 2};
  const float add[6] = {1, 1, 2, 2, 5, 5};
  v.add_rows(add_at, 3, add);
  std::vector<float> w = read_all<float>(v);
  assert_true(w[2] == 13 && w[3] == 14 && w[4] == 25 && w[0] == 0 && w[6] == 30);

  // Optimizer on rows 0 and 3 only; duplicate row 0 gradients are summed.
  const int64_t grad_at[3] = {0, 3, 0};
  const float grad[6] = {2, 2, 4, 4, 2, 2};
  v.apply_sparse_gradient(grad_at, 3, grad);
  w = read_all<float>(v);
  assert_true(w[0] == -2 && w[1] == -1);  // 0 - 0.5*4, 1 - 0.5*4
  assert_true(w[6] == 28 && w[7] == 29);
  assert_true(w[2] == 13 && w[4] == 25);  // untouched

  // A bad index anywhere refuses the whole request: nothing changes.
  const int64_t bad[2] = {1, 4};
  const uint64_t before = v.version();
  expect_invalid("row 4 of 4", "row index 4", [&] { v.add_rows(bad, 2, add); });
  const int64_t negative[1] = {-1};
  expect_invalid("row -1", "row index -1", [&] { v.read_rows(negative, 1, rows); });
  assert_int_equal(v.version(), before);
  assert_true(read_all<float>(v)[2] == 13);
}

void test_lazy_adam_rows(void** state) {
  (void)state;
  VariableSpec spec = make_spec("emb", DType::F64, {3, 1}, OptimizerKind::kAdam);
  spec.optimizer->learning_rate = 0.1;
  ShardVariable v(spec, nullptr);
  const int64_t at[1] = {1};
  const double g[1] = {2.0};
  v.apply_sparse_gradient(at, 1, g);
  ShardState s = v.snapshot();
  const double* m = reinterpret_cast<const double*>(s.slots[0].data());
  assert_true(m[0] == 0.0 && m[2] == 0.0);
  assert_true(std::fabs(m[1] - 0.2) < 1e-15);
  const double* w = reinterpret_cast<const double*>(s.values.data());
  // First Adam step moves by about lr * sign(g).
  assert_true(std::fabs(w[1] + 0.1) < 1e-6);
  assert_true(w[0] == 0.0);
}

void test_bad_specs_refused(void** state) {
  (void)state;
  expect_invalid("empty name", "name is empty", [] { ShardVariable v(make_spec("", DType::F32, {1}), nullptr); });
  expect_invalid("negative dim", "negative", [] { ShardVariable v(make_spec("x", DType::F32, {-1}), nullptr); });
  VariableSpec rows = make_spec("x", DType::F32, {4});
  rows.row_offset = 3;
  rows.rows = 2;
  expect_invalid("rows outside", "outside its 4 rows", [&] { ShardVariable v(rows, nullptr); });
  VariableSpec lr = make_spec("x", DType::F32, {4}, OptimizerKind::kSgd);
  lr.optimizer->learning_rate = -1;
  expect_invalid("negative lr", "learning_rate", [&] { ShardVariable v(lr, nullptr); });
  assert_int_equal((int)status_of([] { ShardVariable v(make_spec("x", DType::I32, {4}, OptimizerKind::kAdam), nullptr); }),
                   (int)Status::kUnsupported);
  expect_invalid("huge", "too large", [] { ShardVariable v(make_spec("x", DType::F64, {1, 1 << 30, 1 << 30}), nullptr); });
  ShardVariable plain(make_spec("p", DType::F32, {2}), nullptr);
  float g[2] = {1, 1};
  expect_invalid("no optimizer", "has no optimizer", [&] { plain.apply_gradient(g, -1, 0); });
}

void test_store_ids(void** state) {
  (void)state;
  ShardStore store;
  const int32_t init[2] = {5, 6};
  auto a = store.create(7, make_spec("a", DType::I32, {2}), init);
  assert_int_equal((int)a.outcome, (int)CreateOutcome::kCreated);
  auto again = store.create(7, make_spec("a", DType::I32, {2}), nullptr);
  assert_int_equal((int)again.outcome, (int)CreateOutcome::kExisted);
  assert_int_equal(read_all<int32_t>(*again.variable)[1], 6);  // not reset
  assert_int_equal((int)status_of([&] { store.create(7, make_spec("b", DType::I32, {2}), nullptr); }),
                   (int)Status::kMismatch);
  expect_invalid("unknown id", "no variable with id 8", [&] { store.find(8); });
  assert_int_equal(store.size(), 1);
  assert_int_equal(store.total_bytes(), 8);
  assert_true(store.erase(7));
  assert_false(store.erase(7));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_assign_ops_integers_wrap), cmocka_unit_test(test_assign_exchange),
      cmocka_unit_test(test_shared_values_stay_while_held),
      cmocka_unit_test(test_assign_ops_floats),
      cmocka_unit_test(test_optimizers_match_references), cmocka_unit_test(test_sync_rounds_and_staleness),
      cmocka_unit_test(test_sparse_rows), cmocka_unit_test(test_lazy_adam_rows),
      cmocka_unit_test(test_bad_specs_refused), cmocka_unit_test(test_store_ids),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
