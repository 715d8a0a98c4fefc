"""Run one mpi4py test module under MPI and record each test case's outcome per rank.

Started by the peer runner as `mpiexec -n N python mpi4py_cases.py TESTDIR MODULE OUTDIR`.
Each rank writes OUTDIR/rank<r>.tsv, one line per finished case ("case<TAB>status<TAB>detail",
status ok/fail/error/skip), flushed as it goes so that a hang or crash still leaves the
outcomes of the cases before it. Exit status 0 only when every case passed on this rank.
"""
import sys
import time
import traceback
import unittest
from pathlib import Path


class CaseRecorder(unittest.TestResult):
    """Collects one outcome per test method, folding failed subtests into their case."""

    def __init__(self, sink):
        super().__init__()
        self.sink = sink
        self.case_status = {}
        self.case_detail = {}
        self.started = 0.0

    def _mark(self, test, status, err=None):
        name = self._name(test)
        if self.case_status.get(name, "ok") == "ok":
            self.case_status[name] = status
            if err is not None:
                self.case_detail[name] = "".join(traceback.format_exception_only(err[0], err[1])).strip()

    @staticmethod
    def _name(test):
        test = getattr(test, "test_case", test)  # a subtest reports through its parent
        return f"{type(test).__name__}.{test._testMethodName}"

    def startTest(self, test):
        super().startTest(test)
        self.started = time.monotonic()
        self.case_status[self._name(test)] = "ok"

    def addError(self, test, err):
        super().addError(test, err)
        self._mark(test, "error", err)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._mark(test, "fail", err)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._mark(test, "fail", err)
            self.case_detail[self._name(test)] += f" [{subtest._subDescription()}]"

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._mark(test, "skip")
        self.case_detail[self._name(test)] = reason

    def stopTest(self, test):
        super().stopTest(test)
        name = self._name(test)
        detail = self.case_detail.get(name, "").replace("\t", " ").replace("\n", " | ")
        seconds = time.monotonic() - self.started
        self.sink.write(f"{name}\t{self.case_status[name]}\t{seconds:.2f}s {detail}\n")
        self.sink.flush()


def main(argv):
    if len(argv) != 4:
        print("usage: mpi4py_cases.py TESTDIR MODULE OUTDIR", file=sys.stderr)
        return 2
    testdir, module_name, outdir = argv[1], argv[2], Path(argv[3])
    sys.path.insert(0, testdir)
    from mpi4py import MPI

    rank = MPI.COMM_WORLD.Get_rank()
    module = __import__(module_name)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    outdir.mkdir(parents=True, exist_ok=True)
    with open(outdir / f"rank{rank}.tsv", "w", encoding="utf-8") as sink:
        result = CaseRecorder(sink)
        suite.run(result)
    bad = [n for n, s in result.case_status.items() if s != "ok"]
    if rank == 0:
        print(f"{module_name}: {len(result.case_status) - len(bad)}/{len(result.case_status)} cases ok on rank 0")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
