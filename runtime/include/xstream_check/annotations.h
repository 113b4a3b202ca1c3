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

#ifdef __cplusplus
}
#endif

#endif /* XSTREAM_CHECK_ANNOTATIONS_H */
