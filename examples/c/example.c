/* braid's C API in the style of mlx-c's own example: an mlx-c program moves to braid by
 * including <braid/c.h> instead of "mlx/c/mlx.h" and linking libbraid_c (CMake: braid::c). */
#include <stdio.h>

#include "braid/c.h"

void print_array(const char* msg, mlx_array arr) {
  mlx_string str = mlx_string_new();
  mlx_array_tostring(&str, arr);
  printf("%s\n%s\n", msg, mlx_string_data(str));
  mlx_string_free(str);
}

int main(void) {
  mlx_string version = mlx_string_new();
  mlx_version(&version);
  printf("braid version: %s\n", mlx_string_data(version));

  /* The GPU's default stream when there is one, else the CPU's. */
  mlx_device gpu = mlx_device_new_type(MLX_GPU, 0);
  bool has_gpu = false;
  mlx_device_is_available(&has_gpu, gpu);
  mlx_stream stream = has_gpu ? mlx_default_gpu_stream_new() : mlx_default_cpu_stream_new();

  float data[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {2, 3};
  mlx_array arr = mlx_array_new_data(data, shape, 2, MLX_FLOAT32);
  print_array("hello world!", arr);

  mlx_array two = mlx_array_new_int(2);
  mlx_divide(&arr, arr, two, stream);
  print_array("divide by 2!", arr);

  mlx_arange(&arr, 0, 3, 0.5, MLX_FLOAT32, stream);
  print_array("arange", arr);

  mlx_array_free(arr);
  mlx_array_free(two);
  mlx_stream_free(stream);
  mlx_device_free(gpu);
  mlx_string_free(version);
  return 0;
}
