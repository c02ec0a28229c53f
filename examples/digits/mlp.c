#include "mlp.h"

#include <math.h>
#include <string.h>

const uint64_t kMlpParamCount[kMlpParams] = {kDigitPixels * kMlpHidden, kMlpHidden, kMlpHidden * kDigitClasses,
                                             kDigitClasses};
const char* const kMlpParamName[kMlpParams] = {"dense/kernel", "dense/bias", "logits/kernel", "logits/bias"};
const int64_t kMlpParamShape[kMlpParams][2] = {{kDigitPixels, kMlpHidden}, {kMlpHidden, 0},
                                               {kMlpHidden, kDigitClasses}, {kDigitClasses, 0}};

void mlp_bind(struct mlp_params* m) {
  float* cursor = m->storage;
  for (int i = 0; i < kMlpParams; ++i) {
    m->p[i] = cursor;
    cursor += kMlpParamCount[i];
  }
}

void mlp_init(struct mlp_params* m, uint64_t seed) {
  mlp_bind(m);
  for (int i = 0; i < kMlpAllParams; ++i) {
    m->storage[i] = ((float)digits_next_random(&seed) / 4294967296.0f - 0.5f) * 0.3f;
  }
}

void mlp_forward(const struct mlp_params* m, const float* x, float* hidden, float* probs) {
  for (int j = 0; j < kMlpHidden; ++j) {
    float h = m->p[kMlpB1][j];
    for (int i = 0; i < kDigitPixels; ++i) h += x[i] * m->p[kMlpW1][i * kMlpHidden + j];
    hidden[j] = h > 0 ? h : 0;
  }
  float top = -INFINITY, total = 0;
  for (int k = 0; k < kDigitClasses; ++k) {
    float z = m->p[kMlpB2][k];
    for (int j = 0; j < kMlpHidden; ++j) z += hidden[j] * m->p[kMlpW2][j * kDigitClasses + k];
    probs[k] = z;
    if (z > top) top = z;
  }
  for (int k = 0; k < kDigitClasses; ++k) total += probs[k] = expf(probs[k] - top);
  for (int k = 0; k < kDigitClasses; ++k) probs[k] /= total;
}

void mlp_backward(const struct mlp_params* m, const float* xs, const int32_t* ys, uint64_t rows,
                  struct mlp_params* g, double* loss, int64_t* correct) {
  memset(g->storage, 0, sizeof g->storage);
  for (uint64_t s = 0; s < rows; ++s) {
    const float* x = xs + s * kDigitPixels;
    float hidden[kMlpHidden], probs[kDigitClasses], dlogits[kDigitClasses], dhidden[kMlpHidden];
    mlp_forward(m, x, hidden, probs);
    *loss -= log(probs[ys[s]] + 1e-12);
    *correct += digits_argmax(probs) == ys[s];
    for (int k = 0; k < kDigitClasses; ++k) dlogits[k] = probs[k] - (k == ys[s]);
    for (int j = 0; j < kMlpHidden; ++j) {
      float back = 0;
      for (int k = 0; k < kDigitClasses; ++k) {
        g->p[kMlpW2][j * kDigitClasses + k] += hidden[j] * dlogits[k];
        back += m->p[kMlpW2][j * kDigitClasses + k] * dlogits[k];
      }
      dhidden[j] = hidden[j] > 0 ? back : 0;
      g->p[kMlpB1][j] += dhidden[j];
    }
    for (int k = 0; k < kDigitClasses; ++k) g->p[kMlpB2][k] += dlogits[k];
    for (int i = 0; i < kDigitPixels; ++i) {
      if (x[i] == 0) continue;
      for (int j = 0; j < kMlpHidden; ++j) g->p[kMlpW1][i * kMlpHidden + j] += x[i] * dhidden[j];
    }
  }
}

double mlp_accuracy(const struct mlp_params* m, const struct digits* data, int first, int last) {
  int correct = 0;
  for (int s = first; s < last; ++s) {
    float hidden[kMlpHidden], probs[kDigitClasses];
    mlp_forward(m, data->pixels + (size_t)s * kDigitPixels, hidden, probs);
    correct += digits_argmax(probs) == data->labels[s];
  }
  return last > first ? (double)correct / (last - first) : 0;
}
