"""Each policy in the ACK figures has its own colour (issue 19: 1:2 and AF cwnd/4 + IMMEDIATE_ACK
were both red in the committed ack-frequency figures)."""

from __future__ import annotations

import matplotlib.colors

from quicksim.reproduce import ack_frequency, paper_fig7


def test_every_policy_of_a_figure_has_a_colour_of_its_own() -> None:
    for variants in (ack_frequency.VARIANTS, paper_fig7.VARIANTS):
        colours = [matplotlib.colors.to_hex(paper_fig7._color(k, j)) for j, k in enumerate(variants)]
        assert len(set(colours)) == len(colours), dict(zip(variants, colours, strict=True))
