"""What the library leaves of the process: a rule test and an information line without a
progress bar do not fix multiprocessing's start method (tqdm's lock would), so a program can
still choose "spawn" afterwards."""

import subprocess
import sys
import textwrap


def test_a_rule_test_without_progress_leaves_the_start_method_to_the_program():
    script = textwrap.dedent(
        """
        import multiprocessing
        import warnings

        import deepctrl as dc
        from deepctrl.core.log import info
        from deepctrl.tabular.known_truth import known_truth_table

        warnings.simplefilter("ignore")
        table = known_truth_table({"a": "follows"}, rows=60, seed=0)
        est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], max_epochs=1,
                                   n_seeds=1)
        dc.rule_test(est, table[["price", "quality"]], table["sales"], folds=2, min_rows=20,
                     progress=False)
        info("a line with no bar on screen")
        print(multiprocessing.get_start_method(allow_none=True))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.strip() == "None", done.stdout + done.stderr
    assert "deepctrl: a line with no bar on screen" in done.stderr
