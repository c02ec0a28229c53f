/* The digits MLP's training pass on a CUDA device, for GPU replicas: the
 * arithmetic of mlp_backward (mlp.h) with every row's forward and backward in
 * a thread of its own, then every parameter's gradient summed over the rows
 * in row order. Parameters and gradients are one block in mlp_params'
 * storage layout (W1, b1, W2, b2), in device memory. */
#ifndef DIGITS_MLP_CUDA_H
#define DIGITS_MLP_CUDA_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device scratch for batches of up to max_rows rows, on the current device. */
struct mlp_cuda;
cudaError_t mlp_cuda_create(int max_rows, struct mlp_cuda** out);
void mlp_cuda_destroy(struct mlp_cuda* m);

/* grads = scale * (gradient of the summed cross-entropy of `rows` rows),
 * params, xs (rows x 64 pixels), ys and grads in device memory, enqueued on
 * `stream`; then waits for it and adds the rows' summed loss to *loss and
 * their correct predictions to *correct. */
cudaError_t mlp_cuda_backward(struct mlp_cuda* m, const float* params, const float* xs, const int32_t* ys, int rows,
                              float scale, float* grads, double* loss, int64_t* correct, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
