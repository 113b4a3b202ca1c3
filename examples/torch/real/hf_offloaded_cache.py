"""Hugging Face transformers: generate() with the offloaded key/value cache.

    python3 hf_offloaded_cache.py [--layers L] [--new-tokens N]

A small Llama built from a LlamaConfig (no weights or files are downloaded;
the hub is off) continues a batch of prompts greedily twice: once with the
default cache and once with cache_implementation="offloaded". The offloaded
cache keeps each layer's keys and values in host memory between decoding
steps: after a layer's attention it copies them to the host on the default
stream (non_blocking, into pinned memory), and before the layer's turn it
copies them back on a prefetch stream of its own, one layer ahead. So every
decoding step has a device block allocated on the prefetch stream and freed
after the default stream read it, and a pinned host buffer written on one
stream and read on the other: the transfers this program exists to run.

Exits 1 when the two continuations differ (the offloaded cache must not
change what is generated), 2 without a CUDA device.
"""
import argparse
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

VOCAB = 256


def prompts(rows: int, length: int, device) -> torch.Tensor:
    """Rows of t, t + k, t + 2k, ... (mod VOCAB)."""
    starts = torch.arange(rows, device=device).unsqueeze(1) * 11
    strides = (torch.arange(rows, device=device) % 7 + 1).unsqueeze(1)
    return (starts + strides * torch.arange(length, device=device)) % VOCAB


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--new-tokens", type=int, default=24)
    parser.add_argument("--prompt", type=int, default=48)
    args = parser.parse_args(argv)
    if args.layers < 2 or args.new_tokens < 2 or args.prompt < 1:
        parser.error("need --layers >= 2, --new-tokens >= 2 and --prompt >= 1")
    if not torch.cuda.is_available():
        print("hf_offloaded_cache.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=256, intermediate_size=512,
                         num_hidden_layers=args.layers, num_attention_heads=4,
                         num_key_value_heads=4, max_position_embeddings=256,
                         bos_token_id=0, eos_token_id=None, pad_token_id=0)
    model = LlamaForCausalLM(config).cuda().eval()
    batch = prompts(8, args.prompt, "cuda")
    mask = torch.ones_like(batch)

    continuations = {}
    with torch.no_grad():
        for cache in ("dynamic", "offloaded"):
            out = model.generate(input_ids=batch, attention_mask=mask, do_sample=False,
                                 max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                                 cache_implementation=cache)
            continuations[cache] = out[:, batch.shape[1]:].cpu()

    same = torch.equal(continuations["dynamic"], continuations["offloaded"])
    print(f"hf_offloaded_cache: transformers {transformers.__version__}, {args.layers} layers, "
          f"{args.new_tokens} tokens for {batch.shape[0]} prompts with each cache: "
          f"{'the same' if same else 'DIFFERENT'} continuations", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
