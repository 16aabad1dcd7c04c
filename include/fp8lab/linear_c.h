/* The FP8 linear layer y = x Wᵀ and its backward behind a C ABI (libfp8lab_linear.so), for
 * callers outside C++: python/fp8lab_torch/linear.py loads it with ctypes.
 *
 *   x  [rows, in]  bf16      W  [out, in] bf16      y  [rows, out] bf16
 *   dY [rows, out] bf16  ->  dX [rows, in] bf16,    dW [out, in]   f32 (or bf16)
 *
 * The arithmetic is fp8lab's own linear layer (fp8lab/linear.hpp on the CPU, fp8lab/linear_cuda.hpp
 * on the GPU, the layers the "cpu" and "cuda" backends run): the same bits as a model trained by
 * fp8lab. Recipes: "bf16" (BF16 GEMMs, fp32 accumulation) and the FP8 scaling recipes
 * "tensorwise", "rowwise", "blockwise" (fp8lab/fp8_recipe.hpp: E4M3 x and W, E5M2 dY, current
 * scaling). FP8 recipes need rows, in and out to be multiples of 16 (blockwise: 128) on both
 * backends; "bf16" takes any shape.
 *
 * Contract:
 * - Every function returns a status (FP8LAB_LINEAR_OK or an FP8LAB_LINEAR_E_* code); no C++
 *   exception crosses the ABI. After a failure fp8lab_linear_last_error() says why, naming the
 *   bad value (the argument, the pointer, the dtype code, the shape). It is per thread and valid
 *   until that thread's next call.
 * - Memory is the caller's: x, W, y, dY, dX, dW are contiguous row-major buffers that the caller
 *   owns: host pointers for backend "cpu", device pointers of the current CUDA device for
 *   "cuda", checked with cudaPointerGetAttributes: host memory is refused on "cuda", and device
 *   memory on "cpu" wherever a CUDA driver and device are present to tell. Pointers must be
 *   aligned to their element size, and to 16 bytes on "cuda" (cuBLASLt). A dtype code says
 *   what each buffer holds and is checked.
 * - Streams ("cuda"): every call takes the caller's cudaStream_t as `stream` (NULL: the legacy
 *   default stream) and enqueues all its work on that stream, without synchronising: results
 *   are ready in stream order, exactly like a library kernel launched on that stream (no event
 *   pair with a stream of the library's own is needed: it has none). The saved state's device
 *   memory is allocated and freed stream-ordered on the stream of the call, from a memory pool
 *   the library keeps per device and, like a caching allocator, never gives back before the
 *   process ends. Calls on one fp8lab_linear must be ordered (one stream, or the caller orders
 *   them): the handle owns one cuBLASLt workspace. "cpu" ignores `stream`.
 * - A forward returns a saved state (fp8lab_linear_saved) for its backward: the forward-rounded
 *   FP8 operands and their scales. Backward reads only that, never re-casting x or W. Under the
 *   "bf16" recipe the saved state refers to the caller's x and W instead: keep them alive and
 *   unchanged until the backward. A saved state may serve several backwards; free it with
 *   fp8lab_linear_saved_destroy before destroying its linear.
 * - Non-finite inputs: on "cpu" a NaN or inf in x, W or dY is an FP8LAB_LINEAR_E_NON_FINITE
 *   error naming the tensor. On "cuda" the casts flag it on the device without synchronising;
 *   fp8lab_linear_counts reports the flags (the bf16 recipe does not check on "cuda").
 * - A handle is not thread-safe; distinct handles are independent.
 */
#ifndef FP8LAB_LINEAR_C_H
#define FP8LAB_LINEAR_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a function's meaning or signature changes; callers compare it with
 * fp8lab_linear_abi_version() of the library they loaded. */
#define FP8LAB_LINEAR_ABI_VERSION 1

#if defined(__GNUC__)
#define FP8LAB_LINEAR_API __attribute__((visibility("default")))
#else
#define FP8LAB_LINEAR_API
#endif

/* Statuses. */
#define FP8LAB_LINEAR_OK 0
#define FP8LAB_LINEAR_E_INVALID_ARGUMENT 1 /* null or misaligned pointer, unknown name, device */
#define FP8LAB_LINEAR_E_SHAPE 2            /* a size, or one the recipe cannot tile */
#define FP8LAB_LINEAR_E_DTYPE 3            /* a dtype code the layer does not take there */
#define FP8LAB_LINEAR_E_NON_FINITE 4       /* NaN or inf in x, W or dY ("cpu") */
#define FP8LAB_LINEAR_E_CUDA 5             /* a CUDA or cuBLASLt failure, or no usable GPU */
#define FP8LAB_LINEAR_E_OUT_OF_MEMORY 6
#define FP8LAB_LINEAR_E_INTERNAL 7

/* Dtype codes of the buffers. */
#define FP8LAB_LINEAR_F32 0
#define FP8LAB_LINEAR_BF16 1 /* bfloat16 bit patterns, uint16 */

/* fp8lab_linear_scales: amax, scale, inv_scale of x, W and dY (9 floats);
 * fp8lab_linear_counts: saturated, underflow, non-finite flag of x, W and dY (9 integers). */
#define FP8LAB_LINEAR_STATS_LEN 9

typedef struct fp8lab_linear fp8lab_linear;             /* a layer: backend, recipe, shape */
typedef struct fp8lab_linear_saved fp8lab_linear_saved; /* what one forward keeps */

FP8LAB_LINEAR_API int fp8lab_linear_abi_version(void);

/* Why the calling thread's last failed call failed ("" before any failure). */
FP8LAB_LINEAR_API const char* fp8lab_linear_last_error(void);

/* A linear of `in_features` -> `out_features` on backend "cpu" or "cuda" under `recipe`
 * ("bf16", "tensorwise", "rowwise", "blockwise"). "cuda" fails with FP8LAB_LINEAR_E_CUDA when
 * there is no usable GPU or the library was built without CUDA. */
FP8LAB_LINEAR_API int fp8lab_linear_create(const char* backend, const char* recipe,
                                           int64_t in_features, int64_t out_features,
                                           fp8lab_linear** out);
/* NULL is accepted (nothing to do). */
FP8LAB_LINEAR_API int fp8lab_linear_destroy(fp8lab_linear* linear);

/* y = x Wᵀ for `rows` rows of x. On success *saved receives the state for the backward. */
FP8LAB_LINEAR_API int fp8lab_linear_forward(fp8lab_linear* linear, int64_t rows, const void* x,
                                            int x_dtype, const void* w, int w_dtype, void* y,
                                            int y_dtype, void* stream,
                                            fp8lab_linear_saved** saved);

/* dX = dY W and dW = dYᵀ x from `saved` (made by this linear's forward of `rows` rows).
 * dW is f32 or bf16. accumulate_dw != 0: dW += dYᵀ x (a bf16 dW receives its old value plus
 * the product summed in fp32 and rounded once); 0: dW is overwritten. */
FP8LAB_LINEAR_API int fp8lab_linear_backward(fp8lab_linear* linear, fp8lab_linear_saved* saved,
                                             int64_t rows, const void* dy, int dy_dtype, void* dx,
                                             int dx_dtype, void* dw, int dw_dtype,
                                             int accumulate_dw, void* stream);

/* NULL is accepted. "cuda": the memory is freed on the stream of the state's last call. */
FP8LAB_LINEAR_API int fp8lab_linear_saved_destroy(fp8lab_linear_saved* saved);

/* What the casts of `saved` did, into out[0 .. FP8LAB_LINEAR_STATS_LEN) (n: out's length):
 * per tensor x, W, dY in that order. dY's entries are zero until a backward ran; all are zero
 * under "bf16". The rowwise and blockwise recipes scale per group: their scale and inv_scale
 * entries are 0 (the amax is the whole tensor's). "cuda": waits for the state's stream. */
FP8LAB_LINEAR_API int fp8lab_linear_scales(const fp8lab_linear_saved* saved, float* out,
                                           int64_t n);
FP8LAB_LINEAR_API int fp8lab_linear_counts(const fp8lab_linear_saved* saved, int64_t* out,
                                           int64_t n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FP8LAB_LINEAR_C_H */
