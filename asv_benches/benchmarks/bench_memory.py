"""Peak memory of a greedy solve on the paper's dataset A.

``peakmem`` reports the peak resident size of the whole benchmark process.
Generating dataset A goes through dense 1000 x 10000 temporaries (about
200 MB), which would hide the memory used by the solver, so the data are
built once in ``setup_cache`` (a separate process) and only the sparse
matrix is loaded into the measuring process.
"""
import bcd

from .common import NO_CHECKS, paper_dataset, quiet


class PeakMemory:
    timeout = 120

    def setup_cache(self):
        return paper_dataset("A")

    def setup(self, data):
        quiet()
        self.problem = bcd.LeastSquares(*data)

    def peakmem_gs_variable_500(self, data):
        bcd.solve(self.problem, rule="gs", blocks="variable", block_size=5, max_iter=500,
                  tol=0.0, check_every=NO_CHECKS)
