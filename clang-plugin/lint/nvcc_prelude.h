// The header xstream-lint injects (-include) into CUDA files written for nvcc:
// host-side declarations nvcc's headers make and Clang's CUDA headers lack.
#pragma once

namespace xsc::lint {

// Where the prelude appears to the compiler: a file mapped in memory, not on disk.
inline constexpr const char kNvccPreludePath[] = "/xstream-lint/nvcc_prelude.h";

extern const char kNvccPrelude[];

}  // namespace xsc::lint
