"""Hugging Face transformers' continuous batching with asynchronous double buffering.

    python3 hf_continuous_batching.py [--requests N] [--new-tokens T] [--sync]

A four-layer Llama from a LlamaConfig (no download) serves a dozen prompts
of different lengths through `generate_batch`, whose manager thread
schedules them into batches over a paged key/value cache. With
`use_async_batching` (the default here) it keeps two sets of input and
output buffers: the next batch's inputs are copied in from pinned host
memory on an upload stream while the current batch runs, captured in CUDA
graphs, on a compute stream, and each batch's outputs go back to the host
on a download stream, each stream waiting on the others' events. `--sync`
runs the same requests with one set of buffers, no graphs and no side
streams.

The program checks that every request finished without an error and
prints how many continuations equal those of the synchronous run (CUDA
graphs pad batches to other shapes, so a random model may pick another
token where two were close). Exits 1 when a request failed, 2 without a
CUDA device, 3 without transformers' continuous batching.
"""
import argparse
import os
import sys

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def serve(model, prompts, new_tokens: int, asynchronous: bool) -> dict:
    from transformers import ContinuousBatchingConfig, GenerationConfig

    generation = GenerationConfig(max_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
    batching = ContinuousBatchingConfig(num_blocks=64, max_batch_tokens=256, page_size=64,
                                        use_async_batching=asynchronous,
                                        use_cuda_graph=asynchronous)
    outputs = model.generate_batch(inputs=prompts, generation_config=generation,
                                   continuous_batching_config=batching, progress_bar=False)
    return {key: (output.error, list(output.generated_tokens)) for key, output in outputs.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--new-tokens", type=int, default=24)
    parser.add_argument("--sync", action="store_true")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.new_tokens < 1:
        parser.error("need --requests >= 1 and --new-tokens >= 1")
    if not torch.cuda.is_available():
        print("hf_continuous_batching.py: no CUDA device available", file=sys.stderr)
        return 2
    try:
        import transformers
        from transformers import ContinuousBatchingConfig  # noqa: F401
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError as error:
        print(f"hf_continuous_batching.py: no continuous batching ({error})", file=sys.stderr)
        return 3

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=1024, hidden_size=256, intermediate_size=768,
                         num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4,
                         max_position_embeddings=1024, attn_implementation="sdpa")
    model = LlamaForCausalLM(config).to("cuda").eval()
    generator = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, config.vocab_size, (int(length),), generator=generator).tolist()
               for length in torch.randint(4, 48, (args.requests,), generator=generator)]

    with torch.no_grad():
        results = serve(model, prompts, args.new_tokens, asynchronous=not args.sync)
        reference = results if args.sync else serve(model, prompts, args.new_tokens, False)
    failed = [key for key, (error, _) in results.items() if error is not None]
    missing = len(prompts) - len(results)
    same = sum(reference.get(key, (None, None))[1] == generated
               for key, (_, generated) in results.items())
    tokens = sum(len(generated) for _, generated in results.values())
    print(f"hf_continuous_batching: transformers {transformers.__version__}, "
          f"{'synchronous' if args.sync else 'asynchronous'}: {len(results)} requests, "
          f"{tokens} tokens, {len(failed)} failed, {missing} missing, {same} continuations "
          f"equal to the synchronous run's", flush=True)
    return 0 if not failed and missing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
