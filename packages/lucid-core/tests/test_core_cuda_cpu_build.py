"""``lucid.cuda`` answers every name of ``torch.cuda.__all__`` as PyTorch's CPU-only build does.

Device-agnostic programs name ``torch.cuda``'s API on the CPU (seeding, memory reports, no-op
context managers, ``isinstance`` checks); lucid has no ``"cuda"`` device, so each call returns
what PyTorch's CPU build returns, or raises the class it raises with a message naming what to
use instead ('cpu', or device 'mlx').
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import lucid
import lucid.cuda as cuda

# name -> the arguments of a call, made from the module (torch or lucid) it is passed to
NO_ARGS: Callable[[Any], tuple[Any, ...]] = lambda m: ()  # noqa: E731
CALLS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "caching_allocator_alloc": lambda m: (1,),
    "caching_allocator_delete": lambda m: (0,),
    "caching_allocator_enable": lambda m: (False,),
    "can_device_access_peer": lambda m: (0, 1),
    "change_current_allocator": lambda m: (None,),
    "check_error": lambda m: (0,),
    "CUDAPluggableAllocator": lambda m: ("no_such_allocator.so", "alloc", "free"),
    "device": lambda m: (0,),
    "device_of": lambda m: (m.zeros(2),),
    "ExternalStream": lambda m: (0,),
    "get_stream_from_external": lambda m: (0,),
    "graph": lambda m: (None,),
    "make_graphed_callables": lambda m: (lambda x: x, (m.zeros(2),)),
    "manual_seed": lambda m: (0,),
    "manual_seed_all": lambda m: (0,),
    "set_device": lambda m: (0,),
    "set_per_process_memory_fraction": lambda m: (0.5,),
    "set_rng_state": lambda m: (m.zeros(8, dtype=m.uint8),),
    "set_rng_state_all": lambda m: ([m.zeros(8, dtype=m.uint8)],),
    "set_stream": lambda m: (None,),
    "set_sync_debug_mode": lambda m: (0,),
    "stream": lambda m: (None,),
    "StreamContext": lambda m: (None,),
    "use_mem_pool": lambda m: (None,),
}
# torch's CPU build cannot even make this exception (its message asks the CUDA runtime);
# lucid's can be made, so `raise lucid.cuda.CudaError(2)` in a program runs
NOT_CALLED = {"CudaError"}

SUBMODULE_CALLS: dict[str, dict[str, Callable[[Any], tuple[Any, ...]]]] = {
    "nvtx": {
        "range_push": lambda m: ("a",),
        "range_pop": NO_ARGS,
        "range_start": lambda m: ("a",),
        "range_end": lambda m: (0,),
        "mark": lambda m: ("a",),
        "range": lambda m: ("a",),
    },
    "profiler": {"start": NO_ARGS, "stop": NO_ARGS, "profile": NO_ARGS},
    "nccl": {
        "is_available": lambda m: ([m.zeros(2)],),
        "version": NO_ARGS,
        "all_reduce": lambda m: ([m.zeros(2)],),
        "broadcast": lambda m: ([m.zeros(2)],),
    },
    "tunable": {
        "is_enabled": NO_ARGS,
        "enable": NO_ARGS,
        "get_filename": NO_ARGS,
        "set_filename": lambda m: ("x.csv",),
        "get_results": NO_ARGS,
        "mgpu_tune_gemm_in_file": lambda m: ("x", 1),
    },
    "random": {"seed": NO_ARGS, "get_rng_state_all": NO_ARGS, "initial_seed": NO_ARGS},
    "graphs": {"is_current_stream_capturing": NO_ARGS, "CUDAGraph": NO_ARGS},
    "streams": {"Stream": NO_ARGS, "Event": NO_ARGS},
    "memory": {"memory_summary": NO_ARGS, "mem_get_info": NO_ARGS, "memory_cached": NO_ARGS},
}


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """What a call does: ("raises", class), or ("returns", the value's kind), and for a
    context manager ("context", what entering it does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = call()
        except Exception as error:  # noqa: BLE001 - the class is what is compared
            return ("raises", type(error))
        if hasattr(value, "__enter__") and not isinstance(value, type):
            inner = outcome(value.__enter__)
            return ("context", inner)
    if value is None or isinstance(value, (bool, int, float)):
        return ("returns", value)
    if isinstance(value, (str, list, tuple, dict)):
        return ("returns", (type(value).__base__ if type(value) is not dict else dict, value))
    if isinstance(value, types.ModuleType):
        return ("returns", "module")
    return ("returns", "object")


def _normalize(result: tuple[str, Any]) -> tuple[str, Any]:
    kind, what = result
    if kind == "context":
        return (kind, _normalize(what))
    if kind == "returns" and isinstance(what, tuple) and what and isinstance(what[0], type):
        base, value = what
        # an empty OrderedDict and {} are the same answer; strings differ in wording only
        return (kind, (dict, dict(value)) if isinstance(value, dict) else (base, type(value)))
    return result


def _same(torch_result: tuple[str, Any], lucid_result: tuple[str, Any]) -> bool:
    t_kind, t_what = _normalize(torch_result)
    l_kind, l_what = _normalize(lucid_result)
    if t_kind != l_kind:
        return False
    if t_kind == "raises":  # lucid's class is torch's (or a subclass of it)
        return issubclass(l_what, t_what)
    if t_kind == "context":
        return _same(t_what, l_what)
    return bool(t_what == l_what)


@pytest.fixture(scope="module")
def torch() -> Any:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch has a CUDA device here: not its CPU build")
    return torch


@pytest.mark.parity
def test_every_name_of_torch_cuda_is_there(torch: Any) -> None:
    missing = [name for name in torch.cuda.__all__ if not hasattr(cuda, name)]
    assert missing == []
    assert sorted(cuda.__all__) == sorted(torch.cuda.__all__)
    not_in_dict = [name for name in torch.cuda.__all__ if name not in vars(cuda)]
    assert not_in_dict == []  # `vars(lucid.cuda)` lists them, as torch's


@pytest.mark.parity
def test_each_name_is_the_same_kind_of_thing(torch: Any) -> None:
    for name in torch.cuda.__all__:
        t_obj, l_obj = getattr(torch.cuda, name), getattr(cuda, name)
        if isinstance(t_obj, types.ModuleType):
            assert isinstance(l_obj, types.ModuleType), name
            for inner in getattr(t_obj, "__all__", None) or []:
                assert hasattr(l_obj, inner), f"lucid.cuda.{name}.{inner}"
        elif isinstance(t_obj, type):
            assert isinstance(l_obj, type), name
            for base in (BaseException, RuntimeError):
                assert issubclass(t_obj, base) == issubclass(l_obj, base), name
        elif callable(t_obj):
            assert callable(l_obj), name
        else:
            assert l_obj == t_obj, name


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(set(CALLS) | {"init", "seed", "get_rng_state"}))
def test_calls_with_arguments_match(torch: Any, name: str) -> None:
    make = CALLS.get(name, NO_ARGS)
    t = outcome(lambda: getattr(torch.cuda, name)(*make(torch)))
    got = outcome(lambda: getattr(cuda, name)(*make(lucid)))
    assert _same(t, got), f"torch.cuda.{name}: torch {t}, lucid {got}"


@pytest.mark.parity
def test_every_callable_called_without_arguments_matches(torch: Any) -> None:
    differ = {}
    for name in torch.cuda.__all__:
        t_obj = getattr(torch.cuda, name)
        if isinstance(t_obj, types.ModuleType) or not callable(t_obj) or name in NOT_CALLED:
            continue
        make = CALLS.get(name, NO_ARGS)
        t = outcome(lambda: t_obj(*make(torch)))
        got = outcome(lambda: getattr(cuda, name)(*make(lucid)))
        if not _same(t, got):
            differ[name] = (t, got)
    assert differ == {}


@pytest.mark.parity
def test_submodule_calls_match(torch: Any) -> None:
    differ = {}
    for module, calls in SUBMODULE_CALLS.items():
        for name, make in calls.items():
            t_fn, l_fn = getattr(getattr(torch.cuda, module), name), getattr(cuda, module)
            t = outcome(lambda: t_fn(*make(torch)))
            got = outcome(lambda: getattr(l_fn, name)(*make(lucid)))
            if not _same(t, got):
                differ[f"{module}.{name}"] = (t, got)
    assert differ == {}


@pytest.mark.parity
def test_context_managers_match(torch: Any) -> None:
    cases: list[Callable[[Any], Any]] = [
        lambda m: m.cuda.device(-1),
        lambda m: m.cuda.device(None),
        lambda m: m.cuda.device("cuda:0"),
        lambda m: m.cuda.device_of(m.zeros(2)),
        lambda m: m.cuda.stream(None),
        lambda m: m.cuda.caching_allocator_disabled(),
        lambda m: m.cuda.nvtx.range("step"),
        lambda m: m.cuda.profiler.profile(),
    ]
    for case in cases:
        t, got = outcome(lambda: case(torch)), outcome(lambda: case(lucid))
        assert _same(t, got), (t, got)
    for call in (lambda m: m.cuda.device("cpu"), lambda m: m.cuda.set_device("cpu")):
        assert (
            outcome(lambda: call(torch)) == outcome(lambda: call(lucid)) == ("raises", ValueError)
        )


@pytest.mark.parity
def test_legacy_types_answer_isinstance_as_torch(torch: Any) -> None:
    for name in ("FloatStorage", "LongStorage", "ComplexDoubleStorage"):
        assert getattr(cuda, name).dtype == lucid.dtypes.to_dtype(
            str(getattr(torch.cuda, name).dtype).split(".")[1]
        )
        assert isinstance(lucid.zeros(2), getattr(cuda, name)) is False
    assert sorted(n for n in dir(torch.cuda.sparse) if not n.startswith("_")) == sorted(
        n for n in dir(cuda.sparse) if n.endswith("Tensor")
    )


# Plain tests of what programs use most


def test_seeding_and_rng_states_do_nothing() -> None:
    assert cuda.seed() is None and cuda.seed_all() is None
    assert cuda.manual_seed(0) is None and cuda.random.manual_seed_all(0) is None
    assert cuda.get_rng_state_all() == []
    assert cuda.set_rng_state_all(cuda.get_rng_state_all()) is None
    assert cuda.set_rng_state(lucid.get_rng_state()) is None
    for call in (cuda.get_rng_state, cuda.initial_seed):
        with pytest.raises(AssertionError, match="no CUDA device.*'mlx'"):
            call()


def test_build_answers() -> None:
    assert cuda.get_arch_list() == [] and cuda.get_gencode_flags() == ""
    assert cuda.is_tf32_supported() is False and cuda.default_generators == ()
    assert (cuda.has_half, cuda.has_magma) == (True, False)
    assert cuda.memory_stats_as_nested_dict() == {} == cuda.host_memory_stats()
    assert isinstance(cuda.list_gpu_processes(), str)
    with pytest.warns(FutureWarning):
        assert cuda.memory_cached() == 0
    with pytest.warns(FutureWarning):
        assert cuda.max_memory_cached() == 0


def test_no_op_context_managers() -> None:
    x = lucid.zeros(2)
    with cuda.device(-1), cuda.device_of(x), cuda.stream(None), cuda.StreamContext(None):
        y = x + 1
    assert y.tolist() == [1.0, 1.0]
    assert cuda.set_device(-1) is None and cuda.set_stream(None) is None


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: cuda.device(0).__enter__(), RuntimeError),
        (lambda: cuda.current_stream(), AssertionError),
        (lambda: cuda.default_stream(), AssertionError),
        (lambda: cuda.Stream(), RuntimeError),
        (lambda: cuda.Event(enable_timing=True), RuntimeError),
        (lambda: cuda.get_device_properties(0), AssertionError),
        (lambda: cuda.mem_get_info(), AssertionError),
        (lambda: cuda.init(), AssertionError),
        (lambda: cuda.memory_summary(), KeyError),
        (lambda: cuda.memory_snapshot(), AttributeError),
        (lambda: cuda.reset_max_memory_allocated(), AttributeError),
        (lambda: cuda.CUDAGraph(), RuntimeError),
        (lambda: cuda.graphs.make_graphed_callables(abs, ()), RuntimeError),
        (lambda: cuda.nvtx.range_push("forward"), RuntimeError),
        (lambda: cuda.nvtx.range("forward").__enter__(), RuntimeError),
        (lambda: cuda.utilization(), ModuleNotFoundError),
        (lambda: cuda.FloatStorage(2), AssertionError),
        (lambda: cuda.sparse.FloatTensor(), TypeError),
    ],
)
def test_device_calls_raise_torchs_class_saying_what_to_use(
    call: Callable[[], Any], error: type[BaseException]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(error, match="(no CUDA device|not available).*'mlx'"):
            call()


def test_attribute_errors_are_lucids_assertion_errors_too() -> None:
    # where torch's CPU build fails on a missing torch._C binding (AttributeError), lucid's
    # error is also the AssertionError its other no-CUDA refusals are
    for call in (cuda.reset_peak_memory_stats, lambda: cuda.set_device(0), cuda.memory_snapshot):
        with pytest.raises(AssertionError) as info:
            call()
        assert isinstance(info.value, AttributeError)


def test_submodules_are_attributes_after_import_lucid() -> None:
    for name in ("random", "memory", "streams", "graphs", "nvtx", "profiler", "nccl",
                 "jiterator", "tunable", "sparse", "amp"):  # fmt: skip
        module = getattr(lucid.cuda, name)
        assert isinstance(module, types.ModuleType) and module.__name__ == f"lucid.cuda.{name}"
    assert cuda.memory.empty_cache is cuda.empty_cache and cuda.random.seed is cuda.seed
    assert cuda.streams.Stream is cuda.Stream and cuda.graphs.graph is cuda.graph
    assert cuda.nccl.is_available([lucid.zeros(2)]) is False


def test_errors_classes_for_except_clauses() -> None:
    with pytest.raises(RuntimeError, match="CUDA error 2"):
        raise cuda.CudaError(2)
    assert issubclass(cuda.DeferredCudaCallError, Exception)
    assert (cuda.cudaStatus.SUCCESS, cuda.cudaStatus.ERROR_NOT_READY) == (0, 34)
    kernel = cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { return x; }")
    with pytest.raises(AssertionError, match="Jiterator"):
        kernel(lucid.zeros(2))


def test_private_state_programs_read() -> None:
    """``torch.cuda._initialized`` and its neighbours, read by reversible networks (RevTorch's
    ``Deterministic``, copied into lucidrains' performer/reformer: ``if
    torch.cuda._initialized:``), answer as torch's CPU-only build."""
    assert cuda._initialized is False
    assert cuda._is_compiled() is False
    assert cuda._is_in_bad_fork() is False
    with pytest.raises(AssertionError):
        cuda._lazy_init()
    assert cuda._get_device_index("cuda:1") == 1
    assert cuda._get_device_index(lucid.device("cuda", 2)) == 2
    assert cuda._get_device_index(None, optional=True) is None
    assert cuda._get_device_index("cpu", allow_cpu=True) == -1
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda._get_device_index("cpu")


@pytest.mark.parity
def test_private_state_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    assert cuda._initialized == torch.cuda._initialized
    assert cuda._is_compiled() == torch.cuda._is_compiled()
    assert cuda._is_in_bad_fork() == torch.cuda._is_in_bad_fork()
    for args in (("cuda:3",), (4,), ("cpu", False, True), (None, True)):
        assert cuda._get_device_index(*args) == torch.cuda._get_device_index(*args)
