// The update rules of the built-in optimizers, in one place for both users:
// the servers' optimizers (ps/optimizers/*.cc) and the workers' optimizer of
// apply_gradients (variables/optimizer.cc). Keras' formulations; every
// caller gets the same arithmetic in the same order, so a variable trained
// on a server and one trained by the workers follow the same bits.
//
// `grad(i)` yields element i's gradient: a plain read on the servers, the
// mean of an all-reduced sum on the workers. It is inlined, so the loops
// vectorize as if they read an array.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace dist::ps {

template <typename T, typename Grad>
void sgd_update(T* var, Grad grad, size_t count, double learning_rate) {
  const T lr = static_cast<T>(learning_rate);
  for (size_t i = 0; i < count; ++i) var[i] -= lr * grad(i);
}

// SGD that also writes each new value to published[i], in the same pass, for
// workers that copy the update instead of repeating it. `published` may be
// the storage `grad` reads (element i is read before it is overwritten).
template <typename T, typename Grad>
void sgd_update_and_publish(T* var, Grad grad, T* published, size_t count, double learning_rate) {
  const T lr = static_cast<T>(learning_rate);
  for (size_t i = 0; i < count; ++i) {
    const T updated = var[i] - lr * grad(i);
    var[i] = updated;
    published[i] = updated;
  }
}

// Nesterov: the step looks ahead along the new velocity.
template <typename T, typename Grad>
void momentum_update(T* var, T* velocity, Grad grad, size_t count, double learning_rate, double momentum,
                     bool nesterov) {
  const T lr = static_cast<T>(learning_rate);
  const T mu = static_cast<T>(momentum);
  for (size_t i = 0; i < count; ++i) {
    const T g = grad(i);
    velocity[i] = mu * velocity[i] - lr * g;
    var[i] += nesterov ? mu * velocity[i] - lr * g : velocity[i];
  }
}

template <typename T, typename Grad>
void adagrad_update(T* var, T* accumulator, Grad grad, size_t count, double learning_rate, double epsilon) {
  const T lr = static_cast<T>(learning_rate);
  const T eps = static_cast<T>(epsilon);
  for (size_t i = 0; i < count; ++i) {
    const T g = grad(i);
    accumulator[i] += g * g;
    var[i] -= lr * g / (std::sqrt(accumulator[i]) + eps);
  }
}

// `step` is the 1-based number of this update (Adam's t); the bias
// correction is folded into the step size, as Keras does.
template <typename T, typename Grad>
void adam_update(T* var, T* m, T* v, Grad grad, size_t count, int64_t step, double learning_rate, double beta1,
                 double beta2, double epsilon) {
  const double t = static_cast<double>(step);
  const T alpha =
      static_cast<T>(learning_rate * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t)));
  const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2), eps = static_cast<T>(epsilon);
  for (size_t i = 0; i < count; ++i) {
    const T g = grad(i);
    m[i] = b1 * m[i] + (T(1) - b1) * g;
    v[i] = b2 * v[i] + (T(1) - b2) * g * g;
    var[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
  }
}

// The gradient accessor of a plain array.
template <typename T>
struct GradientArray {
  const T* values;
  T operator()(size_t i) const { return values[i]; }
};

}  // namespace dist::ps
