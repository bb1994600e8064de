"""Your own op from Python: a forward and a hand-written backward, as torch.autograd.Function.

    class Cube(uwaga.Function):
        @staticmethod
        def forward(ctx, x):             # computes y from uwaga tensors; no graph is recorded here
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad_output):  # dL/dy -> dL/dx, one gradient per input of forward
            (x,) = ctx.saved_tensors
            return grad_output * 3 * x * x

    y = Cube.apply(x)                    # a node "Cube" in the graph; y.backward() calls backward
    uwaga.gradcheck(Cube.apply, [x])     # and gradcheck checks it against finite differences

forward's arguments may mix tensors and other values (numbers, flags); backward returns one
gradient per *tensor* argument, in order (None where an input needs none). The engine
(core/autograd.h) calls backward like any C++ op's backward rule, with gradient recording off;
the gradient it returns may be broadcast-shaped, as for the built-in ops.
"""
from ._uwaga import Tensor, _record, no_grad


class FunctionCtx:
    """What forward hands to backward: save_for_backward(*tensors), then ctx.saved_tensors; any
    other attribute (ctx.scale = ...) travels too."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        # The engine checks these, as it does the inputs: changing one in place after forward
        # makes backward fail, naming the op, instead of giving a silently wrong gradient.
        self.saved_tensors = tuple(tensors)


class Function:
    """Subclass it with static forward(ctx, *args) and backward(ctx, grad_output); call apply."""

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a uwaga.Function needs a static forward(ctx, *args)")

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("a uwaga.Function needs a static backward(ctx, grad_output)")

    @classmethod
    def apply(cls, *args):
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(t.requires_grad for t in tensors)
        with no_grad():
            out = cls.forward(ctx, *args)
        if not isinstance(out, Tensor):
            raise TypeError(f"{cls.__name__}.forward must return a uwaga.Tensor, "
                            f"got {type(out).__name__}")
        out = out.detach()  # a handle of its own (forward may return an input), no copy

        def backward(grad_output):
            grads = cls.backward(ctx, grad_output)
            if not isinstance(grads, (tuple, list)):
                grads = (grads,)
            for i, (g, t) in enumerate(zip(grads, tensors)):
                if g is not None and not isinstance(g, Tensor):
                    raise TypeError(f"{cls.__name__}.backward: gradient {i} is a "
                                    f"{type(g).__name__}, not a uwaga.Tensor or None")
                if g is not None and g.dtype != t.dtype:
                    raise TypeError(f"{cls.__name__}.backward: gradient {i} is {g.dtype}, its "
                                    f"input {t.dtype}")
            return list(grads)

        return _record(out, cls.__name__, tensors, backward, list(ctx.saved_tensors))
