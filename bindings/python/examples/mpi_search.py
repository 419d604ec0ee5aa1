#!/usr/bin/env python3
"""A search over the ranks of an MPI job from Python (bosch.mpi, mpi4py):
every rank opens the model directory on its own device, rank 0 searches and
hands out, the others evaluate (whole candidates, or parts of a candidate's
prompts when a batch holds fewer candidates than ranks). The same mask and
score as one process.

    mpirun -np 4 python3 mpi_search.py [--model DIR] [--ratio 0.5] [--budget 20] [--out PREFIX]

(as root: mpirun --allow-run-as-root). The evaluations run in C on every
rank; Python only sets the job up.
"""

import argparse
import sys

from mpi4py import MPI

import bosch
from bosch import backend, mpi


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="checkpoint directory (default: the organism)")
    ap.add_argument("--ratio", type=float, default=0.5)
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="result file prefix (rank 0)")
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    gpus = backend.cuda_device_count()
    device = f"cuda:{comm.rank % gpus}" if gpus else "cpu"  # one GPU per rank (one node)
    ck = ev = error = None
    try:
        ck = backend.Checkpoint.open(args.model, device=device, threads=1)
        ev = ck.evaluator()
    except bosch.BoschError as exc:
        error = exc  # told to rank 0 in the handshake: the job is refused, naming this rank
    if comm.rank != 0:
        mpi.serve(comm, ev, error=error)
        return 0
    # Requests cut into parts of their samples keep every rank busy when a
    # batch holds fewer candidates than ranks; each rank's prefix cache
    # follows the search's incumbent (its neighbours skip the layers below
    # their first change).
    with mpi.Coordinator(comm, ev, error=error) as coordinator:
        last = [None]

        def follow(progress):
            if progress.best_mask is not None and progress.best_mask != last[0]:
                coordinator.set_reference(progress.best_mask)
                last[0] = progress.best_mask

        opt = bosch.Optimizer(ck.model.problem(ratio=args.ratio), seed=args.seed,
                              budget=args.budget)
        result = opt.optimize(request_batch_evaluator=coordinator, progress=follow)
        print(f"{comm.size} ranks: {result.total_evaluations} evaluations "
              f"{coordinator.stats()}; score {result.score!r}")
        print("mask " + "".join("1" if u else "0" for u in result.mask))
        if args.out:
            sel = bosch.Selection.from_result(result, ck.model.problem(ratio=args.ratio))
            sel.write(args.out)
    ck.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
