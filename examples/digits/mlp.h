/* The digits MLP itself (64 -> 32 ReLU -> 10 softmax), independent of any
 * strategy: its parameter layout, forward and backward passes, initial weights
 * and accuracy. The strategy examples (trainer.c, parameter_server.c) keep its
 * parameters in libdistribute variables and call these on local copies. */
#ifndef DIGITS_MLP_H
#define DIGITS_MLP_H

#include <stdint.h>

#include "digits.h"

enum { kMlpHidden = 32 };
enum { kMlpW1, kMlpB1, kMlpW2, kMlpB2, kMlpParams };
enum { kMlpAllParams = kDigitPixels * kMlpHidden + kMlpHidden + kMlpHidden * kDigitClasses + kDigitClasses };

/* Element count, variable name and shape (rank = shape[1] == 0 ? 1 : 2) of each parameter. */
extern const uint64_t kMlpParamCount[kMlpParams];
extern const char* const kMlpParamName[kMlpParams];
extern const int64_t kMlpParamShape[kMlpParams][2];

/* The parameters in one block: W1 [64][32], b1, W2 [32][10], b2. */
struct mlp_params {
  float* p[kMlpParams];
  float storage[kMlpAllParams];
};

/* Points p[] into storage; call before any other use. */
void mlp_bind(struct mlp_params* m);

/* Uniform weights in [-0.15, 0.15) drawn from `seed` (the same seed gives the same weights). */
void mlp_init(struct mlp_params* m, uint64_t seed);

/* Forward one image; fills hidden activations and class probabilities. */
void mlp_forward(const struct mlp_params* m, const float* x, float* hidden, float* probs);

/* Gradient of the summed cross-entropy over `rows` images into grads
 * (overwritten; bound), adding their summed loss to *loss and their correct
 * predictions to *correct. */
void mlp_backward(const struct mlp_params* m, const float* xs, const int32_t* ys, uint64_t rows,
                  struct mlp_params* grads, double* loss, int64_t* correct);

/* Fraction of digits[first, last) classified correctly. */
double mlp_accuracy(const struct mlp_params* m, const struct digits* data, int first, int last);

#endif
