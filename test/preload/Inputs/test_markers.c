/* A test runner in C: each "test" names itself with XSC_SET_CURRENT_TEST
 * and asks the runtime for the findings attributed to it once it is done,
 * as the pytest plugin does through ctypes. Stream handles and block
 * addresses are opaque to the checker, so this runs without a GPU.
 *   test_buggy  a block read on the consumer stream goes back to the
 *               producer's cache unordered, and the producer takes it again
 *               and writes it: an unordered free
 *   test_clean  the same on the producer stream only
 *   test_late   frees unordered; the race comes in test_next
 * Prints each test's findings (text) and, at the end, every finding (JSON). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xstream_check/annotations.h"

static struct CUstream_st* const producer = (struct CUstream_st*)(uintptr_t)0x1000;
static struct CUstream_st* const consumer = (struct CUstream_st*)(uintptr_t)0x2000;

static void block_round(uintptr_t addr, struct CUstream_st* reader) {
  void* block = (void*)addr;
  XSC_ANNOTATE_ALLOC(block, 4096, producer);
  XSC_ANNOTATE_USE(block, 4096, reader, 0);
  XSC_ANNOTATE_FREE(block, producer);
}

static void reuse(uintptr_t addr) {
  void* block = (void*)addr;
  XSC_ANNOTATE_ALLOC(block, 4096, producer);
  XSC_ANNOTATE_USE(block, 4096, producer, 1);
}

/* Prints the report of `test`'s findings from the `first`-th on. */
static void print_findings(const char* test, size_t first) {
  size_t total = 99;
  char* report = xsc_findings_report(test, "text", first, &total);
  printf("== %s: %zu finding(s) in all\n%s", test, total, report ? report : "(null)\n");
  xsc_release_report(report);
}

int main(void) {
  if (!XSC_ANNOTATIONS_ENABLED()) {
    printf("runtime off: marker returns %d\n", XSC_SET_CURRENT_TEST("t.c::test_buggy"));
    return 0;
  }
  XSC_SET_CURRENT_TEST("t.c::test_buggy");
  block_round(0x7f0000000000ull, consumer);
  reuse(0x7f0000000000ull);
  print_findings("t.c::test_buggy", 0);
  print_findings("t.c::test_buggy", 1);  /* nothing new */

  XSC_SET_CURRENT_TEST("t.c::test_clean");
  block_round(0x7f0001000000ull, producer);
  reuse(0x7f0001000000ull);
  print_findings("t.c::test_clean", 0);

  XSC_SET_CURRENT_TEST("t.c::test_late");
  block_round(0x7f0002000000ull, consumer);
  print_findings("t.c::test_late", 0);
  XSC_SET_CURRENT_TEST("t.c::test_next");
  reuse(0x7f0002000000ull);
  print_findings("t.c::test_next", 0);
  print_findings("t.c::test_late", 0);
  XSC_SET_CURRENT_TEST(NULL);

  printf("bad format: %s\n", xsc_findings_report(NULL, "xml", 0, NULL) ? "a report" : "NULL");
  char* all = xsc_findings_report(NULL, "json", 0, NULL);
  printf("== all (json)\n%s", all);
  xsc_release_report(all);
  return 0;
}
