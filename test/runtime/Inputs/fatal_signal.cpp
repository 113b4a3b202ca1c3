// Dies of the signal named by argv[1] inside a named function, after one
// flushed line, so a test can check the runtime's fatal-signal report.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" __attribute__((noinline, visibility("default"))) int xsc_test_fault(volatile int* p) {
  return *p;
}

int main(int argc, char** argv) {
  std::printf("started\n");
  std::fflush(stdout);
  if (argc > 1 && std::strcmp(argv[1], "abort") == 0) std::abort();
  return xsc_test_fault(reinterpret_cast<volatile int*>(0x10));
}
