"""A saved run reads back as the same Result (`quicksim.load`), and plotting functions return
figures a notebook displays by themselves (issue 19: `<Figure size 800x450 with 1 Axes>` as
text without `%matplotlib inline`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import quicksim
from quicksim import plotting, sweep_plots


def test_load_gives_back_the_same_result(tmp_path: Path) -> None:
    result = quicksim.run("linksharing", sets=["run.duration=12s"])
    result.save(tmp_path)
    back = quicksim.load(tmp_path)
    assert isinstance(back, quicksim.Result)
    assert back.hash() == result.hash()
    assert back.meta == result.meta and back.totals == result.totals
    assert back.scenario == result.scenario and back.name == result.name
    assert back.flow_names == result.flow_names
    for name, table in result.tables.items():
        pd.testing.assert_frame_equal(back.table(name), table, check_categorical=False)
    assert back.summary()["flows"] == result.summary()["flows"]


def test_figures_display_in_a_notebook_by_themselves() -> None:
    result = quicksim.run("linksharing", sets=["run.duration=6s"])
    runs = pd.DataFrame({"x": [1, 1, 2, 2], "m": [1.0, 2.0, 3.0, 4.0]})
    from quicksim.stats import summarize

    figures = [build(result) for _, _, build in plotting.STANDARD_PLOTS]
    figures.append(sweep_plots.plot_metric(summarize(runs, ["x"], ["m"]), "m", "x"))
    for fig in figures:
        # IPython shows an object's `_repr_png_` when no formatter is registered for its type.
        png = fig._repr_png_()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
