# einsum and einsum_path of braid.core against NumPy: MLX's test_einsum.py cases (simple and
# two-operand contractions, attention, opt_einsum's contraction list, ellipses, broadcasting),
# the greedy paths NumPy picks, gradients, streams and the errors.
import numpy as np
import pytest

import braid.core as mx

rng = np.random.default_rng(11)

SIZES = dict(zip("abcdefghij", [2, 3, 4, 5, 2, 3, 4, 5, 2, 3]))


def inputs_for(case, sizes=SIZES):
    return [rng.uniform(size=tuple(sizes[c] for c in term)).astype(np.float32)
            for term in case.split("->")[0].split(",")]


def close(out, expected, rtol=1e-4, atol=1e-4):
    out_np = np.array(out)
    assert out_np.shape == np.shape(expected)
    np.testing.assert_allclose(out_np, expected, rtol=rtol, atol=atol)


def test_simple_paths():
    a = mx.zeros((5, 5))
    assert mx.einsum_path("ii", a)[0] == [(0,)]
    assert mx.einsum_path("ij->i", a)[0] == [(0,)]
    assert mx.einsum_path("ii->i", a)[0] == [(0,)]
    a, b = mx.zeros((5, 8)), mx.zeros((8, 3))
    assert mx.einsum_path("ij,jk", a, b)[0] == [(0, 1)]
    assert mx.einsum_path("ij,jk -> ijk", a, b)[0] == [(0, 1)]
    assert mx.einsum_path("ij,jk,kl", a, b, mx.zeros((3, 7)))[0] == [(0, 1), (0, 1)]
    assert mx.einsum_path("ij,jk,kl", a, mx.zeros((8, 10)), mx.zeros((10, 7)))[0] == [(1, 2), (0, 1)]


LONGER_PATHS = [
    "eb,cb,fb->cef",
    "dd,fb,be,cdb->cef",
    "bca,cdb,dbf,afc->",
    "dcc,fce,ea,dbf->ab",
    "fdf,cdd,ccd,afe->ae",
    "ed,fcd,ff,bcf->be",
    "baa,dcf,af,cde->be",
    "fff,fae,bef,def->abd",
    "efc,dbc,acf,fd->abe",
    "acdf,jbje,gihb,hfac,gfac,gifabc,hfac",
    "cd,bdhe,aidb,hgca,gc,hgibcd,hgac",
    "abhe,hidj,jgba,hiab,gab",
    "bde,cdh,agdb,hica,ibd,hgicd,hiac",
    "chd,bde,agbc,hiad,hgc,hgi,hiad",
    "chd,bde,agbc,hiad,bdi,cgh,agdb",
    "bdhe,acad,hiab,agac,hibd",
    "ea,fb,gc,hd,abcd->efgh",
    "ab,bcd,cd->abd",
]


@pytest.mark.parametrize("case", LONGER_PATHS)
def test_greedy_paths_are_numpys(case):
    sizes = dict(zip("abcdefghijklmopqABC", [2, 3, 4, 5, 4, 3, 2, 6, 5, 4, 3, 2, 5, 7, 4, 3, 2, 3, 4]))
    inputs = inputs_for(case, sizes)
    np_path = np.einsum_path(case, *inputs, optimize="greedy")[0][1:]
    path, description = mx.einsum_path(case, *[mx.array(x) for x in inputs])
    assert path == np_path
    assert isinstance(description, str) and "Optimized FLOP count" in description


def test_random_paths_are_numpys():
    letters = "abcdefgh"
    for _ in range(40):
        terms = ["".join(rng.choice(list(letters), size=rng.integers(1, 4))) for _ in range(rng.integers(3, 6))]
        sizes = {c: int(rng.integers(2, 6)) for c in letters}
        case = ",".join(terms)
        inputs = inputs_for(case, sizes)
        letters = set(case.replace(",", ""))
        if all(case.count(c) == 1 for c in letters):
            continue  # NumPy skips the search when nothing is summed; MLX (and braid) search anyway
        np_path = np.einsum_path(case, *inputs, optimize="greedy")[0][1:]
        assert mx.einsum_path(case, *[mx.array(x) for x in inputs])[0] == np_path, case


SIMPLE = [
    ("ii->i", (4, 4)), ("iii->i", (2, 2, 2)), ("iijj->ij", (2, 2, 3, 3)), ("ijij->ij", (2, 3, 2, 3)),
    ("ii", (2, 2)), ("ij->", (2, 4)), ("ij->i", (2, 4)), ("ij->j", (2, 4)), ("iii->", (2, 2, 2)),
    ("ijij->j", (2, 3, 2, 3)), ("ij", (2, 4)), ("ij->ji", (2, 4)), ("ijk->jki", (2, 3, 4)), ("ji", (2, 4)),
]


@pytest.mark.parametrize("case, shape", SIMPLE)
def test_simple_einsum_is_exact_on_integers(case, shape):
    a = np.arange(int(np.prod(shape))).reshape(shape).astype(np.int32)
    out = mx.einsum(case, mx.array(a))
    assert np.array_equal(np.array(out), np.einsum(case, a))


TWO_INPUTS = [
    ("ik,kj", (2, 8), (8, 2)),
    ("ik,kj->ji", (2, 8), (8, 3)),
    ("i,i", (4,), (4,)),
    ("i,j->ij", (4,), (6,)),
    ("ij,ij->ij", (2, 8), (2, 8)),
    ("abcd,fgda->bfca", (2, 8, 3, 5), (3, 7, 5, 2)),
    ("ab,bc->c", (5, 8), (8, 2)),
    ("bij,bjk->bik", (3, 4, 5), (3, 5, 6)),
    ("bij,jk->bik", (3, 4, 5), (5, 6)),
]


@pytest.mark.parametrize("case, sa, sb", TWO_INPUTS)
def test_two_input_einsum(case, sa, sb):
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    close(mx.einsum(case, mx.array(a), mx.array(b)), np.einsum(case, a, b))


def test_broadcasting():
    a, b = np.ones((5, 1), np.float32), np.ones((8, 2), np.float32)
    close(mx.einsum("ab,bc->c", mx.array(a), mx.array(b)), np.einsum("ab,bc->c", a, b, optimize=True))
    a = rng.uniform(size=(5, 1, 3, 1)).astype(np.float32)
    b = rng.uniform(size=(1, 7, 1, 2)).astype(np.float32)
    close(mx.einsum("abcd,cdab->abcd", mx.array(a), mx.array(b)), np.einsum("abcd,cdab->abcd", a, b))


def test_attention():
    q, k, v = (rng.uniform(size=(2, 3, 4, 5)).astype(np.float32) for _ in range(3))
    s = mx.einsum("itjk,iujk->ijtu", mx.array(q), mx.array(k))
    out = mx.einsum("ijtu,iujk->itjk", s, mx.array(v))
    close(out, np.einsum("ijtu,iujk->itjk", np.einsum("itjk,iujk->ijtu", q, k), v))


def test_multi_input_einsum():
    a = np.ones((3, 4, 5), np.float32)
    close(mx.einsum("ijk,lmk,ijf->lf", *[mx.array(a)] * 3), np.einsum("ijk,lmk,ijf->lf", a, a, a))


OPT_EINSUM = [
    "a,ab,abc->abc", "a,b,ab->ab",
    "ea,fb,gc,hd,abcd->efgh", "ea,fb,abcd,gc,hd->efgh", "abcd,ea,fb,gc,hd->efgh",
    "acdf,jbje,gihb,hfac,gfac,gifabc,hfac", "cd,bdhe,aidb,hgca,gc,hgibcd,hgac", "abhe,hidj,jgba,hiab,gab",
    "bde,cdh,agdb,hica,ibd,hgicd,hiac", "chd,bde,agbc,hiad,hgc,hgi,hiad", "chd,bde,agbc,hiad,bdi,cgh,agdb",
    "bdhe,acad,hiab,agac,hibd",
    "ab,ab,c->", "ab,ab,c->c", "ab,ab,cd,cd->", "ab,ab,cd,cd->ac", "ab,ab,cd,cd->cd", "ab,ab,cd,cd,ef,ef->",
    "ab,cd,ef->abcdef", "ab,cd,ef->acdf", "ab,cd,de->abcde", "ab,cd,de->be", "ab,bcd,cd->abcd", "ab,bcd,cd->abd",
    "eb,cb,fb->cef", "dd,fb,be,cdb->cef", "bca,cdb,dbf,afc->", "dcc,fce,ea,dbf->ab", "fdf,cdd,ccd,afe->ae",
    "abcd,ad", "ed,fcd,ff,bcf->be", "baa,dcf,af,cde->be", "bd,db,eac->ace", "fff,fae,bef,def->abd",
    "efc,dbc,acf,fd->abe",
    "ab,ab", "ab,ba", "abc,abc", "abc,bac", "abc,cba",
    "ab,bc", "ab,cb", "ba,bc", "ba,cb", "abcd,cd", "abcd,ab", "abcd,cdef", "abcd,cdef->feba", "abcd,efdc",
    "aab,bc->ac", "ab,bcc->ac", "aab,bcc->ac", "baa,bcc->ac", "aab,ccb->ac",
    "aab,fa,df,ecc->bde", "ecb,fef,bad,ed->ac", "bcf,bbb,fbf,fc->", "bb,ff,be->e", "bcb,bb,fc,fff->",
    "fbb,dfd,fc,fc->", "afd,ba,cc,dc->bf", "adb,bc,fa,cfc->d", "bbd,bda,fc,db->acf", "dba,ead,cad->bce",
    "aef,fbc,dca->bde",
]


@pytest.mark.parametrize("case", OPT_EINSUM)
def test_opt_einsum_cases(case):
    inputs = inputs_for(case)
    close(mx.einsum(case, *[mx.array(x) for x in inputs]), np.einsum(case, *inputs))


ELLIPSES = [
    ("abc->ab", "...c->..."),
    ("abcd->ad", "a...d->..."),
    ("abij,abgj->abig", "...ij,...gj->...ig"),
    ("abij,abgj->abig", "...ij,...gj->..."),
    ("abhh->abh", "...hh->...h"),
    ("bch,abcj->abchj", "...h,...j->...hj"),
    ("bc,cd->bd", "...c,cd"),
    ("abc,acd->bd", "...bc,...cd"),
    ("abcd,c->abd", "...cd,c"),
    ("abcd,c->abd", "...cd,c..."),
    ("abcd,c->abd", "...cd,c...->d..."),
    ("abc,b->abc", "ab...,b...->ab..."),
    ("abc,b->abc", "ab...,...b->ab..."),
    ("abc,b->abc", "ab...,b->ab..."),
    ("ab,bc->ac", "ab...,b...->a..."),
    ("ab,bc->ac", "ab...,...bc->a...c"),
    ("ab,bc->ac", "ab,b...->a..."),
    ("abcdef,defg->abcg", "...def,defg->...g"),
]


@pytest.mark.parametrize("shapes_from, case", ELLIPSES)
def test_ellipses(shapes_from, case):
    inputs = inputs_for(shapes_from)
    # NumPy's unoptimized einsum refuses an explicit output without the ellipsis's dimensions;
    # its optimized one (and MLX, and braid) sums them.
    close(mx.einsum(case, *[mx.array(x) for x in inputs]), np.einsum(case, *inputs, optimize=True))


def test_two_ellipses_in_a_subscript_is_an_error():
    inputs = [mx.array(x) for x in inputs_for("abc,abc->ab")]
    with pytest.raises(ValueError):
        mx.einsum("a...b...c,a...b...c->abc", *inputs)


def test_scalars_python_values_and_numpy_operands():
    v = rng.standard_normal(3).astype(np.float32)
    close(mx.einsum(",i->i", mx.array(2.0), mx.array(v)), 2.0 * v)
    close(mx.einsum(",i->i", 2.0, v), 2.0 * v)
    close(mx.einsum("", mx.array(3.0)), np.float32(3.0))
    close(mx.einsum("i,i", v.tolist(), v), np.dot(v, v))


def test_dtypes():
    a, b = np.arange(6).reshape(2, 3).astype(np.int32), np.arange(12).reshape(3, 4).astype(np.int32)
    out = mx.einsum("ij,jk->ik", mx.array(a), mx.array(b))
    assert out.dtype == mx.int32
    assert np.array_equal(np.array(out), a @ b)
    out = mx.einsum("ij,jk->ik", mx.array(a.astype(np.float16)), mx.array(b.astype(np.float32)))
    assert out.dtype == mx.float32


def test_gradient_matches_the_explicit_products():
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)

    def f(x, y):
        return mx.einsum("ij,jk->", x, y)

    ga, gb = mx.grad(f, argnums=(0, 1))(mx.array(a), mx.array(b))
    close(ga, np.broadcast_to(b.sum(axis=1), (3, 4)))
    close(gb, np.broadcast_to(a.sum(axis=0)[:, None], (4, 5)))


def test_vmap():
    a, b = rng.standard_normal((6, 3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    out = mx.vmap(lambda x, y: mx.einsum("ij,jk->ki", x, y), in_axes=(0, None))(mx.array(a), mx.array(b))
    close(out, np.einsum("nij,jk->nki", a, b))


def test_stream_argument():
    a = rng.standard_normal((3, 4)).astype(np.float32)
    close(mx.einsum("ij->ji", mx.array(a), stream=mx.cpu), a.T)


@pytest.mark.parametrize("case, shapes", [
    ("i$,jk", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3)]),
    ("ij", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (4, 5)]),
    ("ii", [(2, 3)]),
    ("ij->ik", [(2, 3)]),
    ("ij->ii", [(2, 3)]),
    ("ijk", [(2, 3)]),
    ("i.j", [(2, 3)]),
    ("ij->j->i", [(2, 3)]),
])
def test_bad_subscripts_are_value_errors(case, shapes):
    operands = [mx.zeros(s) for s in shapes]
    with pytest.raises(ValueError):
        mx.einsum(case, *operands)
    with pytest.raises(ValueError):
        mx.einsum_path(case, *operands)


def test_no_operand_is_a_value_error_and_a_non_array_a_type_error():
    with pytest.raises(ValueError):
        mx.einsum("ij")
    with pytest.raises(TypeError):
        mx.einsum("ij", "not an array")
