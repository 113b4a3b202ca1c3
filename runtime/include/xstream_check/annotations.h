/* Annotations for custom caching allocators, in the spirit of TSan's
 * dynamic annotations.
 *
 * A caching allocator hands out blocks carved from memory it keeps, so the
 * CUDA calls xstream-check observes never show a block's life. Tell the
 * checker instead:
 *
 *   XSC_ANNOTATE_ALLOC(ptr, size, stream);   block handed out; `stream` is
 *                                            the stream it belongs to
 *   XSC_ANNOTATE_FREE(ptr, stream);          block returned to the cache and
 *                                            reusable by later work on
 *                                            `stream` (its allocation stream)
 *   XSC_ANNOTATE_USE(ptr, size, stream, w);  work on `stream` touches
 *                                            [ptr, ptr+size) (size 0: the
 *                                            whole block); w: 1 write, 0 read
 *
 * The functions are weak references: a program built with this header runs
 * unchanged, and the annotations cost one pointer test, when the runtime is
 * not loaded. libxstream_check.so defines them; load it with LD_PRELOAD (a
 * library loaded later, e.g. through CUDA_INJECTION64_PATH, cannot satisfy
 * references the dynamic linker already resolved to null).
 *
 * Test attribution, for test runners (the pytest plugin calls these through
 * ctypes; docs/pytest.md):
 *
 *   XSC_SET_CURRENT_TEST(id);                the test now running in this
 *                                            process (NULL or "": none).
 *                                            Findings whose free comes
 *                                            later are attributed to it
 *   xsc_findings_report(id, fmt, first, &n)  the report of the findings made
 *                                            so far that are attributed to
 *                                            test `id`
 *
 * C and C++; no CUDA header needed (cudaStream_t is a struct CUstream_st*).
 */
#ifndef XSTREAM_CHECK_ANNOTATIONS_H
#define XSTREAM_CHECK_ANNOTATIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define XSC_ANNOTATION_INLINE static inline __attribute__((unused))
#else
#define XSC_ANNOTATION_INLINE static inline
#endif

struct CUstream_st;

/* The runtime defines XSC_ANNOTATION_WEAK empty to make its own
 * definitions strong. */
#ifndef XSC_ANNOTATION_WEAK
#if defined(__GNUC__) || defined(__clang__)
#define XSC_ANNOTATION_WEAK __attribute__((weak))
#else
#define XSC_ANNOTATION_WEAK
#endif
#endif

void xsc_annotate_alloc(void* ptr, size_t size, struct CUstream_st* stream) XSC_ANNOTATION_WEAK;
void xsc_annotate_free(void* ptr, struct CUstream_st* stream) XSC_ANNOTATION_WEAK;
void xsc_annotate_use(void* ptr, size_t size, struct CUstream_st* stream,
                      int is_write) XSC_ANNOTATION_WEAK;

/* Makes `test_id` (a pytest node id, say) the test current in the process,
 * process-wide: every thread's frees from now on are attributed to it, and
 * so are findings made at a use that has no free (docs/rules.md). NULL or
 * "" makes no test current. The marker is an event of its own, recorded in
 * traces, so a replay attributes findings the same way. Returns 0, or -1
 * when checking is off. */
int xsc_set_current_test(const char* test_id) XSC_ANNOTATION_WEAK;

/* The report of the findings made so far that are attributed to test
 * `test_id` (NULL: every finding), from the `first`-th such finding on
 * (0-based, in the order they were found), in `format`: "text" (NULL),
 * "json" or "sarif", suppressions applied. The checking goes on, and the
 * report at exit still covers every finding. Stores how many findings are
 * attributed to `test_id` in all in *total (when total is not NULL).
 * Returns a string to release with xsc_release_report, or NULL when checking
 * is off or `format` is unknown. */
char* xsc_findings_report(const char* test_id, const char* format, size_t first,
                          size_t* total) XSC_ANNOTATION_WEAK;
void xsc_release_report(char* report) XSC_ANNOTATION_WEAK;

/* Non-zero when the runtime is loaded and the annotations reach it. */
XSC_ANNOTATION_INLINE int XSC_ANNOTATIONS_ENABLED(void) { return xsc_annotate_alloc != NULL; }

XSC_ANNOTATION_INLINE void XSC_ANNOTATE_ALLOC(void* ptr, size_t size, struct CUstream_st* stream) {
  if (xsc_annotate_alloc != NULL) xsc_annotate_alloc(ptr, size, stream);
}

XSC_ANNOTATION_INLINE void XSC_ANNOTATE_FREE(void* ptr, struct CUstream_st* stream) {
  if (xsc_annotate_free != NULL) xsc_annotate_free(ptr, stream);
}

XSC_ANNOTATION_INLINE void XSC_ANNOTATE_USE(void* ptr, size_t size, struct CUstream_st* stream,
                                    int is_write) {
  if (xsc_annotate_use != NULL) xsc_annotate_use(ptr, size, stream, is_write);
}

XSC_ANNOTATION_INLINE int XSC_SET_CURRENT_TEST(const char* test_id) {
  return xsc_set_current_test != NULL ? xsc_set_current_test(test_id) : -1;
}

#ifdef __cplusplus
}
#endif

#endif /* XSTREAM_CHECK_ANNOTATIONS_H */
