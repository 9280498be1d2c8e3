/* BB_HD marks a header-only function the CUDA backend's kernels call as well as the host
 * (engine/base/philox.h, engine/cuda/fast_divide.h): one definition, so both compute the same. */
#ifndef BB_HOST_DEVICE_H
#define BB_HOST_DEVICE_H
#ifdef __CUDACC__
#define BB_HD __host__ __device__
#else
#define BB_HD
#endif
#endif
