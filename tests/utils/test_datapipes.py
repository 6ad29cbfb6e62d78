"""DataPipe base classes and decorators (torch.utils.data) against PyTorch 2.13."""

import pickle

import pytest
import torch.utils.data as tud

import retrograd.utils.data as rud


def _err(fn):
    try:
        out = fn()
        return list(out) if hasattr(out, "__iter__") and not isinstance(out, str) else out
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def _pipes(d, tag):
    class Range(d.IterDataPipe):
        def __init__(self, n, step=1):
            self.n, self.step, self.resets = n, step, 0

        def reset(self):
            self.resets += 1

        def __iter__(self):
            yield from range(0, self.n, self.step)

    class Counter(d.IterDataPipe):  # __iter__ returns self, __next__ does the work
        def __init__(self, stop):
            self.stop, self.i = stop, 0

        def __iter__(self):
            self.i = 0
            return self

        def __next__(self):
            self.i += 1
            if self.i > self.stop:
                raise StopIteration
            return self.i

    @d.functional_datapipe(f"scaled_{tag}")
    class Scaled(d.IterDataPipe):
        def __init__(self, source, k=2):
            self.source, self.k = source, k

        def __iter__(self):
            for x in self.source:
                yield x * self.k

    class Squares(d.MapDataPipe):
        def __init__(self, n):
            self.n = n

        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return self.n

    @d.functional_datapipe(f"shifted_{tag}")
    class Shifted(d.MapDataPipe):
        def __init__(self, source, by):
            self.source, self.by = source, by

        def __getitem__(self, i):
            return self.source[i] + self.by

        def __len__(self):
            return len(self.source)

    class Broken(d.IterDataPipe):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            yield 1
            raise ValueError("bad element")

    return Range, Counter, Scaled, Squares, Shifted, Broken


def _scenario(d, tag):
    Range, Counter, Scaled, Squares, Shifted, Broken = _pipes(d, tag)
    out = []
    r = Range(5, 2)
    out += [repr(r), str(r), list(r), r.resets, r._number_of_samples_yielded,
            isinstance(r, d.IterableDataset), isinstance(Squares(2), d.Dataset)]
    out.append(list(getattr(r, f"scaled_{tag}")(k=3)))
    out.append(list(getattr(Counter(3), f"scaled_{tag}")()))
    out.append(f"scaled_{tag}" in dir(r))
    out.append(_err(lambda: r.no_such_method))
    out.append(_err(lambda: d.IterDataPipe.register_datapipe_as_function(f"scaled_{tag}", Range)))
    # single iterator per IterDataPipe
    it1 = iter(r)
    out.append(next(it1))
    it2 = iter(r)
    out += [next(it2), _err(lambda: next(it1)), next(it2), r.resets]
    c = Counter(3)
    it1 = iter(c)
    out.append(next(it1))
    it2 = iter(c)
    out += [_err(lambda: next(it1)), list(it2), c._number_of_samples_yielded]
    out.append(_err(lambda: list(Broken(1))))
    # map-style
    sq = Squares(4)
    sh = getattr(sq, f"shifted_{tag}")(10)
    out += [repr(sq), [sh[i] for i in range(len(sh))], _err(lambda: sq.nope)]
    out.append(_err(lambda: getattr(r, f"shifted_{tag}")))
    # DataChunk
    ch = d.DataChunk(x for x in (3, 1, 2))
    out += [ch, ch.as_str(), ch.as_str(">"), list(ch.raw_iterator()), ch.items, len(ch)]
    out.append(d.DFIterDataPipe()._is_dfpipe())
    return out


def test_datapipes_match_torch():
    assert _scenario(rud, "rg") == _scenario(tud, "rg")


def _decorators(d):
    out = []

    @d.non_deterministic
    class Shuffle(d.IterDataPipe):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            yield from range(self.n)

    class Sample(d.IterDataPipe):
        def __init__(self, n, random=False):
            self.n, self.random = n, random

        def __iter__(self):
            yield from range(self.n)
    Sample = d.non_deterministic(lambda n, random=False: random)(Sample)
    out.append(list(Shuffle(2)))
    with d.guaranteed_datapipes_determinism():
        out += [_err(lambda: Shuffle(2)), list(Sample(2)), _err(lambda: Sample(2, random=True))]
    out.append(list(Shuffle(3)))
    bad = d.non_deterministic(lambda n: "yes")(type("Bad", (d.IterDataPipe,), {}))
    out.append(_err(lambda: bad(1)))
    out.append(_err(lambda: d.non_deterministic(int)))
    out.append(_err(lambda: d.non_deterministic(3)))
    out.append(_err(lambda: d.non_deterministic(lambda: True)(int)))

    @d.argument_validation
    def takes(dp: d.IterDataPipe, n: int = 1):
        return n
    out += [_err(lambda: takes([1], 2)), takes.__name__,
            type(_err(lambda: takes(Shuffle(1)))).__name__]

    def __iter__(self):
        yield from self.items
    checked = d.runtime_validation(__iter__)
    with d.runtime_validation_disabled():
        out.append(list(checked(type("Holder", (), {"items": [1, "a"]})())))
    out.append(_err(lambda: list(checked(type("Holder", (), {"items": [1]})()))).split(":")[0])
    out.append(_err(lambda: d.runtime_validation(lambda self: iter(()))))
    return out


def test_datapipe_decorators_match_torch():
    ours, theirs = _decorators(rud), _decorators(tud)
    assert ours == theirs


def test_datapipe_pickles_and_hooks():
    class Hooked(rud.IterDataPipe):
        def __iter__(self):
            yield 1
    dp = _Plain()
    assert list(pickle.loads(pickle.dumps(dp))) == [0, 1]
    rud.IterDataPipe.set_getstate_hook(lambda state: {"n": 1})
    try:
        with pytest.raises(RuntimeError, match="Attempt to override existing getstate_hook"):
            rud.IterDataPipe.set_getstate_hook(lambda state: state)
        assert list(pickle.loads(pickle.dumps(_Plain(5)))) == [0]
    finally:
        rud.IterDataPipe.set_getstate_hook(None)
    rud.IterDataPipe.repr_hook = staticmethod(lambda dp: f"custom {type(dp).__name__}")
    try:
        assert repr(Hooked()) == "custom Hooked"
    finally:
        rud.IterDataPipe.repr_hook = None


class _Plain(rud.IterDataPipe):
    def __init__(self, n=2):
        self.n = n

    def __iter__(self):
        yield from range(self.n)
