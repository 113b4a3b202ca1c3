/* The C ABI between libxstream_check.so and the producers it loads at run
 * time (the PyTorch allocator adapter libxstream_torch.so). The runtime owns
 * the session; an adapter only reports events through these functions. All
 * functions are thread-safe and may be called under the application's own
 * locks: none of them calls back into CUDA, Python or the adapter. */
#ifndef XSTREAM_CHECK_HOST_API_H
#define XSTREAM_CHECK_HOST_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 added the operator fields at the end of xsc_host_api, version 3
 * the host accesses of pinned memory, version 4 the thread-start and
 * pinned-memory hooks and backward stacks, version 5 the timing of an
 * adapter's own parts, version 6 the pinned-memory hook that turns off,
 * version 7 kernels' declared parameters. */
#define XSC_HOST_API_VERSION 7

/* The parts of an adapter's own work the runtime times (part_enter). */
#define XSC_PART_OPERATOR_HOOK 7
#define XSC_PART_CONTEXT_RECORDER 8

typedef struct xsc_frame {
  const char* function; /* may be NULL */
  const char* file;     /* may be NULL */
  uint32_t line;
} xsc_frame;

/* Produces a stack's frames later, at a point the runtime knows is safe
 * (outside the allocator lock, holding nothing the adapter needs). Called at
 * most once; must fill at most `cap` frames into `out` and return the count.
 * Strings must stay valid until release() is called. */
typedef struct xsc_deferred_stack {
  void* context;
  size_t (*resolve)(void* context, xsc_frame* out, size_t cap);
  void (*release)(void* context);
} xsc_deferred_stack;

/* Values of the event model's enums (checker/engine/event.h). */
enum {
  XSC_ALLOC_STREAM_ORDERED = 0, XSC_ALLOC_CACHING = 1, XSC_ALLOC_SYNCHRONOUS = 2,
  XSC_ALLOC_PINNED_HOST = 3
};
enum {
  XSC_FREE_STREAM_ORDERED = 0, XSC_FREE_CACHING = 1, XSC_FREE_SYNCHRONOUS = 2,
  XSC_FREE_PINNED_HOST = 3
};
enum { XSC_ACCESS_READ = 0, XSC_ACCESS_WRITE = 1, XSC_ACCESS_UNKNOWN = 2 };

/* What a kernel's source declares of one parameter (kernel_params). */
enum { XSC_PARAM_UNKNOWN = 0, XSC_PARAM_READ = 1, XSC_PARAM_WRITES_ARRAY = 2 };
typedef struct xsc_kernel_param {
  int32_t access;    /* XSC_PARAM_* */
  uint32_t itemsize; /* XSC_PARAM_WRITES_ARRAY: bytes per element */
  uint32_t ndim;     /* XSC_PARAM_WRITES_ARRAY: the descriptor's dimensions */
} xsc_kernel_param;

/* Bytes an operator wrote: [addr, addr + size). */
typedef struct xsc_operator_write {
  uint64_t addr;
  uint64_t size;
} xsc_operator_write;

typedef struct xsc_host_api {
  uint32_t version; /* XSC_HOST_API_VERSION */
  /* Stack ids: 0 = capture the calling thread's host stack now. */
  uint32_t (*intern_frames)(const xsc_frame* frames, size_t n);
  uint32_t (*intern_deferred)(xsc_deferred_stack stack);
  /* `stream` is the raw cudaStream_t value; the runtime resolves legacy and
   * per-thread default streams exactly as for CUDA calls. */
  void (*alloc)(uint64_t addr, uint64_t size, uint64_t stream, int alloc_kind, uint32_t stack);
  void (*free)(uint64_t addr, uint64_t stream, int free_kind, int deferred, uint32_t stack);
  void (*free_completed)(uint64_t addr, uint32_t stack);
  void (*use)(uint64_t addr, uint64_t size, uint64_t stream, int access, const char* what,
              uint32_t stack);
  /* One line to the report stream, prefixed "xstream-check: ". */
  void (*notice)(const char* message);
  /* A collective or point-to-point communication op (NCCL) touching
   * [addr, addr+size) on `stream`; `name` like "ncclAllGather". May be NULL
   * in older runtimes: fall back to use(). */
  void (*collective)(uint64_t addr, uint64_t size, uint64_t stream, int access,
                     const char* name, uint32_t stack);
  /* Registers a function the runtime calls at each kernel launch for the
   * launch's stack id: the adapter returns the current Python stack when
   * the calling thread holds the GIL, else 0 (the runtime then captures the
   * host stack). NULL unregisters. May be NULL in older runtimes. */
  void (*set_launch_stack_hook)(uint32_t (*hook)(void));

  /* Version 2 (read only when version >= 2). */
  /* Nonzero when the runtime wants operator writes (XSC_OPTIONS
   * torch_op_access, default 1). */
  int (*operator_access_wanted)(void);
  /* A mark of the calling thread's enqueued GPU work (kernels, copies,
   * memsets), to take when an operator starts. */
  uint64_t (*enqueue_mark)(void);
  /* Nonzero when the calling thread enqueued work on `stream` (raw
   * cudaStream_t) since `mark`. Takes no lock. */
  int (*enqueued_since)(uint64_t stream, uint64_t mark);
  /* An operator `name` ("aten::add_") that returned wrote `writes` on
   * `stream`; `mark` is enqueue_mark() at its start. Fed as known writes
   * when the thread enqueued work on `stream` since `mark`, each cut to the
   * tracked allocation that holds it (others are dropped), but for bytes a
   * copy enqueued since `mark` wrote already. The stack is taken as for a
   * kernel launch (through the launch stack hook, as use() does). */
  void (*operator_writes)(const char* name, uint64_t stream, uint64_t mark,
                          const xsc_operator_write* writes, size_t n);
  /* Version 3 (read only when version >= 3). */
  /* Nonzero once a device operation (a copy, a memset, a kernel's or a
   * library call's argument) used pinned host memory the runtime tracks.
   * Until then no device use of pinned bytes exists for a host access to be
   * unordered with on the thread that makes both, and a caller may skip
   * looking (a host access on one thread followed by another thread's
   * unordered copy is then not seen). */
  int (*pinned_memory_seen)(void);
  /* The calling thread read (XSC_ACCESS_READ) or wrote (XSC_ACCESS_WRITE)
   * [addr, addr + size) on the host; `name` says what did ("aten::sum",
   * "Tensor.numpy"), may be NULL. Fed as a host access only for the part
   * inside a tracked pinned allocation (others are dropped: pageable memory
   * no copy touches asynchronously). The stack is taken as for a kernel
   * launch (through the launch stack hook) when `stack` is 0. */
  void (*host_access)(uint64_t addr, uint64_t size, int access, const char* name,
                      uint32_t stack);
  /* Version 4 (read only when version >= 4). */
  /* Registers a function the runtime calls on each thread it starts
   * (pthread_create, interposed when the runtime is preloaded), in the new
   * thread, before the thread's own start routine. NULL unregisters. */
  void (*set_thread_start_hook)(void (*hook)(void));
  /* Registers a function the runtime calls once, when a device operation
   * first uses pinned memory it tracks (pinned_memory_seen() turns
   * nonzero), on the thread that enqueued the operation, before its call
   * returns; at once when that happened already. */
  void (*set_pinned_memory_hook)(void (*hook)(void));
  /* A stack for work an autograd node's backward does: a frame naming the
   * node (`node`, "NllLossBackward0"), then the frames of `forward_stack`,
   * the stack of the forward call that created the node. 0 when either is
   * missing. */
  uint32_t (*backward_stack)(const char* node, uint32_t forward_stack);
  /* Version 5 (read only when version >= 5). */
  /* Nonzero when the runtime times its parts (XSC_PROFILE=parts or
   * verbosity=2); fixed before any adapter attaches. */
  int (*parts_timed)(void);
  /* Starts timing the calling thread's work as `part` (XSC_PART_*),
   * pausing the part it was in; returns what part_leave takes to end it. */
  int (*part_enter)(int part);
  void (*part_leave)(int outer);
  /* Version 6 (read only when version >= 6). */
  /* Registers a function the runtime calls with what host accesses of
   * pinned memory it tracks need following: 1 every one (a device use that
   * may write pinned memory may be pending), 2 the writes only (every use
   * that may be pending reads it), 0 none (some host thread is ordered after
   * every such use so far). A call that asks for more comes on the thread
   * that enqueued the use, before its call returns; one that asks for less
   * on any thread, the checker's own included. Each call changes the
   * answer; the first is 1 or 2, and it comes at once when a use is
   * pending. An adapter that takes 2 for 1 follows more than it needs. An
   * adapter that registers it leaves set_pinned_memory_hook unset. */
  void (*set_pinned_pending_hook)(void (*hook)(int pending));
  /* Version 7 (read only when version >= 7). */
  /* What the source of kernel `function` (a CUfunction or CUkernel handle)
   * declares of its `n` parameters, in order, from a front end that compiled
   * it and saw the source (CuPy). XSC_PARAM_READ: the kernel only reads
   * through the pointer the parameter is or begins with. XSC_PARAM_WRITES_ARRAY:
   * the parameter is an array descriptor passed by value (a data pointer, an
   * element count, `ndim` extents, `ndim` byte strides, 8 bytes each) and
   * the kernel writes every element it describes: each launch feeds those
   * bytes as a known write named by the kernel. Read at the kernel's first
   * launch: a later call, or one whose count is not the kernel's, changes
   * nothing. */
  void (*kernel_params)(uint64_t function, const xsc_kernel_param* params, size_t n);
} xsc_host_api;

/* Exported by libxstream_check.so, for measurement: each part's own time
 * so far (ns) and how many times it ran, for up to `capacity` parts, named
 * in `names` (static strings); returns the number of parts, 0 when parts
 * are not timed (XSC_PROFILE=parts or XSC_OPTIONS verbosity=2 times them). */
int xsc_runtime_parts(const char** names, uint64_t* ns, uint64_t* count, int capacity);

/* Exported by libxstream_check.so, for measurement: of the words of kernel
 * arguments that lay in the span of the tracked allocations, how many were
 * dropped because no tracked allocation ever covered their 2 MiB page, how
 * many were looked up under the session lock, how many of those lay in no
 * live allocation, and how many were handed to the checker's thread to be
 * looked up there (their pages held only the launch stream's caching
 * blocks); totals since the process started. Any pointer may be NULL. */
void xsc_runtime_launch_words(uint64_t* filtered, uint64_t* looked_up, uint64_t* missed,
                              uint64_t* handed_over);

/* Exported by libxstream_check.so, for measurement, with the checker on its
 * own thread (checker_thread=1; zeros otherwise): the live allocations the
 * program's threads see now, how many of them count as another agent's on
 * their pages (launches using them are looked up, not handed over), of
 * those how many are caching blocks their own stream alone used that count
 * so only for the uses they inherited from earlier occupants of their
 * memory, and the bytes of freed memory remembered as used by more than
 * one agent. Any pointer may be NULL. */
void xsc_runtime_view_census(uint64_t* live, uint64_t* other, uint64_t* other_by_inheritance,
                             uint64_t* mixed_residue_bytes);

/* Exported by libxstream_check.so: the table for producers that live in the
 * runtime's own process image (NCCL interposers, annotations). NULL while
 * checking is disabled. */
const xsc_host_api* xsc_runtime_host_api(void);

/* Exported by an adapter; called once by the runtime. Returns 0 when the
 * adapter attached, non-zero (after one notice) when it could not. */
typedef int (*xsc_adapter_attach_fn)(const xsc_host_api* api);

#ifdef __cplusplus
}
#endif

#endif /* XSTREAM_CHECK_HOST_API_H */
