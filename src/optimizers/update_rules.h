// The update rules of the optimizer kinds, one loop each. dense_update.h
// chooses among them for both users, the servers' shards and the workers'
// apply_gradients (variables/worker_optimizer.cc). Keras' formulations; every
// caller gets the same arithmetic in the same order, so a variable trained
// on a server and one trained by the workers follow the same bits.
//
// `grad(i)` yields element i's gradient: a plain read on the servers, the
// mean of an all-reduced sum on the workers. It is inlined, so the loops
// vectorize as if they read an array. A file that instantiates these loops
// is compiled with -O3 -fno-math-errno (src/CMakeLists.txt says why).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

// Every rule's loop touches element i of each array only in iteration i
// (`publish` may write the storage `grad` reads, at the same i), so no
// iteration depends on another. Saying so lets GCC vectorize the loops
// without run-time overlap checks between every pair of arrays, of which it
// makes only a few: Adam's loop, fed from two gradient buffers and
// publishing, has more pairs than that and stayed scalar.
#if defined(__GNUC__) && !defined(__clang__)
#define DIST_ELEMENTWISE _Pragma("GCC ivdep")
#else
#define DIST_ELEMENTWISE
#endif

namespace dist {

// Each rule may also hand every new value to `publish(i, value)` in the same
// pass: on one host the worker that updates an element writes it where the
// other workers copy it from, instead of their repeating the update. The
// default publishes nothing and compiles away.
struct NoPublication {
  template <typename T>
  void operator()(size_t, T) const {}
};

// Writes each new value to out[i], out holding the variable's element type.
// `out` may be the storage `grad` reads: element i is read before it is
// overwritten.
struct PublishTo {
  void* out;
  template <typename T>
  void operator()(size_t i, T value) const {
    static_cast<T*>(out)[i] = value;
  }
};

template <typename T, typename Grad, typename Publish = NoPublication>
void sgd_update(T* var, Grad grad, size_t count, double learning_rate, Publish publish = {}) {
  const T lr = static_cast<T>(learning_rate);
  DIST_ELEMENTWISE
  for (size_t i = 0; i < count; ++i) {
    const T updated = var[i] - lr * grad(i);
    var[i] = updated;
    publish(i, updated);
  }
}

// Nesterov: the step looks ahead along the new velocity.
template <typename T, typename Grad, typename Publish = NoPublication>
void momentum_update(T* var, T* velocity, Grad grad, size_t count, double learning_rate, double momentum,
                     bool nesterov, Publish publish = {}) {
  const T lr = static_cast<T>(learning_rate);
  const T mu = static_cast<T>(momentum);
  DIST_ELEMENTWISE
  for (size_t i = 0; i < count; ++i) {
    const T g = grad(i);
    velocity[i] = mu * velocity[i] - lr * g;
    const T updated = var[i] + (nesterov ? mu * velocity[i] - lr * g : velocity[i]);
    var[i] = updated;
    publish(i, updated);
  }
}

template <typename T, typename Grad, typename Publish = NoPublication>
void adagrad_update(T* var, T* accumulator, Grad grad, size_t count, double learning_rate, double epsilon,
                    Publish publish = {}) {
  const T lr = static_cast<T>(learning_rate);
  const T eps = static_cast<T>(epsilon);
  DIST_ELEMENTWISE
  for (size_t i = 0; i < count; ++i) {
    const T g = grad(i);
    accumulator[i] += g * g;
    const T updated = var[i] - lr * g / (std::sqrt(accumulator[i]) + eps);
    var[i] = updated;
    publish(i, updated);
  }
}

// `step` is the 1-based number of this update (Adam's t); the bias
// correction is folded into the step size, as Keras does.
template <typename T, typename Grad, typename Publish = NoPublication>
void adam_update(T* var, T* m, T* v, Grad grad, size_t count, int64_t step, double learning_rate, double beta_1,
                 double beta_2, double epsilon, Publish publish = {}) {
  const double t = static_cast<double>(step);
  const T alpha =
      static_cast<T>(learning_rate * std::sqrt(1.0 - std::pow(beta_2, t)) / (1.0 - std::pow(beta_1, t)));
  const T b1 = static_cast<T>(beta_1), b2 = static_cast<T>(beta_2), eps = static_cast<T>(epsilon);
  DIST_ELEMENTWISE
  for (size_t i = 0; i < count; ++i) {
    const T g = grad(i);
    m[i] = b1 * m[i] + (T(1) - b1) * g;
    v[i] = b2 * v[i] + (T(1) - b2) * g * g;
    const T updated = var[i] - alpha * m[i] / (std::sqrt(v[i]) + eps);
    var[i] = updated;
    publish(i, updated);
  }
}

// The gradient accessor of a plain array.
template <typename T>
struct GradientArray {
  const T* values;
  T operator()(size_t i) const { return values[i]; }
};

}  // namespace dist
