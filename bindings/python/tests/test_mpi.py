"""bosch.mpi (libbosch-mpi through mpi4py): a search over MPI ranks from
Python returns what one process returns; a rank that cannot open its
evaluator refuses the job. Each case runs in its own processes (mpirun, or
a singleton), so that this pytest process never initialises MPI. Skipped
without libbosch-mpi, mpi4py or mpirun."""

import os
import shutil
import subprocess
import sys

import pytest

from bosch import _lib

try:
    _lib.load_mpi()
except ImportError:
    pytest.skip("libbosch-mpi not found", allow_module_level=True)
try:
    import mpi4py  # noqa: F401
except ImportError:
    pytest.skip("mpi4py not installed", allow_module_level=True)
MPIRUN = shutil.which("mpirun")
if MPIRUN is None:
    pytest.skip("mpirun not found", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "mpi_search.py")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
FORWARD = [a for v in ("BOSCH_LIBRARY", "BOSCH_TEXT_LIBRARY", "BOSCH_TORCH_LIBRARY",
                       "BOSCH_MPI_LIBRARY", "BOSCH_ORGANISM", "PYTHONPATH", "OMP_NUM_THREADS",
                       "OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")
           if v in ENV for a in ("-x", v)]


def run(args, ranks=None, check=True):
    cmd = ([MPIRUN, "--oversubscribe", "-np", str(ranks)] + FORWARD if ranks else []) + \
        [sys.executable] + args
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


TESTBED = r"""
import sys
from mpi4py import MPI
import bosch
from bosch import mpi
comm = MPI.COMM_WORLD
# argv[3]: "seed" gives rank 2 another landscape; "none" / "none-waived":
# rank 1 gives no identity (rank 0 waives the check with "none-waived")
variant = sys.argv[3] if len(sys.argv) > 3 else ""
tb = bosch.Testbed(8, 4, seed=4 if variant == "seed" and comm.rank == 2 else 3)
identity = False if variant.startswith("none") and comm.rank == 1 else None
error = "cannot open the model (test)" if str(comm.rank) == sys.argv[1] else None
problem = bosch.Problem(8, 4, 2, ratio=0.5)
if comm.rank:
    try:
        mpi.serve(comm, tb, error=error, identity=identity)
    except bosch.BoschError:
        sys.exit(1)
    sys.exit(0)
if sys.argv[2] == "direct":
    result = bosch.Optimizer(problem, seed=1, budget=120, batch_size=6).optimize(
        request_batch_evaluator=tb)
else:
    try:
        c = mpi.Coordinator(comm, tb, error=error, check_identity=variant != "none-waived")
    except bosch.BoschError as exc:
        print("refused:", exc)
        sys.exit(1)
    with c:
        result = bosch.Optimizer(problem, seed=1, budget=120, batch_size=6).optimize(
            request_batch_evaluator=c)
        print("counts", c.stats())
print("mask", "".join(map(str, result.mask)), repr(result.score))
"""


def result_line(out):
    return [line for line in out.splitlines() if line.startswith("mask ")]


def needs_organism_and_torch():
    """Skips a test that runs the organism on libbosch-torch without them."""
    if not os.environ.get("BOSCH_ORGANISM"):
        pytest.skip("BOSCH_ORGANISM not set")
    try:
        _lib.load_torch()
    except ImportError:
        pytest.skip("libbosch-torch not found")


def test_testbed_over_ranks_is_one_process():
    direct = run(["-c", TESTBED, "-1", "direct"])
    one = run(["-c", TESTBED, "-1", "mpi"])
    three = run(["-c", TESTBED, "-1", "mpi"], ranks=3)
    assert result_line(direct.stdout) and result_line(one.stdout) == result_line(direct.stdout)
    assert result_line(three.stdout) == result_line(direct.stdout)
    counts = [line for line in three.stdout.splitlines() if line.startswith("counts")][0]
    assert sum(eval(counts.split(" ", 1)[1])) == 120


def test_a_rank_not_ready_refuses_the_job():
    p = run(["-c", TESTBED, "2", "mpi"], ranks=3, check=False)
    assert p.returncode != 0
    assert "rank 2 is not ready: cannot open the model (test)" in p.stdout + p.stderr
    assert not result_line(p.stdout)


def test_ranks_of_another_identity_refuse_the_job():
    p = run(["-c", TESTBED, "-1", "mpi", "seed"], ranks=3, check=False)
    assert p.returncode != 0
    assert ("rank 2 evaluates another job than rank 0: testbed.seed is 4 on rank 2, 3 on rank 0"
            in p.stdout + p.stderr)
    assert not result_line(p.stdout)
    p = run(["-c", TESTBED, "-1", "mpi", "none"], ranks=3, check=False)
    assert p.returncode != 0 and "rank 1 cannot say what it evaluates" in p.stdout + p.stderr
    direct = run(["-c", TESTBED, "-1", "direct"])
    waived = run(["-c", TESTBED, "-1", "mpi", "none-waived"], ranks=3)
    assert result_line(waived.stdout) == result_line(direct.stdout)


def test_identity_of_a_testbed_and_bad_identities():
    import bosch
    from bosch import mpi
    text = mpi.identity_of(bosch.Testbed(8, 4, seed=3))
    assert "testbed.seed=3\n" in text and "testbed.shape=8x4\n" in text
    assert text != mpi.identity_of(bosch.Testbed(8, 4, seed=4))
    with pytest.raises(TypeError):
        mpi._c_evaluator(bosch.Testbed(8, 4), parts=False, identity=b"bytes")
    with pytest.raises(TypeError):
        mpi.identity_of(object())


def test_identity_of_a_torch_evaluator():
    needs_organism_and_torch()
    from bosch import backend, mpi
    with backend.Checkpoint.open(os.environ["BOSCH_ORGANISM"], device="cpu", threads=1) as ck:
        ev = ck.evaluator()
        text = mpi.identity_of(ev)
        fields = dict(line.split("=", 1) for line in text.splitlines())
        assert fields["torch.window"] == "32" and fields["torch.metric"] == "logprob"
        assert fields["torch.model"].startswith("xxh3:") and fields["torch.task"].endswith(":32")
        assert fields["torch.prefix_cache"] == "on"
        ev.set_forward_samples(1)
        assert dict(line.split("=", 1) for line in mpi.identity_of(ev).splitlines())[
            "torch.forward_samples"] == "1"
        assert "torch.window=16\n" in mpi.identity_of(ck.evaluator(window=16))


def test_the_example_on_the_organism():
    needs_organism_and_torch()
    # one rank, two and three: requests cut differently (one sample per
    # forward everywhere), the prefix caches following the incumbent
    one = run([EXAMPLE, "--budget", "8"])
    scores = [line for line in one.stdout.splitlines() if "score" in line]
    for n in (2, 3):
        p = run([EXAMPLE, "--budget", "8"], ranks=n)
        assert result_line(one.stdout) and result_line(p.stdout) == result_line(one.stdout)
        assert f"{n} ranks" in p.stdout
        assert [line.split("; ")[-1] for line in p.stdout.splitlines() if "score" in line] == \
            [line.split("; ")[-1] for line in scores]
