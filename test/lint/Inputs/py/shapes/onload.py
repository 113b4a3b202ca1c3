# Weights brought onto the device on a side stream, then the module called:
# its forward reads the tensors this function put into it (a parameter's
# .data replaced, a weight copied into in place) on the current stream,
# which must wait for the side stream first. Each bug is followed by its
# fixed twin, which must stay silent.
import torch

upload_stream = torch.cuda.Stream()


def forward_onloaded(model, x, host_weights):
    with torch.cuda.stream(upload_stream):
        for p in model.parameters():
            p.data = host_weights[p].to("cuda", non_blocking=True)
    return model(x)  # CHECK: [[@LINE]]:12: warning: 'model.parameters()[*]' is used on the current stream before its write on stream 'upload_stream' is ordered before this use{{.*}}[xstream-use-before-ready]


def forward_onloaded_waited(model, x, host_weights):
    with torch.cuda.stream(upload_stream):
        for p in model.parameters():
            p.data = host_weights[p].to("cuda", non_blocking=True)
    torch.cuda.current_stream().wait_stream(upload_stream)
    return model(x)


def forward_refreshed(layer, x, host_weight):
    with torch.cuda.stream(upload_stream):
        layer.weight.data.copy_(host_weight, non_blocking=True)
    return layer(x)  # CHECK: [[@LINE]]:12: warning: 'layer.weight' is used on the current stream before its write on stream 'upload_stream' is ordered before this use{{.*}}[xstream-use-before-ready]


def forward_refreshed_waited(layer, x, host_weight):
    with torch.cuda.stream(upload_stream):
        layer.weight.data.copy_(host_weight, non_blocking=True)
    event = upload_stream.record_event()
    torch.cuda.current_stream().wait_event(event)
    return layer(x)


# Called under the same stream: ordered by that stream alone. Offloaded to
# the host: the module holds host memory, which no kernel of its forward
# reads before the copies, and nothing is brought in.
def forward_on_upload_stream(model, x, host_weights):
    upload_stream.wait_stream(torch.cuda.current_stream())  # x, the caller's
    with torch.cuda.stream(upload_stream):
        for p in model.parameters():
            p.data = host_weights[p].to("cuda", non_blocking=True)
        return model(x)


def offload_then_call(model, x, other):
    with torch.cuda.stream(upload_stream):
        for p in model.parameters():
            p.data = p.data.to("cpu")
    return other(x)
