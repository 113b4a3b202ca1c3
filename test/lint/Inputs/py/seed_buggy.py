# A producer stream fills each layer's parameters, the compute stream reads
# them, and the block is released while the read may still be running.
import torch

LAYERS = 4
WIDTH = 256


def gather_params(stream, layer):
    with torch.cuda.stream(stream):
        flat = torch.full((WIDTH * WIDTH,), float(layer), device="cuda")
    return flat


def run_layer(flat, activations):
    weight = flat.view(WIDTH, WIDTH)
    return activations @ weight


def pipeline(activations):
    gather = torch.cuda.Stream()
    compute = torch.cuda.current_stream()
    outputs = []
    params = gather_params(gather, 1)
    for layer in range(2, LAYERS + 1):
        compute.wait_stream(gather)
        outputs.append(run_layer(params, activations))  # CHECK: [[@LINE+1]]:9: warning: 'params' is freed on stream 'gather' while the current stream may still be using it; nothing orders stream 'gather' after that use [xstream-unordered-free]
        del params
        # CHECK: [[@LINE-2]]:24: note: 'params' is used on the current stream here; record an event on the current stream after this use and make stream 'gather' wait on it before the free
        params = gather_params(gather, layer)
    compute.wait_stream(gather)
    outputs.append(run_layer(params, activations))
    del params  # CHECK: [[@LINE]]:5: warning: 'params' is freed on stream 'gather' {{.*}} [xstream-unordered-free]
    # CHECK: [[@LINE-2]]:20: note: 'params' is used on the current stream here
    torch.cuda.synchronize()
    return outputs
