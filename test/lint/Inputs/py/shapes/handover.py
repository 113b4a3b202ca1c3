# A pipeline fills per-module containers of a context object while its
# data-distribution stream is current; the forward of each module later takes
# its entries out, makes the current stream wait for that stream and uses
# them there. Each entry must be recorded on the current stream, or its block
# goes back to the data-distribution stream's pool while the current stream
# still reads it. Each bug is followed by its fixed twin, which must stay
# silent.
import torch


class PipelineContext:
    def __init__(self):
        self.module_contexts = {}
        self.dist_requests = {}


def start_input_dist(modules, batch, context):
    for name, module in modules.items():
        module_ctx = module.create_context()
        context.module_contexts[name] = module_ctx
        context.dist_requests[name] = module.input_dist(module_ctx, batch)


class Pipeline:
    def __init__(self):
        self.dist_stream = torch.cuda.Stream()
        self.context = PipelineContext()

    def progress(self, modules, batch):
        self.dist_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.dist_stream):
            start_input_dist(modules, batch, self.context)


class PipelinedForward:
    def __init__(self, name, module, context, stream):
        self.name = name
        self.module = module
        self.context = context
        self.stream = stream

    # The distributed input is recorded, its module context is not.
    def forward_context_unrecorded(self):
        request = self.context.dist_requests.pop(self.name)
        with torch.cuda.stream(self.stream):
            data = request.wait()
        ctx = self.context.module_contexts.pop(self.name)
        cur = torch.cuda.current_stream()
        cur.wait_stream(self.stream)
        data.record_stream(cur)
        return self.module.compute_and_output_dist(ctx, data)  # CHECK: [[@LINE]]:16: warning: 'ctx' is used on the current stream here and is still held when 'forward_context_unrecorded' returns, with nothing ordering the stream that fills 'module_contexts' (where it was allocated) after this use{{.*}}[xstream-pending-at-return]


class PipelinedForwardRecorded(PipelinedForward):
    def forward_recorded(self):
        request = self.context.dist_requests.pop(self.name)
        with torch.cuda.stream(self.stream):
            data = request.wait()
        ctx = self.context.module_contexts.pop(self.name)
        cur = torch.cuda.current_stream()
        cur.wait_stream(self.stream)
        data.record_stream(cur)
        ctx.record_stream(cur)
        return self.module.compute_and_output_dist(ctx, data)

    # With no distribution stream the pipeline ran on the current stream:
    # nothing to wait for, nothing to record.
    def forward_on_main_stream(self):
        request = self.context.dist_requests.pop(self.name)
        data = request.wait()
        ctx = self.context.module_contexts.pop(self.name)
        return self.module.compute_and_output_dist(ctx, data)

    # The stream is optional: on the path without it the current stream
    # never waits, and the entries were made on the current stream.
    def forward_maybe_on_main_stream(self):
        request = self.context.dist_requests.pop(self.name)
        ctx = self.context.module_contexts.pop(self.name)
        if self.stream is not None:
            with torch.cuda.stream(self.stream):
                data = request.wait()
            cur = torch.cuda.current_stream()
            cur.wait_stream(self.stream)
            data.record_stream(cur)
            ctx.record_stream(cur)
        else:
            data = request.wait()
        return self.module.compute_and_output_dist(ctx, data)


# The entries are filled after the side-stream block, with names bound in
# it: what they hold was still made on the distribution stream.
def start_prefetch(modules, context, stream):
    for name, module in modules.items():
        with torch.cuda.stream(stream):
            fetched = context.dist_requests.pop(name).wait()
        context.prefetched[name] = fetched


class PrefetchedForward(PipelinedForward):
    def forward_prefetched_unrecorded(self):
        data = self.context.prefetched.pop(self.name)
        torch.cuda.current_stream().wait_stream(self.stream)
        return self.module.compute_and_output_dist(data)  # CHECK: [[@LINE]]:16: warning: 'data' is used on the current stream here and is still held when 'forward_prefetched_unrecorded' returns, with nothing ordering the stream that fills 'prefetched' (where it was allocated) after this use{{.*}}[xstream-pending-at-return]

    def forward_prefetched_recorded(self):
        data = self.context.prefetched.pop(self.name)
        torch.cuda.current_stream().wait_stream(self.stream)
        data.record_stream(torch.cuda.current_stream())
        return self.module.compute_and_output_dist(data)
