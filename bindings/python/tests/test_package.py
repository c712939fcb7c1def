"""The package itself: version, type hints, py.typed, and the metadata of an installed wheel."""

import inspect
import os

import pytest

import cnc

PUBLIC_FUNCTIONS = ["cg", "bicgstab", "gmres", "solve", "status_name", "status_string", "version",
                    "version_string", "backend_available", "library_path", "devices"]


def test_version_is_the_librarys():
    assert cnc.__version__ == cnc.version_string()
    assert cnc.__version__ == f"{cnc.VERSION_MAJOR}.{cnc.VERSION_MINOR}.{cnc.VERSION_PATCH}"


def test_py_typed_marker():
    assert os.path.isfile(os.path.join(os.path.dirname(cnc.__file__), "py.typed"))


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_public_functions_are_annotated(name):
    sig = inspect.signature(getattr(cnc, name))
    assert sig.return_annotation is not inspect.Signature.empty, name
    for p in sig.parameters.values():
        assert p.annotation is not inspect.Parameter.empty, (name, p.name)
    assert getattr(cnc, name).__doc__, name


def test_context_methods_are_annotated():
    for name, fn in inspect.getmembers(cnc.Context, inspect.isfunction):
        if name.startswith("_") and name != "__init__":
            continue
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty, name
        for p in list(sig.parameters.values())[1:]:
            assert p.annotation is not inspect.Parameter.empty, (name, p.name)


def test_installed_metadata():
    """Only for an installed cnc (scripts/test-python.sh): the wheel's metadata."""
    metadata = pytest.importorskip("importlib.metadata")
    try:
        dist = metadata.distribution("cnc")
    except metadata.PackageNotFoundError:
        pytest.skip("cnc is not installed (run from the source tree)")
    if not os.path.realpath(cnc.__file__).startswith(os.path.realpath(str(dist.locate_file("")))):
        pytest.skip("the cnc imported is not the installed one")
    assert dist.version == cnc.__version__
    meta = dist.metadata
    assert meta.get("License") or meta.get("License-Expression")
    requires = " ".join(dist.requires or [])
    assert "numpy" in requires and "scipy" in requires
    files = [str(f) for f in dist.files or []]
    assert any(f.startswith("cnc/libcnc") for f in files), files
    assert "cnc/py.typed" in files


def test_devices():
    """cnc.devices(): the host is the CPU backend's one device; a GPU backend lists devices
    exactly when it is available; an unknown backend raises CncError."""
    listed = cnc.devices()
    cpu = [d for d in listed if d[0] == "cpu"]
    assert len(cpu) == 1 and cpu[0][1] == 0 and "hardware threads" in cpu[0][2]
    for backend in ("opencl", "cuda"):
        mine = cnc.devices(backend)
        assert mine == [d for d in listed if d[0] == backend]
        assert [d[1] for d in mine] == list(range(len(mine)))
        assert (len(mine) > 0) == cnc.backend_available(backend)
    with pytest.raises(cnc.CncError):
        cnc.devices("auto")
