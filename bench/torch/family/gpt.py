"""A GPT-style decoder-only transformer in plain torch, shared by the `decode` and `trainbf16`
tenants. Plain torch rather than transformers so that the kernel sequence of a step depends only
on the installed torch (no model-zoo code paths, no downloads) and stays easy to read.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        # One fused QKV projection: a single GEMM launch instead of three per layer.
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x, cache=None, pos=0):
        b, t, c = x.shape
        qkv = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv
        if cache is not None:
            # K and V share one cache tensor per layer so that storing them is one copy kernel.
            cache[:, :, :, pos:pos + t] = qkv[1:]
            k, v = cache[:, :, :, :pos + t]
        # Causal only when several queries come at once: a prefill starts at position 0, so its
        # queries and keys line up; a one-token decode step may see the whole cache.
        y = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, d, heads, layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        # GPT-2's small init keeps random-weight activations tame in fp16 across the layers.
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, idx, caches=None, pos=0, last_only=False):
        t = idx.shape[1]
        # A slice of the position table, not an arange: no extra kernel per decode step.
        x = self.tok(idx) + self.pos.weight[pos:pos + t]
        for i, blk in enumerate(self.blocks):
            x = blk(x, None if caches is None else caches[i], pos)
        if last_only:
            x = x[:, -1:]
        return self.head(self.ln_f(x))

    def new_caches(self, batch, max_len, dtype, device):
        blk = self.blocks[0]
        d = self.tok.embedding_dim
        shape = (2, batch, blk.heads, max_len, d // blk.heads)  # K and V, each (b, heads, t, head_dim)
        return [torch.zeros(shape, dtype=dtype, device=device) for _ in self.blocks]


def generate(model, prompt, new_tokens, caches):
    """Greedy decoding that stays on the device: the caller does the one host transfer."""
    tok = model(prompt, caches, 0, last_only=True)[:, -1].argmax(-1, keepdim=True)
    out = [tok]
    pos = prompt.shape[1]
    for _ in range(new_tokens - 1):
        tok = model(tok, caches, pos, last_only=True)[:, -1].argmax(-1, keepdim=True)
        out.append(tok)
        pos += 1
    return torch.cat(out, 1)


class StaticDecoder:
    """Greedy decoding with every shape fixed, as a serving engine that replays CUDA graphs does
    (the `decodeg` tenant): a step for the prompt and a step for one token, each reading and
    writing buffers of its own (the prompt, the last token, its position), so that each can be
    captured once and replayed. The token step attends over the whole cache with a mask up to the
    position instead of over a slice of it, and writes its K and V at a position held in a device
    tensor: nothing in it depends on a Python number that changes from step to step.
    """

    def __init__(self, model, batch, prompt_len, max_len, dtype, device):
        self.model = model
        self.prompt_len = prompt_len
        self.caches = model.new_caches(batch, max_len, dtype, device)
        self.prompt = torch.zeros(batch, prompt_len, dtype=torch.long, device=device)
        self.tok = torch.zeros(batch, 1, dtype=torch.long, device=device)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)
        self.keys = torch.arange(max_len, device=device)

    def prefill(self):
        """The prompt through every layer (its K and V into the caches); @return the first new token (batch, 1)."""
        m = self.model
        logits = m(self.prompt, self.caches, 0, last_only=True)
        self.tok.copy_(logits[:, -1].argmax(-1, keepdim=True))
        self.pos.fill_(self.prompt_len)
        return self.tok

    def step(self):
        """One token at self.pos; @return the next token (batch, 1), also left in self.tok for the next step."""
        m = self.model
        x = m.tok(self.tok) + m.pos.weight.index_select(0, self.pos)
        mask = (self.keys <= self.pos).view(1, 1, 1, -1)  # the keys written so far, this one included
        for blk, cache in zip(m.blocks, self.caches):
            b, t, c = x.shape
            qkv = blk.qkv(blk.ln1(x)).view(b, t, 3, blk.heads, c // blk.heads).permute(2, 0, 3, 1, 4)
            cache.index_copy_(3, self.pos, qkv[1:])
            y = F.scaled_dot_product_attention(qkv[0], cache[0], cache[1], attn_mask=mask)
            x = x + blk.proj(y.transpose(1, 2).reshape(b, t, c))
            x = x + blk.fc2(F.gelu(blk.fc1(blk.ln2(x)), approximate="tanh"))
        self.tok.copy_(m.head(m.ln_f(x))[:, -1].argmax(-1, keepdim=True))
        self.pos.add_(1)
        return self.tok
