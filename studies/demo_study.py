"""Generator of the bundled demo study ``studies/bundled/effort_demo.json`` (pure, seeded).

Synthetic decision subjects, drawn to look like the paper's CLUE (yearly arrests) and SHED (yearly
income in $10k) records over four years:

* arrests: a person's yearly rate is level + slope * (t - 1.5) with level ~ Gamma(2, 1.5) and
  slope ~ U(-1.5, 1.5); the yearly count is Poisson with that rate (at least 0.1).
* income: level ~ LogNormal(log 5, 0.45) (about $50k), slope ~ N(0, 0.8) ($10k per year), plus
  N(0, 0.3) noise, floored at 0.5 and rounded to 0.1 ($1k).
* demographics: race (the paper's inertia table), sex, age and age group.
* the AI model's risk score is a logistic function of the total, the last year and the trend,
  with a deliberate penalty on one group so that audits have something to find; label = score >= 0.5.

Stimulus sets follow the paper's design (Figure 1): a reference subject K with a clear trend, A = K
with its first year perturbed (similar trend, similar total), and B, C, D drawn from the pool so
that they have the designed relations, as judged by :func:`trend_relation` and
:func:`total_relation`.
"""

from typing import Any

import numpy as np

from fairness.effort import trend_slope
from studies.study_file import RELATIONS
from tasks.pair_distance import DEFAULT_LIKERT_LABELS

RACES = ("White", "Black", "Asian", "American Indian", "Pacific Islander")
RACE_P = (0.55, 0.30, 0.08, 0.04, 0.03)
YEARS = ("2019", "2020", "2021", "2022")
SIMILAR_TOTAL = 0.15  # |total_X - total_K| <= 15% of the larger total
DIFFERENT_TOTAL = 0.45  # |total_X - total_K| >= 45% of the larger total
SIMILAR_SLOPE_RATIO = 2.5  # same sign, steeper slope at most 2.5 times the flatter one

CONDITIONS: dict[str, dict[str, Any]] = {
    "arrests": {
        "label": "Criminal justice (yearly arrests)",
        "feature": "yearly arrests",
        "unit": "arrests",
        "desirable": False,
        "aggregate_scale": 1.0,
        "min_slope": 0.5,
        "risk_label": "risk of a violent re-offence if released on bail",
        "context": "Each person below is a defendant. The chart shows how many times they were arrested in each of "
        "the past four years.",
    },
    "income": {
        "label": "Personal finance (yearly income)",
        "feature": "yearly income",
        "unit": "$10k",
        "desirable": True,
        "aggregate_scale": 20.0,
        "min_slope": 0.5,
        "risk_label": "risk of not paying back a monthly credit-card balance",
        "context": "Each person below is a household. The chart shows its income in each of the past four years, "
        "in units of $10k (5 means $50,000).",
    },
}


def trend_relation(k, x, min_slope: float) -> str:
    """'similar' (same direction, comparable steepness), 'different' (opposite directions) or 'unclear'."""
    sk, sx = trend_slope(k), trend_slope(x)
    if abs(sk) < min_slope or abs(sx) < min_slope:
        return "unclear"
    if np.sign(sk) != np.sign(sx):
        return "different"
    return "similar" if max(abs(sk), abs(sx)) <= SIMILAR_SLOPE_RATIO * min(abs(sk), abs(sx)) else "unclear"


def total_relation(k, x) -> str:
    tk, tx = float(np.sum(k)), float(np.sum(x))
    gap = abs(tx - tk) / max(tk, tx, 1e-9)
    if gap <= SIMILAR_TOTAL:
        return "similar"
    if gap >= DIFFERENT_TOTAL:
        return "different"
    return "unclear"


def relation_of(k, x, min_slope: float) -> str | None:
    """The designed relation the pair (K, X) really has, or None if it is ambiguous."""
    trend, total = trend_relation(k, x, min_slope), total_relation(k, x)
    if "unclear" in (trend, total):
        return None
    return f"{trend}_trend_{total}_total"


def draw_series(condition: str, n: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(len(YEARS)) - 1.5
    if condition == "arrests":
        level = rng.gamma(2.0, 1.5, size=n)
        slope = rng.uniform(-1.5, 1.5, size=n)
        rate = np.maximum(level[:, None] + slope[:, None] * t, 0.1)
        return rng.poisson(rate).astype(float)
    level = rng.lognormal(np.log(5.0), 0.45, size=n)
    slope = rng.normal(0.0, 0.8, size=n)
    values = level[:, None] + slope[:, None] * t + rng.normal(0.0, 0.3, size=(n, len(YEARS)))
    return np.round(np.maximum(values, 0.5), 1)


def risk_scores(condition: str, series: np.ndarray, races: list[str]) -> np.ndarray:
    """The demo 'AI model': a logistic score with a deliberate penalty on Black subjects."""
    total = series.sum(axis=1)
    last = series[:, -1]
    slope = np.array([trend_slope(row) for row in series])
    black = np.array([r == "Black" for r in races], dtype=float)
    if condition == "arrests":
        logit = -2.4 + 0.12 * total + 0.25 * last + 0.2 * slope + 0.5 * black
    else:
        logit = 1.6 - 0.07 * total - 0.15 * last - 0.3 * slope + 0.4 * black
    return 1.0 / (1.0 + np.exp(-logit))


def draw_population(condition: str, n: int, rng: np.random.Generator) -> list[dict]:
    """n synthetic decision subjects of a condition, as study-file subject dicts (ids S0001..)."""
    series = draw_series(condition, n, rng)
    races = list(rng.choice(RACES, size=n, p=RACE_P))
    sexes = rng.choice(["Male", "Female"], size=n)
    ages = rng.integers(18, 76, size=n)
    scores = risk_scores(condition, series, races)
    subjects = []
    for i in range(n):
        age = int(ages[i])
        group = "18-29" if age < 30 else "30-44" if age < 45 else "45-64" if age < 65 else "65+"
        subjects.append(
            {
                "id": f"S{i + 1:04d}",
                "series": [float(v) if condition == "income" else int(v) for v in series[i]],
                "demographics": {"race": str(races[i]), "sex": str(sexes[i]), "age": age, "age_group": group},
                "risk_score": round(float(scores[i]), 4),
                "label": int(scores[i] >= 0.5),
            }
        )
    return subjects


def _perturb_first_year(subject: dict, condition: str, rng: np.random.Generator) -> list:
    series = list(subject["series"])
    if condition == "arrests":
        series[0] = max(series[0] + int(rng.choice([-1, 1])), 0)
    else:
        series[0] = round(max(series[0] * float(rng.uniform(0.9, 1.1)), 0.5), 1)
    return series


def _pick(pool: list[dict], k: dict, relation: str, used: set, min_slope: float) -> dict:
    """The pool subject with the wanted relation to K that fits it most clearly."""
    sk, tk = trend_slope(k["series"]), sum(k["series"])
    best, best_cost = None, np.inf
    for cand in pool:
        if cand["id"] in used or relation_of(k["series"], cand["series"], min_slope) != relation:
            continue
        sx, tx = trend_slope(cand["series"]), sum(cand["series"])
        want_slope = sk if relation.startswith("similar_trend") else -sk
        want_total = tk if relation.endswith("similar_total") else (tk * 2.2 if tk < 6 else tk * 0.4)
        cost = abs(sx - want_slope) / max(abs(sk), 1e-9) + abs(tx - want_total) / max(tk, 1e-9)
        if cost < best_cost:
            best, best_cost = cand, cost
    if best is None:
        raise RuntimeError(f"no subject in the pool has relation {relation} to {k['id']}; enlarge the pool")
    return best


def build_condition(key: str, n_sets: int, n_prompts: int, rng: np.random.Generator) -> dict:
    meta = CONDITIONS[key]
    pool = draw_population(key, 3000, rng)
    min_slope = meta["min_slope"]
    used: set[str] = set()
    subjects, sets = [], []
    candidates_k = [
        s
        for s in pool
        if abs(trend_slope(s["series"])) >= 2 * min_slope and 4 <= sum(s["series"]) <= 30 and min(s["series"]) > 0
    ]
    order = rng.permutation(len(candidates_k))
    for set_index in range(n_sets):
        # alternate rising and falling references, as in the paper's stimuli
        want_up = set_index % 2 == 0
        k = next(
            candidates_k[i]
            for i in order
            if candidates_k[i]["id"] not in used and (trend_slope(candidates_k[i]["series"]) > 0) == want_up
        )
        used.add(k["id"])
        n = set_index + 1
        chosen = {"K": k}
        a_series = _perturb_first_year(k, key, rng)
        if relation_of(k["series"], a_series, min_slope) == RELATIONS[0]:
            score = float(risk_scores(key, np.array([a_series], dtype=float), [k["demographics"]["race"]])[0])
            chosen["A"] = {**k, "series": a_series, "risk_score": round(score, 4), "label": int(score >= 0.5)}
        else:
            chosen["A"] = _pick(pool, k, RELATIONS[0], used, min_slope)
        for letter, relation in zip("BCD", RELATIONS[1:], strict=True):
            chosen[letter] = _pick(pool, k, relation, used | {c["id"] for c in chosen.values()}, min_slope)
        for c in chosen.values():
            used.add(c["id"])
        for letter, subj in chosen.items():
            subjects.append({**subj, "id": f"{letter}{n}"})
        sets.append(
            {
                "key": f"set{n}",
                "reference": f"K{n}",
                "comparisons": [
                    {"subject": f"{letter}{n}", "relation": rel} for letter, rel in zip("ABCD", RELATIONS, strict=True)
                ],
            }
        )
    prompts: list[dict] = []
    for label in (1, 0):
        picks = [s for s in pool if s["id"] not in used and s["label"] == label][: n_prompts // 2]
        for subj in picks:
            used.add(subj["id"])
            pid = f"P{len(prompts) + 1}"
            subjects.append({**subj, "id": pid})
            prompts.append({"key": f"q{len(prompts) + 1}", "subject": pid})
    prompts = [prompts[i] for i in rng.permutation(len(prompts))]
    return {
        "key": key,
        "label": meta["label"],
        "feature": meta["feature"],
        "unit": meta["unit"],
        "desirable": meta["desirable"],
        "aggregate_scale": meta["aggregate_scale"],
        "time_labels": list(YEARS),
        "context": meta["context"],
        "risk_label": meta["risk_label"],
        "subjects": subjects,
        "stimulus_sets": sets,
        "disagreement_prompts": prompts,
    }


def build_demo_study(seed: int = 2025) -> dict:
    """The whole demo study file as a dict (same seed, same file)."""
    rng = np.random.default_rng(seed)
    return {
        "format": 1,
        "slug": "effort-demo",
        "title": "How similar are these people? (demo study)",
        "description": f"Demo of the effort-aware fairness study, generated by studies.demo_study with seed {seed}.",
        "consent": {
            "text": "This is a research study about how people judge fairness in decisions made with the help "
            "of AI.\n\n"
            "You will compare people's records over four years, give risk scores you consider fair, and say "
            "whether you agree with an AI model. It takes about 30 minutes. Your answers are stored under a "
            "pseudonym and used for research only. You may stop at any time.\n\n"
            "Do you agree to take part?",
        },
        "instructions": "You will see several groups of people. In each group, one person (Person A) is compared "
        "with four others, one pair at a time.\n\n"
        "For each pair you rate how different the two people are: in the trend of their yearly values "
        "(trajectory), in their totals over the four years (aggregate), and overall. After the overall "
        "question we ask what percentage of other participants you think chose a 'similar' answer: the most "
        "truthful participants earn an honesty bonus.\n\n"
        "After each group, you see the AI's risk score for Person A, which you may accept or correct, and then give "
        "each of the other four people the risk score you consider fair, with a short reason. The most "
        "detailed and persuasive reasons earn a rationale bonus.",
        "likert": {
            "points": 6,
            "labels": list(DEFAULT_LIKERT_LABELS),
            "similar_max": 3,
        },
        "bts": {"questions": ["overall"]},
        "rationale_factors": True,
        "conditions": [build_condition(key, 3, 8, rng) for key in ("arrests", "income")],
        "attention_checks": {
            "items": [
                {
                    "key": "ac1",
                    "question": "To show that you are reading carefully, please choose 'Blue'.",
                    "options": ["Red", "Green", "Blue", "Yellow"],
                    "correct": "Blue",
                },
                {
                    "key": "ac2",
                    "question": "How many years of data does each chart in this study show?",
                    "options": ["Two", "Three", "Four", "Ten"],
                    "correct": "Four",
                },
                {
                    "key": "ac3",
                    "question": "Please select 'Strongly disagree' for this statement: I can fly.",
                    "options": ["Strongly agree", "Agree", "Disagree", "Strongly disagree"],
                    "correct": "Strongly disagree",
                },
            ],
            "exclude_if_failed": 2,
        },
        "bonus": {
            "currency": "USD",
            "honesty": {"amount": 5.0, "top_fraction": 0.1, "description": "Top 10% by Bayesian Truth Serum score"},
            "rationale": {"amount": 5.0, "top_fraction": 0.1, "description": "Top 10% most detailed rationales"},
        },
        "completion": {"code": "C1A2B3D4", "url": "https://app.prolific.com/submissions/complete?cc=C1A2B3D4"},
    }
