/* The Student t distribution's CDF, for MLPerf's convergence check (a one-sided two-sample
 * t-test with pooled variance, as scipy.stats.ttest_ind_from_stats(equal_var=True)). */
#ifndef BB_STUDENT_T_H
#define BB_STUDENT_T_H

/* P(T <= t) for T ~ t(df), df > 0. */
double student_t_cdf(double t, double df);

#endif
