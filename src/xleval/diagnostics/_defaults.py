"""The one set of defaults of the calibration decision, read by every caller (``calibrate fit --method
auto``, ``calibrate evaluate``, ``diagnose``, the leaderboard and the report), so that the same table
gets the same decision everywhere.

The cross-validated comparison costs ``N_FOLDS x N_REPEATS`` fits of LGN and of the anchored calibrator
(measured in docs/calibration.md), affordable inside ``fit``.
"""
from __future__ import annotations

__all__ = ["N_FOLDS", "N_REPEATS", "RANDOM_STATE", "N_RESAMPLES", "MARGIN", "PREFERENCE", "Z_LIKE_PREFERENCE",
           "DECISION_SELECTION"]

#: system folds of the cross-validated comparison
N_FOLDS = 5
#: fold splits (and label draws); the decision reads the mean over them
N_REPEATS = 5
#: random state of the folds and draws
RANDOM_STATE = 0
#: resamples of systems behind the paired intervals the decision reads (whatever the caller's bootstrap uses)
N_RESAMPLES = 1000
#: the tolerance: a method beats another only by more than MARGIN of out-of-fold cross-group accuracy
#: (and with the paired 95% interval of the difference above 0); methods that no other beats are tied
MARGIN = 0.02
#: the tie rule: among tied methods, the first of these. Anchored assumes nothing about the groups' true
#: quality and puts scores on the human scale; raw scores change nothing; LGN assumes equal true quality.
PREFERENCE = ("anchored", "none", "lgn")
#: the tie rule when the human column looks like a z scale by its moments (every group's mean near 0, sd
#: near 1) but nothing else says so: anchoring to such labels pulls the groups toward one mean, which LGN
#: does without the labels' noise (on WMT21 DA z, LGN led anchored at 100 labels per pair in most draws)
Z_LIKE_PREFERENCE = ("lgn", "anchored", "none")
#: how the labels of a stated budget are drawn in the comparison (``calibrate select`` was never shown
#: to beat random selection; docs/calibration.md)
DECISION_SELECTION = "random"
