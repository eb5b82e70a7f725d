"""Synthetic defendants for the bundled disagreement and rating studies (seeded; no real person's data).

Each defendant is drawn independently with ``numpy.random.default_rng(seed)``:

* race: "Black" or "White" with probability 1/2 each (two groups, so that a stratified sample of 20 holds
  10 of each, as in Biswas et al.'s design);
* sex: "male" with probability 0.8, else "female" (about the share of men among Broward County defendants);
* age: 18 + Gamma(shape 2, scale 7), rounded down, at most 75;
* charge and degree: uniform over :data:`CHARGES` (Dressel & Farid's short charge names, each with its
  degree, "felony" or "misdemeanor");
* priors: Poisson(0.6 + 0.08 (age - 18)) times 1.5 for "Black": a group difference in recorded prior
  convictions, so that the AI's labels differ by group through a legitimate-looking feature (the pattern
  that makes disagreement between people and a risk tool interesting to audit);
* juvenile felony and misdemeanor charges: Poisson(0.3) and Poisson(0.5) for defendants under 25,
  Poisson(0.05) and Poisson(0.1) otherwise.

The AI ("ai") is a stated logistic model: score = 1 / (1 + exp(-z)) with
z = -1.0 - 0.04 (age - 30) + 0.7 ln(1 + priors) + 0.5 juv_fel + 0.25 juv_misd + 0.3 [felony],
rounded to 3 decimals; label = 1 when score >= 0.5. Race does not enter the model.

Profiles use Dressel & Farid's (2018) wording (:data:`PROFILE`). The bundled studies are built from the
generated table by :func:`studies.builder.build_study`, exactly as a researcher's CSV would be
(:func:`bundled_studies`); ``python manage.py generate_bundled_studies`` rewrites them.
"""

import io
import math
from typing import Any

import numpy as np
import pandas as pd

from studies.builder import build_study, study_file_bytes

PROFILE = (
    "The defendant is a {sex} aged {age}. They have been charged with: {charge}. This crime is classified as a "
    "{degree}. They have been convicted of {priors} prior crimes. They have {juv_fel} juvenile felony charges and "
    "{juv_misd} juvenile misdemeanor charges on their record."
)
CHARGES = (
    ("Battery", "misdemeanor"),
    ("Petit Theft", "misdemeanor"),
    ("Driving Under the Influence", "misdemeanor"),
    ("Possession of Cannabis", "misdemeanor"),
    ("Trespassing", "misdemeanor"),
    ("Driving with a Suspended License", "misdemeanor"),
    ("Grand Theft", "felony"),
    ("Burglary", "felony"),
    ("Possession of Cocaine", "felony"),
    ("Aggravated Assault", "felony"),
    ("Robbery", "felony"),
    ("Fraud", "felony"),
)
LABEL_NAMES = {"1": "will commit another crime within two years", "0": "will not commit another crime within two years"}


def draw_defendants(n: int, seed: int) -> pd.DataFrame:
    """``n`` synthetic defendants (the model in the module docstring): id, sex, age, charge, degree, priors,
    juv_fel, juv_misd, race, ai_score, ai_label."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        race = "Black" if rng.random() < 0.5 else "White"
        sex = "male" if rng.random() < 0.8 else "female"
        age = min(75, 18 + int(rng.gamma(2.0, 7.0)))
        charge, degree = CHARGES[int(rng.integers(len(CHARGES)))]
        priors = int(rng.poisson((0.6 + 0.08 * (age - 18)) * (1.5 if race == "Black" else 1.0)))
        young = age < 25
        juv_fel = int(rng.poisson(0.3 if young else 0.05))
        juv_misd = int(rng.poisson(0.5 if young else 0.1))
        z = -1.0 - 0.04 * (age - 30) + 0.7 * math.log1p(priors) + 0.5 * juv_fel + 0.25 * juv_misd
        z += 0.3 * (degree == "felony")
        score = round(1 / (1 + math.exp(-z)), 3)
        rows.append(
            {
                "id": f"D{i + 1:03d}",
                "sex": sex,
                "age": age,
                "charge": charge,
                "degree": degree,
                "priors": priors,
                "juv_fel": juv_fel,
                "juv_misd": juv_misd,
                "race": race,
                "ai_score": score,
                "ai_label": int(score >= 0.5),
            }
        )
    return pd.DataFrame(rows)


def defendants_csv(n: int, seed: int) -> bytes:
    """The synthetic defendants as CSV bytes (as shipped in ``studies/bundled/synthetic_defendants.csv``)."""
    out = io.StringIO()
    draw_defendants(n, seed).to_csv(out, index=False, lineterminator="\n")
    return out.getvalue().encode("utf-8")


def bundled_studies() -> dict[str, bytes]:
    """File name -> bytes of the synthetic bundled files: the defendants CSV (200, seed 2018), the
    disagreement study over them (20 per participant, 10 of each race) and a rating study over 100 others
    (seed 2019; 20 per participant, 10 of each race)."""
    defendants = defendants_csv(200, seed=2018)
    shared: dict[str, Any] = {
        "label_column": "ai_label",
        "score_column": "ai_score",
        "group_columns": ["race", "sex"],
        "profile": PROFILE,
        "per_participant": 20,
        "stratify_by": "race",
    }
    disagreement = build_study(
        "disagreement",
        defendants,
        "id",
        **shared,
        slug="disagreement-synthetic",
        title="Do you agree with the AI? (synthetic defendants)",
        completion_code="DISAGREE-DEMO",
        name="synthetic_defendants.csv",
    )
    disagreement["pools"][0]["subject_noun"] = "defendant"
    disagreement["blocks"][3]["label_names"] = dict(LABEL_NAMES)
    rating = build_study(
        "rating",
        defendants_csv(100, seed=2019),
        "id",
        **shared,
        slug="rating-synthetic",
        title="How risky is this person? (synthetic defendants)",
        completion_code="RATING-DEMO",
        name="synthetic_defendants_rating.csv",
    )
    rating["pools"][0]["subject_noun"] = "defendant"
    return {
        "synthetic_defendants.csv": defendants,
        "disagreement_synthetic.json": study_file_bytes(disagreement),
        "rating_synthetic.json": study_file_bytes(rating),
    }
