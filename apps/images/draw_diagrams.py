"""Draws the README's two block diagrams, pre_ln_block.svg and vit.svg, beside this file (laid out
by hand; the SVGs are committed, run this after changing a label:
`python3 apps/images/draw_diagrams.py`)."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

def box(x, y, w, h, text, sub="", fill="#eef3fb", stroke="#4a6fa5"):
    out = f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>\n'
    cy = y + h / 2 + (0 if not sub else -6)
    out += f'<text x="{x + w/2}" y="{cy + 5}" text-anchor="middle" font-size="14" font-weight="bold">{text}</text>\n'
    if sub:
        out += f'<text x="{x + w/2}" y="{cy + 21}" text-anchor="middle" font-size="10.5" fill="#555" font-family="monospace">{sub}</text>\n'
    return out

def arrow(x1, y1, x2, y2):
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#333" stroke-width="1.5" marker-end="url(#a)"/>\n'

def label(x, y, text, anchor="start", size=12, color="#222", mono=False):
    fam = ' font-family="monospace"' if mono else ""
    return f'<text x="{x}" y="{y}" text-anchor="{anchor}" font-size="{size}" fill="{color}"{fam}>{text}</text>\n'

def plus(cx, cy):
    return (f'<circle cx="{cx}" cy="{cy}" r="11" fill="#fff" stroke="#333" stroke-width="1.5"/>\n'
            f'<line x1="{cx-6}" y1="{cy}" x2="{cx+6}" y2="{cy}" stroke="#333" stroke-width="2"/>\n'
            f'<line x1="{cx}" y1="{cy-6}" x2="{cx}" y2="{cy+6}" stroke="#333" stroke-width="2"/>\n')

def svg(w, h, title, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'font-family="Helvetica, Arial, sans-serif">\n<title>{title}</title>\n'
            '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>\n'
            f'<rect width="{w}" height="{h}" fill="#fff"/>\n' + body + '</svg>\n')

# ---- the pre-LN transformer block ----
cx, bw = 180, 214
b = label(cx, 24, "Pre-LN transformer block (SEEDS §5)", "middle", 15)
b += label(cx, 44, "nn/transformer_encoder_block.cpp", "middle", 11, "#555", True)
b += label(cx, 76, "z<tspan baseline-shift=\"sub\" font-size=\"10\">ℓ−1</tspan>  (B, N, D)", "middle", 13)
b += arrow(cx, 82, cx, 104)
b += box(cx - bw/2, 104, bw, 40, "LayerNorm", "norm1")
b += arrow(cx, 144, cx, 164)
b += box(cx - bw/2, 164, bw, 64, "Multi-head attention", "attn.qkv → heads → attn.proj")
b += label(cx + bw/2 + 8, 186, "Q, K, V, E, A", size=11, color="#555")
b += label(cx + bw/2 + 8, 200, "Y = A V, W_O", size=11, color="#555")
b += arrow(cx, 228, cx, 257)
b += plus(cx, 268)
# residual 1: from just below the input to the plus
b += f'<path d="M {cx} 92 L 40 92 L 40 268 L {cx-12} 268" fill="none" stroke="#a33" stroke-width="1.5" marker-end="url(#a)"/>\n'
b += label(46, 180, "residual", size=11, color="#a33")
b += arrow(cx, 279, cx, 302)
b += label(cx + 14, 296, "z′<tspan baseline-shift=\"sub\" font-size=\"10\">ℓ</tspan>", size=13)
b += box(cx - bw/2, 312, bw, 40, "LayerNorm", "norm2")
b += arrow(cx, 302, cx, 312)
b += arrow(cx, 352, cx, 372)
b += box(cx - bw/2, 372, bw, 64, "MLP", "mlp.fc1 → GELU → mlp.fc2")
b += label(cx + bw/2 + 8, 400, "each token", size=11, color="#555")
b += label(cx + bw/2 + 8, 414, "on its own", size=11, color="#555")
b += arrow(cx, 436, cx, 465)
b += plus(cx, 476)
b += f'<path d="M {cx} 302 L 40 302 L 40 476 L {cx-12} 476" fill="none" stroke="#a33" stroke-width="1.5" marker-end="url(#a)"/>\n'
b += label(46, 392, "residual", size=11, color="#a33")
b += arrow(cx, 487, cx, 512)
b += label(cx, 530, "z<tspan baseline-shift=\"sub\" font-size=\"10\">ℓ</tspan>  (B, N, D)", "middle", 13)
b += label(cx, 556, "z′ = MSA(LN(z)) + z,   z_out = MLP(LN(z′)) + z′", "middle", 11, "#333")
open(os.path.join(HERE, "pre_ln_block.svg"), "w").write(svg(410, 570, "The pre-LN transformer block", b))

# ---- the ViT ----
cx, bw = 180, 230
v = label(cx, 24, "Vision Transformer (SEEDS §6)", "middle", 15)
v += label(cx, 44, "nn/vision_transformer.cpp, nn/vit_backbone.cpp", "middle", 11, "#555", True)
# image grid
gx, gy, g = cx - 36, 58, 18
for r in range(4):
    for c in range(4):
        shade = "#c9d6ea" if (r + c) % 2 else "#dfe8f5"
        v += f'<rect x="{gx + c*g}" y="{gy + r*g}" width="{g}" height="{g}" fill="{shade}" stroke="#4a6fa5" stroke-width="0.8"/>\n'
v += label(gx + 4*g + 8, gy + 30, "image (C, H, W)", size=11, color="#555")
v += label(gx + 4*g + 8, gy + 44, "N = HW/P² patches", size=11, color="#555")
v += arrow(cx, 132, cx, 152)
v += box(cx - bw/2, 152, bw, 44, "Patches, flattened", "patchify: (N, P²·C)")
v += arrow(cx, 196, cx, 214)
v += box(cx - bw/2, 214, bw, 44, "Linear embedding E", "patch_embed")
v += arrow(cx, 258, cx, 276)
v += box(cx - bw/2, 276, bw, 44, "Prepend class token", "cls_token: N + 1 tokens")
v += arrow(cx, 320, cx, 338)
v += box(cx - bw/2, 338, bw, 44, "+ position embeddings", "pos_embed (E_pos): z_0")
v += arrow(cx, 382, cx, 400)
v += box(cx - bw/2, 400, bw, 50, "L × pre-LN block", "blocks.0 … blocks.L−1", fill="#fbf1e6", stroke="#b5782f")
v += arrow(cx, 450, cx, 468)
v += box(cx - bw/2, 468, bw, 44, "LayerNorm, class token", "norm: y = LN(z_L[0])")
v += arrow(cx, 512, cx, 530)
v += box(cx - bw/2, 530, bw, 44, "Linear head", "head: class logits")
open(os.path.join(HERE, "vit.svg"), "w").write(svg(360, 590, "The Vision Transformer", v))
