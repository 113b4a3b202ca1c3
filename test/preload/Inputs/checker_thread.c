/* Programs that push the checker's thread: a flood of events, several
 * threads at once, a fork. Stream handles are opaque to the checker, so
 * this runs without a GPU.
 *   flood N   N rounds of a block used on its own stream, then one read on
 *             another stream before the free; the findings are asked for at
 *             once (the checker must have caught up with every event).
 *   threads   four threads, each with its own stream and block, doing the
 *             same at the same time.
 *   fork      the bug once, then fork: the child makes it at another site
 *             and exits normally (its own report), the parent waits. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xstream_check/annotations.h"

#define STREAM(n) ((struct CUstream_st*)(uintptr_t)(n))
#define BLOCK(n) ((void*)(uintptr_t)(0x7f0000000000ull + (uintptr_t)(n) * 0x100000u))

static size_t findings_now(void) {
  size_t total = 0;
  char* report = xsc_findings_report(NULL, "text", 0, &total);
  if (report != NULL) xsc_release_report(report);
  return total;
}

static void own_stream_rounds(int block, int stream, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    XSC_ANNOTATE_ALLOC(BLOCK(block), 4096, STREAM(stream));
    XSC_ANNOTATE_USE(BLOCK(block), 4096, STREAM(stream), 1);
    XSC_ANNOTATE_FREE(BLOCK(block), STREAM(stream));
  }
}

/* Fresh memory (block + 16), so that the read races with nothing before it. */
static void read_elsewhere_then_free(int block, int stream, int other) {
  XSC_ANNOTATE_ALLOC(BLOCK(block + 16), 4096, STREAM(stream));
  XSC_ANNOTATE_USE(BLOCK(block + 16), 4096, STREAM(other), 0);
  XSC_ANNOTATE_FREE(BLOCK(block + 16), STREAM(stream));
}

static void* worker(void* arg) {
  const int id = (int)(intptr_t)arg;
  own_stream_rounds(id, 0x1000 * (id + 1), 5000);
  read_elsewhere_then_free(id, 0x1000 * (id + 1), 0x9000);
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "flood") == 0) {
    own_stream_rounds(0, 0x1000, argc > 2 ? atoi(argv[2]) : 1000);
    read_elsewhere_then_free(0, 0x1000, 0x2000);
    printf("findings now: %zu\n", findings_now());
  } else if (strcmp(mode, "threads") == 0) {
    pthread_t threads[4];
    for (int i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, worker, (void*)(intptr_t)i);
    for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
    printf("findings now: %zu\n", findings_now());
  } else if (strcmp(mode, "fork") == 0) {
    own_stream_rounds(0, 0x1000, 2000);
    read_elsewhere_then_free(0, 0x1000, 0x2000);
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      own_stream_rounds(1, 0x3000, 2000);
      XSC_ANNOTATE_ALLOC(BLOCK(2), 4096, STREAM(0x3000));
      XSC_ANNOTATE_USE(BLOCK(2), 4096, STREAM(0x4000), 0);
      XSC_ANNOTATE_FREE(BLOCK(2), STREAM(0x3000));
      printf("child findings: %zu\n", findings_now());
      fflush(stdout);
      exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("parent findings: %zu\n", findings_now());
  } else {
    fprintf(stderr, "usage: %s flood N | threads | fork\n", argv[0]);
    return 2;
  }
  return 0;
}
