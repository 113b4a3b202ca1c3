// Phase clock: a preloaded library that tells where a short program's wall
// time goes around exit, for bench/profile/startup_split.py --phases.
//
// It records CLOCK_MONOTONIC at its constructor, when main returns (by
// wrapping main through __libc_start_main), at its destructor and at an
// exit handler registered from its constructor, and writes them as one line
// to the file named by XSC_PHASE_FILE:
//   phases ctor=NS main_return=NS dtor=NS exit_handler=NS
// glibc runs a handler registered with atexit() from a library when the
// loader finalizes that library, and finalizes the program first, then the
// preloaded libraries, then the ones loaded after them (libcupti, libcuda,
// cuBLAS), dependencies last. Preloaded first, the phase clock's handler
// marks the end of the program's own exit handlers and destructors (the
// statically linked CUDA runtime's teardown among them); the launcher times
// the rest, up to the process's reaping: the checker's report, the other
// libraries' destructors (the driver's) and the kernel releasing the
// process.
//
// XSC_PHASE_EXIT_EARLY=1 makes that handler end the process with _exit(0),
// skipping the later libraries' destructors, the driver's among them.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*main_fn)(int, char**, char**);
typedef int (*start_main_fn)(main_fn, int, char**, void (*)(void), void (*)(void),
                             void (*)(void), void*);

static long long constructor_ns, main_return_ns, destructor_ns;
static main_fn real_main;

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int timed_main(int argc, char** argv, char** envp) {
  int status = real_main(argc, argv, envp);
  main_return_ns = now_ns();
  return status;
}

int __libc_start_main(main_fn main, int argc, char** argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void* stack_end) {
  start_main_fn next = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
  real_main = main;
  return next(timed_main, argc, argv, init, fini, rtld_fini, stack_end);
}

static void write_phases(long long exit_handler_ns) {
  const char* path = getenv("XSC_PHASE_FILE");
  if (path == NULL) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  char line[200];
  int n = snprintf(line, sizeof line, "phases ctor=%lld main_return=%lld dtor=%lld exit_handler=%lld\n",
                   constructor_ns, main_return_ns, destructor_ns, exit_handler_ns);
  if (n > 0) (void)!write(fd, line, (size_t)n);
  close(fd);
}

static void at_exit(void) {
  write_phases(now_ns());
  const char* early = getenv("XSC_PHASE_EXIT_EARLY");
  if (early != NULL && strcmp(early, "1") == 0) {
    fflush(NULL);
    _exit(0);
  }
}

__attribute__((constructor)) static void phase_clock_init(void) {
  constructor_ns = now_ns();
  atexit(at_exit);
}

__attribute__((destructor)) static void phase_clock_fini(void) { destructor_ns = now_ns(); }
