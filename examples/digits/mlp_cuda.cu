#include "mlp_cuda.h"

#include <math.h>

#include "mlp.h"

namespace {

constexpr int kW1 = 0;
constexpr int kB1 = kW1 + kDigitPixels * kMlpHidden;
constexpr int kW2 = kB1 + kMlpHidden;
constexpr int kB2 = kW2 + kMlpHidden * kDigitClasses;

// Per row: the hidden activations, the gradient of the logits and of the
// hidden layer, the row's loss and whether it was classified right.
struct RowState {
  float hidden[kMlpHidden];
  float dlogits[kDigitClasses];
  float dhidden[kMlpHidden];
  double loss;
  int correct;
};

__global__ void rows_kernel(const float* params, const float* xs, const int32_t* ys, int rows, RowState* state) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= rows) return;
  const float* x = xs + (size_t)s * kDigitPixels;
  RowState& r = state[s];
  for (int j = 0; j < kMlpHidden; ++j) {
    float h = params[kB1 + j];
    for (int i = 0; i < kDigitPixels; ++i) h += x[i] * params[kW1 + i * kMlpHidden + j];
    r.hidden[j] = h > 0 ? h : 0;
  }
  float probs[kDigitClasses];
  float top = -INFINITY, total = 0;
  for (int k = 0; k < kDigitClasses; ++k) {
    float z = params[kB2 + k];
    for (int j = 0; j < kMlpHidden; ++j) z += r.hidden[j] * params[kW2 + j * kDigitClasses + k];
    probs[k] = z;
    if (z > top) top = z;
  }
  for (int k = 0; k < kDigitClasses; ++k) total += probs[k] = expf(probs[k] - top);
  int best = 0;
  for (int k = 0; k < kDigitClasses; ++k) {
    probs[k] /= total;
    if (probs[k] > probs[best]) best = k;
  }
  const int label = ys[s];
  r.loss = -log((double)probs[label] + 1e-12);
  r.correct = best == label;
  for (int k = 0; k < kDigitClasses; ++k) r.dlogits[k] = probs[k] - (k == label ? 1.0f : 0.0f);
  for (int j = 0; j < kMlpHidden; ++j) {
    float back = 0;
    for (int k = 0; k < kDigitClasses; ++k) back += params[kW2 + j * kDigitClasses + k] * r.dlogits[k];
    r.dhidden[j] = r.hidden[j] > 0 ? back : 0;
  }
}

// One thread per parameter: its gradient summed over the rows in row order
// (no atomics: the same sums on every run), then scaled.
__global__ void gradients_kernel(const float* xs, int rows, const RowState* state, float scale, float* grads) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= kMlpAllParams) return;
  float sum = 0;
  if (p < kB1) {
    const int i = p / kMlpHidden, j = p % kMlpHidden;
    for (int s = 0; s < rows; ++s) sum += xs[(size_t)s * kDigitPixels + i] * state[s].dhidden[j];
  } else if (p < kW2) {
    for (int s = 0; s < rows; ++s) sum += state[s].dhidden[p - kB1];
  } else if (p < kB2) {
    const int j = (p - kW2) / kDigitClasses, k = (p - kW2) % kDigitClasses;
    for (int s = 0; s < rows; ++s) sum += state[s].hidden[j] * state[s].dlogits[k];
  } else {
    for (int s = 0; s < rows; ++s) sum += state[s].dlogits[p - kB2];
  }
  grads[p] = sum * scale;
}

__global__ void metrics_kernel(int rows, const RowState* state, double* totals) {
  double loss = 0, correct = 0;
  for (int s = 0; s < rows; ++s) {
    loss += state[s].loss;
    correct += state[s].correct;
  }
  totals[0] = loss;
  totals[1] = correct;
}

}  // namespace

struct mlp_cuda {
  int max_rows;
  RowState* state;
  double* totals;  // device: loss, correct
};

extern "C" cudaError_t mlp_cuda_create(int max_rows, struct mlp_cuda** out) {
  auto* m = new mlp_cuda{max_rows, nullptr, nullptr};
  cudaError_t error = cudaMalloc(&m->state, sizeof(RowState) * (size_t)(max_rows > 0 ? max_rows : 1));
  if (error == cudaSuccess) error = cudaMalloc(&m->totals, 2 * sizeof(double));
  if (error != cudaSuccess) {
    mlp_cuda_destroy(m);
    return error;
  }
  *out = m;
  return cudaSuccess;
}

extern "C" void mlp_cuda_destroy(struct mlp_cuda* m) {
  if (m == nullptr) return;
  cudaFree(m->state);
  cudaFree(m->totals);
  delete m;
}

extern "C" cudaError_t mlp_cuda_backward(struct mlp_cuda* m, const float* params, const float* xs, const int32_t* ys,
                                         int rows, float scale, float* grads, double* loss, int64_t* correct,
                                         cudaStream_t stream) {
  if (rows < 0 || rows > m->max_rows) return cudaErrorInvalidValue;
  constexpr int kThreads = 128;
  if (rows > 0) rows_kernel<<<(rows + kThreads - 1) / kThreads, kThreads, 0, stream>>>(params, xs, ys, rows, m->state);
  gradients_kernel<<<(kMlpAllParams + kThreads - 1) / kThreads, kThreads, 0, stream>>>(xs, rows, m->state, scale, grads);
  metrics_kernel<<<1, 1, 0, stream>>>(rows, m->state, m->totals);
  double totals[2] = {0, 0};
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) error = cudaMemcpyAsync(totals, m->totals, sizeof totals, cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) return error;
  *loss += totals[0];
  *correct += (int64_t)totals[1];
  return cudaSuccess;
}
