"""Solutions to the exercises of notebooks/08_exercises.ipynb. Look only after trying: in the
notebook, `checks.show_solution("softmax")` prints one. The tests run every check against these
(tests/python/test_exercises.py), so they are known to pass."""
import numpy as np

import uwaga


# 1. softmax along the last dim. Subtracting the row's max changes nothing mathematically
#    (it cancels between numerator and denominator) but keeps exp from overflowing.
def softmax(E):
    shifted = E - E.max(-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(-1, keepdim=True)


# 2. The same as one node with a hand-written backward. With A = softmax(E) and dA = dL/dA:
#    dE_ij = A_ij (dA_ij − Σ_k dA_ik A_ik).
class Softmax(uwaga.Function):
    @staticmethod
    def forward(ctx, E):
        A = softmax(E)
        ctx.save_for_backward(A)
        return A

    @staticmethod
    def backward(ctx, dA):
        (A,) = ctx.saved_tensors
        return A * (dA - (dA * A).sum(-1, keepdim=True))


# 3. Y = softmax(Q Kᵀ / √d_k) V, for any leading dims.
def attention(Q, K, V):
    d_k = Q.shape[-1]
    E = Q @ K.transpose(-2, -1) / np.sqrt(d_k)
    return softmax(E) @ V


# 4. The causal mask: −∞ above the diagonal, so exp gives 0 there.
def causal_attention(Q, K, V):
    T, S = Q.shape[-2], K.shape[-2]
    E = Q @ K.transpose(-2, -1) / np.sqrt(Q.shape[-1])
    future = uwaga.tensor(np.triu(np.ones((T, S)), k=1), dtype=E.dtype)
    return softmax(uwaga.masked_fill(E, future, -np.inf)) @ V


# 5. LayerNorm with its backward written out (over the last dim, ε = 1e-5). With x̂ = (x − μ)/σ,
#    y = γ x̂ + β and dx̂ = dy γ:
#    dβ = Σ_rows dy,  dγ = Σ_rows dy x̂,  dx = (dx̂ − mean(dx̂) − x̂ mean(dx̂ x̂)) / σ.
class LayerNorm(uwaga.Function):
    @staticmethod
    def forward(ctx, x, gamma, beta, eps=1e-5):
        xn = x.numpy()
        mu = xn.mean(-1, keepdims=True)
        sigma = np.sqrt(((xn - mu) ** 2).mean(-1, keepdims=True) + eps)
        xhat = (xn - mu) / sigma
        ctx.xhat, ctx.sigma, ctx.gamma = xhat, sigma, gamma.numpy().copy()
        return uwaga.tensor(gamma.numpy() * xhat + beta.numpy(), dtype=x.dtype)

    @staticmethod
    def backward(ctx, dy):
        dy = dy.numpy()
        xhat, sigma = ctx.xhat, ctx.sigma
        rows = tuple(range(dy.ndim - 1))
        dbeta = dy.sum(axis=rows)
        dgamma = (dy * xhat).sum(axis=rows)
        dxhat = dy * ctx.gamma
        dx = (dxhat - dxhat.mean(-1, keepdims=True)
              - xhat * (dxhat * xhat).mean(-1, keepdims=True)) / sigma
        dtype = uwaga.float64 if dy.dtype == np.float64 else uwaga.float32
        return (uwaga.tensor(dx, dtype=dtype), uwaga.tensor(dgamma, dtype=dtype),
                uwaga.tensor(dbeta, dtype=dtype))


# 6. (B, T, h·d) -> (B, h, T, d): head i is columns i·d … (i+1)·d − 1; and back.
def split_heads(x, h):
    B, T, D = x.shape
    return x.reshape(B, T, h, D // h).permute(0, 2, 1, 3)


def merge_heads(y):
    B, h, T, d = y.shape
    return y.permute(0, 2, 1, 3).reshape(B, T, h * d)


# 7. The pre-LN block: z′ = MSA(LN₁(z)) + z, z_out = MLP(LN₂(z′)) + z′.
def block_forward(z, block):
    z1 = block.attn(block.norm1(z)) + z
    return block.mlp(block.norm2(z1)) + z1


# 8. (B, C, H, W) -> (B, N, P·P·C): cut rows and columns into P-sized pieces, bring the grid
#    to the front and each patch's pixels (channels innermost) to the back.
def patchify(images, P):
    B, C, H, W = images.shape
    x = images.reshape(B, C, H // P, P, W // P, P)  # b, c, r, i, s, j
    x = x.permute(0, 2, 4, 3, 5, 1)                 # b, r, s, i, j, c
    return x.reshape(B, (H // P) * (W // P), P * P * C)


# 9. One training step, no Trainer.
def train_step(model, optimizer, images, labels):
    logits = model(images)
    loss = uwaga.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


# 10. Greedy: the most probable token. Top-k: keep the k largest logits, divide by the
#     temperature, softmax over those (the rest get probability 0).
def greedy(logits):
    return int(logits.argmax(0).item())


def top_k(logits, k, temperature=1.0):
    z = logits.numpy() / temperature
    keep = np.argsort(-z, kind="stable")[:k]
    p = np.zeros_like(z)
    p[keep] = np.exp(z[keep] - z[keep].max())
    return uwaga.tensor(p / p.sum(), dtype=logits.dtype)


# 11. Cross-entropy, the mean of −log softmax(z)[target] over the n rows, with its backward:
#     dL/dz = (softmax(z) − onehot(target)) / n, times the upstream gradient (a number). The
#     targets are an input too (a tensor): their gradient is None.
class CrossEntropy(uwaga.Function):
    @staticmethod
    def forward(ctx, logits, targets):
        z = logits.numpy()
        t = targets.numpy().astype(int)
        z = z - z.max(-1, keepdims=True)
        log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
        ctx.p, ctx.t = np.exp(log_p), t
        return uwaga.tensor(-log_p[np.arange(len(t)), t].mean(), dtype=logits.dtype)

    @staticmethod
    def backward(ctx, dL):
        d = ctx.p.copy()
        d[np.arange(len(ctx.t)), ctx.t] -= 1
        d *= dL.item() / len(ctx.t)
        return uwaga.tensor(d, dtype=dL.dtype), None  # no gradient for the targets


# 12. Attention's backward, by the chain rule through each line of the forward pass, last first:
#     Y = A V:           dA = dY Vᵀ,  dV = Aᵀ dY
#     A = softmax(E):    dE = A (dA − rowsum(dA A))   (exercise 2)
#     E = Q Kᵀ / √d_k:   dQ = dE K / √d_k,  dK = dEᵀ Q / √d_k
def attention_backward(Q, K, V, dY):
    scale = 1 / np.sqrt(Q.shape[-1])
    A = softmax(Q @ K.transpose(-2, -1) * scale)
    dA = dY @ V.transpose(-2, -1)
    dV = A.transpose(-2, -1) @ dY
    dE = A * (dA - (dA * A).sum(-1, keepdim=True))
    return dA, dV, dE, dE @ K * scale, dE.transpose(-2, -1) @ Q * scale
