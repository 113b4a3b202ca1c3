"""Hugging Face transformers: train a GPT-2 built from a config, then generate.

    python3 hf_gpt2.py [--steps N]

A two-layer GPT2LMHeadModel is built from a GPT2Config (no weights or files
are downloaded; the hub is off), trained on a fixed batch of arithmetic
token sequences with AdamW, then asked for greedy continuations with
generate() and its key/value cache. Exits 1 when the loss did not fall or
when a generated token is not what a full forward pass over the generated
sequence ranks first (up to near-ties).
"""
import argparse
import math
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

VOCAB = 256
SEQ = 64


def token_batch(rows: int, device) -> torch.Tensor:
    """Rows of t, t + k, t + 2k, ... (mod VOCAB): learnable next tokens."""
    starts = torch.arange(rows, device=device).unsqueeze(1) * 7
    strides = (torch.arange(rows, device=device) % 5 + 1).unsqueeze(1)
    return (starts + strides * torch.arange(SEQ, device=device)) % VOCAB


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--new-tokens", type=int, default=16)
    args = parser.parse_args(argv)
    if args.steps < 2 or args.new_tokens < 1:
        parser.error("need --steps >= 2 and --new-tokens >= 1")
    if not torch.cuda.is_available():
        print("hf_gpt2.py: no CUDA device available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=VOCAB, n_positions=128, n_embd=128, n_layer=2, n_head=4,
                        bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batch = token_batch(32, "cuda")
    mask = torch.ones_like(batch)

    model.train()
    losses = []
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = model(input_ids=batch, attention_mask=mask, labels=batch).loss
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    values = torch.stack(losses).tolist()

    model.eval()
    prompt = batch[:4, :16]
    with torch.no_grad():
        generated = model.generate(prompt, attention_mask=mask[:4, :16],
                                   max_new_tokens=args.new_tokens,
                                   min_new_tokens=args.new_tokens, do_sample=False)
        # Logits for every position of the generated rows, without a cache.
        logits = model(input_ids=generated, attention_mask=torch.ones_like(generated)).logits
    new = generated.shape[1] - prompt.shape[1]
    # Position p's logits rank the token at p + 1. min_new_tokens keeps
    # generate() from choosing the end-of-text token: leave it out here too.
    ranked = logits[:, prompt.shape[1] - 1:-1].clone()
    ranked[..., config.eos_token_id] = float("-inf")
    chosen = generated[:, prompt.shape[1]:]
    chosen_logit = ranked.gather(2, chosen.unsqueeze(2)).squeeze(2)
    worst_gap = (ranked.max(dim=2).values - chosen_logit).max().item()
    print(f"hf_gpt2: trained {len(values)} steps, loss {values[0]:.4f} -> {values[-1]:.4f}; "
          f"generated {new} tokens for {generated.shape[0]} prompts, "
          f"largest gap to the top logit {worst_gap:.2e}")
    if not all(math.isfinite(v) for v in values) or not values[-1] < values[0]:
        print("hf_gpt2: the loss did not fall", file=sys.stderr)
        return 1
    if new != args.new_tokens or worst_gap > 1e-2:
        print("hf_gpt2: generate() disagrees with a full forward pass", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
