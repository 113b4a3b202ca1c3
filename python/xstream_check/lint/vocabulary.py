"""What the Python check knows of PyTorch's and CUDA's names: the stream,
event and tensor calls, the tensor methods by what they do, the builtins
that keep nothing. Facts only, no analysis."""
import ast
import re


CURRENT = "<current>"  # the stream current when the function is entered


NONE = ("none",)


EMPTY = frozenset()


NONE_VALUE = frozenset((NONE,))


MAYBE_STREAM = frozenset((("?",),))


DEFINITELY_NOT_NONE = {"t", "s", "e", "ev", "c", "tup", "work"}


# Inlining: helpers of the same module, as on the C++ side.
MAX_INLINE_DEPTH = 3


MAX_INLINE_LINES = 200


# The lines one analysis may interpret in helpers, over all its calls and
# loop rounds: past it, a call is an unknown call (what it does to its
# arguments is taken as a use on the current stream).
INLINE_BUDGET_LINES = 800


MAX_LOOP_ROUNDS = 12


# After this many rounds a loop head's tuples lose their shape, so that a
# tuple rebuilt from itself each round (`a, b = b[0], (a,)`) converges.
WIDEN_AFTER_ROUNDS = 4


STREAM_CONTEXTS = {"torch.cuda.stream", "torch.cuda.StreamContext", "torch.cuda.streams.StreamContext",
                   "torch.stream", "torch.xpu.stream", "torch.accelerator.stream"}


STREAM_FACTORIES = {"torch.cuda.Stream", "torch.Stream", "torch.cuda.ExternalStream",
                    "torch.cuda.streams.Stream"}


CURRENT_STREAM = {"torch.cuda.current_stream", "torch.accelerator.current_stream",
                  "torch.cuda.default_stream"}


EVENT_FACTORIES = {"torch.cuda.Event", "torch.Event", "torch.cuda.streams.Event"}


DEVICE_SYNC = {"torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.cuda.ipc_collect"}


TENSOR_FACTORIES = {"empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "linspace",
                    "empty_strided", "tensor", "as_tensor", "eye", "randperm", "normal", "logspace"}


LIKE_FACTORIES = {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
                  "randint_like"}


# torch.X callables that do not return a new tensor (or return none of ours).
TORCH_NON_TENSOR = {"no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "is_tensor",
                    "is_floating_point", "is_complex", "is_grad_enabled", "device", "Size", "dtype",
                    "get_default_dtype", "set_default_dtype", "manual_seed", "numel", "compile",
                    "is_storage", "typename", "finfo", "iinfo", "get_device", "is_nonzero",
                    "result_type", "promote_types", "can_cast", "is_inference_mode_enabled",
                    "use_deterministic_algorithms", "Generator", "Event", "Stream", "autocast",
                    "_assert", "equal", "allclose", "is_same_size", "broadcast_shapes", "save", "load",
                    "get_device_module", "get_default_device", "set_default_device"}


TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.ops.", "torch.special.", "torch.linalg.", "torch.fft.",
                     "torch._C._nn.", "torch._foreach_")


DIST_PREFIX = "torch.distributed."


# Tensor methods that return a view of the same storage (no kernel).
VIEW_METHODS = {"view", "view_as", "narrow", "reshape", "reshape_as", "expand", "expand_as", "transpose",
                "t", "permute", "unsqueeze", "squeeze", "flatten", "unflatten", "select", "split",
                "chunk", "unbind", "tensor_split", "as_strided", "detach", "diagonal", "movedim",
                "moveaxis", "swapaxes", "swapdims", "unfold", "split_with_sizes", "hsplit", "vsplit",
                "__getitem__", "requires_grad_", "share_memory_", "retain_grad", "align_to",
                "refine_names", "rename"}


VIEW_ATTRIBUTES = {"data", "T", "mT", "H", "mH", "real", "imag"}


# Attributes of a tensor that are tensors of their own storage.
TENSOR_FIELDS = {"grad", "_base", "main_grad"}


# Methods that only a tensor has: their receiver, not made here, is one.
TENSOR_ONLY_METHODS = {"record_stream", "narrow", "view", "view_as", "contiguous", "numel", "untyped_storage",
                       "data_ptr", "detach", "clone", "flatten", "unflatten", "reshape",
                       "permute", "unsqueeze", "squeeze", "type_as", "element_size", "nelement",
                       "is_contiguous", "storage_offset", "stride", "chunk", "unbind", "transpose", "t",
                       "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "masked_fill",
                       "index_select", "bfloat16", "half", "float", "cuda", "expand", "expand_as",
                       "as_strided", "split_with_sizes", "tensor_split", "numpy", "tolist", "item",
                       "norm", "sqrt", "matmul", "mm", "bmm", "div", "mul", "add",
                       "sub", "pow", "exp", "log", "clamp", "argmax", "softmax", "masked_select",
                       "index_add", "roll", "cumsum", "topk",
                       "to_dense", "coalesce", "dim", "ndimension", "is_pinned", "storage"}


# Methods whose result is a host tensor filled before they return.
HOST_COPY_METHODS = {"pin_memory", "cpu", "numpy"}


# Collectives that write their first argument (in place, or the output).
DIST_WRITES_FIRST = {"all_reduce", "broadcast", "reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
                     "all_to_all_single", "recv", "irecv", "_all_gather_base", "_reduce_scatter_base",
                     "all_gather", "reduce_scatter", "all_to_all", "scatter", "gather"}

# Of those, the ones that also read their first argument (in place).
DIST_READS_FIRST = {"all_reduce", "broadcast", "reduce"}

# torch.distributed's queries and group makers: no tensor.
DIST_QUERIES = {"get_rank", "get_world_size", "get_global_rank", "get_group_rank", "new_group", "new_subgroups",
                "get_backend", "is_initialized", "is_available", "_coalescing_manager", "get_process_group_ranks"}


# Tensor methods that only read metadata (no kernel, no new tensor).
METADATA_METHODS = {"size", "numel", "dim", "ndimension", "stride", "storage_offset", "data_ptr",
                    "element_size", "is_contiguous", "get_device", "is_pinned", "nelement", "nbytes",
                    "is_floating_point", "is_complex", "is_set_to", "is_shared", "untyped_storage",
                    "storage", "_typed_storage", "register_hook", "__len__", "dim_order", "is_sparse",
                    "has_names", "is_inference", "_is_view", "is_meta"}


# Tensor methods that copy to the host and so wait for the current stream.
HOST_SYNC_METHODS = {"item", "tolist", "numpy", "__bool__", "__int__", "__float__"}


# Conversions that may return the tensor itself.
MAYBE_SELF_METHODS = {"to", "cuda", "contiguous", "type", "float", "half", "bfloat16", "double", "int",
                      "long", "bool", "char", "short", "byte", "type_as", "to_dense", "coalesce"}


NEW_TENSOR_METHODS = {"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided"}


CONTAINER_ADD = {"append", "appendleft", "add", "insert", "extend", "extendleft", "put", "put_nowait"}


CONTAINER_TAKE = {"pop", "popleft", "popitem", "get_nowait"}


# Lookups: what they return stays in the container (dict.get; a Queue's get
# is taken as one too, which can only miss a free).
CONTAINER_LOOK = {"get", "setdefault", "copy"}


CONTAINER_FACTORIES = {"collections.deque", "queue.Queue", "queue.SimpleQueue", "collections.OrderedDict",
                       "collections.defaultdict"}


PASS_THROUGH_BUILTINS = {"list", "tuple", "reversed", "sorted", "iter", "next", "zip", "enumerate",
                         "filter", "dict", "set", "frozenset"}


# Builtins that read the elements of a tensor they are given (on the host).
HOST_READING_BUILTINS = {"print", "repr", "str", "format", "int", "float", "bool", "sum", "any", "all", "min",
                         "max", "abs", "round"}

# Of those, the ones that copy a device tensor (or a CuPy array) to the host
# and wait for it (item() and printing do), so that the host is ordered
# after the current stream's work. Not sum, min, max, abs, round: on a
# device tensor they compute on the device.
HOST_SYNC_BUILTINS = {"print", "repr", "str", "format", "int", "float", "bool"}

# Context managers that capture a CUDA graph: entering one synchronizes the
# device first.
GRAPH_CAPTURE_CONTEXTS = {"torch.cuda.graph", "torch.cuda.graphs.graph"}

# Keyword arguments of torch operators that are never tensors.
NON_TENSOR_KEYWORDS = {"dtype", "device", "layout", "requires_grad", "pin_memory", "memory_format",
                       "non_blocking", "generator", "dim", "keepdim", "size", "names", "copy"}

# Predicates of DeepSpeed's accelerator abstraction (and alike) that are
# False on CUDA, and torch's "compiling now" predicates, False in the eager
# code this check reads: a branch they guard is taken or not as CUDA's eager
# run takes it.
PLATFORM_FALSE_ON_CUDA = {"resolves_data_dependency", "is_synchronized_device", "handles_memory_backpressure",
                          "is_torchdynamo_compiling", "is_compiling", "is_dynamo_compiling"}

# Keyword arguments of torch.distributed's collectives that are no tensors.
DIST_NON_TENSOR_KEYWORDS = {"group", "op", "async_op", "src", "dst", "tag", "group_src", "group_dst",
                            "group_rank", "device_ids", "timeout", "output_split_sizes", "input_split_sizes"}

# Copies of a Python object: no kernel reads a tensor they are handed.
OBJECT_COPIES = {"copy.copy"}

# Calls that return their second argument as it is.
TYPE_CASTS = {"typing.cast", "typing_extensions.cast"}


# Builtins that neither run GPU work nor keep their arguments.
HARMLESS_BUILTINS = {"len", "isinstance", "issubclass", "id", "type", "print", "repr", "str", "hash",
                     "getattr", "hasattr", "callable", "range", "int", "float", "bool", "min", "max",
                     "sum", "any", "all", "abs", "round", "format", "divmod", "map", "super", "object",
                     "vars", "dir", "open", "ord", "chr", "hex", "bin", "oct", "slice", "setattr",
                     "delattr", "NotImplementedError", "ValueError", "RuntimeError", "AssertionError",
                     "TypeError", "KeyError", "IndexError", "Exception", "pow"}


# Names that are never a tensor's: what is passed to an unknown call under a
# side stream is kept as a tensor's use unless it is named like one of these
# (an accelerator object, a process group, an event, a stream).
NOT_TENSOR_WORDS = ("accelerator", "process_group", "event", "stream")

# Names that are no tensor's unless the code uses the value as one (a tensor
# method, an operator's argument): `splits`, the per-rank sizes of an
# all-to-all, most often a list of ints (`input_splits`), but a device
# tensor of them where it is copied to the host first (megatron-core's
# token dispatcher: `self.input_splits = helper(self.input_splits)`, the
# helper returning a host copy).
SIZES_WORDS = ("splits",)

# Names of what the host fills (a data loader's batches, pinned buffers):
# not written by a stream before the function started.
HOST_MEMORY_WORDS = ("cpu", "host", "pinned")  # a name that says host memory
HOST_SOURCE_WORDS = ("iter", "loader")  # a name that says data the host filled
DEVICE_MEMORY_WORDS = ("gpu", "cuda", "device")  # a name that says device memory


def says_host_memory(text):
    """Whether a name (`p_host.grad`, `self.cpu_grads[k]`) says host memory:
    of the words that say where memory lives, the last one does, in the
    innermost identifier that has one. `self.cpu_copys_map_gpu_param[p].grad`
    is a device tensor (a map from host copies to device parameters), and
    `gpu_to_cpu_buf` host memory. A subscript's key names no memory
    (`self.gpu_params[host_key]`)."""
    for ident in reversed(re.findall(r"[a-z0-9_]+", re.sub(r"\[[^\]]*\]", "", text.lower()))):
        last_host = max((ident.rfind(w) for w in HOST_MEMORY_WORDS), default=-1)
        last_device = max((ident.rfind(w) for w in DEVICE_MEMORY_WORDS), default=-1)
        if last_host >= 0 or last_device >= 0:
            return last_host > last_device
    return False


# Parameter names that are seldom a tensor's, for the one rule that takes a
# parameter only passed to unknown calls as a tensor: a use on another
# stream of what the caller wrote (rules.Rules.race).
NOT_TENSOR_PARAMETER_WORDS = ("device", "dtype", "stream", "iter", "path", "file", "model", "module", "config",
                              "cfg", "fn", "func", "callback", "hook", "group", "rank", "size", "shape", "num",
                              "count", "flag", "mode", "name", "blocking", "optim", "loader", "context", "ctx",
                              "event", "handle", "work", "request", "kwargs", "option", "args", "key", "type")


# A tensor's attributes that are not tensors.
TENSOR_METADATA = {"dtype", "shape", "device", "layout", "ndim", "is_cuda", "requires_grad", "is_leaf",
                   "itemsize", "nbytes"}


# The same calls on a device module held in a variable (FSDP's
# `self._device_handle`, `torch.get_device_module()`).
DEVICE_MODULE_CALLS = {"Stream": "torch.cuda.Stream", "current_stream": "torch.cuda.current_stream",
                       "default_stream": "torch.cuda.default_stream", "Event": "torch.cuda.Event",
                       "synchronize": "torch.cuda.synchronize", "stream": "torch.cuda.stream"}


ORDERING_METHODS = {"record_stream", "wait_stream", "wait_event", "synchronize", "record", "wait",
                    "record_event"}


def is_in_place(meth):
    # resize_ allocates (it writes no element); the others write.
    return meth.endswith("_") and not meth.startswith("_") and meth not in VIEW_METHODS and meth != "resize_"


# Stream memory operations (cuStreamWriteValue32 and its kin, as PyTorch's
# symmetric memory exposes them): streams that signal each other through
# flags in device memory, an ordering the enqueue order does not show.
DEVICE_SIGNAL_CALLS = {"stream_write_value32", "stream_write_value64", "stream_wait_value32",
                       "stream_wait_value64", "wait_value", "write_value", "put_signal", "wait_signal",
                       "nccl_put_signal", "nccl_wait_signal"}

SAVED_TENSORS_HOOKS = {"torch.autograd.graph.saved_tensors_hooks", "torch.autograd.graph.save_on_cpu"}


# Buffer.foreign: made here (0), not made here and only passed to unknown
# calls (FOREIGN_UNKNOWN), or used as a tensor (FOREIGN_TENSOR).
FOREIGN_UNKNOWN = 1


FOREIGN_TENSOR = 2


# Other backends' device modules have CUDA's stream API (torch.xpu,
# torch_musa's torch.musa, torch_npu's torch.npu, ...).
DEVICE_BACKENDS = ("xpu", "musa", "npu", "mlu", "hpu", "mtia", "mps")


# CuPy's streams, events and synchronizations, by PyTorch's names for the
# same thing. A CuPy stream is current inside `with stream:`, as a torch
# Stream is; `stream.record()` is PyTorch's `record_event()`.
CUPY_AS_TORCH = {"cupy.cuda.ExternalStream": "torch.cuda.ExternalStream",
                 "cupy.cuda.Event": "torch.cuda.Event", "cupy.cuda.stream.Event": "torch.cuda.Event",
                 "cupy.cuda.get_current_stream": "torch.cuda.current_stream",
                 "cupy.cuda.runtime.deviceSynchronize": "torch.cuda.synchronize"}


# CuPy's stream constructors. A stream made without non_blocking=True is a
# blocking stream, ordered with the legacy default stream (CuPy's current
# stream unless the program makes another current) as lint/legacy.py says.
CUPY_STREAM_FACTORIES = {"cupy.cuda.Stream", "cupy.cuda.stream.Stream"}


# CuPy's functions that make no array (or none on the device).
CUPY_NON_ARRAY = {"asnumpy", "get_array_module", "get_default_memory_pool", "get_default_pinned_memory_pool",
                  "fuse", "ElementwiseKernel", "ReductionKernel", "RawKernel", "RawModule", "dtype",
                  "result_type", "can_cast", "ndim", "shape", "size", "isscalar", "show_config",
                  "is_available", "errstate", "seterr", "geterr", "iinfo", "finfo", "allclose",
                  "array_equal"}


def as_cuda(canon):
    """torch.<backend>.X as torch.cuda.X, and CuPy's stream and event names
    as PyTorch's (CUPY_AS_TORCH)."""
    cupy = CUPY_AS_TORCH.get(canon)
    if cupy is not None:
        return cupy
    if canon.startswith("torch.") and canon.count(".") >= 2:
        backend, _, rest = canon[len("torch."):].partition(".")
        if backend in DEVICE_BACKENDS:
            return "torch.cuda." + rest
    return canon


FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
