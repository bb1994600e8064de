"""The benchmark models in PyTorch, which the comparison scripts import (vit_torch.py,
vit_torch2.py, translate_torch.py, gpt_torch.py): uwaga's ViTs, its GPT and its translator with
uwaga's parameter names, so a parameter count or a state dict compares one to one.

Attention comes in two styles:
  Attention          written out as uwaga computes it: qkv = Linear(D, 3D) (or, across, q = Linear(D, D)
                     on x and kv = Linear(D, 2D) on the memory), per head E = Q Kᵀ/√d_k, masked
                     scores -inf, A = softmax(E), Y = A V (in training with attention dropout
                     Y = dropout(A) V, nn/attention_dropout.h), then proj. No fused kernel: vit_torch.py's
                     ViT and the translator, the programs compared op by op with uwaga.
  FusedAttention     as a PyTorch 2 user writes it: F.scaled_dot_product_attention (causal or not)
                     where PyTorch has it (2.0 on), softmax(Q Kᵀ · 1/√d_k) V written out where it has
                     not (Debian's 1.13): vit_torch2.py's ViTs and gpt_torch.py's GPT.
Every model is pre-LN (z += attn(LN(z)); z += MLP(LN(z))) — but a ViT with cct_details, whose
blocks are CCT's (z = LN(z + attn(LN(z))); z += MLP(z)) —, LayerNorm ε 1e-5, MLP fc2(GELU(fc1))
with exact (erf) GELU. Runs on PyTorch 1.13 and 2.x.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---- the parts ---------------------------------------------------------------------------------


class Attention(nn.Module):
    """Multi-head attention, every step explicit. Self-attention: qkv = Linear(D, 3D).
    Cross-attention: q = Linear(D, D) on x, kv = Linear(D, 2D) on the memory. mask (broadcast to
    (B, h, T, S)) is True where a key is hidden. attn_drop: attention dropout on A in training.
    qkv_bias False: no bias on the query, key and value projections (CCT's)."""

    def __init__(self, dim, heads, cross=False, attn_drop=0.0, qkv_bias=True):
        super().__init__()
        self.heads, self.d_k, self.attn_drop = heads, dim // heads, attn_drop
        if cross:
            self.q, self.kv = nn.Linear(dim, dim, bias=qkv_bias), nn.Linear(dim, 2 * dim, bias=qkv_bias)
        else:
            self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, memory=None, mask=None):  # x (B, T, D), memory (B, S, D)
        B, T, D = x.shape
        h, d_k = self.heads, self.d_k
        if memory is None:
            qkv = self.qkv(x).reshape(B, T, 3, h, d_k).permute(2, 0, 3, 1, 4)
            Q, K, V = qkv[0], qkv[1], qkv[2]  # (B, h, T, d_k)
        else:
            S = memory.shape[1]
            Q = self.q(x).reshape(B, T, h, d_k).transpose(1, 2)  # (B, h, T, d_k)
            kv = self.kv(memory).reshape(B, S, 2, h, d_k).permute(2, 0, 3, 1, 4)
            K, V = kv[0], kv[1]  # (B, h, S, d_k)
        E = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T, S)
        if mask is not None:
            E = E.masked_fill(mask, float("-inf"))
        A = E.softmax(dim=-1)
        if self.training and self.attn_drop > 0:
            A = F.dropout(A, self.attn_drop)
        Y = A @ V  # (B, h, T, d_k)
        return self.proj(Y.transpose(1, 2).reshape(B, T, D))


class FusedAttention(nn.Module):
    """Self-attention as a PyTorch 2 user writes it: one qkv projection, then
    F.scaled_dot_product_attention (use_sdpa), or on PyTorch < 2.0 the same product written out,
    with the keys after each query masked (causal: a buffer of `context` × `context`).
    attn_drop: attention dropout on the softmax's weights in training; qkv_bias as Attention's."""

    def __init__(self, dim, heads, use_sdpa, causal=False, context=0, attn_drop=0.0, qkv_bias=True):
        super().__init__()
        self.heads, self.d_k, self.use_sdpa, self.causal = heads, dim // heads, use_sdpa, causal
        self.attn_drop = attn_drop
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        if causal and not use_sdpa:
            mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
            self.register_buffer("causal_mask", mask, persistent=False)

    def forward(self, x):  # (B, T, D)
        B, T, D = x.shape
        q, k, v = self.qkv(x).reshape(B, T, 3, self.heads, self.d_k).permute(2, 0, 3, 1, 4).unbind(0)
        if self.use_sdpa:
            p = self.attn_drop if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal)  # (B, h, T, d_k)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d_k))
            if self.causal:
                att = att.masked_fill(~self.causal_mask[:T, :T], float("-inf"))
            att = att.softmax(dim=-1)
            if self.training and self.attn_drop > 0:
                att = F.dropout(att, self.attn_drop)
            y = att @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, D))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))  # exact (erf) GELU


class Block(nn.Module):
    """The pre-LN encoder block (nn/transformer_encoder_block.h): z′ = attn(LN(z)) + z,
    z = MLP(LN(z′)) + z′; attn is either style, attn_args go to it (the translator's mask).
    norm "between" (CCT's TransformerEncoderLayer): z′ = LN₂(z + attn(LN₁(z))), z = z′ + MLP(z′)."""

    def __init__(self, dim, mlp_dim, attn, dropout=0.0, drop_path=0.0, norm="pre"):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim, eps=1e-5), attn
        self.norm2, self.mlp = nn.LayerNorm(dim, eps=1e-5), Mlp(dim, mlp_dim)
        self.dropout, self.drop_path, self.between = dropout, drop_path, norm == "between"

    def branch(self, y):
        """A branch's output before its residual sum, in training: dropout, then drop path (the
        whole branch of an image zeroed with probability p, else scaled by 1/(1 - p))."""
        if self.training and self.dropout > 0:
            y = F.dropout(y, self.dropout)
        if self.training and self.drop_path > 0:
            keep = 1.0 - self.drop_path
            y = y * (torch.rand(y.shape[0], *[1] * (y.dim() - 1)) >= self.drop_path) / keep
        return y

    def forward(self, z, **attn_args):
        z = z + self.branch(self.attn(self.norm1(z), **attn_args))
        if self.between:
            z = self.norm2(z)
            return z + self.branch(self.mlp(z))
        return z + self.branch(self.mlp(self.norm2(z)))


def uwaga_init(model, embed_std=None):
    """uwaga's initialisation: biases 0, LayerNorm γ 1, every other parameter trunc-normal(0, 0.02)
    in ±0.04 — or, with embed_std, N(0, embed_std) for the embedding tables. A ViT's stem
    convolutions keep PyTorch's default (kaiming-uniform), which is uwaga's Conv2d's."""
    for name, p in model.named_parameters():
        if name.startswith("stem."):
            continue  # convolutions keep PyTorch's default init, as uwaga's Conv2d (nn/conv/conv2d.h)
        if embed_std is not None and "embed" in name:
            nn.init.normal_(p, std=embed_std)
        elif name.endswith("bias"):
            nn.init.zeros_(p)
        elif "norm" in name:
            nn.init.ones_(p)
        else:
            nn.init.trunc_normal_(p, std=0.02, a=-0.04, b=0.04)


def param_groups(model, weight_decay):
    """optim::make_param_groups: no decay on vectors (biases, norms), embeddings and the class token."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        skip = p.dim() < 2 or any(part in name for part in ("embed", "pos_", "cls_token"))
        (no_decay if skip else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


# ---- the ViTs (nn/vision_transformer.h) ----------------------------------------------------------

VIT_MODELS = {  # image_size, channels, patch, dim, depth, heads, mlp_dim (as uwaga-bench --model)
    "mnist-tiny": (28, 1, 7, 64, 6, 4, 128),
    "cifar10-small": (32, 3, 4, 96, 6, 4, 192),
    "cifar10-vit": (32, 3, 4, 128, 6, 4, 256),
    "cifar10-cct": (32, 3, 4, 128, 4, 2, 128),
    "vit-d192": (32, 3, 4, 192, 12, 3, 768),
}
VIT_LAYOUTS = {  # stem and pooling where not patches and a class token (uwaga-vit --stem, --pool)
    "cifar10-cct": ("cct", "seq"),  # the cifar10-vit preset's model since git 97bf13b
}


class VitConfig:
    """A ViT's sizes (mnist-tiny unless `name` says otherwise), stem, pooling, tokens and FLOPs.
      stem "patch"  a Linear on the flattened P×P×C patches (or a Conv2d: VisionTransformer's
                    patch_embed="conv");
           "cct"    CCT's tokenizer (nn/vit_backbone.h): log2 P 3×3 stride-1 convolutions
                    without bias, widths D/2 … D, each with ReLU and a 3×3 stride-2 max pooling,
                    then a Linear on each grid cell;
      pool "cls"    a class token, read by the head; "seq" CCT's sequence pooling, no class token;
      cct_details   with stem "cct" and pool "seq": CCT's own model (uwaga-vit --cct-details,
                    nn/vit_backbone.h): no Linear after the tokenizer, no qkv bias, LayerNorm
                    between each block's branches, CCT's init. Off unless set (the bench's
                    cifar10-cct is uwaga's model; uwaga-vit's cifar10-cct preset sets it)."""
    num_classes = 10

    def __init__(self, name="mnist-tiny"):
        self.name = name
        self.image_size, self.channels, self.patch, self.dim, self.depth, self.heads, self.mlp_dim = VIT_MODELS[name]
        self.stem, self.pool = VIT_LAYOUTS.get(name, ("patch", "cls"))
        self.cct_details = False

    def num_patches(self):
        return (self.image_size // self.patch) ** 2

    def tokens(self):
        return self.num_patches() + (self.pool == "cls")

    def patch_dim(self):
        return self.dim if self.stem == "cct" else self.patch * self.patch * self.channels

    def stem_widths(self):
        """The channels of the CCT stem's maps, the image's first: C, D/2, …, D/2, D."""
        layers = self.patch.bit_length() - 1  # log2 P
        return [self.channels] + [self.dim // 2] * (layers - 1) + [self.dim]

    def forward_flops(self):
        """Multiply-adds x2 of one image's forward pass, matrix products only (as uwaga's)."""
        T, D = self.tokens(), self.dim
        per_block = 2 * T * D * 3 * D + 2 * 2 * T * T * D + 2 * T * D * D + 2 * 2 * T * D * self.mlp_dim
        stem = 0
        if self.stem == "cct":  # each convolution at its input's resolution, then halved
            w, side = self.stem_widths(), self.image_size
            for i in range(len(w) - 1):
                stem += 2 * side * side * w[i] * 9 * w[i + 1]
                side //= 2
        pool = 2 * T * D if self.pool == "seq" else 0
        embed = 0 if self.cct_details else 2 * self.num_patches() * self.patch_dim() * D
        return stem + embed + self.depth * per_block + pool + 2 * D * self.num_classes


class VisionTransformer(nn.Module):
    """Patches (a Linear on the flattened P×P×C patches, or a Conv2d; or CCT's tokenizer, c.stem),
    class token (or CCT's sequence pooling, c.pool), learned positions, pre-LN blocks, the head.
      use_sdpa None  uwaga's ViT as vit_torch.py compares it: written-out Attention, uwaga's init;
      True / False   as a PyTorch 2 user writes it (vit_torch2.py): FusedAttention (SDPA or its
                     written-out fallback), PyTorch's default init, positions and class token
                     trunc-normal(0, 0.02).
    dropout, drop_path, attention_dropout: the recipe's (nn/vit_backbone.h), in training only."""

    def __init__(self, c, use_sdpa=None, patch_embed="linear", dropout=0.0, drop_path=0.0,
                 attention_dropout=0.0):
        super().__init__()
        self.dropout = dropout
        self.c, self.patch_embed_kind = c, patch_embed
        if c.stem == "cct":
            w = c.stem_widths()
            self.stem = nn.ModuleList(nn.Conv2d(w[i], w[i + 1], 3, stride=1, padding=1, bias=False)
                                      for i in range(len(w) - 1))
        cct_details = getattr(c, "cct_details", False)
        if patch_embed == "conv" and c.stem == "patch":
            self.patch_embed = nn.Conv2d(c.channels, c.dim, kernel_size=c.patch, stride=c.patch)
        elif not cct_details:  # CCT's own model has none: the last convolution's D channels are the tokens
            self.patch_embed = nn.Linear(c.patch_dim(), c.dim)
        if c.pool == "cls":
            self.cls_token = nn.Parameter(torch.zeros(1, 1, c.dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, c.tokens(), c.dim))

        def attention():
            if use_sdpa is None:
                return Attention(c.dim, c.heads, attn_drop=attention_dropout, qkv_bias=not cct_details)
            return FusedAttention(c.dim, c.heads, use_sdpa, attn_drop=attention_dropout,
                                  qkv_bias=not cct_details)

        # drop path rising linearly over the blocks to `drop_path` in the last (nn/vit_backbone.cpp)
        rates = [drop_path * i / (c.depth - 1) if c.depth > 1 else drop_path for i in range(c.depth)]
        norm = "between" if cct_details else "pre"
        self.blocks = nn.ModuleList(Block(c.dim, c.mlp_dim, attention(), dropout, rate, norm) for rate in rates)
        self.norm = nn.LayerNorm(c.dim, eps=1e-5)
        if c.pool == "seq":
            self.attention_pool = nn.Linear(c.dim, 1)
        self.head = nn.Linear(c.dim, c.num_classes)
        if use_sdpa is None:
            uwaga_init(self)
        else:
            nn.init.trunc_normal_(self.pos_embed, std=0.02)
            if c.pool == "cls":
                nn.init.trunc_normal_(self.cls_token, std=0.02)
        if cct_details:
            # CCT's init: positions trunc-normal(0, 0.2) (in ±2σ, as uwaga's), the convolutions
            # Kaiming normal for ReLU, std √(2 / fan_in).
            nn.init.trunc_normal_(self.pos_embed, std=0.2, a=-0.4, b=0.4)
            for conv in self.stem:
                nn.init.kaiming_normal_(conv.weight)

    def forward(self, images):  # (B, C, H, W) -> logits (B, classes)
        c, B = self.c, images.shape[0]
        if c.stem == "cct":
            x = images
            for conv in self.stem:
                x = F.max_pool2d(torch.relu(conv(x)), 3, stride=2, padding=1)
            x = x.flatten(2).transpose(1, 2)  # grid cells in raster order (B, N, D or D/2)
            if hasattr(self, "patch_embed"):
                x = self.patch_embed(x)  # (B, N, D)
        elif self.patch_embed_kind == "conv":
            x = self.patch_embed(images).flatten(2).transpose(1, 2)  # (B, N, D)
        else:
            P, G = c.patch, c.image_size // c.patch
            x = images.reshape(B, c.channels, G, P, G, P).permute(0, 2, 4, 3, 5, 1)
            x = self.patch_embed(x.reshape(B, G * G, P * P * c.channels))  # (B, N, D)
        if c.pool == "cls":
            x = torch.cat([self.cls_token.expand(B, 1, c.dim), x], dim=1)
        z = x + self.pos_embed
        if self.training and self.dropout > 0:
            z = F.dropout(z, self.dropout)
        for block in self.blocks:
            z = block(z)
        if c.pool == "cls":
            return self.head(self.norm(z[:, 0]))
        y = self.norm(z)
        a = torch.softmax(self.attention_pool(y), dim=1)  # over the tokens (B, T, 1)
        return self.head((a.transpose(1, 2) @ y).squeeze(1))


# ---- the GPT (nn/gpt.h) ----------------------------------------------------------------------------


class Gpt(nn.Module):
    """uwaga-gpt's model as a PyTorch user writes it (nanoGPT's shape), c the preset's fields
    (uwaga-bench --mode gpt-config): token + learned position embeddings (then dropout), pre-LN
    blocks with causal FusedAttention, a final LayerNorm and a bias-free head (or the token table,
    tied); GPT-2's initialisation (N(0, 0.02), the residual projections N(0, 0.02/√(2L)))."""

    def __init__(self, c, use_sdpa):
        super().__init__()
        D = c["dim"]
        self.token_embed = nn.Embedding(c["vocab"], D)
        self.pos_embed = nn.Embedding(c["context"], D)
        self.dropout = nn.Dropout(c["dropout"])
        self.blocks = nn.ModuleList(
            Block(D, c["mlp_dim"], FusedAttention(D, c["heads"], use_sdpa, causal=True, context=c["context"]))
            for _ in range(c["layers"]))
        self.norm = nn.LayerNorm(D)
        self.head = None if c["tie_weights"] else nn.Linear(D, c["vocab"], bias=False)
        residual_std = 0.02 / math.sqrt(2 * c["layers"])
        for name, p in self.named_parameters():  # as nn/gpt.cpp
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name:
                nn.init.ones_(p)
            else:
                residual = name.endswith(("attn.proj.weight", "mlp.fc2.weight"))
                nn.init.normal_(p, std=residual_std if residual else 0.02)

    def forward(self, ids):  # (B, T) -> logits (B, T, V)
        T = ids.shape[1]
        h = self.dropout(self.token_embed(ids) + self.pos_embed.weight[:T])
        for block in self.blocks:
            h = block(h)
        h = self.norm(h)
        return self.head(h) if self.head is not None else h @ self.token_embed.weight.t()


# ---- the translator (nn/seq2seq_transformer.h) ---------------------------------------------------


def sinusoidal_positions(length, dim):
    """PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...), in float64 then float32
    (nn/positional_encoding.cpp)."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    j = torch.arange(dim)
    angle = pos / torch.pow(10000.0, (j - j % 2).to(torch.float64) / dim)
    return torch.where(j % 2 == 0, torch.sin(angle), torch.cos(angle)).to(torch.float32)


class DecoderBlock(nn.Module):
    """nn/transformer_decoder_block.h: causal self-attention, cross-attention, MLP, all pre-LN."""

    def __init__(self, dim, heads, mlp_dim):
        super().__init__()
        self.norm1, self.self_attn = nn.LayerNorm(dim, eps=1e-5), Attention(dim, heads)
        self.norm2, self.cross_attn = nn.LayerNorm(dim, eps=1e-5), Attention(dim, heads, cross=True)
        self.norm3, self.mlp = nn.LayerNorm(dim, eps=1e-5), Mlp(dim, mlp_dim)

    def forward(self, y, memory, self_mask, memory_mask):
        y = y + self.self_attn(self.norm1(y), mask=self_mask)
        y = y + self.cross_attn(self.norm2(y), memory, mask=memory_mask)
        return y + self.mlp(self.norm3(y))


class Seq2SeqTransformer(nn.Module):
    """uwaga-translate's encoder–decoder with sinusoidal positions, c its fields (src_vocab,
    tgt_vocab, pad_id, dim, heads, mlp_dim, encoder_layers, decoder_layers, max_length, dropout):
      encoder  x = dropout(embed(src)·√D + P), blocks x += MSA(LN(x)); x += MLP(LN(x)),
               memory = LN(x); the self-attention masks padded source words (key padding).
      decoder  y = dropout(embed(tgt_in)·√D + P), blocks y += MaskedMSA(LN(y));
               y += CrossMHA(LN(y), memory); y += MLP(LN(y)); logits = head(LN(y)). The
               self-attention is causal only (uwaga passes no target padding mask: the causal mask
               already keeps real words from seeing the padding after them); the cross-attention
               masks padded source words.
    Dropout on the embeddings only. (A source of only padding would give NaN rows here where uwaga
    gives 0; real sources always hold EOS.) Init as uwaga: embeddings N(0, 1/D), the rest uwaga_init."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.src_embed = nn.Embedding(c.src_vocab, c.dim)
        self.tgt_embed = nn.Embedding(c.tgt_vocab, c.dim)
        self.encoder = nn.ModuleList(Block(c.dim, c.mlp_dim, Attention(c.dim, c.heads))
                                     for _ in range(c.encoder_layers))
        self.encoder_norm = nn.LayerNorm(c.dim, eps=1e-5)
        self.decoder = nn.ModuleList(DecoderBlock(c.dim, c.heads, c.mlp_dim) for _ in range(c.decoder_layers))
        self.decoder_norm = nn.LayerNorm(c.dim, eps=1e-5)
        self.head = nn.Linear(c.dim, c.tgt_vocab)
        self.register_buffer("sinusoids", sinusoidal_positions(c.max_length, c.dim), persistent=False)
        # N(0, 1/D): scaled by √D, the embeddings' entries are ~N(0, 1) like the sinusoids.
        uwaga_init(self, embed_std=1.0 / math.sqrt(c.dim))

    def embed(self, table, ids):  # (B, L) -> dropout(embed(ids)·√D + P[:L]) (B, L, D)
        x = table(ids) * math.sqrt(self.c.dim) + self.sinusoids[: ids.shape[1]]
        return F.dropout(x, self.c.dropout, self.training)

    def forward(self, src, tgt_in):  # (B, S), (B, T) int64 -> logits (B, T, V_tgt)
        T = tgt_in.shape[1]
        src_mask = (src == self.c.pad_id)[:, None, None, :]  # (B, 1, 1, S): padded source keys
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T): key j > query i hidden
        x = self.embed(self.src_embed, src)
        for block in self.encoder:
            x = block(x, mask=src_mask)
        memory = self.encoder_norm(x)  # (B, S, D)
        y = self.embed(self.tgt_embed, tgt_in)
        for block in self.decoder:
            y = block(y, memory, causal, src_mask)
        return self.head(self.decoder_norm(y))
