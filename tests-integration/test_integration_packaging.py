"""Each package installs and works alone, from its freshly built wheel.

Builds every sdist and wheel once (`hatch build --all`), then for each package creates a fresh
virtual environment, installs that wheel with the sibling wheels its metadata requires (given
by path, so nothing else can stand in for them) and the third-party dependencies from the
package index, and runs a smoke check in that environment. Run with `hatch run packaging`.
"""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.packaging, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGE = {
    "lucid-core": "lucid",
    "lucid-nn": "lucid/nn",
    "lucid-optim": "lucid/optim",
    "lucid-data": "lucid/data",
    "lucid-backend-mlx": "lucid/backends/mlx",
    "lucid-models": "lucid/models",
    "lucid-distributed": "lucid/distributed",
    "lucid-onnx": "lucid/onnx",
}
CORE_ONLY_FILES = {"lucid/__init__.py", "lucid/backends/__init__.py", "lucid/utils/__init__.py"}
# Subpackages a distribution ships besides its own, under a namespace another one owns.
ALSO_SHIPS = {"lucid-data": ("lucid/utils/data",)}
# Single modules a distribution ships outside its own folder (``torch.functional``'s path).
ALSO_SHIPS_FILES = {"lucid-nn": ("lucid/functional.py",)}


def _dist(name: str) -> str:
    return name.replace("-", "_")


def _declared_packages() -> dict[str, str]:
    """{name: version} of every packages/*/pyproject.toml."""
    found = {}
    for pyproject in sorted(REPO_ROOT.glob("packages/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        found[project["name"]] = project["version"]
    return found


PACKAGES = _declared_packages()


# --- building ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every package's sdist and wheel, built once per session by `hatch build --all`."""
    hatch = shutil.which("hatch")
    if hatch is None:
        pytest.fail("hatch is not on PATH: pip install 'hatch>=1.18'")
    out = tmp_path_factory.mktemp("wheelhouse")
    result = subprocess.run(
        [hatch, "build", "--all", "-t", "wheel", "-t", "sdist", str(out)],
        cwd=REPO_ROOT,
        env=_clean_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"hatch build --all failed:\n{result.stdout}\n{result.stderr}"
    return out


def wheel_of(wheelhouse: Path, name: str) -> Path:
    wheels = list(wheelhouse.glob(f"{_dist(name)}-{PACKAGES[name]}-*.whl"))
    assert len(wheels) == 1, f"expected one wheel of {name} {PACKAGES[name]}, found {wheels}"
    return wheels[0]


def requires(wheel: Path, extras: tuple[str, ...] = ()) -> list[str]:
    """Names in the wheel's Requires-Dist that apply without or with the given extras."""
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = email.parser.Parser().parsestr(archive.read(meta).decode())
    names = []
    for line in message.get_all("Requires-Dist") or []:
        body, _, marker = line.partition(";")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if extra is None or extra.group(1) in extras:
            names.append(re.match(r"[A-Za-z0-9._-]+", body.strip()).group(0))  # type: ignore[union-attr]
    return names


def sibling_closure(wheelhouse: Path, name: str, extras: tuple[str, ...] = ()) -> list[str]:
    """The package and every sibling its built metadata requires, transitively."""
    seen: list[str] = []
    todo = [(name, extras)]
    while todo:
        current, wanted = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        for dep in requires(wheel_of(wheelhouse, current), wanted):
            if dep in PACKAGES:
                todo.append((dep, ()))
    return seen


# --- virtual environments -----------------------------------------------------------------------


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@dataclass
class Venv:
    path: Path
    uv: str | None

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def _installer(self) -> list[str]:
        if self.uv:
            return [self.uv, "pip"]
        return [str(self.python), "-m", "pip", "--disable-pip-version-check", "-q"]

    def _call(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args],
            cwd=self.path,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )

    def install(self, *requirements: str) -> None:
        extra = ["--python", str(self.python)] if self.uv else []
        result = self._call(*self._installer(), "install", *extra, *requirements)
        assert result.returncode == 0, f"install {requirements} failed:\n{result.stderr}"

    def uninstall(self, name: str) -> None:
        extra = ["--python", str(self.python)] if self.uv else ["-y"]
        result = self._call(*self._installer(), "uninstall", *extra, name)
        assert result.returncode == 0, f"uninstall {name} failed:\n{result.stderr}"

    def run(self, code: str) -> str:
        """Run code in the venv (cwd outside the repository); fail with its traceback."""
        result = self._call(self.python, "-c", textwrap.dedent(code))
        assert result.returncode == 0, f"in {self.path}:\n{code}\n--- stderr ---\n{result.stderr}"
        return result.stdout

    def command(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self._call(self.path / "bin" / args[0], *args[1:])

    def lucid_distributions(self) -> set[str]:
        out = self.run(
            "import importlib.metadata as m\n"
            "print(' '.join(d.metadata['Name'] for d in m.distributions()))"
        )
        return {n for n in out.split() if n.startswith("lucid-")}


@pytest.fixture
def venv(tmp_path: Path) -> Venv:
    """A fresh, empty virtual environment: uv's where uv is on PATH (much faster), else venv +
    pip; `LUCID_PACKAGING_INSTALLER=pip` forces the latter."""
    uv = shutil.which("uv")
    if os.environ.get("LUCID_PACKAGING_INSTALLER", "uv") == "pip":
        uv = None
    path = tmp_path / "venv"
    if uv:
        cmd = [uv, "venv", "-q", "--python", sys.executable, str(path)]
    else:
        cmd = [sys.executable, "-m", "venv", str(path)]
    subprocess.run(cmd, check=True, env=_clean_env(), capture_output=True)
    return Venv(path, uv)


def install_alone(venv: Venv, wheelhouse: Path, name: str, extras: tuple[str, ...] = ()) -> None:
    """Install one package's wheel, its sibling wheels by path, the rest from the index."""
    closure = sibling_closure(wheelhouse, name, extras)
    suffix = f"[{','.join(extras)}]" if extras else ""
    main = f"{name}{suffix} @ {wheel_of(wheelhouse, name).as_uri()}"
    siblings = [f"{s} @ {wheel_of(wheelhouse, s).as_uri()}" for s in closure if s != name]
    venv.install(main, *siblings)
    assert venv.lucid_distributions() == set(closure), "only the declared siblings get installed"


def assert_absent(venv: Venv, *modules: str) -> None:
    venv.run(
        f"""
        import importlib
        for name in {list(modules)!r}:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as e:
                assert e.name == name, f"{{name}}: wrong module missing: {{e.name}}"
            else:
                raise AssertionError(f"{{name}} imported, but its package is not installed")
        """
    )


# --- the artifacts ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_packaging_wheel_ships_only_its_subpackage(wheelhouse: Path, name: str) -> None:
    with zipfile.ZipFile(wheel_of(wheelhouse, name)) as archive:
        files = {n for n in archive.namelist() if ".dist-info/" not in n}
    own = SUBPACKAGE[name]
    assert f"{own}/__init__.py" in files, (
        f"{name}'s wheel has no {own}/__init__.py: sources missing?"
    )
    assert f"{own}/py.typed" in files, f"{name}'s wheel lacks {own}/py.typed"
    if name == "lucid-core":
        assert CORE_ONLY_FILES <= files
        others = [p for p in SUBPACKAGE.values() if p != own]
        others += [p for extra in ALSO_SHIPS.values() for p in extra]
        assert not [f for f in files if any(f.startswith(p + "/") for p in others)]
        assert not [f for extra in ALSO_SHIPS_FILES.values() for f in extra if f in files]
    else:
        shipped = (own, *ALSO_SHIPS.get(name, ()))
        stray = sorted(
            f
            for f in files
            if not f.startswith(tuple(p + "/" for p in shipped))
            and f not in ALSO_SHIPS_FILES.get(name, ())
        )
        assert not stray, f"{name}'s wheel ships files outside {own}/: {stray}"


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_packaging_sdist_builds_with_readme_and_changelog(wheelhouse: Path, name: str) -> None:
    sdist = wheelhouse / f"{_dist(name)}-{PACKAGES[name]}.tar.gz"
    assert sdist.is_file(), f"no sdist for {name} in {sorted(p.name for p in wheelhouse.iterdir())}"
    with tarfile.open(sdist) as archive:
        names = {
            Path(n).relative_to(f"{_dist(name)}-{PACKAGES[name]}").as_posix()
            for n in archive.getnames()
        }
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "PKG-INFO"} <= names
    assert any(n.startswith(f"src/{SUBPACKAGE[name]}/") for n in names)


# --- each package alone -------------------------------------------------------------------------


def test_packaging_core_alone_computes_a_gradient(venv: Venv, wheelhouse: Path) -> None:
    install_alone(venv, wheelhouse, "lucid-core")
    out = venv.run(
        """
        import lucid
        x = lucid.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        print(x.grad.tolist())
        """
    )
    assert out.split() == ["[2.0,", "4.0]"]
    assert_absent(venv, "lucid.nn", "lucid.optim", "lucid.data", "lucid.models")


def test_packaging_nn_runs_a_model_without_optim(venv: Venv, wheelhouse: Path) -> None:
    install_alone(venv, wheelhouse, "lucid-nn")
    out = venv.run(
        """
        import lucid
        import lucid.nn as nn
        model = nn.Linear(3, 2)
        y = model(lucid.randn(4, 3))
        y.sum().backward()
        print(tuple(y.shape), tuple(model.weight.grad.shape))
        """
    )
    assert out.strip() == "(4, 2) (2, 3)"
    assert_absent(venv, "lucid.optim", "lucid.data", "lucid.models")


def test_packaging_optim_steps_a_leaf_tensor_without_nn(venv: Venv, wheelhouse: Path) -> None:
    install_alone(venv, wheelhouse, "lucid-optim")
    out = venv.run(
        """
        import lucid
        import lucid.optim as optim
        w = lucid.tensor([1.0, 2.0], requires_grad=True)
        opt = optim.SGD([w], lr=0.25)
        (w * w).sum().backward()
        opt.step()
        print(w.tolist())
        """
    )
    assert out.strip() == "[0.5, 1.0]"
    assert_absent(venv, "lucid.nn", "lucid.data", "lucid.models")


def test_packaging_data_batches_a_dataset(venv: Venv, wheelhouse: Path) -> None:
    install_alone(venv, wheelhouse, "lucid-data")
    out = venv.run(
        """
        import lucid
        from lucid.data import DataLoader, Dataset

        class Squares(Dataset):
            def __len__(self):
                return 5
            def __getitem__(self, i):
                return lucid.tensor([float(i * i)])

        print([tuple(b.shape) for b in DataLoader(Squares(), batch_size=2)])
        assert lucid.utils.data.DataLoader is DataLoader  # torch.utils.data's path, same object
        """
    )
    assert out.strip() == "[(2, 1), (2, 1), (1, 1)]"
    assert_absent(venv, "lucid.nn", "lucid.optim", "lucid.models")


def test_packaging_backend_mlx_registers_its_device(venv: Venv, wheelhouse: Path) -> None:
    install_alone(venv, wheelhouse, "lucid-backend-mlx")
    out = venv.run(
        """
        import importlib.metadata as m
        import lucid
        names = sorted(e.name for e in m.entry_points(group="lucid.backends"))
        x = lucid.ones(3, device="mlx")
        print(names, (x * 2).sum().item())
        """
    )
    assert out.strip() == "['gpu', 'mlx'] 6.0"
    assert_absent(venv, "lucid.nn", "lucid.optim")


def test_packaging_distributed_runs_two_ranks_with_its_mpi_wheel(
    venv: Venv, wheelhouse: Path, tmp_path: Path
) -> None:
    install_alone(venv, wheelhouse, "lucid-distributed")
    script = tmp_path / "two_ranks.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import lucid
            import lucid.distributed as dist
            dist.init_process_group()
            t = lucid.ones(2) * (dist.get_rank() + 1)
            dist.all_reduce(t)
            lucid.nn.parallel.DistributedDataParallel(lucid.nn.Linear(2, 1))
            sys.stdout.write(f"sum {t.tolist()}\\n")
            """
        )
    )
    result = venv.command("lucid-run", "--nproc-per-node", "2", str(script))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("sum [3.0, 3.0]") == 2, result.stdout
    assert_absent(venv, "lucid.optim", "lucid.data", "lucid.models")


def test_packaging_onnx_exports_and_runs_with_its_runtime_extra(
    venv: Venv, wheelhouse: Path, tmp_path: Path
) -> None:
    install_alone(venv, wheelhouse, "lucid-onnx", extras=("runtime",))
    target = tmp_path / "linear.onnx"
    out = venv.run(
        f"""
        import lucid
        import lucid.nn as nn
        import onnxruntime as ort
        model = nn.Linear(3, 2)
        x = lucid.randn(4, 3)
        lucid.onnx.export(model, x, {str(target)!r}, input_names=["x"])
        session = ort.InferenceSession({str(target)!r}, providers=["CPUExecutionProvider"])
        (y,) = session.run(None, {{"x": x.numpy()}})
        back = lucid.onnx.load({str(target)!r})(x)
        print(y.shape, abs(y - model(x).detach().numpy()).max() < 1e-5,
              abs(back.numpy() - y).max() < 1e-5)
        """
    )
    assert out.strip() == "(4, 2) True True"
    assert_absent(venv, "lucid.optim", "lucid.data", "lucid.models")


def test_packaging_models_train_extra_brings_lucid_train(venv: Venv, wheelhouse: Path) -> None:
    install_alone(venv, wheelhouse, "lucid-models")
    venv.run("import lucid.models, lucid.data.ops")  # lucid-data: the RoI layers' box ops
    assert_absent(venv, "lucid.optim")
    assert not (venv.path / "bin" / "tqdm").exists()

    install_alone(venv, wheelhouse, "lucid-models", extras=("train",))
    result = venv.command("lucid-train", "--help")
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout.lower()


def test_packaging_uninstalling_one_package_leaves_the_others(venv: Venv, wheelhouse: Path) -> None:
    install_alone(venv, wheelhouse, "lucid-models", extras=("train",))
    venv.uninstall("lucid-optim")  # only the [train] extra needs it
    assert_absent(venv, "lucid.optim")
    venv.run("import lucid, lucid.nn, lucid.data, lucid.models; lucid.nn.Linear(2, 2)")
    assert venv.lucid_distributions() == {"lucid-core", "lucid-nn", "lucid-data", "lucid-models"}
