// Loads the library build of nccl_driver.cpp with RTLD_LOCAL, the way
// Python loads torch/_C.so: libnccl then lives outside the global scope,
// where dlsym(RTLD_NEXT) cannot see it.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIBRARY [SCRIPT]\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  auto run = reinterpret_cast<int (*)(int, char**)>(dlsym(lib, "nccl_driver_main"));
  if (run == nullptr) {
    std::fprintf(stderr, "dlsym: %s\n", dlerror());
    return 2;
  }
  // Shift argv so the script sees its own arguments.
  return run(argc - 1, argv + 1);
}
