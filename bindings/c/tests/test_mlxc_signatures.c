/* mlx-c's interface, as a compile-time check: every function of mlx-c (its public headers, up to
 * version 0.4, and io_gguf.h) that braid provides is declared again here with mlx-c's own prototype, so a
 * signature that differs fails to compile ("conflicting types"), and referenced, so a missing
 * function fails to link. mlx-c functions that braid does not provide, and why, are listed in
 * docs/porting-from-mlx.md (C API). */
#include "check.h"  /* first: it sets the feature macros */


/* export.h, export_impl.h, and closure.h's kwargs closure */
mlx_closure_kwargs mlx_closure_kwargs_new(void);
int mlx_closure_kwargs_free(mlx_closure_kwargs cls);
mlx_closure_kwargs mlx_closure_kwargs_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_map_string_to_array));
mlx_closure_kwargs mlx_closure_kwargs_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_map_string_to_array, void*), void* payload, void (*dtor)(void*));
int mlx_closure_kwargs_set(mlx_closure_kwargs* cls, const mlx_closure_kwargs src);
int mlx_closure_kwargs_apply(mlx_vector_array* res, mlx_closure_kwargs cls, const mlx_vector_array input_0, const mlx_map_string_to_array input_1);
int mlx_export_function(const char* file, const mlx_closure fun, const mlx_vector_array args, bool shapeless);
int mlx_export_function_kwargs(const char* file, const mlx_closure_kwargs fun, const mlx_vector_array args, const mlx_map_string_to_array kwargs, bool shapeless);
mlx_function_exporter mlx_function_exporter_new(const char* file, const mlx_closure fun, bool shapeless);
int mlx_function_exporter_free(mlx_function_exporter xfunc);
int mlx_function_exporter_apply(const mlx_function_exporter xfunc, const mlx_vector_array args);
int mlx_function_exporter_apply_kwargs(const mlx_function_exporter xfunc, const mlx_vector_array args, const mlx_map_string_to_array kwargs);
mlx_imported_function mlx_imported_function_new(const char* file);
int mlx_imported_function_free(mlx_imported_function xfunc);
int mlx_imported_function_apply(mlx_vector_array* res, const mlx_imported_function xfunc, const mlx_vector_array args);
int mlx_imported_function_apply_kwargs(mlx_vector_array* res, const mlx_imported_function xfunc, const mlx_vector_array args, const mlx_map_string_to_array kwargs);

/* array.h */
size_t mlx_dtype_size(mlx_dtype dtype);
int mlx_array_tostring(mlx_string* str, const mlx_array arr);
mlx_array mlx_array_new(void);
int mlx_array_free(mlx_array arr);
mlx_array mlx_array_new_bool(bool val);
mlx_array mlx_array_new_int(int val);
mlx_array mlx_array_new_float32(float val);
mlx_array mlx_array_new_float(float val);
mlx_array mlx_array_new_float64(double val);
mlx_array mlx_array_new_double(double val);
mlx_array mlx_array_new_complex(float real_val, float imag_val);
mlx_array mlx_array_new_data(const void* data, const int* shape, int dim, mlx_dtype dtype);
mlx_array mlx_array_new_data_managed(void* data, const int* shape, int dim, mlx_dtype dtype, void (*dtor)(void*));
mlx_array mlx_array_new_data_managed_payload(void* data, const int* shape, int dim, mlx_dtype dtype, void* payload, void (*dtor)(void*));
int mlx_array_set(mlx_array* arr, const mlx_array src);
int mlx_array_set_bool(mlx_array* arr, bool val);
int mlx_array_set_int(mlx_array* arr, int val);
int mlx_array_set_float32(mlx_array* arr, float val);
int mlx_array_set_float(mlx_array* arr, float val);
int mlx_array_set_float64(mlx_array* arr, double val);
int mlx_array_set_double(mlx_array* arr, double val);
int mlx_array_set_complex(mlx_array* arr, float real_val, float imag_val);
int mlx_array_set_data(mlx_array* arr, const void* data, const int* shape, int dim, mlx_dtype dtype);
size_t mlx_array_itemsize(const mlx_array arr);
size_t mlx_array_size(const mlx_array arr);
size_t mlx_array_nbytes(const mlx_array arr);
size_t mlx_array_ndim(const mlx_array arr);
const int* mlx_array_shape(const mlx_array arr);
const size_t* mlx_array_strides(const mlx_array arr);
int mlx_array_dim(const mlx_array arr, int dim);
mlx_dtype mlx_array_dtype(const mlx_array arr);
int mlx_array_eval(mlx_array arr);
int mlx_array_item_bool(bool* res, const mlx_array arr);
int mlx_array_item_uint8(uint8_t* res, const mlx_array arr);
int mlx_array_item_uint16(uint16_t* res, const mlx_array arr);
int mlx_array_item_uint32(uint32_t* res, const mlx_array arr);
int mlx_array_item_uint64(uint64_t* res, const mlx_array arr);
int mlx_array_item_int8(int8_t* res, const mlx_array arr);
int mlx_array_item_int16(int16_t* res, const mlx_array arr);
int mlx_array_item_int32(int32_t* res, const mlx_array arr);
int mlx_array_item_int64(int64_t* res, const mlx_array arr);
int mlx_array_item_float32(float* res, const mlx_array arr);
int mlx_array_item_float64(double* res, const mlx_array arr);
int mlx_array_item_complex64(mlx_complex64_t* res, const mlx_array arr);
const bool* mlx_array_data_bool(const mlx_array arr);
const uint8_t* mlx_array_data_uint8(const mlx_array arr);
const uint16_t* mlx_array_data_uint16(const mlx_array arr);
const uint32_t* mlx_array_data_uint32(const mlx_array arr);
const uint64_t* mlx_array_data_uint64(const mlx_array arr);
const int8_t* mlx_array_data_int8(const mlx_array arr);
const int16_t* mlx_array_data_int16(const mlx_array arr);
const int32_t* mlx_array_data_int32(const mlx_array arr);
const int64_t* mlx_array_data_int64(const mlx_array arr);
const float* mlx_array_data_float32(const mlx_array arr);
const double* mlx_array_data_float64(const mlx_array arr);
const mlx_complex64_t* mlx_array_data_complex64(const mlx_array arr);
int _mlx_array_is_available(bool* res, const mlx_array arr);
int _mlx_array_wait(const mlx_array arr);
int _mlx_array_is_contiguous(bool* res, const mlx_array arr);
int _mlx_array_is_row_contiguous(bool* res, const mlx_array arr);
int _mlx_array_is_col_contiguous(bool* res, const mlx_array arr);

/* closure.h */
mlx_closure mlx_closure_new(void);
int mlx_closure_free(mlx_closure cls);
mlx_closure mlx_closure_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array));
mlx_closure mlx_closure_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array, void*), void* payload, void (*dtor)(void*));
int mlx_closure_set(mlx_closure* cls, const mlx_closure src);
int mlx_closure_apply(mlx_vector_array* res, mlx_closure cls, const mlx_vector_array input);
mlx_closure mlx_closure_new_unary(int (*fun)(mlx_array*, const mlx_array));
mlx_closure_value_and_grad mlx_closure_value_and_grad_new(void);
int mlx_closure_value_and_grad_free(mlx_closure_value_and_grad cls);
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func(int (*fun)(mlx_vector_array*, mlx_vector_array*, const mlx_vector_array));
mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func_payload(int (*fun)(mlx_vector_array*, mlx_vector_array*, const mlx_vector_array, void*), void* payload, void (*dtor)(void*));
int mlx_closure_value_and_grad_set(mlx_closure_value_and_grad* cls, const mlx_closure_value_and_grad src);
int mlx_closure_value_and_grad_apply(mlx_vector_array* res_0, mlx_vector_array* res_1, mlx_closure_value_and_grad cls, const mlx_vector_array input);
mlx_closure_custom mlx_closure_custom_new(void);
int mlx_closure_custom_free(mlx_closure_custom cls);
mlx_closure_custom mlx_closure_custom_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const mlx_vector_array));
mlx_closure_custom mlx_closure_custom_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const mlx_vector_array, void*), void* payload, void (*dtor)(void*));
int mlx_closure_custom_set(mlx_closure_custom* cls, const mlx_closure_custom src);
int mlx_closure_custom_apply(mlx_vector_array* res, mlx_closure_custom cls, const mlx_vector_array input_0, const mlx_vector_array input_1, const mlx_vector_array input_2);
mlx_closure_custom_jvp mlx_closure_custom_jvp_new(void);
int mlx_closure_custom_jvp_free(mlx_closure_custom_jvp cls);
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func(int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const int*, size_t _num));
mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func_payload(int (*fun)(mlx_vector_array*, const mlx_vector_array, const mlx_vector_array, const int*, size_t _num, void*), void* payload, void (*dtor)(void*));
int mlx_closure_custom_jvp_set(mlx_closure_custom_jvp* cls, const mlx_closure_custom_jvp src);
int mlx_closure_custom_jvp_apply(mlx_vector_array* res, mlx_closure_custom_jvp cls, const mlx_vector_array input_0, const mlx_vector_array input_1, const int* input_2, size_t input_2_num);
mlx_closure_custom_vmap mlx_closure_custom_vmap_new(void);
int mlx_closure_custom_vmap_free(mlx_closure_custom_vmap cls);
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func(int (*fun)(mlx_vector_array*, mlx_vector_int*, const mlx_vector_array, const int*, size_t _num));
mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func_payload(int (*fun)(mlx_vector_array*, mlx_vector_int*, const mlx_vector_array, const int*, size_t _num, void*), void* payload, void (*dtor)(void*));
int mlx_closure_custom_vmap_set(mlx_closure_custom_vmap* cls, const mlx_closure_custom_vmap src);
int mlx_closure_custom_vmap_apply(mlx_vector_array* res_0, mlx_vector_int* res_1, mlx_closure_custom_vmap cls, const mlx_vector_array input_0, const int* input_1, size_t input_1_num);

/* compile.h */
int mlx_compile(mlx_closure* res, const mlx_closure fun, bool shapeless);
int mlx_detail_compile(mlx_closure* res, const mlx_closure fun, uintptr_t fun_id, bool shapeless,
                       const uint64_t* constants, size_t constants_num);
int mlx_detail_compile_clear_cache(void);
int mlx_detail_compile_erase(uintptr_t fun_id);
int mlx_disable_compile(void);
int mlx_enable_compile(void);
int mlx_set_compile_mode(mlx_compile_mode mode);

/* device.h */
mlx_device mlx_device_new(void);
mlx_device mlx_device_new_type(mlx_device_type type, int index);
int mlx_device_free(mlx_device dev);
int mlx_device_set(mlx_device* dev, const mlx_device src);
int mlx_device_tostring(mlx_string* str, mlx_device dev);
bool mlx_device_equal(mlx_device lhs, mlx_device rhs);
int mlx_device_get_index(int* index, mlx_device dev);
int mlx_device_get_type(mlx_device_type* type, mlx_device dev);
int mlx_get_default_device(mlx_device* dev);
int mlx_set_default_device(mlx_device dev);
int mlx_device_is_available(bool* avail, mlx_device dev);
int mlx_device_count(int* count, mlx_device_type type);
mlx_device_info mlx_device_info_new(void);
int mlx_device_info_get(mlx_device_info* info, mlx_device dev);
int mlx_device_info_free(mlx_device_info info);
int mlx_device_info_has_key(bool* exists, mlx_device_info info, const char* key);
int mlx_device_info_is_string(bool* is_string, mlx_device_info info, const char* key);
int mlx_device_info_get_string(const char** value, mlx_device_info info, const char* key);
int mlx_device_info_get_size(size_t* value, mlx_device_info info, const char* key);
int mlx_device_info_get_keys(mlx_vector_string* keys, mlx_device_info info);
int mlx_synchronize_default(void);
int mlx_clear_streams(void);
mlx_stream mlx_stream_new_thread_unsafe(mlx_device dev);
mlx_vector_stream mlx_vector_stream_new(void);
int mlx_vector_stream_set(mlx_vector_stream* vec, const mlx_vector_stream src);
int mlx_vector_stream_free(mlx_vector_stream vec);
mlx_vector_stream mlx_vector_stream_new_data(const mlx_stream* data, size_t size);
mlx_vector_stream mlx_vector_stream_new_value(const mlx_stream val);
int mlx_vector_stream_set_data(mlx_vector_stream* vec, const mlx_stream* data, size_t size);
int mlx_vector_stream_set_value(mlx_vector_stream* vec, const mlx_stream val);
int mlx_vector_stream_append_data(mlx_vector_stream vec, const mlx_stream* data, size_t size);
int mlx_vector_stream_append_value(mlx_vector_stream vec, const mlx_stream val);
size_t mlx_vector_stream_size(mlx_vector_stream vec);
int mlx_vector_stream_get(mlx_stream* res, const mlx_vector_stream vec, size_t idx);
int mlx_get_streams(mlx_vector_stream* res);
mlx_stream_thread_local mlx_stream_thread_local_new(mlx_device dev);
int mlx_stream_thread_local_set(mlx_stream_thread_local* tls, const mlx_stream_thread_local src);
int mlx_stream_thread_local_free(mlx_stream_thread_local tls);
int mlx_stream_from_thread_local(mlx_stream* res, const mlx_stream_thread_local tls);
int mlx_synchronize_thread_local(mlx_stream_thread_local tls);

/* distributed_group.h, distributed.h (mlx-c's, with init and split writing through `res`) */
mlx_distributed_group mlx_distributed_group_new(void);
int mlx_distributed_group_free(mlx_distributed_group group);
int mlx_distributed_init(mlx_distributed_group* res, bool strict, const char* bk);
int mlx_distributed_group_rank(mlx_distributed_group group);
int mlx_distributed_group_size(mlx_distributed_group group);
int mlx_distributed_group_split(mlx_distributed_group* res, mlx_distributed_group group, int color, int key);
bool mlx_distributed_is_available(const char* bk);
int mlx_distributed_all_gather(mlx_array* res, const mlx_array x, const mlx_distributed_group group, const mlx_stream S);
int mlx_distributed_all_max(mlx_array* res, const mlx_array x, const mlx_distributed_group group, const mlx_stream s);
int mlx_distributed_all_min(mlx_array* res, const mlx_array x, const mlx_distributed_group group, const mlx_stream s);
int mlx_distributed_all_sum(mlx_array* res, const mlx_array x, const mlx_distributed_group group, const mlx_stream s);
int mlx_distributed_recv(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, int src, const mlx_distributed_group group, const mlx_stream s);
int mlx_distributed_recv_like(mlx_array* res, const mlx_array x, int src, const mlx_distributed_group group, const mlx_stream s);
int mlx_distributed_send(mlx_array* res, const mlx_array x, int dst, const mlx_distributed_group group, const mlx_stream s);
int mlx_distributed_sum_scatter(mlx_array* res, const mlx_array x, const mlx_distributed_group group, const mlx_stream s);

/* error.h */
void mlx_set_error_handler(mlx_error_handler_func handler, void* data, void (*dtor)(void*));
void _mlx_error(const char* file, const int line, const char* fmt, ...);

/* fast.h (without the custom-kernel functions) */
int mlx_fast_layer_norm(mlx_array* res, const mlx_array x, const mlx_array weight, const mlx_array bias, float eps, const mlx_stream s);
int mlx_fast_rms_norm(mlx_array* res, const mlx_array x, const mlx_array weight, float eps, const mlx_stream s);
int mlx_fast_rope(mlx_array* res, const mlx_array x, int dims, bool traditional, mlx_optional_float base, float scale, int offset, const mlx_array freqs, const mlx_stream s);
int mlx_fast_rope_dynamic(mlx_array* res, const mlx_array x, int dims, bool traditional, mlx_optional_float base, float scale, const mlx_array offset, const mlx_array freqs, const mlx_stream s);
int mlx_fast_scaled_dot_product_attention(mlx_array* res, const mlx_array queries, const mlx_array keys, const mlx_array values, float scale, const char* mask_mode, const mlx_array mask_arr, const mlx_array sinks, const mlx_stream s);

/* fft.h: mlx-c's current form, with mlx_fft_norm */
int mlx_fft_fft(mlx_array* res, const mlx_array a, int n, int axis, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_fft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_fftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_fftshift(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_ifft(mlx_array* res, const mlx_array a, int n, int axis, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_ifft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_ifftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_ifftshift(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_irfft(mlx_array* res, const mlx_array a, int n, int axis, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_irfft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_irfftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_rfft(mlx_array* res, const mlx_array a, int n, int axis, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_rfft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_rfftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, mlx_fft_norm norm, const mlx_stream s);
int mlx_fft_fftfreq(mlx_array* res, int n, double d, const mlx_stream s);
int mlx_fft_rfftfreq(mlx_array* res, int n, double d, const mlx_stream s);
/* fft.h: mlx-c's form from before `norm`, declared by the same names (the arity macros take
 * these declarations to the _default_norm functions, as they take calls) */
int mlx_fft_fft(mlx_array* res, const mlx_array a, int n, int axis, const mlx_stream s);
int mlx_fft_fft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_fftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_ifft(mlx_array* res, const mlx_array a, int n, int axis, const mlx_stream s);
int mlx_fft_ifft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_ifftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_irfft(mlx_array* res, const mlx_array a, int n, int axis, const mlx_stream s);
int mlx_fft_irfft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_irfftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_rfft(mlx_array* res, const mlx_array a, int n, int axis, const mlx_stream s);
int mlx_fft_rfft2(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_fft_rfftn(mlx_array* res, const mlx_array a, const int* n, size_t n_num, const int* axes, size_t axes_num, const mlx_stream s);
/* linalg.h */
int mlx_linalg_cholesky(mlx_array* res, const mlx_array a, bool upper, const mlx_stream s);
int mlx_linalg_cholesky_inv(mlx_array* res, const mlx_array a, bool upper, const mlx_stream s);
int mlx_linalg_cross(mlx_array* res, const mlx_array a, const mlx_array b, int axis, const mlx_stream s);
int mlx_linalg_det(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_linalg_eig(mlx_array* res_0, mlx_array* res_1, const mlx_array a, const mlx_stream s);
int mlx_linalg_eigh(mlx_array* res_0, mlx_array* res_1, const mlx_array a, const char* UPLO, const mlx_stream s);
int mlx_linalg_eigvals(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_linalg_eigvalsh(mlx_array* res, const mlx_array a, const char* UPLO, const mlx_stream s);
int mlx_linalg_inv(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_linalg_lu(mlx_vector_array* res, const mlx_array a, const mlx_stream s);
int mlx_linalg_lu_factor(mlx_array* res_0, mlx_array* res_1, const mlx_array a, const mlx_stream s);
int mlx_linalg_norm(mlx_array* res, const mlx_array a, double ord, const int* axis, size_t axis_num, bool keepdims, const mlx_stream s);
int mlx_linalg_norm_matrix(mlx_array* res, const mlx_array a, const char* ord, const int* axis, size_t axis_num, bool keepdims, const mlx_stream s);
int mlx_linalg_norm_l2(mlx_array* res, const mlx_array a, const int* axis, size_t axis_num, bool keepdims, const mlx_stream s);
int mlx_linalg_pinv(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_linalg_qr(mlx_array* res_0, mlx_array* res_1, const mlx_array a, const mlx_stream s);
int mlx_linalg_slogdet(mlx_array* res_0, mlx_array* res_1, const mlx_array a, const mlx_stream s);
int mlx_linalg_solve(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_linalg_solve_triangular(mlx_array* res, const mlx_array a, const mlx_array b, bool upper, const mlx_stream s);
int mlx_linalg_svd(mlx_vector_array* res, const mlx_array a, bool compute_uv, const mlx_stream s);
int mlx_linalg_tri_inv(mlx_array* res, const mlx_array a, bool upper, const mlx_stream s);

/* io_types.h, io.h */
mlx_io_reader mlx_io_reader_new(void* desc, mlx_io_vtable vtable);
int mlx_io_reader_descriptor(void** desc_, mlx_io_reader io);
int mlx_io_reader_tostring(mlx_string* str_, mlx_io_reader io);
int mlx_io_reader_free(mlx_io_reader io);
mlx_io_writer mlx_io_writer_new(void* desc, mlx_io_vtable vtable);
int mlx_io_writer_descriptor(void** desc_, mlx_io_writer io);
int mlx_io_writer_tostring(mlx_string* str_, mlx_io_writer io);
int mlx_io_writer_free(mlx_io_writer io);
int mlx_load_reader(mlx_array* res, mlx_io_reader in_stream, const mlx_stream s);
int mlx_load(mlx_array* res, const char* file, const mlx_stream s);
int mlx_load_safetensors_reader(mlx_map_string_to_array* res_0, mlx_map_string_to_string* res_1, mlx_io_reader in_stream, const mlx_stream s);
int mlx_load_safetensors(mlx_map_string_to_array* res_0, mlx_map_string_to_string* res_1, const char* file, const mlx_stream s);
int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a);
int mlx_save(const char* file, const mlx_array a);
int mlx_save_safetensors_writer(mlx_io_writer in_stream, const mlx_map_string_to_array param, const mlx_map_string_to_string metadata);
int mlx_save_safetensors(const char* file, const mlx_map_string_to_array param, const mlx_map_string_to_string metadata);

/* io_gguf.h */
_Static_assert(MLX_GGUF_METADATA_NONE == 0 && MLX_GGUF_METADATA_ARRAY == 1 && MLX_GGUF_METADATA_STRING == 2 &&
                   MLX_GGUF_METADATA_STRING_VECTOR == 3,
               "mlx-c's metadata type values");
mlx_gguf_metadata mlx_gguf_metadata_new_string(const char* value);
mlx_gguf_metadata mlx_gguf_metadata_new_array(const mlx_array value);
mlx_gguf_metadata mlx_gguf_metadata_new_string_vector(const mlx_vector_string value);
mlx_gguf_metadata_type mlx_gguf_metadata_get_type(const mlx_gguf_metadata metadata);
int mlx_gguf_metadata_get_string(mlx_string* res, const mlx_gguf_metadata metadata);
int mlx_gguf_metadata_get_array(mlx_array* res, const mlx_gguf_metadata metadata);
int mlx_gguf_metadata_get_string_vector(mlx_vector_string* res, const mlx_gguf_metadata metadata);
int mlx_gguf_metadata_free(mlx_gguf_metadata metadata);
mlx_map_string_to_gguf_metadata mlx_map_string_to_gguf_metadata_new(void);
int mlx_map_string_to_gguf_metadata_set(mlx_map_string_to_gguf_metadata* map, const mlx_map_string_to_gguf_metadata src);
int mlx_map_string_to_gguf_metadata_insert(mlx_map_string_to_gguf_metadata map, const char* key, const mlx_gguf_metadata value);
int mlx_map_string_to_gguf_metadata_get(mlx_gguf_metadata* res, const mlx_map_string_to_gguf_metadata map, const char* key);
int mlx_map_string_to_gguf_metadata_free(mlx_map_string_to_gguf_metadata map);
mlx_map_string_to_gguf_metadata_iterator mlx_map_string_to_gguf_metadata_iterator_new(mlx_map_string_to_gguf_metadata map);
int mlx_map_string_to_gguf_metadata_iterator_free(mlx_map_string_to_gguf_metadata_iterator it);
int mlx_map_string_to_gguf_metadata_iterator_next(const char** key, mlx_gguf_metadata* value, mlx_map_string_to_gguf_metadata_iterator it);
int mlx_load_gguf(mlx_map_string_to_array* res_arrays, mlx_map_string_to_gguf_metadata* res_metadata, const char* file, const mlx_stream s);
int mlx_save_gguf(const char* file, const mlx_map_string_to_array arrays, const mlx_map_string_to_gguf_metadata metadata);

/* map.h */
mlx_map_string_to_array mlx_map_string_to_array_new(void);
int mlx_map_string_to_array_set(mlx_map_string_to_array* map, const mlx_map_string_to_array src);
int mlx_map_string_to_array_free(mlx_map_string_to_array map);
int mlx_map_string_to_array_insert(mlx_map_string_to_array map, const char* key, const mlx_array value);
int mlx_map_string_to_array_get(mlx_array* value, const mlx_map_string_to_array map, const char* key);
mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(mlx_map_string_to_array map);
int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it);
int mlx_map_string_to_array_iterator_next(const char** key, mlx_array* value, mlx_map_string_to_array_iterator it);
mlx_map_string_to_string mlx_map_string_to_string_new(void);
int mlx_map_string_to_string_set(mlx_map_string_to_string* map, const mlx_map_string_to_string src);
int mlx_map_string_to_string_free(mlx_map_string_to_string map);
int mlx_map_string_to_string_insert(mlx_map_string_to_string map, const char* key, const char* value);
int mlx_map_string_to_string_get(const char** value, const mlx_map_string_to_string map, const char* key);
mlx_map_string_to_string_iterator mlx_map_string_to_string_iterator_new(mlx_map_string_to_string map);
int mlx_map_string_to_string_iterator_free(mlx_map_string_to_string_iterator it);
int mlx_map_string_to_string_iterator_next(const char** key, const char** value, mlx_map_string_to_string_iterator it);

/* memory.h */
int mlx_clear_cache(void);
int mlx_get_active_memory(size_t* res);
int mlx_get_cache_memory(size_t* res);
int mlx_get_memory_limit(size_t* res);
int mlx_get_peak_memory(size_t* res);
int mlx_reset_peak_memory(void);
int mlx_set_cache_limit(size_t* res, size_t limit);
int mlx_set_memory_limit(size_t* res, size_t limit);
int mlx_set_wired_limit(size_t* res, size_t limit);

/* ops.h */
int mlx_abs(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_add(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_addmm(mlx_array* res, const mlx_array c, const mlx_array a, const mlx_array b, float alpha, float beta, const mlx_stream s);
int mlx_all_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_all_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_all(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_allclose(mlx_array* res, const mlx_array a, const mlx_array b, double rtol, double atol, bool equal_nan, const mlx_stream s);
int mlx_any_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_any_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_any(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_arange(mlx_array* res, double start, double stop, double step, mlx_dtype dtype, const mlx_stream s);
int mlx_arccos(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arccosh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arcsin(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arcsinh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arctan(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arctan2(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_arctanh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_argmax_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_argmax(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_argmin_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_argmin(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_argpartition_axis(mlx_array* res, const mlx_array a, int kth, int axis, const mlx_stream s);
int mlx_argpartition(mlx_array* res, const mlx_array a, int kth, const mlx_stream s);
int mlx_argsort_axis(mlx_array* res, const mlx_array a, int axis, const mlx_stream s);
int mlx_argsort(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_array_equal(mlx_array* res, const mlx_array a, const mlx_array b, bool equal_nan, const mlx_stream s);
int mlx_as_strided(mlx_array* res, const mlx_array a, const int* shape, size_t shape_num, const int64_t* strides, size_t strides_num, size_t offset, const mlx_stream s);
int mlx_astype(mlx_array* res, const mlx_array a, mlx_dtype dtype, const mlx_stream s);
int mlx_atleast_1d(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_atleast_2d(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_atleast_3d(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_bartlett(mlx_array* res, int M, const mlx_stream s);
int mlx_bitwise_and(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_bitwise_invert(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_bitwise_or(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_bitwise_xor(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_blackman(mlx_array* res, int M, const mlx_stream s);
int mlx_block_masked_mm(mlx_array* res, const mlx_array a, const mlx_array b, int block_size, const mlx_array mask_out, const mlx_array mask_lhs, const mlx_array mask_rhs, const mlx_stream s);
int mlx_broadcast_arrays(mlx_vector_array* res, const mlx_vector_array inputs, const mlx_stream s);
int mlx_broadcast_to(mlx_array* res, const mlx_array a, const int* shape, size_t shape_num, const mlx_stream s);
int mlx_ceil(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_clip(mlx_array* res, const mlx_array a, const mlx_array a_min, const mlx_array a_max, const mlx_stream s);
int mlx_concatenate_axis(mlx_array* res, const mlx_vector_array arrays, int axis, const mlx_stream s);
int mlx_concatenate(mlx_array* res, const mlx_vector_array arrays, const mlx_stream s);
int mlx_conjugate(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_contiguous(mlx_array* res, const mlx_array a, bool allow_col_major, const mlx_stream s);
int mlx_conv1d(mlx_array* res, const mlx_array input, const mlx_array weight, int stride, int padding, int dilation, int groups, const mlx_stream s);
int mlx_conv2d(mlx_array* res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1, int padding_0, int padding_1, int dilation_0, int dilation_1, int groups, const mlx_stream s);
int mlx_conv3d(mlx_array* res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1, int stride_2, int padding_0, int padding_1, int padding_2, int dilation_0, int dilation_1, int dilation_2, int groups, const mlx_stream s);
int mlx_conv_general(mlx_array* res, const mlx_array input, const mlx_array weight, const int* stride, size_t stride_num, const int* padding_lo, size_t padding_lo_num, const int* padding_hi, size_t padding_hi_num, const int* kernel_dilation, size_t kernel_dilation_num, const int* input_dilation, size_t input_dilation_num, int groups, bool flip, const mlx_stream s);
int mlx_conv_transpose1d(mlx_array* res, const mlx_array input, const mlx_array weight, int stride, int padding, int dilation, int output_padding, int groups, const mlx_stream s);
int mlx_conv_transpose2d(mlx_array* res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1, int padding_0, int padding_1, int dilation_0, int dilation_1, int output_padding_0, int output_padding_1, int groups, const mlx_stream s);
int mlx_conv_transpose3d(mlx_array* res, const mlx_array input, const mlx_array weight, int stride_0, int stride_1, int stride_2, int padding_0, int padding_1, int padding_2, int dilation_0, int dilation_1, int dilation_2, int output_padding_0, int output_padding_1, int output_padding_2, int groups, const mlx_stream s);
int mlx_copy(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_cos(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_cosh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_cummax(mlx_array* res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s);
int mlx_cummin(mlx_array* res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s);
int mlx_cumprod(mlx_array* res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s);
int mlx_cumsum(mlx_array* res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s);
int mlx_degrees(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_depends(mlx_vector_array* res, const mlx_vector_array inputs, const mlx_vector_array dependencies);
int mlx_dequantize(mlx_array* res, const mlx_array w, const mlx_array scales, const mlx_array biases, mlx_optional_int group_size, mlx_optional_int bits, const char* mode, const mlx_array global_scale, mlx_optional_dtype dtype, const mlx_stream s);
int mlx_diag(mlx_array* res, const mlx_array a, int k, const mlx_stream s);
int mlx_diagonal(mlx_array* res, const mlx_array a, int offset, int axis1, int axis2, const mlx_stream s);
int mlx_divide(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_divmod(mlx_vector_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_einsum(mlx_array* res, const char* subscripts, const mlx_vector_array operands, const mlx_stream s);
int mlx_equal(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_erf(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_erfinv(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_exp(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_expand_dims_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_expand_dims(mlx_array* res, const mlx_array a, int axis, const mlx_stream s);
int mlx_expm1(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_eye(mlx_array* res, int n, int m, int k, mlx_dtype dtype, const mlx_stream s);
int mlx_flatten(mlx_array* res, const mlx_array a, int start_axis, int end_axis, const mlx_stream s);
int mlx_floor(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_floor_divide(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_from_fp8(mlx_array* res, const mlx_array x, mlx_dtype dtype, const mlx_stream s);
int mlx_full(mlx_array* res, const int* shape, size_t shape_num, const mlx_array vals, mlx_dtype dtype, const mlx_stream s);
int mlx_full_like(mlx_array* res, const mlx_array a, const mlx_array vals, mlx_dtype dtype, const mlx_stream s);
int mlx_gather(mlx_array* res, const mlx_array a, const mlx_vector_array indices, const int* axes, size_t axes_num, const int* slice_sizes, size_t slice_sizes_num, const mlx_stream s);
int mlx_gather_single(mlx_array* res, const mlx_array a, const mlx_array indices, int axis, const int* slice_sizes, size_t slice_sizes_num, const mlx_stream s);
int mlx_gather_mm(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_array lhs_indices, const mlx_array rhs_indices, bool sorted_indices, const mlx_stream s);
int mlx_gather_qmm(mlx_array* res, const mlx_array x, const mlx_array w, const mlx_array scales, const mlx_array biases, const mlx_array lhs_indices, const mlx_array rhs_indices, bool transpose, mlx_optional_int group_size, mlx_optional_int bits, const char* mode, bool sorted_indices, const mlx_stream s);
int mlx_greater(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_greater_equal(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_hadamard_transform(mlx_array* res, const mlx_array a, mlx_optional_float scale, const mlx_stream s);
int mlx_hamming(mlx_array* res, int M, const mlx_stream s);
int mlx_hanning(mlx_array* res, int M, const mlx_stream s);
int mlx_identity(mlx_array* res, int n, mlx_dtype dtype, const mlx_stream s);
int mlx_imag(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_inner(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_isclose(mlx_array* res, const mlx_array a, const mlx_array b, double rtol, double atol, bool equal_nan, const mlx_stream s);
int mlx_isfinite(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isinf(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isnan(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isneginf(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isposinf(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_kron(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_left_shift(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_less(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_less_equal(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_linspace(mlx_array* res, double start, double stop, int num, mlx_dtype dtype, const mlx_stream s);
int mlx_log(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_log10(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_log1p(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_log2(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_logaddexp(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_logcumsumexp(mlx_array* res, const mlx_array a, int axis, bool reverse, bool inclusive, const mlx_stream s);
int mlx_logical_and(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_logical_not(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_logical_or(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_logsumexp_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_logsumexp_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_logsumexp(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_masked_scatter(mlx_array* res, const mlx_array a, const mlx_array mask, const mlx_array src, const mlx_stream s);
int mlx_matmul(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_max_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_max_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_max(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_maximum(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_mean_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_mean_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_mean(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_median(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_meshgrid(mlx_vector_array* res, const mlx_vector_array arrays, bool sparse, const char* indexing, const mlx_stream s);
int mlx_min_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_min_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_min(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_minimum(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_moveaxis(mlx_array* res, const mlx_array a, int source, int destination, const mlx_stream s);
int mlx_multiply(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_nan_to_num(mlx_array* res, const mlx_array a, float nan, mlx_optional_float posinf, mlx_optional_float neginf, const mlx_stream s);
int mlx_negative(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_not_equal(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_number_of_elements(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool inverted, mlx_dtype dtype, const mlx_stream s);
int mlx_ones(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_stream s);
int mlx_ones_like(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_outer(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_pad(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, const int* low_pad_size, size_t low_pad_size_num, const int* high_pad_size, size_t high_pad_size_num, const mlx_array pad_value, const char* mode, const mlx_stream s);
int mlx_pad_symmetric(mlx_array* res, const mlx_array a, int pad_width, const mlx_array pad_value, const char* mode, const mlx_stream s);
int mlx_partition_axis(mlx_array* res, const mlx_array a, int kth, int axis, const mlx_stream s);
int mlx_partition(mlx_array* res, const mlx_array a, int kth, const mlx_stream s);
int mlx_power(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_prod_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_prod_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_prod(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_put_along_axis(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_array values, int axis, const mlx_stream s);
int mlx_qqmm(mlx_array* res, const mlx_array x, const mlx_array w, const mlx_array w_scales, mlx_optional_int group_size, mlx_optional_int bits, const char* mode, const mlx_array global_scale_x, const mlx_array global_scale_w, const mlx_stream s);
int mlx_quantize(mlx_vector_array* res, const mlx_array w, mlx_optional_int group_size, mlx_optional_int bits, const char* mode, const mlx_array global_scale, const mlx_stream s);
int mlx_quantized_matmul(mlx_array* res, const mlx_array x, const mlx_array w, const mlx_array scales, const mlx_array biases, bool transpose, mlx_optional_int group_size, mlx_optional_int bits, const char* mode, const mlx_stream s);
int mlx_radians(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_real(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_reciprocal(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_remainder(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_repeat_axis(mlx_array* res, const mlx_array arr, int repeats, int axis, const mlx_stream s);
int mlx_repeat(mlx_array* res, const mlx_array arr, int repeats, const mlx_stream s);
int mlx_reshape(mlx_array* res, const mlx_array a, const int* shape, size_t shape_num, const mlx_stream s);
int mlx_right_shift(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_roll_axis(mlx_array* res, const mlx_array a, const int* shift, size_t shift_num, int axis, const mlx_stream s);
int mlx_roll_axes(mlx_array* res, const mlx_array a, const int* shift, size_t shift_num, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_roll(mlx_array* res, const mlx_array a, const int* shift, size_t shift_num, const mlx_stream s);
int mlx_round(mlx_array* res, const mlx_array a, int decimals, const mlx_stream s);
int mlx_rsqrt(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_scatter(mlx_array* res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_scatter_single(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_array updates, int axis, const mlx_stream s);
int mlx_scatter_add(mlx_array* res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_scatter_add_single(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_array updates, int axis, const mlx_stream s);
int mlx_scatter_add_axis(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_array values, int axis, const mlx_stream s);
int mlx_scatter_max(mlx_array* res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_scatter_max_single(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_array updates, int axis, const mlx_stream s);
int mlx_scatter_min(mlx_array* res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_scatter_min_single(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_array updates, int axis, const mlx_stream s);
int mlx_scatter_prod(mlx_array* res, const mlx_array a, const mlx_vector_array indices, const mlx_array updates, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_scatter_prod_single(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_array updates, int axis, const mlx_stream s);
int mlx_segmented_mm(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_array segments, const mlx_stream s);
int mlx_sigmoid(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_sign(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_sin(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_sinh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_slice(mlx_array* res, const mlx_array a, const int* start, size_t start_num, const int* stop, size_t stop_num, const int* strides, size_t strides_num, const mlx_stream s);
int mlx_slice_dynamic(mlx_array* res, const mlx_array a, const mlx_array start, const int* axes, size_t axes_num, const int* slice_size, size_t slice_size_num, const mlx_stream s);
int mlx_slice_update(mlx_array* res, const mlx_array src, const mlx_array update, const int* start, size_t start_num, const int* stop, size_t stop_num, const int* strides, size_t strides_num, const mlx_stream s);
int mlx_slice_update_dynamic(mlx_array* res, const mlx_array src, const mlx_array update, const mlx_array start, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_slice_update_add(mlx_array* res, const mlx_array src, const mlx_array update, const int* start, size_t start_num, const int* stop, size_t stop_num, const int* strides, size_t strides_num, const mlx_stream s);
int mlx_slice_update_max(mlx_array* res, const mlx_array src, const mlx_array update, const int* start, size_t start_num, const int* stop, size_t stop_num, const int* strides, size_t strides_num, const mlx_stream s);
int mlx_slice_update_min(mlx_array* res, const mlx_array src, const mlx_array update, const int* start, size_t start_num, const int* stop, size_t stop_num, const int* strides, size_t strides_num, const mlx_stream s);
int mlx_slice_update_prod(mlx_array* res, const mlx_array src, const mlx_array update, const int* start, size_t start_num, const int* stop, size_t stop_num, const int* strides, size_t strides_num, const mlx_stream s);
int mlx_softmax_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool precise, const mlx_stream s);
int mlx_softmax_axis(mlx_array* res, const mlx_array a, int axis, bool precise, const mlx_stream s);
int mlx_softmax(mlx_array* res, const mlx_array a, bool precise, const mlx_stream s);
int mlx_sort_axis(mlx_array* res, const mlx_array a, int axis, const mlx_stream s);
int mlx_sort(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_split(mlx_vector_array* res, const mlx_array a, int num_splits, int axis, const mlx_stream s);
int mlx_split_sections(mlx_vector_array* res, const mlx_array a, const int* indices, size_t indices_num, int axis, const mlx_stream s);
int mlx_sqrt(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_square(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_squeeze_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_squeeze_axis(mlx_array* res, const mlx_array a, int axis, const mlx_stream s);
int mlx_squeeze(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_stack_axis(mlx_array* res, const mlx_vector_array arrays, int axis, const mlx_stream s);
int mlx_stack(mlx_array* res, const mlx_vector_array arrays, const mlx_stream s);
int mlx_std_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, int ddof, const mlx_stream s);
int mlx_std_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, int ddof, const mlx_stream s);
int mlx_std(mlx_array* res, const mlx_array a, bool keepdims, int ddof, const mlx_stream s);
int mlx_stop_gradient(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_subtract(mlx_array* res, const mlx_array a, const mlx_array b, const mlx_stream s);
int mlx_sum_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, const mlx_stream s);
int mlx_sum_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, const mlx_stream s);
int mlx_sum(mlx_array* res, const mlx_array a, bool keepdims, const mlx_stream s);
int mlx_swapaxes(mlx_array* res, const mlx_array a, int axis1, int axis2, const mlx_stream s);
int mlx_take_axis(mlx_array* res, const mlx_array a, const mlx_array indices, int axis, const mlx_stream s);
int mlx_take(mlx_array* res, const mlx_array a, const mlx_array indices, const mlx_stream s);
int mlx_take_along_axis(mlx_array* res, const mlx_array a, const mlx_array indices, int axis, const mlx_stream s);
int mlx_tan(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_tanh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_tensordot(mlx_array* res, const mlx_array a, const mlx_array b, const int* axes_a, size_t axes_a_num, const int* axes_b, size_t axes_b_num, const mlx_stream s);
int mlx_tensordot_axis(mlx_array* res, const mlx_array a, const mlx_array b, int axis, const mlx_stream s);
int mlx_tile(mlx_array* res, const mlx_array arr, const int* reps, size_t reps_num, const mlx_stream s);
int mlx_to_fp8(mlx_array* res, const mlx_array x, const mlx_stream s);
int mlx_topk_axis(mlx_array* res, const mlx_array a, int k, int axis, const mlx_stream s);
int mlx_topk(mlx_array* res, const mlx_array a, int k, const mlx_stream s);
int mlx_trace(mlx_array* res, const mlx_array a, int offset, int axis1, int axis2, mlx_dtype dtype, const mlx_stream s);
int mlx_transpose_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, const mlx_stream s);
int mlx_transpose(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_tri(mlx_array* res, int n, int m, int k, mlx_dtype type, const mlx_stream s);
int mlx_tril(mlx_array* res, const mlx_array x, int k, const mlx_stream s);
int mlx_triu(mlx_array* res, const mlx_array x, int k, const mlx_stream s);
int mlx_unflatten(mlx_array* res, const mlx_array a, int axis, const int* shape, size_t shape_num, const mlx_stream s);
int mlx_var_axes(mlx_array* res, const mlx_array a, const int* axes, size_t axes_num, bool keepdims, int ddof, const mlx_stream s);
int mlx_var_axis(mlx_array* res, const mlx_array a, int axis, bool keepdims, int ddof, const mlx_stream s);
int mlx_var(mlx_array* res, const mlx_array a, bool keepdims, int ddof, const mlx_stream s);
int mlx_view(mlx_array* res, const mlx_array a, mlx_dtype dtype, const mlx_stream s);
int mlx_where(mlx_array* res, const mlx_array condition, const mlx_array x, const mlx_array y, const mlx_stream s);
int mlx_zeros(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_stream s);
int mlx_zeros_like(mlx_array* res, const mlx_array a, const mlx_stream s);

/* random.h */
int mlx_random_bernoulli(mlx_array* res, const mlx_array p, const int* shape, size_t shape_num, const mlx_array key, const mlx_stream s);
int mlx_random_bits(mlx_array* res, const int* shape, size_t shape_num, int width, const mlx_array key, const mlx_stream s);
int mlx_random_categorical_shape(mlx_array* res, const mlx_array logits, int axis, const int* shape, size_t shape_num, const mlx_array key, const mlx_stream s);
int mlx_random_categorical_num_samples(mlx_array* res, const mlx_array logits_, int axis, int num_samples, const mlx_array key, const mlx_stream s);
int mlx_random_categorical(mlx_array* res, const mlx_array logits, int axis, const mlx_array key, const mlx_stream s);
int mlx_random_gumbel(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s);
int mlx_random_key(mlx_array* res, uint64_t seed);
int mlx_random_laplace(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, float loc, float scale, const mlx_array key, const mlx_stream s);
int mlx_random_multivariate_normal(mlx_array* res, const mlx_array mean, const mlx_array cov, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s);
int mlx_random_normal_broadcast(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_array loc, const mlx_array scale, const mlx_array key, const mlx_stream s);
int mlx_random_normal(mlx_array* res, const int* shape, size_t shape_num, mlx_dtype dtype, float loc, float scale, const mlx_array key, const mlx_stream s);
int mlx_random_permutation(mlx_array* res, const mlx_array x, int axis, const mlx_array key, const mlx_stream s);
int mlx_random_permutation_arange(mlx_array* res, int x, const mlx_array key, const mlx_stream s);
int mlx_random_randint(mlx_array* res, const mlx_array low, const mlx_array high, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s);
int mlx_random_seed(uint64_t seed);
int mlx_random_split_num(mlx_array* res, const mlx_array key, int num, const mlx_stream s);
int mlx_random_split(mlx_array* res_0, mlx_array* res_1, const mlx_array key, const mlx_stream s);
int mlx_random_truncated_normal(mlx_array* res, const mlx_array lower, const mlx_array upper, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s);
int mlx_random_uniform(mlx_array* res, const mlx_array low, const mlx_array high, const int* shape, size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s);

/* stream.h */
mlx_stream mlx_stream_new(void);
mlx_stream mlx_stream_new_device(mlx_device dev);
int mlx_stream_set(mlx_stream* stream, const mlx_stream src);
int mlx_stream_free(mlx_stream stream);
int mlx_stream_tostring(mlx_string* str, mlx_stream stream);
bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs);
int mlx_stream_get_device(mlx_device* dev, mlx_stream stream);
int mlx_stream_get_index(int* index, mlx_stream stream);
int mlx_synchronize(mlx_stream stream);
int mlx_get_default_stream(mlx_stream* stream, mlx_device dev);
int mlx_set_default_stream(mlx_stream stream);
mlx_stream mlx_default_cpu_stream_new(void);
mlx_stream mlx_default_gpu_stream_new(void);

/* string.h */
mlx_string mlx_string_new(void);
mlx_string mlx_string_new_data(const char* str);
int mlx_string_set(mlx_string* str, const mlx_string src);
const char* mlx_string_data(mlx_string str);
int mlx_string_free(mlx_string str);

/* transforms.h */
int mlx_async_eval(const mlx_vector_array outputs);
int mlx_checkpoint(mlx_closure* res, const mlx_closure fun);
int mlx_custom_function(mlx_closure* res, const mlx_closure fun, const mlx_closure_custom fun_vjp, const mlx_closure_custom_jvp fun_jvp, const mlx_closure_custom_vmap fun_vmap);
int mlx_custom_vjp(mlx_closure* res, const mlx_closure fun, const mlx_closure_custom fun_vjp);
int mlx_eval(const mlx_vector_array outputs);
int mlx_jvp(mlx_vector_array* res_0, mlx_vector_array* res_1, const mlx_closure fun, const mlx_vector_array primals, const mlx_vector_array tangents);
int mlx_value_and_grad(mlx_closure_value_and_grad* res, const mlx_closure fun, const int* argnums, size_t argnums_num);
int mlx_vjp(mlx_vector_array* res_0, mlx_vector_array* res_1, const mlx_closure fun, const mlx_vector_array primals, const mlx_vector_array cotangents);

/* vector.h */
mlx_vector_array mlx_vector_array_new(void);
int mlx_vector_array_set(mlx_vector_array* vec, const mlx_vector_array src);
int mlx_vector_array_free(mlx_vector_array vec);
mlx_vector_array mlx_vector_array_new_data(const mlx_array* data, size_t size);
mlx_vector_array mlx_vector_array_new_value(const mlx_array val);
int mlx_vector_array_set_data(mlx_vector_array* vec, const mlx_array* data, size_t size);
int mlx_vector_array_set_value(mlx_vector_array* vec, const mlx_array val);
int mlx_vector_array_append_data(mlx_vector_array vec, const mlx_array* data, size_t size);
int mlx_vector_array_append_value(mlx_vector_array vec, const mlx_array val);
size_t mlx_vector_array_size(mlx_vector_array vec);
int mlx_vector_array_get(mlx_array* res, const mlx_vector_array vec, size_t idx);
mlx_vector_vector_array mlx_vector_vector_array_new(void);
int mlx_vector_vector_array_set(mlx_vector_vector_array* vec, const mlx_vector_vector_array src);
int mlx_vector_vector_array_free(mlx_vector_vector_array vec);
mlx_vector_vector_array mlx_vector_vector_array_new_data(const mlx_vector_array* data, size_t size);
mlx_vector_vector_array mlx_vector_vector_array_new_value(const mlx_vector_array val);
int mlx_vector_vector_array_set_data(mlx_vector_vector_array* vec, const mlx_vector_array* data, size_t size);
int mlx_vector_vector_array_set_value(mlx_vector_vector_array* vec, const mlx_vector_array val);
int mlx_vector_vector_array_append_data(mlx_vector_vector_array vec, const mlx_vector_array* data, size_t size);
int mlx_vector_vector_array_append_value(mlx_vector_vector_array vec, const mlx_vector_array val);
size_t mlx_vector_vector_array_size(mlx_vector_vector_array vec);
int mlx_vector_vector_array_get(mlx_vector_array* res, const mlx_vector_vector_array vec, size_t idx);
mlx_vector_int mlx_vector_int_new(void);
int mlx_vector_int_set(mlx_vector_int* vec, const mlx_vector_int src);
int mlx_vector_int_free(mlx_vector_int vec);
mlx_vector_int mlx_vector_int_new_data(int* data, size_t size);
mlx_vector_int mlx_vector_int_new_value(int val);
int mlx_vector_int_set_data(mlx_vector_int* vec, int* data, size_t size);
int mlx_vector_int_set_value(mlx_vector_int* vec, int val);
int mlx_vector_int_append_data(mlx_vector_int vec, int* data, size_t size);
int mlx_vector_int_append_value(mlx_vector_int vec, int val);
size_t mlx_vector_int_size(mlx_vector_int vec);
int mlx_vector_int_get(int* res, const mlx_vector_int vec, size_t idx);
mlx_vector_string mlx_vector_string_new(void);
int mlx_vector_string_set(mlx_vector_string* vec, const mlx_vector_string src);
int mlx_vector_string_free(mlx_vector_string vec);
mlx_vector_string mlx_vector_string_new_data(const char** data, size_t size);
mlx_vector_string mlx_vector_string_new_value(const char* val);
int mlx_vector_string_set_data(mlx_vector_string* vec, const char** data, size_t size);
int mlx_vector_string_set_value(mlx_vector_string* vec, const char* val);
int mlx_vector_string_append_data(mlx_vector_string vec, const char** data, size_t size);
int mlx_vector_string_append_value(mlx_vector_string vec, const char* val);
size_t mlx_vector_string_size(mlx_vector_string vec);
int mlx_vector_string_get(char** res, const mlx_vector_string vec, size_t idx);

/* version.h */
int mlx_version(mlx_string* str_);

typedef void (*any_function)(void);

/* Taking each address makes the linker find every function. */
static const any_function mlx_c_functions[] = {
    (any_function)mlx_dtype_size,
    (any_function)mlx_array_tostring,
    (any_function)mlx_array_new,
    (any_function)mlx_array_free,
    (any_function)mlx_array_new_bool,
    (any_function)mlx_array_new_int,
    (any_function)mlx_array_new_float32,
    (any_function)mlx_array_new_float,
    (any_function)mlx_array_new_float64,
    (any_function)mlx_array_new_double,
    (any_function)mlx_array_new_complex,
    (any_function)mlx_array_new_data,
    (any_function)mlx_array_new_data_managed,
    (any_function)mlx_array_new_data_managed_payload,
    (any_function)mlx_array_set,
    (any_function)mlx_array_set_bool,
    (any_function)mlx_array_set_int,
    (any_function)mlx_array_set_float32,
    (any_function)mlx_array_set_float,
    (any_function)mlx_array_set_float64,
    (any_function)mlx_array_set_double,
    (any_function)mlx_array_set_complex,
    (any_function)mlx_array_set_data,
    (any_function)mlx_array_itemsize,
    (any_function)mlx_array_size,
    (any_function)mlx_array_nbytes,
    (any_function)mlx_array_ndim,
    (any_function)mlx_array_shape,
    (any_function)mlx_array_strides,
    (any_function)mlx_array_dim,
    (any_function)mlx_array_dtype,
    (any_function)mlx_array_eval,
    (any_function)mlx_array_item_bool,
    (any_function)mlx_array_item_uint8,
    (any_function)mlx_array_item_uint16,
    (any_function)mlx_array_item_uint32,
    (any_function)mlx_array_item_uint64,
    (any_function)mlx_array_item_int8,
    (any_function)mlx_array_item_int16,
    (any_function)mlx_array_item_int32,
    (any_function)mlx_array_item_int64,
    (any_function)mlx_array_item_float32,
    (any_function)mlx_array_item_float64,
    (any_function)mlx_array_item_complex64,
    (any_function)mlx_array_data_bool,
    (any_function)mlx_array_data_uint8,
    (any_function)mlx_array_data_uint16,
    (any_function)mlx_array_data_uint32,
    (any_function)mlx_array_data_uint64,
    (any_function)mlx_array_data_int8,
    (any_function)mlx_array_data_int16,
    (any_function)mlx_array_data_int32,
    (any_function)mlx_array_data_int64,
    (any_function)mlx_array_data_float32,
    (any_function)mlx_array_data_float64,
    (any_function)mlx_array_data_complex64,
    (any_function)_mlx_array_is_available,
    (any_function)_mlx_array_wait,
    (any_function)_mlx_array_is_contiguous,
    (any_function)_mlx_array_is_row_contiguous,
    (any_function)_mlx_array_is_col_contiguous,
    (any_function)mlx_closure_new,
    (any_function)mlx_closure_free,
    (any_function)mlx_closure_new_func,
    (any_function)mlx_closure_new_func_payload,
    (any_function)mlx_closure_set,
    (any_function)mlx_closure_apply,
    (any_function)mlx_closure_new_unary,
    (any_function)mlx_closure_kwargs_new,
    (any_function)mlx_closure_kwargs_free,
    (any_function)mlx_closure_kwargs_new_func,
    (any_function)mlx_closure_kwargs_new_func_payload,
    (any_function)mlx_closure_kwargs_set,
    (any_function)mlx_closure_kwargs_apply,
    (any_function)mlx_export_function,
    (any_function)mlx_export_function_kwargs,
    (any_function)mlx_function_exporter_new,
    (any_function)mlx_function_exporter_free,
    (any_function)mlx_function_exporter_apply,
    (any_function)mlx_function_exporter_apply_kwargs,
    (any_function)mlx_imported_function_new,
    (any_function)mlx_imported_function_free,
    (any_function)mlx_imported_function_apply,
    (any_function)mlx_imported_function_apply_kwargs,
    (any_function)mlx_closure_value_and_grad_new,
    (any_function)mlx_closure_value_and_grad_free,
    (any_function)mlx_closure_value_and_grad_new_func,
    (any_function)mlx_closure_value_and_grad_new_func_payload,
    (any_function)mlx_closure_value_and_grad_set,
    (any_function)mlx_closure_value_and_grad_apply,
    (any_function)mlx_closure_custom_new,
    (any_function)mlx_closure_custom_free,
    (any_function)mlx_closure_custom_new_func,
    (any_function)mlx_closure_custom_new_func_payload,
    (any_function)mlx_closure_custom_set,
    (any_function)mlx_closure_custom_apply,
    (any_function)mlx_closure_custom_jvp_new,
    (any_function)mlx_closure_custom_jvp_free,
    (any_function)mlx_closure_custom_jvp_new_func,
    (any_function)mlx_closure_custom_jvp_new_func_payload,
    (any_function)mlx_closure_custom_jvp_set,
    (any_function)mlx_closure_custom_jvp_apply,
    (any_function)mlx_closure_custom_vmap_new,
    (any_function)mlx_closure_custom_vmap_free,
    (any_function)mlx_closure_custom_vmap_new_func,
    (any_function)mlx_closure_custom_vmap_new_func_payload,
    (any_function)mlx_closure_custom_vmap_set,
    (any_function)mlx_closure_custom_vmap_apply,
    (any_function)mlx_device_new,
    (any_function)mlx_device_new_type,
    (any_function)mlx_device_free,
    (any_function)mlx_device_set,
    (any_function)mlx_device_tostring,
    (any_function)mlx_device_equal,
    (any_function)mlx_device_get_index,
    (any_function)mlx_device_get_type,
    (any_function)mlx_get_default_device,
    (any_function)mlx_set_default_device,
    (any_function)mlx_device_is_available,
    (any_function)mlx_device_count,
    (any_function)mlx_device_info_new,
    (any_function)mlx_device_info_get,
    (any_function)mlx_device_info_free,
    (any_function)mlx_device_info_has_key,
    (any_function)mlx_device_info_is_string,
    (any_function)mlx_device_info_get_string,
    (any_function)mlx_device_info_get_size,
    (any_function)mlx_device_info_get_keys,
    (any_function)mlx_synchronize_default,
    (any_function)mlx_clear_streams,
    (any_function)mlx_stream_new_thread_unsafe,
    (any_function)mlx_vector_stream_new,
    (any_function)mlx_vector_stream_set,
    (any_function)mlx_vector_stream_free,
    (any_function)mlx_vector_stream_new_data,
    (any_function)mlx_vector_stream_new_value,
    (any_function)mlx_vector_stream_set_data,
    (any_function)mlx_vector_stream_set_value,
    (any_function)mlx_vector_stream_append_data,
    (any_function)mlx_vector_stream_append_value,
    (any_function)mlx_vector_stream_size,
    (any_function)mlx_vector_stream_get,
    (any_function)mlx_get_streams,
    (any_function)mlx_stream_thread_local_new,
    (any_function)mlx_stream_thread_local_set,
    (any_function)mlx_stream_thread_local_free,
    (any_function)mlx_stream_from_thread_local,
    (any_function)mlx_synchronize_thread_local,
    (any_function)mlx_set_error_handler,
    (any_function)_mlx_error,
    (any_function)mlx_fast_layer_norm,
    (any_function)mlx_fast_rms_norm,
    (any_function)mlx_fast_rope,
    (any_function)mlx_fast_rope_dynamic,
    (any_function)mlx_fast_scaled_dot_product_attention,
    (any_function)mlx_fft_fft,
    (any_function)mlx_fft_fft2,
    (any_function)mlx_fft_fftfreq,
    (any_function)mlx_fft_fftn,
    (any_function)mlx_fft_fftshift,
    (any_function)mlx_fft_ifft,
    (any_function)mlx_fft_ifft2,
    (any_function)mlx_fft_ifftn,
    (any_function)mlx_fft_ifftshift,
    (any_function)mlx_fft_irfft,
    (any_function)mlx_fft_irfft2,
    (any_function)mlx_fft_irfftn,
    (any_function)mlx_fft_rfft,
    (any_function)mlx_fft_rfft2,
    (any_function)mlx_fft_rfftfreq,
    (any_function)mlx_fft_rfftn,
    (any_function)mlx_linalg_cholesky,
    (any_function)mlx_linalg_cholesky_inv,
    (any_function)mlx_linalg_cross,
    (any_function)mlx_linalg_det,
    (any_function)mlx_linalg_eig,
    (any_function)mlx_linalg_eigh,
    (any_function)mlx_linalg_eigvals,
    (any_function)mlx_linalg_eigvalsh,
    (any_function)mlx_linalg_inv,
    (any_function)mlx_linalg_lu,
    (any_function)mlx_linalg_lu_factor,
    (any_function)mlx_linalg_norm,
    (any_function)mlx_linalg_norm_matrix,
    (any_function)mlx_linalg_norm_l2,
    (any_function)mlx_linalg_pinv,
    (any_function)mlx_linalg_qr,
    (any_function)mlx_linalg_slogdet,
    (any_function)mlx_linalg_solve,
    (any_function)mlx_linalg_solve_triangular,
    (any_function)mlx_linalg_svd,
    (any_function)mlx_linalg_tri_inv,
    (any_function)mlx_io_reader_new,
    (any_function)mlx_io_reader_descriptor,
    (any_function)mlx_io_reader_tostring,
    (any_function)mlx_io_reader_free,
    (any_function)mlx_io_writer_new,
    (any_function)mlx_io_writer_descriptor,
    (any_function)mlx_io_writer_tostring,
    (any_function)mlx_io_writer_free,
    (any_function)mlx_load_reader,
    (any_function)mlx_load,
    (any_function)mlx_load_safetensors_reader,
    (any_function)mlx_load_safetensors,
    (any_function)mlx_save_writer,
    (any_function)mlx_save,
    (any_function)mlx_save_safetensors_writer,
    (any_function)mlx_save_safetensors,
    (any_function)mlx_gguf_metadata_new_string,
    (any_function)mlx_gguf_metadata_new_array,
    (any_function)mlx_gguf_metadata_new_string_vector,
    (any_function)mlx_gguf_metadata_get_type,
    (any_function)mlx_gguf_metadata_get_string,
    (any_function)mlx_gguf_metadata_get_array,
    (any_function)mlx_gguf_metadata_get_string_vector,
    (any_function)mlx_gguf_metadata_free,
    (any_function)mlx_map_string_to_gguf_metadata_new,
    (any_function)mlx_map_string_to_gguf_metadata_set,
    (any_function)mlx_map_string_to_gguf_metadata_insert,
    (any_function)mlx_map_string_to_gguf_metadata_get,
    (any_function)mlx_map_string_to_gguf_metadata_free,
    (any_function)mlx_map_string_to_gguf_metadata_iterator_new,
    (any_function)mlx_map_string_to_gguf_metadata_iterator_free,
    (any_function)mlx_map_string_to_gguf_metadata_iterator_next,
    (any_function)mlx_load_gguf,
    (any_function)mlx_save_gguf,
    (any_function)mlx_map_string_to_array_new,
    (any_function)mlx_map_string_to_array_set,
    (any_function)mlx_map_string_to_array_free,
    (any_function)mlx_map_string_to_array_insert,
    (any_function)mlx_map_string_to_array_get,
    (any_function)mlx_map_string_to_array_iterator_new,
    (any_function)mlx_map_string_to_array_iterator_free,
    (any_function)mlx_map_string_to_array_iterator_next,
    (any_function)mlx_map_string_to_string_new,
    (any_function)mlx_map_string_to_string_set,
    (any_function)mlx_map_string_to_string_free,
    (any_function)mlx_map_string_to_string_insert,
    (any_function)mlx_map_string_to_string_get,
    (any_function)mlx_map_string_to_string_iterator_new,
    (any_function)mlx_map_string_to_string_iterator_free,
    (any_function)mlx_map_string_to_string_iterator_next,
    (any_function)mlx_clear_cache,
    (any_function)mlx_get_active_memory,
    (any_function)mlx_get_cache_memory,
    (any_function)mlx_get_memory_limit,
    (any_function)mlx_get_peak_memory,
    (any_function)mlx_reset_peak_memory,
    (any_function)mlx_set_cache_limit,
    (any_function)mlx_set_memory_limit,
    (any_function)mlx_set_wired_limit,
    (any_function)mlx_abs,
    (any_function)mlx_add,
    (any_function)mlx_addmm,
    (any_function)mlx_all_axes,
    (any_function)mlx_all_axis,
    (any_function)mlx_all,
    (any_function)mlx_allclose,
    (any_function)mlx_any_axes,
    (any_function)mlx_any_axis,
    (any_function)mlx_any,
    (any_function)mlx_arange,
    (any_function)mlx_arccos,
    (any_function)mlx_arccosh,
    (any_function)mlx_arcsin,
    (any_function)mlx_arcsinh,
    (any_function)mlx_arctan,
    (any_function)mlx_arctan2,
    (any_function)mlx_arctanh,
    (any_function)mlx_argmax_axis,
    (any_function)mlx_argmax,
    (any_function)mlx_argmin_axis,
    (any_function)mlx_argmin,
    (any_function)mlx_argpartition_axis,
    (any_function)mlx_argpartition,
    (any_function)mlx_argsort_axis,
    (any_function)mlx_argsort,
    (any_function)mlx_array_equal,
    (any_function)mlx_as_strided,
    (any_function)mlx_astype,
    (any_function)mlx_atleast_1d,
    (any_function)mlx_atleast_2d,
    (any_function)mlx_atleast_3d,
    (any_function)mlx_bartlett,
    (any_function)mlx_bitwise_and,
    (any_function)mlx_bitwise_invert,
    (any_function)mlx_bitwise_or,
    (any_function)mlx_bitwise_xor,
    (any_function)mlx_blackman,
    (any_function)mlx_block_masked_mm,
    (any_function)mlx_broadcast_arrays,
    (any_function)mlx_broadcast_to,
    (any_function)mlx_ceil,
    (any_function)mlx_clip,
    (any_function)mlx_concatenate_axis,
    (any_function)mlx_concatenate,
    (any_function)mlx_conjugate,
    (any_function)mlx_contiguous,
    (any_function)mlx_conv1d,
    (any_function)mlx_conv2d,
    (any_function)mlx_conv3d,
    (any_function)mlx_conv_general,
    (any_function)mlx_conv_transpose1d,
    (any_function)mlx_conv_transpose2d,
    (any_function)mlx_conv_transpose3d,
    (any_function)mlx_copy,
    (any_function)mlx_cos,
    (any_function)mlx_cosh,
    (any_function)mlx_cummax,
    (any_function)mlx_cummin,
    (any_function)mlx_cumprod,
    (any_function)mlx_cumsum,
    (any_function)mlx_degrees,
    (any_function)mlx_depends,
    (any_function)mlx_dequantize,
    (any_function)mlx_diag,
    (any_function)mlx_diagonal,
    (any_function)mlx_divide,
    (any_function)mlx_divmod,
    (any_function)mlx_einsum,
    (any_function)mlx_equal,
    (any_function)mlx_erf,
    (any_function)mlx_erfinv,
    (any_function)mlx_exp,
    (any_function)mlx_expand_dims_axes,
    (any_function)mlx_expand_dims,
    (any_function)mlx_expm1,
    (any_function)mlx_eye,
    (any_function)mlx_flatten,
    (any_function)mlx_floor,
    (any_function)mlx_floor_divide,
    (any_function)mlx_from_fp8,
    (any_function)mlx_full,
    (any_function)mlx_full_like,
    (any_function)mlx_gather,
    (any_function)mlx_gather_single,
    (any_function)mlx_gather_mm,
    (any_function)mlx_gather_qmm,
    (any_function)mlx_greater,
    (any_function)mlx_greater_equal,
    (any_function)mlx_hadamard_transform,
    (any_function)mlx_hamming,
    (any_function)mlx_hanning,
    (any_function)mlx_identity,
    (any_function)mlx_imag,
    (any_function)mlx_inner,
    (any_function)mlx_isclose,
    (any_function)mlx_isfinite,
    (any_function)mlx_isinf,
    (any_function)mlx_isnan,
    (any_function)mlx_isneginf,
    (any_function)mlx_isposinf,
    (any_function)mlx_kron,
    (any_function)mlx_left_shift,
    (any_function)mlx_less,
    (any_function)mlx_less_equal,
    (any_function)mlx_linspace,
    (any_function)mlx_log,
    (any_function)mlx_log10,
    (any_function)mlx_log1p,
    (any_function)mlx_log2,
    (any_function)mlx_logaddexp,
    (any_function)mlx_logcumsumexp,
    (any_function)mlx_logical_and,
    (any_function)mlx_logical_not,
    (any_function)mlx_logical_or,
    (any_function)mlx_logsumexp_axes,
    (any_function)mlx_logsumexp_axis,
    (any_function)mlx_logsumexp,
    (any_function)mlx_masked_scatter,
    (any_function)mlx_matmul,
    (any_function)mlx_max_axes,
    (any_function)mlx_max_axis,
    (any_function)mlx_max,
    (any_function)mlx_maximum,
    (any_function)mlx_mean_axes,
    (any_function)mlx_mean_axis,
    (any_function)mlx_mean,
    (any_function)mlx_median,
    (any_function)mlx_meshgrid,
    (any_function)mlx_min_axes,
    (any_function)mlx_min_axis,
    (any_function)mlx_min,
    (any_function)mlx_minimum,
    (any_function)mlx_moveaxis,
    (any_function)mlx_multiply,
    (any_function)mlx_nan_to_num,
    (any_function)mlx_negative,
    (any_function)mlx_not_equal,
    (any_function)mlx_number_of_elements,
    (any_function)mlx_ones,
    (any_function)mlx_ones_like,
    (any_function)mlx_outer,
    (any_function)mlx_pad,
    (any_function)mlx_pad_symmetric,
    (any_function)mlx_partition_axis,
    (any_function)mlx_partition,
    (any_function)mlx_power,
    (any_function)mlx_prod_axes,
    (any_function)mlx_prod_axis,
    (any_function)mlx_prod,
    (any_function)mlx_put_along_axis,
    (any_function)mlx_qqmm,
    (any_function)mlx_quantize,
    (any_function)mlx_quantized_matmul,
    (any_function)mlx_radians,
    (any_function)mlx_real,
    (any_function)mlx_reciprocal,
    (any_function)mlx_remainder,
    (any_function)mlx_repeat_axis,
    (any_function)mlx_repeat,
    (any_function)mlx_reshape,
    (any_function)mlx_right_shift,
    (any_function)mlx_roll_axis,
    (any_function)mlx_roll_axes,
    (any_function)mlx_roll,
    (any_function)mlx_round,
    (any_function)mlx_rsqrt,
    (any_function)mlx_scatter,
    (any_function)mlx_scatter_single,
    (any_function)mlx_scatter_add,
    (any_function)mlx_scatter_add_single,
    (any_function)mlx_scatter_add_axis,
    (any_function)mlx_scatter_max,
    (any_function)mlx_scatter_max_single,
    (any_function)mlx_scatter_min,
    (any_function)mlx_scatter_min_single,
    (any_function)mlx_scatter_prod,
    (any_function)mlx_scatter_prod_single,
    (any_function)mlx_segmented_mm,
    (any_function)mlx_sigmoid,
    (any_function)mlx_sign,
    (any_function)mlx_sin,
    (any_function)mlx_sinh,
    (any_function)mlx_slice,
    (any_function)mlx_slice_dynamic,
    (any_function)mlx_slice_update,
    (any_function)mlx_slice_update_dynamic,
    (any_function)mlx_slice_update_add,
    (any_function)mlx_slice_update_max,
    (any_function)mlx_slice_update_min,
    (any_function)mlx_slice_update_prod,
    (any_function)mlx_softmax_axes,
    (any_function)mlx_softmax_axis,
    (any_function)mlx_softmax,
    (any_function)mlx_sort_axis,
    (any_function)mlx_sort,
    (any_function)mlx_split,
    (any_function)mlx_split_sections,
    (any_function)mlx_sqrt,
    (any_function)mlx_square,
    (any_function)mlx_squeeze_axes,
    (any_function)mlx_squeeze_axis,
    (any_function)mlx_squeeze,
    (any_function)mlx_stack_axis,
    (any_function)mlx_stack,
    (any_function)mlx_std_axes,
    (any_function)mlx_std_axis,
    (any_function)mlx_std,
    (any_function)mlx_stop_gradient,
    (any_function)mlx_subtract,
    (any_function)mlx_sum_axes,
    (any_function)mlx_sum_axis,
    (any_function)mlx_sum,
    (any_function)mlx_swapaxes,
    (any_function)mlx_take_axis,
    (any_function)mlx_take,
    (any_function)mlx_take_along_axis,
    (any_function)mlx_tan,
    (any_function)mlx_tanh,
    (any_function)mlx_tensordot,
    (any_function)mlx_tensordot_axis,
    (any_function)mlx_tile,
    (any_function)mlx_to_fp8,
    (any_function)mlx_topk_axis,
    (any_function)mlx_topk,
    (any_function)mlx_trace,
    (any_function)mlx_transpose_axes,
    (any_function)mlx_transpose,
    (any_function)mlx_tri,
    (any_function)mlx_tril,
    (any_function)mlx_triu,
    (any_function)mlx_unflatten,
    (any_function)mlx_var_axes,
    (any_function)mlx_var_axis,
    (any_function)mlx_var,
    (any_function)mlx_view,
    (any_function)mlx_where,
    (any_function)mlx_zeros,
    (any_function)mlx_zeros_like,
    (any_function)mlx_random_bernoulli,
    (any_function)mlx_random_bits,
    (any_function)mlx_random_categorical_shape,
    (any_function)mlx_random_categorical_num_samples,
    (any_function)mlx_random_categorical,
    (any_function)mlx_random_gumbel,
    (any_function)mlx_random_key,
    (any_function)mlx_random_laplace,
    (any_function)mlx_random_multivariate_normal,
    (any_function)mlx_random_normal_broadcast,
    (any_function)mlx_random_normal,
    (any_function)mlx_random_permutation,
    (any_function)mlx_random_permutation_arange,
    (any_function)mlx_random_randint,
    (any_function)mlx_random_seed,
    (any_function)mlx_random_split_num,
    (any_function)mlx_random_split,
    (any_function)mlx_random_truncated_normal,
    (any_function)mlx_random_uniform,
    (any_function)mlx_stream_new,
    (any_function)mlx_stream_new_device,
    (any_function)mlx_stream_set,
    (any_function)mlx_stream_free,
    (any_function)mlx_stream_tostring,
    (any_function)mlx_stream_equal,
    (any_function)mlx_stream_get_device,
    (any_function)mlx_stream_get_index,
    (any_function)mlx_synchronize,
    (any_function)mlx_get_default_stream,
    (any_function)mlx_set_default_stream,
    (any_function)mlx_default_cpu_stream_new,
    (any_function)mlx_default_gpu_stream_new,
    (any_function)mlx_string_new,
    (any_function)mlx_string_new_data,
    (any_function)mlx_string_set,
    (any_function)mlx_string_data,
    (any_function)mlx_string_free,
    (any_function)mlx_async_eval,
    (any_function)mlx_checkpoint,
    (any_function)mlx_custom_function,
    (any_function)mlx_custom_vjp,
    (any_function)mlx_eval,
    (any_function)mlx_jvp,
    (any_function)mlx_value_and_grad,
    (any_function)mlx_vjp,
    (any_function)mlx_compile,
    (any_function)mlx_detail_compile,
    (any_function)mlx_detail_compile_clear_cache,
    (any_function)mlx_detail_compile_erase,
    (any_function)mlx_disable_compile,
    (any_function)mlx_enable_compile,
    (any_function)mlx_set_compile_mode,
    (any_function)mlx_vector_array_new,
    (any_function)mlx_vector_array_set,
    (any_function)mlx_vector_array_free,
    (any_function)mlx_vector_array_new_data,
    (any_function)mlx_vector_array_new_value,
    (any_function)mlx_vector_array_set_data,
    (any_function)mlx_vector_array_set_value,
    (any_function)mlx_vector_array_append_data,
    (any_function)mlx_vector_array_append_value,
    (any_function)mlx_vector_array_size,
    (any_function)mlx_vector_array_get,
    (any_function)mlx_vector_vector_array_new,
    (any_function)mlx_vector_vector_array_set,
    (any_function)mlx_vector_vector_array_free,
    (any_function)mlx_vector_vector_array_new_data,
    (any_function)mlx_vector_vector_array_new_value,
    (any_function)mlx_vector_vector_array_set_data,
    (any_function)mlx_vector_vector_array_set_value,
    (any_function)mlx_vector_vector_array_append_data,
    (any_function)mlx_vector_vector_array_append_value,
    (any_function)mlx_vector_vector_array_size,
    (any_function)mlx_vector_vector_array_get,
    (any_function)mlx_vector_int_new,
    (any_function)mlx_vector_int_set,
    (any_function)mlx_vector_int_free,
    (any_function)mlx_vector_int_new_data,
    (any_function)mlx_vector_int_new_value,
    (any_function)mlx_vector_int_set_data,
    (any_function)mlx_vector_int_set_value,
    (any_function)mlx_vector_int_append_data,
    (any_function)mlx_vector_int_append_value,
    (any_function)mlx_vector_int_size,
    (any_function)mlx_vector_int_get,
    (any_function)mlx_vector_string_new,
    (any_function)mlx_vector_string_set,
    (any_function)mlx_vector_string_free,
    (any_function)mlx_vector_string_new_data,
    (any_function)mlx_vector_string_new_value,
    (any_function)mlx_vector_string_set_data,
    (any_function)mlx_vector_string_set_value,
    (any_function)mlx_vector_string_append_data,
    (any_function)mlx_vector_string_append_value,
    (any_function)mlx_vector_string_size,
    (any_function)mlx_vector_string_get,
    (any_function)mlx_version,
    (any_function)mlx_distributed_group_new,
    (any_function)mlx_distributed_group_free,
    (any_function)mlx_distributed_init,
    (any_function)mlx_distributed_group_rank,
    (any_function)mlx_distributed_group_size,
    (any_function)mlx_distributed_group_split,
    (any_function)mlx_distributed_is_available,
    (any_function)mlx_distributed_all_gather,
    (any_function)mlx_distributed_all_max,
    (any_function)mlx_distributed_all_min,
    (any_function)mlx_distributed_all_sum,
    (any_function)mlx_distributed_recv,
    (any_function)mlx_distributed_recv_like,
    (any_function)mlx_distributed_send,
    (any_function)mlx_distributed_sum_scatter,
};

int main(void) {
  size_t count = sizeof(mlx_c_functions) / sizeof(mlx_c_functions[0]);
  for (size_t i = 0; i < count; ++i) CHECK(mlx_c_functions[i] != NULL);
  printf("%zu mlx-c functions present with mlx-c's signatures\n", count);
  return 0;
}
