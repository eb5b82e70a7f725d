"""The explanation under each section of each report: what it shows, how to read it, the formula and
its source (paper and equation). Keyed by the section's table or figure name; ``runs.reports``
attaches them, and the tests check that every section of every report has one."""

from core.report_texts import DP, EFFORT, FEEDBACK, Explanation

CST = "Counterfactual situation testing paper (Alvarez & Ruggieri)"


ANALYSIS = {
    "calibrations": Explanation(
        "The human-calibrated effort weight alpha of each condition: how much participants' overall "
        "similarity ratings rest on the trajectory (effort) rather than on the aggregate.",
        "alpha near 1 means participants judged mostly by trajectory, near 0 mostly by aggregate, 0.5 both "
        "equally; the 95% CI is a percentile bootstrap interval, over participants (alpha for these stimulus pairs) "
        "or over participants and stimulus pairs (alpha for pairs like them): its estimand is stated in each row.",
        "alpha = a2 / (a1 + a2) with a1, a2 the OLS coefficients of d_S and d_E in d = a0 + a1 d_S + a2 d_E + e",
        f"{EFFORT}, Eq. 5 and the distance d of EaIF (Eq. 12)",
    ),
    "participant_level": Explanation(
        "The study's headline tests, with the participant as the unit: each participant rates many pairs, so "
        "pairs are not independent evidence.",
        "Read a row as significant when its Holm-adjusted p (family 'headline') is below .05; rows outside the "
        "family are second opinions. Estimand: these tests are for this study's stimulus pairs (stated under the "
        "table), unless the analysis generalises over stimuli (then the family's RQ1-RQ2 rows are two-way "
        "bootstrap tests for stimulus pairs like these); the mixed models below generalise to other stimuli.",
        "participant bootstrap of r_traj - r_aggr (Hall & Wilson 1991 p); Wald tests of Eq. 5-8 with CR1 "
        "standard errors clustered by participant; with generalise = stimuli, two-way (pigeonhole, Owen 2007) "
        "bootstrap of participants and stimuli; Holm over the family (statsmodels multipletests)",
        f"{EFFORT}, RQ1-RQ3, Eq. 5-8",
    ),
    "mixed_models": Explanation(
        "Eq. 5-8 as linear mixed models with crossed random intercepts for participant and stimulus, and the "
        "contrast a2 - a1 (trajectory minus aggregate weight) with its 95% CI.",
        "A positive a2 - a1 whose CI excludes 0 means trajectory weighs more, for participants and stimuli "
        "beyond this sample; a model marked not converged, or with a note, should not be read.",
        "y = x'b + u_participant + v_stimulus + e, REML (statsmodels MixedLM with variance components)",
        f"{EFFORT}, Eq. 5-8; Baayen, Davidson & Bates (2008)",
    ),
    "effect_sizes": Explanation(
        "How much more trajectory than aggregate weighs for a typical participant: Eq. 5 or 6 fitted within "
        "each participant, then the per-participant differences summarised.",
        "The mean difference and Cohen's d come with 95% CIs; d around 0.2 is small, 0.5 medium, 0.8 large.",
        "one-sample t-test of a2_i - a1_i; d = mean / SD with its CI (Hedges & Olkin 1985, pingouin)",
        f"{EFFORT}, Eq. 5-6 (two-stage estimate)",
    ),
    "rm_correlations": Explanation(
        "The correlations of Table 2 within participants, which removes differences in how participants use "
        "the Likert scale.",
        "Compare r_rm with Table 2's r: a much smaller r_rm means Table 2's correlation is partly between-"
        "participant scale use; its df count participants, not only pairs.",
        "r_rm from the ANCOVA y ~ participant + x, df = N - participants - 1",
        "Bakdash & Marusich (2017), pingouin rm_corr; beside the effort-aware paper's Table 2",
    ),
    "icc": Explanation(
        "How far participants agree in their Likert ratings of the same stimuli, per condition and measure.",
        "ICC(A,1) near 1: one participant's rating predicts another's; ICC(A,k) is the reliability of the mean "
        "rating over all k participants (only participants who rated every stimulus count).",
        "ICC(A,1) and ICC(A,k) of a two-way random-effects model",
        "Shrout & Fleiss (1979); McGraw & Wong (1996); pingouin intraclass_corr",
    ),
    "table2": Explanation(
        "Spearman rank correlations between the three Likert distances of each pair (trajectory d_E, "
        "aggregate d_S, overall d) and the fair-score distance D, per condition.",
        "r near 1: the two ratings rise together. Stars use the unadjusted p; 'p (Bonferroni)' adjusts over "
        "the family of the five correlations of one condition.",
        "Spearman r with a Fisher-z 95% CI of variance 1.06 / (n - 3) (Fieller, Hartley & Pearson 1957)",
        f"{EFFORT}, Table 2",
    ),
    "table3": Explanation(
        "Tests of whether trajectory correlates more strongly than aggregate with the overall distance (input) "
        "and with the fair-score distance (output): two dependent correlations that share one variable.",
        "A positive statistic means r_traj > r_aggr; the two conventions are described below.",
        "Hotelling's t with n - 3 df; Steiger's Z1* (Meng, Rosenthal & Rubin Z in the paper convention)",
        f"{EFFORT}, Table 3; Steiger (1980); Meng, Rosenthal & Rubin (1992)",
    ),
    "table4": Explanation(
        "Participant-bootstrap 95% confidence intervals of the difference between the trajectory and the "
        "aggregate correlation.",
        "An interval wholly above 0 means trajectory matters more than aggregate; each resample draws "
        "participants with all their pairs, and its seed is in the table.",
        "Δr = r_traj - r_aggr; percentile interval [2.5%, 97.5%] over B resamples",
        f"{EFFORT}, Table 4",
    ),
    "table5": Explanation(
        "The regressions of the overall distance d (input space) and of the fair-score distance D (output "
        "space) on the aggregate d_S and the trajectory d_E, one table per model and outcome.",
        "b is the change in the outcome per Likert step of the term, with OLS and participant-clustered "
        "standard errors; stars use the clustered p at the paper's Table 5 levels, without a "
        "multiple-testing correction.",
        "d = a0 + a1 d_S + a2 d_E + e (Eq. 5), D = b0 + b1 d_S + b2 d_E + e (Eq. 6); moderation adds C, "
        "d_S C and d_E C (Eq. 7-8)",
        f"{EFFORT}, Eq. 5-8 and Table 5",
    ),
    "factor_shares": Explanation(
        "How often participants named each factor (trajectory, aggregate, other) as a reason for their rating.",
        "Each share is over the included pairs of the condition; a higher trajectory share supports an "
        "effort-based view of similarity.",
        "share = pairs with the factor chosen / pairs",
        f"{EFFORT}, Section 4 (rationale question)",
    ),
    "ratings_figure": Explanation(
        "The distributions of the three Likert ratings of the included pairs, per condition.",
        "Each violin shows the density of ratings; its box marks the quartiles and its line the mean; "
        "1 = very similar.",
        "raw ratings, no model",
        f"{EFFORT}, Section 4 (survey design)",
    ),
    "coefficient_figure": Explanation(
        "The coefficients of d_S and d_E with their 95% CIs from participant-clustered standard errors, per "
        "condition and outcome.",
        "A point further right is a stronger effect; CIs that do not overlap differ clearly. The exact "
        "numbers are in the Table 5 section and table5.csv.",
        "coefficients of Eq. 5-6, CI = b ± t(0.975) SE (clustered by participant)",
        f"{EFFORT}, Eq. 5-6",
    ),
    "bts_figure": Explanation(
        "Participants' mean Bayesian Truth Serum score on the binarised overall-similarity question.",
        "Higher scores reward answers that are more common than the crowd predicted and accurate "
        "predictions of others' answers; scores near the bottom flag careless or dishonest participants.",
        "total = sum_k x_k log(xbar_k / ybar_k) + alpha sum_k xbar_k log(y_k / xbar_k)",
        f"Prelec (2004), Science 306; {EFFORT}, Appendix E",
    ),
}

AUDIT = {
    "contents": Explanation(
        "What this audit contains and why: each part is there because its inputs are, or is left out with the "
        "reason (no sensitive column named, no truth, no effort series, no study source).",
        "Group metrics need only the models' labels or scores; the human-calibrated parts need a study "
        "(--metric-from, --utility-from, --features-from); the effort-aware parts need effort series in the "
        "subjects and a condition that says what they mean.",
        "group metrics always; effort-aware parts if and only if x_<time> columns and desirable and aggregate_scale",
        f"Bird et al. (2020), Fairlearn (the group metrics); {EFFORT} (the effort-aware parts)",
    ),
    "group_metrics": Explanation(
        "Each model's group metrics in Fairlearn's vocabulary: selection rate, and against the truth accuracy, "
        "true positive, false positive and false negative rates, by group, overall, and the difference (largest "
        "minus smallest group) and ratio (smallest over largest).",
        "Difference 0 and ratio 1 are parity. Equal selection rates are demographic parity; equal TPR and FPR are "
        "equalized odds; equal TPR alone is equal opportunity. The 95% CI is a percentile bootstrap, subjects "
        "resampled within each group: its estimand is the value in the population the subjects were drawn from, "
        "group sizes as observed.",
        "selection rate = P(yhat = 1), TPR = P(yhat = 1 | y = 1), FPR = P(yhat = 1 | y = 0), FNR = 1 - TPR; "
        "difference = max - min over groups, ratio = min / max",
        "Fairlearn's MetricFrame, Bird et al. (2020); Hardt, Price & Srebro (2016)",
    ),
    "group_metrics_figure": Explanation(
        "Each metric by group for every model, with its 95% CI.",
        "Bars of one metric that differ between groups beyond their whiskers show a gap unlikely to be chance.",
        "as in the group metrics table",
        "Fairlearn's MetricFrame, Bird et al. (2020)",
    ),
    "eaif": Explanation(
        "Effort-aware individual fairness of each model under each effort weight alpha: equal weights, the "
        "human (Likert) calibration and the alpha from yes/no disagreement feedback.",
        "EaIF is the mean over subject pairs of 1 - max(0, D - d): 1 means no pair's score gap exceeds its "
        "effort-aware distance; the violation share is the fraction of pairs with D > d.",
        "d = sqrt(alpha (E_i - E_j)^2 + (1 - alpha) (S_i - S_j)^2), D = |r_i - r_j|",
        f"{EFFORT}, Eq. 12-13, Tables 1 and 7",
    ),
    "parity": Explanation(
        "Traditional, effort-unaware demographic parity of each model's mean predicted risk, per group column.",
        "1 is parity; 0.8 means the group with the lowest mean risk gets 80% of the highest group's mean "
        "risk. Only groups with at least 10 subjects count.",
        "min over groups of mean risk / max over groups of mean risk",
        f"{EFFORT}, Tables 6 and 8",
    ),
    "notions": Explanation(
        "Group-fairness gaps computed with the critics' labels (their yes/no disagreement with the shown "
        "model) in place of true labels: accuracy equality AE, calibration CA, equal opportunity EO, "
        "overall misclassification OMR and predictive equality PE.",
        "Each value is the largest gap between groups (0 = equal treatment, higher = less fair). The CI resamples "
        "subjects; p tests 'no gap' by permuting the groups among the subjects, and a model's notions are one "
        "family (Holm-adjusted p beside the raw one, or --multiple-testing).",
        "f = max_k (max_m f_{m,k} - min_m f_{m,k}), with DR_{m,k} = P(s = 1 | yhat = k, m); p = (1 + #{f* >= f}) / "
        "(1 + B)",
        f"{FEEDBACK}, Eq. 0-5",
    ),
    "disagreement_calibration": Explanation(
        "The effort weight alpha implied by participants' yes/no disagreement with the shown model.",
        "For each alpha on a grid, the subjects' EaIF violations are rank-correlated with their disagreement "
        "rates; the alpha with the strongest correlation is the estimate, with a participant-bootstrap CI.",
        "alpha* = argmax_alpha Spearman(v_i(alpha), DR_i), v_i(alpha) = mean_j max(0, D_ij - d_ij(alpha))",
        f"{EFFORT}, Eq. 12; {FEEDBACK}, Eq. 3",
    ),
    "worst": Explanation(
        "The ten subject pairs with the largest violation D - d for each model.",
        "These are the pairs a model treats most differently although their effort and aggregate are close; "
        "look them up by id in the subjects file.",
        "violation = D - d with D = |r_i - r_j| and the effort-aware d of EaIF",
        f"{EFFORT}, Eq. 12-13",
    ),
    "eaif_figure": Explanation(
        "EaIF of each model (bars) under each effort weight.",
        "Higher bars are fairer; compare the bars of one model to see how much the weight matters.",
        "EaIF = mean over pairs of 1 - max(0, D - d)",
        f"{EFFORT}, Eq. 13",
    ),
    "eagf_figure": Explanation(
        "Effort-aware group fairness: the parity of mean predicted risk between groups within each effort "
        "bin (width 0.1).",
        "1 is parity within the bin; a bin without two groups of at least 10 subjects has no value. Low "
        "values mean people of similar effort get different risk by group.",
        "parity(bin) = min over groups of mean risk / max over groups of mean risk, among subjects of the bin",
        f"{EFFORT}, Eq. 14 and Figure 3",
    ),
    "calibration_curve": Explanation(
        "The criterion behind the disagreement-feedback alpha over the grid of effort weights.",
        "The peak of the curve is the estimated alpha; a flat curve means the feedback hardly "
        "distinguishes effort weights.",
        "Spearman(v_i(alpha), DR_i) for alpha in [0, 1]",
        f"{EFFORT}, Eq. 12; {FEEDBACK}, Eq. 3",
    ),
    "human_metric_lipschitz": Explanation(
        "Individual fairness under the fair metric learned from people's judgements (--metric-from), beside "
        "EaIF and parity: the share of subject pairs whose scores differ by more than L times their distance.",
        "0 means every pair is treated as alike as people say it should be; the 95% CI is the percentile "
        "interval of the share over the metric's rater-bootstrap refits (the metric's uncertainty; the subjects "
        "and scores are fixed). EaIF is under the last effort weight, parity the lowest over the group columns.",
        "share = #{i < j: |s_i - s_j| > L d_M(x_i, x_j)} / (n(n - 1) / 2), d_M(x, y)^2 = (x - y)' M (x - y); "
        "L (--lipschitz, default 1) in the scores' units per unit of d_M",
        "Dwork et al. (2012), the Lipschitz condition; Mukherjee et al. (2020, ICML), the learned metric M",
    ),
    "human_metric_worst": Explanation(
        "The ten pairs with the largest excess of score difference over the human-metric distance, per model.",
        "Pairs people would treat alike that the model scores far apart; look them up by id.",
        "excess = |s_i - s_j| - L d_M(x_i, x_j)",
        "Dwork et al. (2012); Mukherjee et al. (2020, ICML)",
    ),
    "utility_agreement": Explanation(
        "How each model ranks the audited subjects compared with the stakeholders' utility model learned from "
        "their pairwise choices (--utility-from), for all raters and per rater group.",
        "rho = 1: the model ranks subjects exactly as the stakeholders' utility of being chosen does (the block's "
        "decision, named under the table: a risk score agrees with 'be considered lower risk' at rho = -1); near 0: "
        "unlike them. The 95% CI is the percentile interval over 1,000 rater resamples (raters drawn with replacement, "
        "the mean utility recomputed); a model ranking exactly as the utility has rho = 1 and an interval "
        "ending below 1 (read it as 'at least').",
        "rho = Spearman(s, u), u(x) = mean over raters of w_r . x (each rater's Bradley-Terry utility weights)",
        "Lee et al. (2019, CSCW), WeBuildAI; Spearman (1904)",
    ),
    "tradeoff_scores": Explanation(
        "Each audited model scored by the trade-off weights that people's choices of the fairer of two models gave "
        "(--tradeoff-from): its accuracy and its gaps between groups in false positive rate, false negative rate and "
        "selection rate on the audited subjects, weighed as the raters weighed them; all raters and per rater group.",
        "A higher score: a model these raters would find fairer. Only differences between models mean anything (the "
        "score is a log-odds utility), so each model's difference from the reference model (the first) has its CI: "
        "a difference of 1 means odds of e = 2.7 to 1 that raters like these find it the fairer of the two. The CI "
        "comes from the weights' rater-clustered covariance (t on raters - 1 df).",
        "score = w . x, x = (accuracy, FPR gap, FNR gap, selection-rate gap), gap = max - min over groups; CI of "
        "w . (x_m - x_ref): -/+ t(G - 1) sqrt(d' V d), V the CR1 covariance of w",
        "McFadden (1974); Srivastava et al. (KDD 2019); Harrison et al. (FAccT 2020)",
    ),
    "unfair_feature_reliance": Explanation(
        "How much each model relies on the features people judged unfair to use (--features-from).",
        "reliance is in score units: the mean change of a model's scores when the features are shuffled, each "
        "weighted by the share judging it unfair; unfair fraction is the part of the model's reliance on the "
        "judged features that falls on unfair ones. Each model is replaced by a surrogate of its scores on the "
        "features (a linear regression, or with --surrogate forest a random forest): its R^2 says how much of "
        "the scores that describes.",
        "I_j = mean over 20 seeded permutations of mean_i |f(x_i) - f(x_i, x_j permuted)|; reliance = sum_j "
        "u_j I_j, u_j = 1 - share judging j fair; unfair fraction = reliance / sum_j I_j",
        "Grgic-Hlaca et al. (2018, WWW), the judgements; Breiman (2001) and Fisher et al. (2019), permutation "
        "importance",
    ),
    "feature_importance": Explanation(
        "Each feature's permutation importance for each model's surrogate, the share judging it unfair and "
        "their product.",
        "The CIs are those of the share judging the feature unfair (rater bootstrap), and that interval times "
        "the importance; the importance itself is the surrogate's, with its spread over the permutations in "
        "the CSV.",
        "weighted_j = u_j I_j",
        "Grgic-Hlaca et al. (2018, WWW); Breiman (2001)",
    ),
}

DIFFERENTIAL_PARITY = {
    "fair_scores_vs_ai": Explanation(
        "Whether participants' fair risk scores differ from the AI's scores more for one group of subjects "
        "than for the others (relative fairness of the two decision sets).",
        "DPT > 0: participants scored the group higher than the AI did, relative to the other subjects; the "
        "verdict states it in words. DPD is the effect size, labelled by the paper's Table 1.",
        "DPT = (m_1 - m_0) / sqrt(s_1^2 / n_1 + s_0^2 / n_0) (Welch's t, one-sided p), DPD = (m_1 - m_0) / s_pooled",
        f"{DP}, Definitions 3-4, Eq. 2-3",
    ),
    "disagreements": Explanation(
        "The same test on labels: participants' yes/no answers imply a label (high or low risk) for each "
        "subject, compared with the AI's label.",
        "The per-item difference is -1, 0 or +1; DPT > 0 means participants labelled the group high risk "
        "more often than the AI did, relative to the other subjects.",
        "DPT and DPD as for fair scores, on R0 - R1 in {-1, 0, 1}",
        f"{DP}, Definitions 3-4, Eq. 2-3",
    ),
    "differences_figure": Explanation(
        "The per-item differences R0 - R1 (participant minus AI) by subject group, one colour per condition.",
        "Boxes show quartiles and the dashed line the mean; a group whose box sits higher got higher "
        "risk from participants than from the AI.",
        "R_Δ = R0 - R1 per (participant, subject) item",
        f"{DP}, Eq. 1",
    ),
}

SITUATION_TESTING = {
    "published": Explanation(
        "This run's counts minus the counts the paper publishes for the LSAC data, per attribute, method and k.",
        "0 means the published count is reproduced; the notes say which convention causes each difference "
        "(--mode reference follows the authors' code and reproduces every cell).",
        "difference = count(this run) - count(published), for the k values both have",
        f"{CST}, Tables 10-13",
    ),
    "counts": Explanation(
        "How many complainants (individuals of the protected group) each method flags as discriminated, for "
        "each number of neighbours k (the methods are described at the top).",
        "_sig: the paper's Wald rule (its published counts; at small k it rejects a true null more often than "
        "alpha); _sig_exact: the exact test of 'no difference in positive-decision rates between the "
        "complainant's protected and unprotected neighbourhoods'; _sig_adjusted: the exact test with one "
        "method's complainants at one k as a family (p in individuals.csv).",
        "Δp = p_c - p_t (shares of negative decisions, control minus test); flagged when Δp > tau; Wald: "
        "Δp - z_(1-alpha) sqrt((p_c(1-p_c) + p_t(1-p_t)) / k) > tau; exact: one-sided Fisher test of the 2x2 "
        "table; Holm or BH over the family",
        f"{CST}, Eq. 3-10; Fisher (1935)",
    ),
    "counts_figure": Explanation(
        "The flag counts of the table above against k, one line per method (significant counts dotted).",
        "Lines that stay flat as k grows are robust to the choice of k; CST normally flags more than ST.",
        "number of complainants with Δp > tau (dotted: and significant by the Wald rule, _sig, the exact test, "
        "_sig_exact, or the exact test adjusted over the family, _sig_adjusted)",
        f"{CST}, Section 5 and Table 1",
    ),
    "flagged": Explanation(
        "The complainants flagged at the smallest k, largest Δp first; open one to see the complainant and "
        "the rows of its control and test groups.",
        "p_c and p_t are the shares of negative decisions among the control and test neighbours; "
        "'significant by the Wald rule' means the paper's one-sided interval of Δp excludes tau; the exact p "
        "tests no difference between the neighbourhoods (one-sided Fisher test), then adjusted over the "
        "method's complainants at this k.",
        "Δp = p_c - p_t",
        f"{CST}, Eq. 8-10; Fisher (1935)",
    ),
    "multiple": Explanation(
        "Multiple discrimination: complainants flagged for gender and for race separately, each test at "
        "alpha / 2 (Bonferroni over the family of the two attributes).",
        "A complainant counts when both tests flag them; compare with the intersectional rows, which "
        "test the combination of attributes directly.",
        "flagged_gender(alpha / 2) and flagged_race(alpha / 2)",
        f"{CST}, Section 5.3",
    ),
}


# Situation testing's methods in words (shown at the top of the situation-testing and law-school reports).
ST_METHODS = {
    "ST": "Situation testing: a complainant's k nearest neighbours in the protected group (control) are compared "
    "with the k nearest in the non-protected group (test), both searched around the complainant as they are.",
    "CSTwo": "Counterfactual situation testing without the complainant: the test group is searched around the "
    "complainant's counterfactual, the same person had they not been in the protected group (from a causal "
    "model), so features the protected attribute influenced are corrected.",
    "CSTwi": "Counterfactual situation testing with the complainant: as CSTwo, but the complainant joins the "
    "control group and the counterfactual (with its own decision) joins the test group.",
    "CF": "Counterfactual fairness: the complainant is flagged when their own decision is negative and their "
    "counterfactual's decision is positive, without comparing with anyone else.",
}


# The analysis of a format 2 study (runs.design_analysis), by table name
# The analysis of a format 2 study: the tables every task type's analysis may have (each task type's own
# tables are explained in its module, ``BlockTask.report_tables``).
DESIGN = {
    "rater_groups": Explanation(
        "Who answered: the rater groups formed by the questionnaire answers this analysis splits by, and how many "
        "analysable participants each has.",
        "Participants who left a splitting question unanswered are left out of the per-group rows; small groups "
        "give wide intervals.",
        "rater group = the answers to the chosen questions, joined by ' / '",
        "Disagreement-feedback poster (Telukunta & Nadendla): diverse stakeholders compared",
    ),
    "tests": Explanation(
        "Whether the rater groups differ on each statistic of this block: T, the largest group value minus the "
        "smallest (every group counts alike), and W, the size-weighted variance of the group values (a small "
        "group moves it little). Groups below the minimum size are not compared; a notion's row 'a vs b' "
        "compares the two largest subject groups only.",
        "p < .05: at least two rater groups differ; prefer W's p when group sizes differ much. Not adjusted "
        "across rows.",
        "T = max_r T_r - min_r T_r; W = sum_r w_r (T_r - Tbar)^2 / sum_r w_r, Tbar = sum_r w_r T_r / sum_r w_r, w_r "
        "= the group's answers (alpha: participants); for a disagreement rate N W / (p (1 - p)) is Pearson's "
        "chi-square; p = (1 + #{S*_b >= S}) / (1 + B) over B permutations of the groups across raters",
        "Phipson & Smyth (2010), permutation p-values; weighted between-group variance (one-way ANOVA)",
    ),
    "pairwise": Explanation(
        "Each pair of rater groups compared on each statistic of the tests table.",
        "A Holm-adjusted p below .05 is evidence that the two groups differ, with the chance of any false finding "
        "among the pairs of one statistic held at .05.",
        "b - a = T_b - T_a; p = (1 + #{|d*| >= |d|}) / (1 + B) permuting the labels of the two groups' raters; "
        "Holm's step-down adjustment over the pairs of a statistic",
        "Holm (1979); Phipson & Smyth (2010)",
    ),
    "subject_groups": Explanation(
        "The subject groups of each subject-group column of the block's pool: numeric columns cut into bins, and "
        "which groups were compared.",
        "A group marked too few to compare is in no notion, mean or parity of its column; notions compare all "
        "compared groups (max - min) and also the two largest groups alone.",
        "bin: lower <= x < upper, cut points the pool's quartiles unless given (--bins / bins); groups of fewer "
        "subjects than the minimum (default 10) are left out or pooled into 'other'",
        "platform choice (the disagreement poster's notions are max - min over groups)",
    ),
    "without_tables": Explanation(
        "The task blocks of this study that have no table in this report, each with the reason: its task type "
        "has no estimator yet, or its estimator could not be computed on these answers.",
        "Every block of the study appears in the report: in its own sections with its tables, or here. Too few "
        "raters of a block (each participant sees some of the blocks) is often the reason.",
        "each block's estimator is the one its task type names (BlockTask.analysis), e.g. Eq. 5's alpha for a "
        "pair_distance block",
        "the task registry (README 'Adding a task type'); the effort-aware fairness paper for Eq. 5",
    ),
    "deviations": Explanation(
        "How this analysis differs from the analysis plan the study was preregistered with, each deviation with "
        "what differs, when, why (the researcher's words), its type and what it can change.",
        "No row: the analysis is the planned one. An analysis whose rater groups are in no planned analysis is "
        "exploratory: its tests are not the registered, confirmatory ones.",
        "every option of the analysis compared with the registered plan (study version, rater groups, exclusions, "
        "inference, group options, seed, resamples, sample size)",
        "Willroth & Atherton (2024), Best laid plans: a guide to reporting preregistration deviations",
    ),
    "honesty": Explanation(
        "Bayesian Truth Serum honesty scores from the follow-up 'what share of other participants answered X?', "
        "averaged per participant over the questions they answered, summarised per rater group.",
        "A higher total means answers that are more common than predicted (information) and accurate predictions of "
        "others (prediction); totals sum to 0 over a question's respondents.",
        "total = sum_k x_k log(xbar_k / ybar_k) + sum_k xbar_k log(y_k / xbar_k), per question over its respondents",
        "Prelec (2004), Bayesian Truth Serum",
    ),
}


SENSITIVITY = Explanation(
    "Each headline estimate of this report (alpha, disagreement rates and notions per rater group, differential "
    "parity gaps and verdicts, Bradley-Terry strengths) computed with all participants and again without those "
    "flagged by any answer-quality rule (interaction signals and detection items), whatever the study's "
    "quality.exclude_if; the attention-check exclusions hold in both.",
    "A conclusion changes when the estimate exists in one analysis only, when the estimate without the flagged "
    "lies outside the 95% CI with all participants, when a test's p crosses .05, or when a parity verdict reads "
    "differently; such estimates rest on the flagged participants, so report both.",
    "the same estimator on two samples: all analysable participants, and those without a quality flag",
    "platform's robustness check (analysis.sensitivity); flags: research.quality (README 'Answer quality')",
)
