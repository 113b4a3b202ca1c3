// libxstream_check_exit.so: ends the process with the checker's exit status
// once the CUDA libraries have torn down.
//
// The runtime reports from an exit handler registered in its constructor.
// glibc runs that handler before the destructors of the libraries opened
// later with dlopen: libcuda (opened by the CUDA runtime) and libcupti.
// Calling _exit there would skip libcuda's own teardown and leave the GPU
// context to the kernel's process release, which takes longer. So the
// runtime opens this library first, before any CUDA library is loaded, and
// hands it the status instead: its destructor runs after theirs (the
// loader finalizes libraries in the reverse of their loading order), then
// flushes stdio and ends the process with the status.
#include <stdio.h>
#include <unistd.h>

static int pending_status = -1;

__attribute__((visibility("default"))) void xsc_exit_status_after_teardown(int status) {
  pending_status = status;
}

__attribute__((destructor)) static void exit_with_pending_status(void) {
  if (pending_status < 0) return;
  fflush(NULL);
  _exit(pending_status);
}
