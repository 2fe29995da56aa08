"""numpile.export to ONNX: the tutorial's MLP with a static and a dynamic batch, run in a fresh
process that has only onnxruntime and numpy; names of inputs, weights and outputs; dynamic dims;
the clear errors (graph break, data-dependent branch, unsupported op, in-place update); the
`numpile export` command."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest

import numpile
from numpile import cli
from numpile.testing import assert_same_result

rng = np.random.default_rng()


class Layer:
    def __init__(self, n_in, n_out):
        self.w = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        self.b = rng.standard_normal(n_out).astype(np.float32)


class MLP:
    """The tutorial's model: weights as attributes, a Python scalar it reads, a dict result."""

    def __init__(self, sizes=(16, 32, 8)):
        self.w1 = rng.standard_normal((sizes[0], sizes[1])).astype(np.float32) / 4
        self.b1 = rng.standard_normal(sizes[1]).astype(np.float32)
        self.layers = [Layer(sizes[1], sizes[2])]
        self.temperature = 2.0

    def __call__(self, x):
        h = np.maximum(x @ self.w1 + self.b1, 0)
        logits = (h @ self.layers[0].w + self.layers[0].b) / self.temperature
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return {"probs": e / e.sum(axis=-1, keepdims=True), "hidden": h}


def assert_same(got, want, path="result"):
    """The same structure, and per array NumPy's type, dtype and shape with values within the
    dtype's tolerance (float32 sums in another order differ in the last bits)."""
    assert type(got) is type(want), f"{path}: {type(got).__name__}, NumPy gives {type(want).__name__}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)}, NumPy's {list(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    else:
        assert_same_result(got, want, what=path)


def batch(n):
    return rng.standard_normal((n, 16)).astype(np.float32)


def checked(program):
    model = program.to_onnx()
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    return model


def test_mlp_static_batch():
    model = MLP()
    x = batch(4)
    program = numpile.export(model, x)
    onnx_model = checked(program)
    assert program.input_names == ["x"] and program.output_names == ["probs", "hidden"]
    assert sorted(i.name for i in onnx_model.graph.initializer) == ["b1", "layers.0.b", "layers.0.w", "w1"]
    assert [d.dim_value for d in onnx_model.graph.input[0].type.tensor_type.shape.dim] == [4, 16]
    assert_same(program.run(x), model(x))
    x2 = batch(4)
    assert_same(program.run(x2), numpile.compile(model)(x2))


def test_mlp_dynamic_batch_runs_in_a_process_with_only_onnxruntime_and_numpy(tmp_path):
    model = MLP()
    program = numpile.export(model, batch(4), dynamic_shapes={"x": {0: "batch"}})
    onnx_model = checked(program)
    dims = [d.dim_param or d.dim_value for d in onnx_model.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", 16]
    path = program.save(tmp_path / "mlp.onnx")
    compiled = numpile.compile(model)
    for n in (3, 7):
        np.save(tmp_path / f"x{n}.npy", batch(n))
    # a clean environment: no site-packages, only numpy and onnxruntime on the path
    only = tmp_path / "only"
    only.mkdir()
    import onnxruntime
    for module in (np, onnxruntime):
        package = Path(module.__file__).parent
        (only / package.name).symlink_to(package)
        libs = package.parent / f"{package.name}.libs"
        if libs.exists():
            (only / libs.name).symlink_to(libs)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(only)!r})
        import numpy as np, onnxruntime as ort
        for name in ("onnx", "numpile"):
            try:
                __import__(name)
            except ImportError:
                pass
            else:
                raise SystemExit(name + " is importable")
        session = ort.InferenceSession({str(path)!r}, providers=["CPUExecutionProvider"])
        for n in (3, 7):
            probs, hidden = session.run(["probs", "hidden"], {{"x": np.load({str(tmp_path)!r} + f"/x{{n}}.npy")}})
            np.save({str(tmp_path)!r} + f"/probs{{n}}.npy", probs)
            np.save({str(tmp_path)!r} + f"/hidden{{n}}.npy", hidden)
    """)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    subprocess.run([sys.executable, "-S", "-E", "-c", script], env=env, check=True, timeout=120)
    for n in (3, 7):
        x = np.load(tmp_path / f"x{n}.npy")
        want = compiled(x)
        assert_same({"probs": np.load(tmp_path / f"probs{n}.npy"), "hidden": np.load(tmp_path / f"hidden{n}.npy")}, want)
        assert_same(program.run(x), want)


def test_dynamic_dims_named_alike_are_one_symbol_and_automatic_names():
    def f(x, y):
        return (x * 2.0).sum(axis=1), y.mean(axis=0)

    x, y = rng.standard_normal((5, 3)), rng.standard_normal((4, 5))
    program = numpile.export(f, x, y, dynamic_shapes={"x": {0: "n"}, "y": {1: "n"}})
    model = checked(program)
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input]
    assert dims == [["n", 3], [4, "n"]]
    assert program.output_names == ["output_0", "output_1"]
    x9, y9 = rng.standard_normal((9, 3)), rng.standard_normal((4, 9))
    assert_same(program.run(x9, y9), f(x9, y9))
    auto = checked(numpile.export(f, x, y, dynamic_shapes=True))
    assert [d.dim_param for d in auto.graph.input[0].type.tensor_type.shape.dim] == ["x_0", "x_1"]


def test_dynamic_reshape_and_slice_assignment():
    def f(x):
        y = x.reshape(-1).copy()
        y[1::2] = 0.5
        return y.reshape(x.shape[0], -1)[::-1] * 3

    program = numpile.export(f, rng.standard_normal((4, 6)), dynamic_shapes={"x": [0, 1]})
    checked(program)
    for shape in ((4, 6), (7, 3), (2, 9)):
        x = rng.standard_normal(shape)
        assert_same(program.run(x), f(x.copy()))


def test_a_returned_update_of_an_input_is_exported():
    def f(x, v):
        x[1:3] = v * 2
        return x

    x, v = rng.standard_normal(5), rng.standard_normal(2)
    program = numpile.export(f, x.copy(), v)
    assert_same(program.run(x, v), f(x.copy(), v))


def test_graph_break_is_an_error_naming_reason_and_line():
    def f(x):
        print("hello")
        return x + 1

    with pytest.raises(numpile.Unsupported, match=r"(?s)one graph.*print.*print\("):
        numpile.export(f, rng.standard_normal(3))


def test_data_dependent_branch_is_an_error_saying_so():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return -x

    with pytest.raises(numpile.Unsupported, match=r"(?s)data-dependent.*if x.sum\(\) > 0"):
        numpile.export(f, rng.standard_normal(3))


def test_unsupported_op_names_op_line_and_opset():
    def f(x):
        return np.linalg.inv(x @ x.T + np.eye(3))

    with pytest.raises(numpile.Unsupported, match=r"(?s)opset 18.*inv.*np.linalg.inv\(x @ x.T"):
        numpile.export(f, rng.standard_normal((3, 3)))


def test_in_place_update_of_an_input_is_an_error():
    def f(x):
        x += 1
        return x.sum()

    x = rng.standard_normal(3)
    before = x.copy()
    with pytest.raises(numpile.Unsupported, match=r"(?s)updates x in place.*pure function.*x \+= 1"):
        numpile.export(f, x)
    assert np.array_equal(x, before), "exporting changed the example"


def test_unknown_format_lists_the_known_ones():
    with pytest.raises(numpile.InvalidExporterError, match="onnx"):
        numpile.export(lambda x: x + 1, rng.standard_normal(3), format="tflite")


def test_output_code_log_prints_the_onnx_graph(capsys):
    numpile.set_logs(output_code=True)
    try:
        numpile.export(lambda x: np.tanh(x) * 2, rng.standard_normal(3))
    finally:
        numpile.set_logs()
    text = capsys.readouterr().err
    assert "Tanh (x)" in text and "opset_import" in text


def test_command_line_export(tmp_path, monkeypatch, capsys):
    (tmp_path / "models_for_cli.py").write_text(textwrap.dedent("""
        import numpy as np

        def mlp(x, w):
            return np.tanh(x @ w)
    """))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "model.onnx"
    code = cli.main(["export", "models_for_cli:mlp", "--arg", "float32[8,784]", "--arg", "float32[784,10]",
                     "--dynamic", "0", "-o", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "x float32[batch, 784]" in printed and "w float32[784, 10]" in printed
    assert "output float32[batch, 10]" in printed and "opset:   18" in printed
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)


def test_command_line_export_error(tmp_path, monkeypatch, capsys):
    (tmp_path / "bad_for_cli.py").write_text("import numpy as np\n\ndef f(x):\n    return np.linalg.inv(x)\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["export", "bad_for_cli:f", "--arg", "float64[3,3]", "-o", str(tmp_path / "f.onnx")]) == 1
    err = capsys.readouterr().err
    assert "cannot express inv" in err and "bad_for_cli.py:4" in err
    assert not (tmp_path / "f.onnx").exists()


def test_a_decision_on_a_dynamic_dim_is_an_error():
    def f(x):
        if x.shape[0] > 4:
            return x * 2
        return x

    with pytest.raises(numpile.Unsupported, match=r"decides on its dynamic dims \(x.shape\[0\] > 4\)"):
        numpile.export(f, rng.standard_normal((6, 3)), dynamic_shapes={"x": {0: "batch"}})
